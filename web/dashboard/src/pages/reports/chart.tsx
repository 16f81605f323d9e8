import type { ResolutionDay, ResolutionReport } from '../../api/reports';
import { DayChart, type DayChartFrame } from '../../day-chart';
import { dayLong, dayOf } from '../../days';
import { formatNumber } from '../../ui/format';
import { OUTCOMES, chartSummary } from './model';

/**
 * "A chart and its table": conversations per day stacked by outcome, drawn in SVG (no chart library), `role="img"`
 * named by a summary in words; under it the same numbers in a table (the days that had conversations, and the total).
 */
export function ResolutionChart(props: { report: ResolutionReport }) {
  const { days, totals } = props.report;
  return (
    <>
      <figure class="report-chart">
        <figcaption class="report-chart-title" id="resolution-chart-title">
          Conversations per day, by what happened
        </figcaption>
        <ul class="report-legend" aria-hidden="true">
          {OUTCOMES.map((o) => (
            <li key={o.key}>
              <span class={`report-swatch report-${o.tone}`} />
              {o.label}
            </li>
          ))}
        </ul>
        <StackedBars days={days} label={chartSummary(days, totals)} />
      </figure>
      <DaysTable days={days} totals={totals} />
    </>
  );
}

const FRAME: DayChartFrame = {
  height: 200,
  margin: { top: 10, right: 6, bottom: 26, left: 34 },
  barShare: 0.7,
  labelEvery: 64,
};

/** Conversations per day, each day's bar stacked by outcome; its tooltip counts them. */
function StackedBars(props: { days: ResolutionDay[]; label: string }) {
  const { days } = props;
  return (
    <DayChart
      days={days}
      max={Math.max(0, ...days.map((d) => d.conversations))}
      frame={FRAME}
      label={props.label}
      testId="resolution-chart"
      day={(d, slot) => {
        let base = 0;
        return (
          <g key={d.date} class="report-bar" data-date={d.date}>
            <title>
              {dayLong.format(dayOf(d.date))}: {formatNumber(d.conversations)} conversation
              {d.conversations === 1 ? '' : 's'}
              {OUTCOMES.filter((o) => d[o.key] > 0)
                .map((o) => ` · ${o.label.toLowerCase()} ${formatNumber(d[o.key])}`)
                .join('')}
            </title>
            <rect {...slot.band} class="report-hit" />
            {OUTCOMES.map((o) => {
              const value = d[o.key];
              if (value === 0) return null;
              const y0 = slot.y(base);
              base += value;
              return (
                <rect
                  key={o.key}
                  class={`report-${o.tone}`}
                  x={slot.x}
                  y={slot.y(base)}
                  width={slot.barW}
                  height={Math.max(1, y0 - slot.y(base))}
                />
              );
            })}
          </g>
        );
      }}
    />
  );
}

/** The table's columns: the conversations, then each outcome, those resolved by a person beside the handed over. */
const COLUMNS: { key: keyof ResolutionReport['totals']; label: string; short: string }[] = [
  { key: 'conversations', label: 'Conversations', short: 'Conversations' },
  ...OUTCOMES.flatMap((o) =>
    o.key === 'handed_over'
      ? [
          o,
          {
            key: 'resolved_by_person' as const,
            label: 'Of those, resolved by a person',
            short: 'Resolved by a person',
          },
        ]
      : [o],
  ),
];

function DaysTable(props: { days: ResolutionDay[]; totals: ResolutionReport['totals'] }) {
  const shown = props.days.filter((d) => d.conversations > 0).reverse();
  return (
    <div class="table-wrap report-days-wrap">
      <table class="table table-stack report-days" data-testid="resolution-table">
        <caption class="report-days-caption">
          The chart&rsquo;s numbers: each day with conversations, newest first.
        </caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            {COLUMNS.map((c) => (
              <th scope="col" class="num" key={c.key}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {shown.map((d) => (
            <Row key={d.date} head={dayLong.format(dayOf(d.date))} counts={d} />
          ))}
        </tbody>
        <tfoot>
          <Row head="Total" counts={props.totals} />
        </tfoot>
      </table>
    </div>
  );
}

function Row(props: { head: string; counts: ResolutionReport['totals'] }) {
  return (
    <tr data-testid="resolution-row">
      <th scope="row">{props.head}</th>
      {COLUMNS.map((c) => (
        <td class="num" data-label={c.short} key={c.key}>
          {formatNumber(props.counts[c.key])}
        </td>
      ))}
    </tr>
  );
}
