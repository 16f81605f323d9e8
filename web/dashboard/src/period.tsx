import { Segmented } from './ui/fields';

/** The reports' period: the last 7, 30 or 90 days, chosen with a row of radio buttons (styles/forms.css .segmented). */

const PERIODS = [7, 30, 90] as const;
export type Period = (typeof PERIODS)[number];

/** `?days=` as one of the periods, else 30. */
export function periodFrom(value: string | null | undefined): Period {
  const n = Number(value);
  return (PERIODS as readonly number[]).includes(n) ? (n as Period) : 30;
}

export function PeriodChoice(props: {
  name: string;
  value: Period;
  onChange: (days: Period) => void;
  legend?: string;
}) {
  return (
    <Segmented
      class="period-choice"
      legend={props.legend ?? 'Period'}
      name={props.name}
      value={props.value}
      options={PERIODS.map((days) => ({ value: days, label: `Last ${days} days` }))}
      onChange={props.onChange}
    />
  );
}
