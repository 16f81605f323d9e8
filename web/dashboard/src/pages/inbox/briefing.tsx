import { useState } from 'preact/hooks';
import type { Transcript } from '../../api/ops';
import { formatDateTime, formatRelative } from '../../ui';
import './briefing.css';

/**
 * The operator's briefing above the transcript: the short summary written when the conversation was last handed to
 * the team (docs/decisions/062-operator-briefing.md), its line breaks kept, and when it was written. Open while the
 * conversation waits for the team or a person has it; folded for one the assistant answers again. Nothing without one.
 */
export function Briefing(props: { briefing: Transcript['briefing']; open: boolean; now: number }) {
  const [open, setOpen] = useState(props.open);
  const b = props.briefing;
  if (!b) return null;
  return (
    <details
      class="briefing"
      data-testid="briefing"
      open={open}
      onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}
    >
      <summary>
        <span class="briefing-title">Briefing</span>
        <span class="briefing-when">
          written when handed to the team,{' '}
          <time dateTime={new Date(b.at).toISOString()} title={formatDateTime(b.at)}>
            {formatRelative(b.at, props.now)}
          </time>
        </span>
      </summary>
      <p class="briefing-text" data-testid="briefing-text">
        {b.text}
      </p>
    </details>
  );
}
