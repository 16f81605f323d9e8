/** The reports' period: the last 7, 30 or 90 days, chosen with a row of radio buttons (styles/forms.css .segmented). */

export const PERIODS = [7, 30, 90] as const;
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
    <fieldset class="period-choice">
      <legend>{props.legend ?? 'Period'}</legend>
      <div class="segmented">
        {PERIODS.map((days) => (
          <label key={days}>
            <input
              type="radio"
              name={props.name}
              value={days}
              checked={props.value === days}
              onChange={() => props.onChange(days)}
            />
            Last {days} days
          </label>
        ))}
      </div>
    </fieldset>
  );
}
