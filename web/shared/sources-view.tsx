import { type AnswerSource, readSources, sourceHref } from './sources';

/**
 * The sources under an answer, small: "Sources: [1] Returns policy · [2] Shipping". A source with a web address is a
 * link (a new tab); one without is its title as text. A list labelled for screen readers; titles are text nodes,
 * never HTML. Each front end styles `.answer-sources` in its own stylesheet (the widget's shadow root, the dashboard).
 */
export function SourceList(props: { sources: AnswerSource[] | undefined }) {
  const sources = readSources(props.sources);
  if (!sources) return null;
  return (
    <div class="answer-sources" data-testid="answer-sources">
      <span class="answer-sources-label" aria-hidden="true">
        Sources:{' '}
      </span>
      <ul aria-label="Sources">
        {sources.map((s, i) => {
          const href = sourceHref(s.url);
          const label = (
            <>
              <span class="answer-source-ref">[{s.ref}]</span> {s.title.trim() || s.source_id}
              {s.heading ? ` › ${s.heading}` : ''}
              {s.page !== undefined ? `, page ${s.page}` : ''}
            </>
          );
          return (
            <li key={`${s.ref}-${i}`}>
              {href ? (
                <a href={href} target="_blank" rel="noopener noreferrer" title={href}>
                  {label}
                </a>
              ) : (
                label
              )}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
