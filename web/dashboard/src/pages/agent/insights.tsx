import { useState } from 'preact/hooks';
import { type SourceUsefulness, reportsApi } from '../../api/reports';
import { type Period, PeriodChoice, periodFrom } from '../../period';
import { Link, navigate, usePlace } from '../../router';
import { RefreshButton } from '../../ui/buttons';
import { Time, formatNumber } from '../../ui/format';
import { Empty, Panel } from '../../ui/page';
import { Loaded, useResource } from '../../ui/resource';
import { Badge } from '../../ui/status';
import { GapsPanel } from './gaps';
import type { TabProps } from './tab';
import './insights.css';

/**
 * The agent's insights (owners and admins: docs/decisions/063-what-is-missing.md): the questions it could not answer,
 * with a way to add the answer, and how useful each of its sources is — both over one period (`?days=`, 7, 30 or 90).
 */
export function InsightsTab(props: TabProps) {
  const place = usePlace();
  const days = periodFrom(place.search.get('days'));
  // Bumped when an answer was added: it is a new source, listed below.
  const [added, setAdded] = useState(0);
  const choose = (next: Period) =>
    navigate(`/agents/${props.bot.id}/insights${next === 30 ? '' : `?days=${next}`}`, { replace: true });
  return (
    <>
      <div class="insights-period">
        <PeriodChoice name="insights-days" value={days} onChange={choose} />
      </div>
      <GapsPanel bot={props.bot} days={days} onAnswered={() => setAdded((n) => n + 1)} />
      <UsefulnessPanel {...props} days={days} version={added} />
    </>
  );
}

/** More answers that named it were rated not helpful than helpful. */
const ratedDown = (s: SourceUsefulness) => s.rated_down > s.rated_up;

/** "3 helpful · 1 not", or that nobody rated an answer that used it. */
function ratingsOf(s: SourceUsefulness): string {
  if (s.rated_up + s.rated_down === 0) return 'No ratings';
  return `${formatNumber(s.rated_up)} helpful · ${formatNumber(s.rated_down)} not`;
}

/**
 * "How useful each source is": every source of the agent with the answers of the period that named it, how visitors
 * rated those answers, and when it was last used. Sources never used, or rated down more than up, are marked: they
 * are the ones to look at.
 */
function UsefulnessPanel(props: TabProps & { days: number; version: number }) {
  const { bot, days } = props;
  const list = useResource(() => reportsApi.sourceUsefulness(bot.id, days), [bot.id, days, props.version]);
  return (
    <Panel
      title="How useful each source is"
      id="usefulness"
      description="How many answers named each source, and how visitors rated those answers. Sources never used, or rated down more than up, are marked."
      actions={<RefreshButton resource={list} />}
    >
      <Loaded resource={list.resource} retry={list.retry} label="Loading the sources…">
        {(data) =>
          data.sources.length === 0 ? (
            <Empty title="No knowledge yet">
              <p>
                The agent has no sources to answer from.{' '}
                <Link href={`/agents/${bot.id}/knowledge`}>Add a text or scan a site</Link>.
              </p>
            </Empty>
          ) : (
            <div class="table-wrap">
              <table class="table table-stack usefulness-table" data-testid="usefulness">
                <caption class="visually-hidden">
                  Knowledge sources in the last {data.days} days, most used first
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Source</th>
                    <th scope="col" class="num">
                      Used in answers
                    </th>
                    <th scope="col">Ratings</th>
                    <th scope="col">Last used</th>
                  </tr>
                </thead>
                <tbody>
                  {data.sources.map((s) => (
                    <SourceRow key={s.source_id} source={s} />
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
    </Panel>
  );
}

function SourceRow(props: { source: SourceUsefulness }) {
  const s = props.source;
  const unused = s.used === 0;
  const down = ratedDown(s);
  const title = s.title || s.source_id;
  return (
    <tr
      class={unused ? 'usefulness-unused' : down ? 'usefulness-down' : undefined}
      data-testid="usefulness-row"
      data-source={s.source_id}
    >
      <td>
        <span class="cell-main">
          {s.url ? (
            <a href={s.url} target="_blank" rel="noopener noreferrer">
              {title}
              <span class="visually-hidden"> (opens in a new tab)</span>
            </a>
          ) : (
            title
          )}
        </span>
        <span class="cell-sub">
          {s.origin === 'scan' ? 'Page of a site scan' : 'Text'}
          {unused && (
            <>
              {' '}
              <Badge tone="neutral">Never used</Badge>
            </>
          )}
          {down && (
            <>
              {' '}
              <Badge tone="warning">Rated down more than up</Badge>
            </>
          )}
        </span>
      </td>
      <td class="num" data-label="Used in answers" data-testid="usefulness-used">
        {formatNumber(s.used)}
      </td>
      <td data-label="Ratings" data-testid="usefulness-ratings">
        <span class={s.rated_up + s.rated_down === 0 ? 'muted' : undefined}>{ratingsOf(s)}</span>
      </td>
      <td data-label="Last used">
        {s.last_used_at === null ? <span class="muted">Never</span> : <Time ms={s.last_used_at} relative />}
      </td>
    </tr>
  );
}
