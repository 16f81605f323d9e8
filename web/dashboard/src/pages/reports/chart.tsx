import type { ResolutionDay, ResolutionReport } from '../../api/reports';
import { niceCeil, useWidth } from '../../chart-size';
import { formatNumber } from '../../ui';
import { OUTCOMES, chartSummary, dayLong, dayOf, dayShort } from './model';

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

function StackedBars(props: { days: ResolutionDay[]; label: string }) {
  const [box, width] = useWidth<HTMLDivElement>();
  const { days } = props;
  const height = 200;
  const m = { top: 10, right: 6, bottom: 26, left: 34 };
  const innerW = Math.max(0, width - m.left - m.right);
  const innerH = height - m.top - m.bottom;
  const top = niceCeil(Math.max(0, ...days.map((d) => d.conversations)));
  const band = days.length ? innerW / days.length : 0;
  const barW = Math.max(2, Math.min(28, band * 0.7));
  const y = (v: number) => m.top + innerH - (v / top) * innerH;
  // Day labels: about one per 64 px, always the last day.
  const every = Math.max(1, Math.ceil(64 / Math.max(band, 1)));
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * top);

  return (
    <div class="report-chart-box" ref={box}>
      {width > 0 && (
        <svg
          width={width}
          height={height}
          viewBox={`0 0 ${width} ${height}`}
          role="img"
          aria-label={props.label}
          data-testid="resolution-chart"
        >
          {ticks.map((t) => (
            <g key={t} class="report-grid">
              <line x1={m.left} x2={width - m.right} y1={y(t)} y2={y(t)} />
              <text x={m.left - 6} y={y(t)} dy="0.32em" text-anchor="end">
                {formatNumber(t)}
              </text>
            </g>
          ))}
          {days.map((d, i) => {
            const x = m.left + i * band + (band - barW) / 2;
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
                <rect x={m.left + i * band} y={m.top} width={band} height={innerH} class="report-hit" />
                {OUTCOMES.map((o) => {
                  const value = d[o.key];
                  if (value === 0) return null;
                  const y0 = y(base);
                  base += value;
                  return (
                    <rect
                      key={o.key}
                      class={`report-${o.tone}`}
                      x={x}
                      y={y(base)}
                      width={barW}
                      height={Math.max(1, y0 - y(base))}
                    />
                  );
                })}
              </g>
            );
          })}
          {days.map((d, i) =>
            (days.length - 1 - i) % every === 0 ? (
              <text
                key={`l-${d.date}`}
                class="report-x"
                x={m.left + i * band + band / 2}
                y={height - 8}
                text-anchor="middle"
              >
                {dayShort.format(dayOf(d.date))}
              </text>
            ) : null,
          )}
          <line class="report-axis" x1={m.left} x2={width - m.right} y1={y(0)} y2={y(0)} />
        </svg>
      )}
    </div>
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
