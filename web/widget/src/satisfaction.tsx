import { useState } from 'preact/hooks';
import type { Conversation, State } from './conversation';
import { LIMITS } from '../../shared/contract';

const WORDS = ['', 'Very bad', 'Bad', 'Okay', 'Good', 'Very good'];

/**
 * After a person resolved the conversation: said in the timeline, and "how was the help you got?" on a 1–5 scale with
 * an optional comment (docs/widget.md). Answered, it thanks the visitor; writing again makes it go.
 */
export function SatisfactionCard(props: { conversation: Conversation; asked: NonNullable<State['satisfaction']> }) {
  const [score, setScore] = useState<number | null>(null);
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);

  if (props.asked.answered) {
    return (
      <div class="csat csat-done" role="status">
        Thank you for telling us how it went.
      </div>
    );
  }

  async function submit(e: Event) {
    e.preventDefault();
    if (score === null || busy) return;
    setBusy(true);
    await props.conversation.rateSatisfaction(score, comment);
    setBusy(false);
  }

  return (
    <form class="csat" aria-labelledby="ap-csat-title" onSubmit={(e) => void submit(e)}>
      <p class="csat-resolved">The team marked this conversation as resolved.</p>
      <h3 id="ap-csat-title">How was the help you got?</h3>
      <div class="csat-scale" role="radiogroup" aria-labelledby="ap-csat-title">
        {[1, 2, 3, 4, 5].map((n) => (
          <button
            key={n}
            type="button"
            role="radio"
            class="csat-score"
            aria-checked={score === n ? 'true' : 'false'}
            aria-label={`${n} of 5: ${WORDS[n]}`}
            title={WORDS[n]}
            onClick={() => setScore(n)}
          >
            {n}
          </button>
        ))}
      </div>
      <div class="csat-ends" aria-hidden="true">
        <span>{WORDS[1]}</span>
        <span>{WORDS[5]}</span>
      </div>
      {score !== null && (
        <>
          <label for="ap-csat-comment">Anything to add? (optional)</label>
          <textarea
            id="ap-csat-comment"
            rows={2}
            maxLength={LIMITS.widget.satisfactionCommentChars}
            value={comment}
            onInput={(e) => setComment(e.currentTarget.value)}
          />
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Sending…' : 'Send feedback'}
          </button>
        </>
      )}
    </form>
  );
}
