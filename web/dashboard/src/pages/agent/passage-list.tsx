import type { FoundPassage } from '../../api/agents';
import { Link } from '../../router';
import './passage-list.css';

/** The Knowledge tab opened on one source (as knowledge.tsx's `knowledgeAddress`; here to keep this file a leaf). */
const sourceAddress = (botId: string, sourceId: string) =>
  `/agents/${botId}/knowledge?source=${encodeURIComponent(sourceId)}`;

/** A score as read: three significant digits (its scale is the ranking's, comparable within one list only). */
const formatScore = (score: number) => (score === 0 ? '0' : score.toPrecision(3));

/** Where a passage sits: its headings below the source's title, and its page. */
function placeOf(p: FoundPassage): string {
  const headings = p.heading_path[0] === p.title ? p.heading_path.slice(1) : p.heading_path;
  return [headings.join(' › '), p.page !== null ? `page ${p.page}` : ''].filter(Boolean).join(' · ');
}

/**
 * Passages ranked, best first: what a question retrieves ("Test a question") or what an answer read (the test chat).
 * Each names its source (a link to it in the Knowledge tab), where it sits, its score and its text.
 */
export function PassageList(props: { botId: string; passages: FoundPassage[]; label: string; testId?: string }) {
  return (
    <ol class="passage-list" aria-label={props.label} data-testid={props.testId}>
      {props.passages.map((p, i) => (
        <li key={`${p.source_id} ${i}`} class="passage-item">
          <div class="passage-head">
            <Link href={sourceAddress(props.botId, p.source_id)} class="passage-title">
              {p.title || p.source_id}
            </Link>
            <span class="muted small passage-place">{placeOf(p)}</span>
            <span class="muted small passage-score" title="Higher ranks first; comparable within this list only">
              score {formatScore(p.score)}
            </span>
          </div>
          <p class="passage-text">{p.text}</p>
        </li>
      ))}
    </ol>
  );
}

/**
 * Under a test chat answer: the passages it read, folded, and what the knowledge was searched with when the message
 * did not stand alone (a follow-up searched in context).
 */
export function ReadPassages(props: { botId: string; searchedWith: string | null; passages: FoundPassage[] }) {
  const { passages } = props;
  return (
    <details class="chat-read" data-testid="answer-passages">
      <summary>
        {passages.length
          ? `Passages read (${passages.length})`
          : 'No passage matched: the agent answered without its knowledge'}
      </summary>
      {props.searchedWith && (
        <p class="muted small" data-testid="searched-with">
          Searched as: “{props.searchedWith.replace(/\s*\n\s*/g, ' / ')}” (the message did not stand alone)
        </p>
      )}
      {passages.length > 0 && <PassageList botId={props.botId} passages={passages} label="Passages the answer read" />}
    </details>
  );
}
