import type { ComponentChildren } from 'preact';
import { niceCeil, useWidth } from './chart-size';
import { dayOf, dayShort } from './days';
import { formatNumber } from './ui/format';
import './day-chart.css';

/**
 * What the hand-drawn bar charts of days share (billing's usage, the resolution report): an SVG as wide as its box,
 * four gridlines with round values, one band per day, a few day labels (always the last day's) and the axis. What a
 * day's band holds — its bar or stacked bars, its tooltip, its hover target — each chart draws itself.
 */

export interface DayChartFrame {
  height: number;
  margin: { top: number; right: number; bottom: number; left: number };
  /** A bar's share of its day's band (at least 2 px, at most 28). */
  barShare: number;
  /** About one day label per this many pixels. */
  labelEvery: number;
}

/** One day's place in the chart. */
export interface DaySlot {
  /** The day's whole band, top to axis: the hover target. */
  band: { x: number; y: number; width: number; height: number };
  /** The bar's left edge and width, centred in the band. */
  x: number;
  barW: number;
  /** A value's height on the chart. */
  y: (value: number) => number;
}

export function DayChart<D extends { date: string }>(props: {
  days: D[];
  /** The largest value of a day: the axis' top is the round value above it. */
  max: number;
  frame: DayChartFrame;
  testId: string;
  /** The picture's name: in words (`aria-label`), or the ids of what names it (`aria-labelledby`). */
  label?: string;
  labelledBy?: string;
  /** Drawn first inside the SVG (its `<desc>`). */
  children?: ComponentChildren;
  /** One day's `<g>`, keyed by its date. */
  day: (day: D, slot: DaySlot) => ComponentChildren;
}) {
  const [box, width] = useWidth<HTMLDivElement>();
  const { days, frame } = props;
  const { height, margin: m } = frame;
  const innerW = Math.max(0, width - m.left - m.right);
  const innerH = height - m.top - m.bottom;
  const top = niceCeil(props.max);
  const band = days.length ? innerW / days.length : 0;
  const barW = Math.max(2, Math.min(28, band * frame.barShare));
  const y = (v: number) => m.top + innerH - (v / top) * innerH;
  const every = Math.max(1, Math.ceil(frame.labelEvery / Math.max(band, 1)));
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * top);

  return (
    <div class="day-chart-box" style={{ minHeight: `${height}px` }} ref={box}>
      {width > 0 && (
        <svg
          class="day-chart"
          width={width}
          height={height}
          viewBox={`0 0 ${width} ${height}`}
          role="img"
          aria-label={props.label}
          aria-labelledby={props.labelledBy}
          data-testid={props.testId}
        >
          {props.children}
          {ticks.map((t) => (
            <g key={t} class="day-chart-grid">
              <line x1={m.left} x2={width - m.right} y1={y(t)} y2={y(t)} />
              <text x={m.left - 6} y={y(t)} dy="0.32em" text-anchor="end">
                {formatNumber(t)}
              </text>
            </g>
          ))}
          {days.map((d, i) =>
            props.day(d, {
              band: { x: m.left + i * band, y: m.top, width: band, height: innerH },
              x: m.left + i * band + (band - barW) / 2,
              barW,
              y,
            }),
          )}
          {days.map((d, i) =>
            (days.length - 1 - i) % every === 0 ? (
              <text
                key={`l-${d.date}`}
                class="day-chart-x"
                x={m.left + i * band + band / 2}
                y={height - 8}
                text-anchor="middle"
              >
                {dayShort.format(dayOf(d.date))}
              </text>
            ) : null,
          )}
          <line class="day-chart-axis" x1={m.left} x2={width - m.right} y1={y(0)} y2={y(0)} />
        </svg>
      )}
    </div>
  );
}
