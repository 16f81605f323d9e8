import { useRef, useState } from 'preact/hooks';
import { type SourceKind, type SourceOrder, agents } from '../../api/agents';
import { Button, RefreshButton } from '../../ui/buttons';
import { Segmented, valueOf } from '../../ui/fields';
import { Empty, Panel } from '../../ui/page';
import { Loaded, useResource } from '../../ui/resource';
import { useDebounced } from '../../use-debounced';
import { SourceRow } from './source-row';
import type { TabProps } from './tab';

const SOURCES_PER_PAGE = 20;
/** The longest search the API takes (lib/limits.ts, `knowledgeSearchChars`). */
const MAX_SEARCH_CHARS = 200;
/** Typing pauses this long before the list is asked again. */
const SEARCH_DELAY_MS = 300;

const ORDERS: { value: SourceOrder; label: string }[] = [
  { value: 'newest', label: 'Newest first' },
  { value: 'oldest', label: 'Oldest first' },
];

/** The kinds the list can be narrowed to; `all` asks for every kind. */
const KINDS: { value: SourceKind | 'all'; label: string }[] = [
  { value: 'all', label: 'All kinds' },
  { value: 'text', label: 'Texts' },
  { value: 'page', label: 'Pages' },
  { value: 'file', label: 'Files' },
];
const KIND_NAMES: Record<SourceKind, string> = { text: 'texts', page: 'pages', file: 'files' };

/**
 * Every source, a page at a time, newest first unless asked; a search by title, id or the words of the text narrows
 * it, and so does a kind (texts, scanned pages, files). The pages are the API's cursors, read again from the first
 * whenever the search, the kind or the order changes (a cursor belongs to its order).
 */
export function Sources(props: TabProps & { version: number }) {
  const { bot } = props;
  const [typed, setTyped] = useState('');
  const [order, setOrder] = useState<SourceOrder>('newest');
  const [kind, setKind] = useState<SourceKind | 'all'>('all');
  const q = useDebounced(typed.trim(), SEARCH_DELAY_MS);
  const search = useRef<HTMLInputElement>(null);
  // cursors[i] reads page i of the list under `listed`; the first page has none. Another search or order: page one.
  const listed = `${order}\n${kind}\n${q}`;
  const [paging, setPaging] = useState({ listed, cursors: [''] });
  const cursors = paging.listed === listed ? paging.cursors : [''];
  const turn = (next: string[]) => setPaging({ listed, cursors: next });
  const [removed, setRemoved] = useState(0);
  const page = cursors.length - 1;
  const sources = useResource(
    () =>
      agents.knowledge(bot.id, {
        cursor: cursors[page] || undefined,
        limit: SOURCES_PER_PAGE,
        q,
        order,
        kind: kind === 'all' ? undefined : kind,
      }),
    [bot.id, q, order, kind, cursors[page], props.version, removed],
  );
  const next = sources.data?.next_cursor;

  function clear() {
    setTyped('');
    search.current?.focus();
  }

  return (
    <Panel
      title="Sources"
      id="sources"
      description="Everything the agent answers from."
      actions={<RefreshButton resource={sources} />}
    >
      <div class="sources-toolbar">
        <div class="sources-search">
          <label for="sources-search">Search titles and text</label>
          <input
            id="sources-search"
            ref={search}
            type="search"
            maxLength={MAX_SEARCH_CHARS}
            placeholder="Words of a title, an id or the text"
            value={typed}
            onInput={(e) => setTyped(valueOf(e))}
          />
        </div>
        <Segmented legend="Kind" legendHidden name="sources-kind" value={kind} options={KINDS} onChange={setKind} />
        <Segmented
          legend="Order"
          legendHidden
          name="sources-order"
          value={order}
          options={ORDERS}
          onChange={setOrder}
        />
      </div>
      <Loaded resource={sources.resource} retry={sources.retry} label="Loading sources…">
        {(data) =>
          data.sources.length === 0 && page === 0 ? (
            q ? (
              <Empty title={`No ${kind === 'all' ? 'source' : KIND_NAMES[kind].slice(0, -1)} matches “${q}”`}>
                <p>
                  The search looks in the titles and ids of the sources, and for all of its words in their text (any
                  form of a word, as the agent reads them).
                </p>
                <Button small onClick={clear}>
                  Clear the search
                </Button>
              </Empty>
            ) : kind !== 'all' ? (
              <Empty title={`No ${KIND_NAMES[kind]} yet`}>
                <Button small onClick={() => setKind('all')}>
                  Show all kinds
                </Button>
              </Empty>
            ) : (
              <Empty title="No knowledge yet">
                <p>Add a text or scan a site: the agent answers only from what it knows.</p>
              </Empty>
            )
          ) : (
            <>
              {q && (
                <p class="sources-count muted small" aria-live="polite" data-testid="sources-count">
                  {countLine(data.sources.length, page, Boolean(next), q)}{' '}
                  <Button small variant="ghost" onClick={clear}>
                    Clear the search
                  </Button>
                </p>
              )}
              <ul class="list" aria-label="Knowledge sources" data-testid="sources">
                {data.sources.map((source) => (
                  <SourceRow
                    key={source.source_id}
                    botId={bot.id}
                    source={source}
                    canDelete={props.admin}
                    onRemoved={() => setRemoved((n) => n + 1)}
                    onEdited={() => setRemoved((n) => n + 1)}
                  />
                ))}
              </ul>
              {(page > 0 || next) && (
                <nav class="pager" aria-label="Source pages">
                  <Button small disabled={page === 0} onClick={() => turn(cursors.slice(0, -1))}>
                    ← Previous
                  </Button>
                  <span>Page {page + 1}</span>
                  <Button small disabled={!next} onClick={() => next && turn([...cursors, next])}>
                    Next →
                  </Button>
                </nav>
              )}
            </>
          )
        }
      </Loaded>
    </Panel>
  );
}

/** How many sources the search found: all of them once the last page is read, else which ones this page shows. */
function countLine(shown: number, page: number, more: boolean, q: string): string {
  const first = page * SOURCES_PER_PAGE + 1;
  const last = first + shown - 1;
  if (more) return `Showing ${first}–${last} of the sources matching “${q}”.`;
  const found = `${last} source${last === 1 ? ' matches' : 's match'} “${q}”`;
  return page === 0 ? `${found}.` : `${found}; showing ${first}–${last}.`;
}
