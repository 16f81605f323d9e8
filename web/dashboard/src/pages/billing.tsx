import { useEffect, useState } from 'preact/hooks';
import { DayChart, type DayChartFrame } from '../day-chart';
import { dayLong, dayOf } from '../days';
import type { Failure } from '../api/client';
import { type LedgerEntry, type Plan, type Usage, billingApi } from '../api/billing';
import { Button } from '../ui/buttons';
import { formatDate, formatDateTime, formatNumber } from '../ui/format';
import { Page, Panel } from '../ui/page';
import { Loaded, useResource } from '../ui/resource';
import { ErrorBox, Loading } from '../ui/status';
import './billing.css';
import { CheckoutOutcome, PlansPanel } from './billing-plans';

/**
 * `/billing`: the workspace's plan and this month's usage (conversations against the quota with its top-ups, credits),
 * conversations and credits per day over 30 days as hand-drawn SVG charts with a table for the same numbers, the
 * credits ledger page by page, and the plans — bought through the payment provider's checkout when one is
 * connected; without one the page says plans and top-ups are recorded by the platform's operators.
 */

const DAYS = 30;
const LEDGER_PAGE = 20;

function priceOf(plan: Plan): string {
  if (typeof plan.price === 'number') return plan.price === 0 ? 'Free' : `$${plan.price} a month`;
  return plan.price || '—';
}

export function BillingPage() {
  const usage = useResource(() => billingApi.usage(DAYS), []);
  const plans = useResource(() => billingApi.plans(), []);

  return (
    <Page title="Billing" description="Your plan, this month’s usage and the credits ledger." wide>
      <CheckoutOutcome />
      {plans.data?.paid && (
        <div class="notice notice-info billing-provider" role="note">
          <strong>Your plan is paid through the payment provider.</strong> To change it, contact the platform&rsquo;s
          operators.
        </div>
      )}
      {plans.data && !plans.data.paid && !plans.data.checkout?.length && (
        <div class="notice notice-info billing-provider" role="note">
          <strong>No payment provider is connected.</strong> Plan changes and top-ups are recorded by the
          platform&rsquo;s operators (<code>agentctl billing …</code>). To change your plan or add conversations or
          credits, contact them.
        </div>
      )}

      <Loaded resource={usage.resource} retry={usage.retry} label="Loading usage…">
        {(u) => <UsageView usage={u} />}
      </Loaded>

      <Ledger />

      <PlansPanel plans={plans} currentFromUsage={usage.data?.plan.id} priceOf={priceOf} />
    </Page>
  );
}

function UsageView(props: { usage: Usage }) {
  const u = props.usage;
  const endShown = u.period.end - 1;
  const conv = u.conversations;
  return (
    <>
      <div class="stat-grid">
        <section class="stat" aria-labelledby="stat-plan">
          <h2 id="stat-plan" class="stat-label">
            Plan
          </h2>
          <p class="stat-value" data-testid="plan-name">
            {u.plan.name}
          </p>
          <p class="stat-sub">{priceOf(u.plan)}</p>
          <p class="stat-sub">
            Period {formatDate(u.period.start)} – {formatDate(endShown)}
          </p>
        </section>
        <section class="stat stat-wide" aria-labelledby="stat-conv">
          <h2 id="stat-conv" class="stat-label">
            Conversations this period
          </h2>
          <p class="stat-value">
            <span data-testid="conversations-used">{formatNumber(conv.used)}</span>
            <span class="stat-of"> of {formatNumber(conv.quota)}</span>
          </p>
          <Meter used={conv.used} quota={conv.quota} label="Conversations used" />
          <p class="stat-sub">
            {formatNumber(conv.included)} included with the plan
            {conv.topped_up > 0 && <> + {formatNumber(conv.topped_up)} from top-ups</>}
            {conv.used >= conv.quota && (
              <strong class="stat-alert">
                {' '}
                · Used up: new conversations get a placeholder answer until next period.
              </strong>
            )}
          </p>
        </section>
        <section class="stat" aria-labelledby="stat-credits">
          <h2 id="stat-credits" class="stat-label">
            Credits
          </h2>
          <p class="stat-value">
            <span data-testid="credits-balance">{formatNumber(u.credits.balance)}</span>
            <span class="stat-of"> left</span>
          </p>
          <p class="stat-sub">{formatNumber(u.credits.used_this_period)} used this period</p>
          {u.credits.balance <= 0 && <p class="stat-sub stat-alert">Runs fail with no credits left.</p>}
        </section>
      </div>

      <UsageCharts daily={u.daily} />

      {u.topups.length > 0 && (
        <Panel title="Top-ups this period" id="topups">
          <ul class="topup-list">
            {u.topups.map((t, i) => (
              <li key={i}>
                <strong>
                  +{formatNumber(t.amount)} {t.kind === 'credits' ? 'credits' : 'conversations'}
                </strong>
                {t.note && <span> — {t.note}</span>}
                <span class="muted small"> · {formatDateTime(t.created_at)}</span>
              </li>
            ))}
          </ul>
        </Panel>
      )}
    </>
  );
}

/** Used against a quota: a bar (role meter) that turns amber past 80 % and red when used up. */
function Meter(props: { used: number; quota: number; label: string }) {
  const ratio = props.quota > 0 ? Math.min(1, props.used / props.quota) : 1;
  const pct = Math.round(ratio * 1000) / 10;
  const tone = ratio >= 1 ? 'meter-full' : ratio >= 0.8 ? 'meter-high' : '';
  return (
    <div
      class={`meter ${tone}`}
      role="meter"
      aria-label={props.label}
      aria-valuemin={0}
      aria-valuemax={props.quota}
      aria-valuenow={Math.min(props.used, props.quota)}
      aria-valuetext={`${formatNumber(props.used)} of ${formatNumber(props.quota)} (${pct} %)`}
    >
      <span class="meter-fill" style={{ width: `${Math.max(ratio > 0 ? 0.8 : 0, pct)}%` }} />
    </div>
  );
}

function UsageCharts(props: { daily: Usage['daily'] }) {
  const [table, setTable] = useState(false);
  const daily = props.daily;
  const total = (k: 'conversations' | 'credits') => daily.reduce((s, d) => s + d[k], 0);
  return (
    <Panel
      title={`Last ${daily.length} days`}
      id="usage-chart"
      description="Conversations started and credits charged per day (UTC)."
      actions={
        <Button small aria-expanded={table} aria-controls="usage-table" onClick={() => setTable(!table)}>
          {table ? 'Show charts' : 'Show as table'}
        </Button>
      }
    >
      {table ? (
        <div class="table-scroll" id="usage-table">
          <table class="data-table usage-table">
            <caption class="visually-hidden">Conversations and credits per day</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col" class="num">
                  Conversations
                </th>
                <th scope="col" class="num">
                  Credits
                </th>
              </tr>
            </thead>
            <tbody>
              {[...daily].reverse().map((d) => (
                <tr key={d.date}>
                  <th scope="row">{dayLong.format(dayOf(d.date))}</th>
                  <td class="num">{formatNumber(d.conversations)}</td>
                  <td class="num">{formatNumber(d.credits)}</td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row">Total</th>
                <td class="num">{formatNumber(total('conversations'))}</td>
                <td class="num">{formatNumber(total('credits'))}</td>
              </tr>
            </tfoot>
          </table>
        </div>
      ) : (
        <div class="chart-grid" id="usage-table">
          <BarChart
            id="chart-conversations"
            title="Conversations per day"
            unit={['conversation', 'conversations']}
            data={daily.map((d) => ({ date: d.date, value: d.conversations }))}
            tone="accent"
          />
          <BarChart
            id="chart-credits"
            title="Credits per day"
            unit={['credit', 'credits']}
            data={daily.map((d) => ({ date: d.date, value: d.credits }))}
            tone="teal"
          />
        </div>
      )}
    </Panel>
  );
}

const FRAME: DayChartFrame = {
  height: 180,
  margin: { top: 10, right: 8, bottom: 26, left: 36 },
  barShare: 0.68,
  labelEvery: 70,
};

/**
 * A bar chart in SVG: one bar per day, four gridlines with round values, a few day labels. The picture is `role=img`
 * with a summary as its name (totals and the busiest day); the exact numbers are in the table the panel toggles, and
 * each bar has a tooltip.
 */
function BarChart(props: {
  id: string;
  title: string;
  unit: [string, string];
  data: { date: string; value: number }[];
  tone: 'accent' | 'teal';
}) {
  const { data } = props;
  const total = data.reduce((s, d) => s + d.value, 0);
  const peak = data.reduce((best, d) => (d.value > best.value ? d : best), data[0] ?? { date: '', value: 0 });
  const word = (n: number) => (n === 1 ? props.unit[0] : props.unit[1]);
  const summary =
    total === 0
      ? `No ${props.unit[1]} in the last ${data.length} days.`
      : `${formatNumber(total)} ${word(total)} in the last ${data.length} days; the most, ${formatNumber(peak.value)}, on ${dayLong.format(dayOf(peak.date))}.`;

  return (
    <figure class={`chart chart-${props.tone}`}>
      <figcaption class="chart-title" id={`${props.id}-title`}>
        {props.title}
        <span class="chart-total">
          {formatNumber(total)} {word(total)}
        </span>
      </figcaption>
      <DayChart
        days={data}
        max={Math.max(0, ...data.map((d) => d.value))}
        frame={FRAME}
        labelledBy={`${props.id}-title ${props.id}-desc`}
        testId={props.id}
        day={(d, slot) => {
          const h = Math.max(d.value > 0 ? 2 : 0, slot.y(0) - slot.y(d.value));
          return (
            <g key={d.date} class="chart-bar">
              <rect {...slot.band} class="chart-hit">
                <title>
                  {dayLong.format(dayOf(d.date))}: {formatNumber(d.value)} {word(d.value)}
                </title>
              </rect>
              <rect
                x={slot.x}
                y={slot.y(0) - h}
                width={slot.barW}
                height={h}
                rx={Math.min(3, slot.barW / 3)}
                class="chart-fill"
              />
            </g>
          );
        }}
      >
        <desc id={`${props.id}-desc`}>{summary}</desc>
      </DayChart>
    </figure>
  );
}

/** "run message" → "Run message": the ledger's reasons are written in lower case. */
const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The credits ledger, newest first, a page at a time. */
function Ledger() {
  const [entries, setEntries] = useState<LedgerEntry[]>([]);
  const [next, setNext] = useState<string | undefined>(undefined);
  const [state, setState] = useState<'loading' | 'ready' | 'more'>('loading');
  const [failure, setFailure] = useState<Failure | undefined>();

  async function load(cursor?: string) {
    setState(cursor ? 'more' : 'loading');
    setFailure(undefined);
    const res = await billingApi.ledger(cursor, LEDGER_PAGE);
    setState('ready');
    if (!res.ok) {
      setFailure(res);
      return;
    }
    setEntries((prev) => (cursor ? [...prev, ...res.value.entries] : res.value.entries));
    setNext(res.value.next_cursor || undefined);
  }

  useEffect(() => {
    void load();
  }, []);

  return (
    <Panel
      title="Credits ledger"
      id="ledger"
      description="Every grant (+) and every charge of a run (−), newest first."
    >
      {state === 'loading' && <Loading label="Loading the ledger…" />}
      {state !== 'loading' && entries.length === 0 && !failure && <p class="muted">No entries yet.</p>}
      {entries.length > 0 && (
        <div class="table-scroll">
          <table class="data-table ledger-table" data-testid="ledger">
            <thead>
              <tr>
                <th scope="col" class="ledger-when">
                  When
                </th>
                <th scope="col">What</th>
                <th scope="col" class="num">
                  Credits
                </th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td class="ledger-when">{formatDateTime(e.created_at)}</td>
                  <td>
                    <span class="ledger-reason">{sentence(e.reason) || (e.run_id ? 'Run' : '—')}</span>
                    {e.run_id && <code class="ledger-run">{e.run_id}</code>}
                    <span class="ledger-when-inline">{formatDateTime(e.created_at)}</span>
                  </td>
                  <td class={`num ${e.amount >= 0 ? 'amount-plus' : 'amount-minus'}`}>
                    {e.amount >= 0 ? '+' : '−'}
                    {formatNumber(Math.abs(e.amount))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {failure && (
        <ErrorBox
          failure={failure}
          title="The ledger cannot be read."
          onRetry={() => void load(entries.length ? next : undefined)}
        />
      )}
      {next && !failure && (
        <div class="ledger-more">
          <Button small busy={state === 'more'} busyLabel="Loading…" onClick={() => void load(next)}>
            Show older entries
          </Button>
        </div>
      )}
    </Panel>
  );
}
