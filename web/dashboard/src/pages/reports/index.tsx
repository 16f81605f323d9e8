import { agents } from '../../api/agents';
import { type ResolutionReport, reportsApi } from '../../api/reports';
import { type Period, PeriodChoice, periodFrom } from '../../period';
import { navigate, usePlace } from '../../router';
import { RefreshButton } from '../../ui/buttons';
import { Field } from '../../ui/fields';
import { formatNumber } from '../../ui/format';
import { Empty, Page, Panel } from '../../ui/page';
import { Loaded, useResource } from '../../ui/resource';
import { ResolutionChart } from './chart';
import { Feedback } from './feedback';
import { browserTimeZone, lastDays, percent } from './model';
import './reports.css';

/**
 * `/reports` (owners and admins): what the AI resolved (docs/decisions/064-resolution-report.md) — the conversations
 * of the last 7, 30 or 90 days (days of the browser's time zone) of all agents or one, by what happened in them, per
 * day as a chart and its table, with the visitors' ratings and satisfaction. The choice is in the address
 * (`?days=&agent=`), so a reload or a shared link shows the same report.
 */
export function ReportsPage() {
  const place = usePlace();
  const days = periodFrom(place.search.get('days'));
  const agent = place.search.get('agent') ?? '';
  const timeZone = browserTimeZone();
  const bots = useResource(() => agents.list(), []);
  const report = useResource(
    () => reportsApi.resolution({ ...lastDays(days), time_zone: timeZone, bot_id: agent || undefined }),
    [days, agent, timeZone],
  );

  function choose(next: { days?: Period; agent?: string }) {
    const q = new URLSearchParams();
    const d = next.days ?? days;
    const a = next.agent ?? agent;
    if (d !== 30) q.set('days', String(d));
    if (a) q.set('agent', a);
    const s = q.toString();
    navigate(`/reports${s ? `?${s}` : ''}`, { replace: true });
  }

  const agentName = bots.data?.bots.find((b) => b.id === agent)?.name;
  return (
    <Page
      title="Reports"
      description={`What the AI resolved, and how visitors felt about it. Days are counted in your time zone (${timeZone}).`}
    >
      <Panel>
        <div class="report-filters" role="group" aria-label="Report filters">
          <PeriodChoice name="report-days" value={days} onChange={(d) => choose({ days: d })} />
          <Field id="report-agent" label="Agent">
            <select id="report-agent" value={agent} onChange={(e) => choose({ agent: e.currentTarget.value })}>
              <option value="">All agents</option>
              {bots.data?.bots.map((b) => (
                <option key={b.id} value={b.id}>
                  {b.name}
                </option>
              ))}
              {agent && !bots.data?.bots.some((b) => b.id === agent) && <option value={agent}>This agent</option>}
            </select>
          </Field>
          <div class="report-refresh">
            <RefreshButton resource={report} />
          </div>
        </div>
      </Panel>
      <Loaded resource={report.resource} retry={report.retry} label="Counting the conversations…">
        {(r) =>
          r.totals.conversations === 0 ? (
            <Panel>
              <Empty title="No conversations in this period">
                <p>
                  {agentName ? `Nobody talked to ${agentName}` : 'Nobody talked to your agents'} in the last {days}{' '}
                  days. Conversations are counted here from the day they start.
                </p>
              </Empty>
            </Panel>
          ) : (
            <Report report={r} />
          )
        }
      </Loaded>
    </Page>
  );
}

function Report(props: { report: ResolutionReport }) {
  const r = props.report;
  return (
    <>
      <Panel title="What the AI resolved" id="resolved">
        <Summary totals={r.totals} />
        <ResolutionChart report={r} />
      </Panel>
      <Feedback ratings={r.ratings} satisfaction={r.satisfaction} />
    </>
  );
}

function Summary(props: { totals: ResolutionReport['totals'] }) {
  const t = props.totals;
  const all = t.conversations;
  const figure = (id: string, label: string, value: number, sub: string, tone?: string) => (
    <div class={`report-stat${tone ? ` report-stat-${tone}` : ''}`} data-testid={`figure-${id}`}>
      <dt>{label}</dt>
      <dd>
        <span class="report-stat-value" data-testid={`figure-${id}-value`}>
          {formatNumber(value)}
        </span>
        <span class="report-stat-sub">{sub}</span>
      </dd>
    </div>
  );
  return (
    <dl class="report-stats" aria-label="Summary">
      {figure('conversations', 'Conversations', all, 'started in the period')}
      {figure('agent', 'Resolved by the agent', t.resolved_by_agent, `${percent(t.resolved_by_agent, all)}`, 'agent')}
      {figure(
        'not',
        'Not resolved by the agent',
        t.not_resolved_by_agent,
        `${percent(t.not_resolved_by_agent, all)} · couldn’t answer or rated down`,
        'not',
      )}
      {figure(
        'person',
        'Handed to a person',
        t.handed_over,
        `${percent(t.handed_over, all)} · ${formatNumber(t.resolved_by_person)} of them resolved by a person`,
        'person',
      )}
      {figure(
        'none',
        'No answer',
        t.no_answer,
        `${percent(t.no_answer, all)} · neither the agent nor a person`,
        'none',
      )}
    </dl>
  );
}
