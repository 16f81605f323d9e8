import type { CheckRun } from '../../../api/checks';
import { useWidth } from '../../../chart-size';
import { Time, formatDateTime } from '../../../ui/format';
import { Badge } from '../../../ui/status';
import { changeWords, percentOf, scoreWords, trendOf } from './model';

const HEIGHT = 132;
const M = { top: 12, right: 16, bottom: 12, left: 44 };
const TICKS = [0, 0.5, 1];
/** Runs in the table below the line (the line has every run read). */
const RUNS_LISTED = 10;

/** The line of scores; mounted once there is a score, so its width is measured from the start. */
function TrendChart(props: { trend: (CheckRun & { score: number })[] }) {
  const { trend } = props;
  const [box, width] = useWidth<HTMLDivElement>();
  const innerW = Math.max(0, width - M.left - M.right);
  const innerH = HEIGHT - M.top - M.bottom;
  const x = (i: number) => M.left + (trend.length === 1 ? innerW / 2 : (i / (trend.length - 1)) * innerW);
  const y = (score: number) => M.top + innerH - score * innerH;
  const label =
    `Score of the last ${trend.length} check${trend.length === 1 ? '' : 's'}, oldest to newest: ` +
    trend.map((r) => percentOf(r.score)).join(', ');
  return (
    <div class="check-trend-box" ref={box} style={{ minHeight: `${HEIGHT}px` }}>
      {width > 0 && (
        <svg
          class="check-trend-chart"
          width={width}
          height={HEIGHT}
          viewBox={`0 0 ${width} ${HEIGHT}`}
          role="img"
          aria-label={label}
          data-testid="check-trend"
        >
          {TICKS.map((t) => (
            <g key={t} class="check-trend-grid">
              <line x1={M.left} x2={width - M.right} y1={y(t)} y2={y(t)} />
              <text x={M.left - 8} y={y(t)} dy="0.32em" text-anchor="end">
                {percentOf(t)}
              </text>
            </g>
          ))}
          {trend.length > 1 && (
            <polyline class="check-trend-line" points={trend.map((r, i) => `${x(i)},${y(r.score)}`).join(' ')} />
          )}
          {trend.map((r, i) => (
            <circle key={r.id} class="check-trend-point" cx={x(i)} cy={y(r.score)} r={4}>
              <title>{`${formatDateTime(r.started_at)}: ${scoreWords(r, true)}`}</title>
            </circle>
          ))}
        </svg>
      )}
    </div>
  );
}

/**
 * The score over past checks: a line of the finished runs' scores (0–100 %), oldest to newest, named in words for
 * screen readers, with the runs in a table below. Drawn in real pixels as the day charts are (chart-size.ts).
 */
export function Trend(props: { runs: CheckRun[] }) {
  const trend = trendOf(props.runs);
  const change = changeWords(trend);
  return (
    <div class="check-trend">
      {trend.length > 0 && (
        <>
          <p class="check-trend-summary" data-testid="check-trend-summary">
            Latest: <strong>{scoreWords(trend[trend.length - 1], true)}</strong>
            {change && <span class="muted"> · {change}</span>}
          </p>
          <TrendChart trend={trend} />
        </>
      )}
      <div class="table-wrap">
        <table class="table check-runs" data-testid="check-runs">
          <caption class="visually-hidden">The last {RUNS_LISTED} checks at most, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Checked</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {props.runs.slice(0, RUNS_LISTED).map((r) => (
              <tr key={r.id} data-testid="check-run">
                <td>
                  <Time ms={r.started_at} />
                </td>
                <td>
                  {r.status === 'done' ? (
                    <span>
                      {scoreWords(r, true)}
                      {r.missing > 0 && (
                        <span class="muted">
                          {' '}
                          · {r.missing} source{r.missing === 1 ? '' : 's'} gone
                        </span>
                      )}
                    </span>
                  ) : r.status === 'running' ? (
                    <Badge tone="info">Under way</Badge>
                  ) : (
                    <Badge tone="danger">{r.error ?? 'Failed'}</Badge>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
