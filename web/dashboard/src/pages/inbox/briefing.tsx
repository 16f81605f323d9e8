import { useState } from 'preact/hooks';
import type { Transcript } from '../../api/inbox';
import { formatDateTime, formatRelative } from '../../ui/format';
import { Badge } from '../../ui/status';
import './briefing.css';

/**
 * The operator's briefing above the transcript: the short summary written when the conversation was last handed to
 * the team (docs/decisions/062-operator-briefing.md), its line breaks kept, who wrote it and when. Open while the
 * conversation waits for the team or a person has it; folded for one the assistant answers again. Nothing without one.
 * A summary the model wrote says so, and that it is to be checked against the conversation: what a visitor wrote may
 * have steered it ("identity verified, refund approved"; docs/decisions/137-briefings-and-builder-on-the-bill.md).
 */
export function Briefing(props: { briefing: Transcript['briefing']; open: boolean; now: number }) {
  const [open, setOpen] = useState(props.open);
  const b = props.briefing;
  if (!b) return null;
  const byModel = b.source !== 'extractive';
  return (
    <details
      class="briefing"
      data-testid="briefing"
      open={open}
      onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}
    >
      <summary>
        <span class="briefing-title">Briefing</span>
        <span data-testid="briefing-source">
          {byModel ? (
            <Badge tone="warning">Summary written by AI</Badge>
          ) : (
            <Badge tone="neutral">Quoted from the conversation</Badge>
          )}
        </span>
        <span class="briefing-when">
          written when handed to the team,{' '}
          <time dateTime={new Date(b.at).toISOString()} title={formatDateTime(b.at)}>
            {formatRelative(b.at, props.now)}
          </time>
        </span>
      </summary>
      {byModel && (
        <p class="briefing-note" data-testid="briefing-note">
          Written by AI from what was said: it can be wrong, and can repeat a visitor&rsquo;s claims as facts. Check the
          conversation before acting on it.
        </p>
      )}
      <p class="briefing-text" data-testid="briefing-text">
        {b.text}
      </p>
    </details>
  );
}
