import { useEffect, useRef, useState } from 'preact/hooks';
import { type Source, agents } from '../../api/agents';
import { Link, usePlace } from '../../router';
import {
  Badge,
  Button,
  Empty,
  ErrorBox,
  Field,
  Loaded,
  Panel,
  Time,
  useAction,
  ConfirmDelete,
  RefreshButton,
  useResource,
  valueOf,
} from '../../ui';
import { ScanPanel } from './scan-panel';
import './knowledge.css';
import type { TabProps } from './tab';

const SOURCES_PER_PAGE = 20;

/** The Knowledge tab opened on one source (`?source=`): it is shown first, whatever page of the list it is on. */
export const knowledgeAddress = (botId: string, sourceId?: string) =>
  `/agents/${botId}/knowledge${sourceId ? `?source=${encodeURIComponent(sourceId)}` : ''}`;

/**
 * The agent's knowledge: site scans with live progress, texts added by hand, and every source, page by page. Opened
 * with `?source=` (a link from elsewhere, e.g. an answer just added in Insights), that source comes first, highlighted.
 */
export function KnowledgeTab(props: TabProps) {
  const focused = usePlace().search.get('source');
  // Bumped when something changed the sources (a text added, a scan finished), to read the list again.
  const [version, setVersion] = useState(0);
  return (
    <>
      {focused && (
        <FocusedSource key={focused} {...props} sourceId={focused} onChanged={() => setVersion((v) => v + 1)} />
      )}
      {props.admin && (
        <div class="grid-2">
          <ScanPanel {...props} onFinished={() => setVersion((v) => v + 1)} />
          <AddText {...props} onAdded={() => setVersion((v) => v + 1)} />
        </div>
      )}
      <Sources {...props} version={version} />
    </>
  );
}

/**
 * The source the address names, read on its own (the list is oldest first, 20 a page: it may be pages away), with its
 * text shown and the list's actions; scrolled to and focused once read. Gone (deleted, or a stale link): said so.
 */
function FocusedSource(props: TabProps & { sourceId: string; onChanged: () => void }) {
  const { bot, sourceId } = props;
  const source = useResource(() => agents.source(bot.id, sourceId), [bot.id, sourceId]);
  const box = useRef<HTMLDivElement>(null);
  const shown = useRef(false);
  const ready = source.state === 'ready';
  useEffect(() => {
    if (!ready || shown.current || !box.current) return;
    shown.current = true;
    box.current.scrollIntoView({ block: 'start' });
    box.current.focus({ preventScroll: true });
  }, [ready]);
  const changedHere = () => {
    source.reload();
    props.onChanged();
  };
  const gone = source.state === 'error' && source.failure.status === 404;
  return (
    <div class="source-focus" ref={box} tabIndex={-1} data-testid="focused-source">
      <Panel
        title="The source you opened"
        id="focused-source"
        actions={<Link href={knowledgeAddress(bot.id)}>Show only the list</Link>}
      >
        {gone ? (
          <p data-testid="focused-source-gone">
            That source no longer exists: it was deleted, or the link is old. The agent&rsquo;s sources are listed
            below.
          </p>
        ) : (
          <Loaded resource={source.resource} retry={source.retry} label="Loading the source…">
            {(data) => (
              <ul class="list" aria-label="The source you opened">
                <SourceRow
                  key={`${data.source_id} ${data.updated_at}`}
                  botId={bot.id}
                  source={data}
                  text={data.text}
                  canDelete={props.admin}
                  onRemoved={changedHere}
                  onEdited={changedHere}
                />
              </ul>
            )}
          </Loaded>
        )}
      </Panel>
    </div>
  );
}

function AddText(props: TabProps & { onAdded: () => void }) {
  const [title, setTitle] = useState('');
  const [text, setText] = useState('');
  const [added, setAdded] = useState('');
  const action = useAction();

  async function submit(event: Event) {
    event.preventDefault();
    setAdded('');
    if (!text.trim()) return;
    const res = await action.run(() => agents.addKnowledge(props.bot.id, { title: title.trim() || undefined, text }));
    if (res.ok) {
      setAdded(`Added “${title.trim() || text.trim().split('\n')[0].slice(0, 60)}”.`);
      setTitle('');
      setText('');
      props.onAdded();
    }
  }

  return (
    <Panel title="Add a text" id="add-text" description="Facts, answers, policies: anything the agent should know.">
      <form onSubmit={(e) => void submit(e)}>
        <Field id="knowledge-title" label="Title" optional hint="Without one, the first line is used.">
          <input id="knowledge-title" maxLength={500} value={title} onInput={(e) => setTitle(valueOf(e))} />
        </Field>
        <Field id="knowledge-text" label="Text">
          <textarea id="knowledge-text" rows={6} required value={text} onInput={(e) => setText(valueOf(e))} />
        </Field>
        {action.failure && <ErrorBox failure={action.failure} />}
        <div class="form-actions">
          <Button type="submit" variant="primary" busy={Boolean(action.busy)} busyLabel="Adding…">
            Add text
          </Button>
          <span class="muted small" aria-live="polite" data-testid="text-added">
            {added}
          </span>
        </div>
      </form>
    </Panel>
  );
}

function Sources(props: TabProps & { version: number }) {
  const { bot } = props;
  // cursors[i] reads page i; the first page has none.
  const [cursors, setCursors] = useState<string[]>(['']);
  const [removed, setRemoved] = useState(0);
  const page = cursors.length - 1;
  const sources = useResource(
    () => agents.knowledge(bot.id, cursors[page] || undefined, SOURCES_PER_PAGE),
    [bot.id, page, props.version, removed],
  );
  const next = sources.data?.next_cursor;

  return (
    <Panel
      title="Sources"
      id="sources"
      description="Everything the agent answers from, in the order it was added."
      actions={<RefreshButton resource={sources} />}
    >
      <Loaded resource={sources.resource} retry={sources.retry} label="Loading sources…">
        {(data) =>
          data.sources.length === 0 && page === 0 ? (
            <Empty title="No knowledge yet">
              <p>Add a text or scan a site: the agent answers only from what it knows.</p>
            </Empty>
          ) : (
            <>
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
                  <Button small disabled={page === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
                    ← Previous
                  </Button>
                  <span>Page {page + 1}</span>
                  <Button small disabled={!next} onClick={() => next && setCursors([...cursors, next])}>
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

function SourceRow(props: {
  botId: string;
  source: Source;
  /** The text, shown from the start (the source the address named). */
  text?: string;
  canDelete: boolean;
  onRemoved: () => void;
  onEdited: () => void;
}) {
  const { source } = props;
  const [confirming, setConfirming] = useState(false);
  const [text, setText] = useState<string | undefined>(props.text);
  /** The text being edited (a written text only: a scanned page is read again from its site). */
  const [editing, setEditing] = useState<{ title: string; text: string } | undefined>();
  const remove = useAction();
  const show = useAction();
  const save = useAction();
  const editable = props.canDelete && source.origin !== 'scan';

  async function startEditing() {
    const res = await show.run(() => agents.source(props.botId, source.source_id));
    if (res.ok) {
      setText(undefined);
      setEditing({ title: res.value.title ?? '', text: res.value.text });
    }
  }

  async function saveEdit(event: Event) {
    event.preventDefault();
    if (!editing || !editing.text.trim()) return;
    const res = await save.run(() =>
      agents.addKnowledge(props.botId, {
        source_id: source.source_id,
        title: editing.title.trim() || undefined,
        text: editing.text,
      }),
    );
    if (res.ok) {
      setEditing(undefined);
      props.onEdited();
    }
  }

  async function toggleText() {
    if (text !== undefined) return setText(undefined);
    const res = await show.run(() => agents.source(props.botId, source.source_id));
    if (res.ok) setText(res.value.text);
  }

  async function confirmRemove() {
    const res = await remove.run(() => agents.removeKnowledge(props.botId, source.source_id));
    if (res.ok) props.onRemoved();
  }

  return (
    <li>
      <div class="list-row">
        <div>
          <span class="cell-main">{source.title || source.source_id}</span>
          <span class="cell-sub">
            <Badge tone={source.origin === 'scan' ? 'info' : 'neutral'}>
              {source.origin === 'scan' ? 'Page' : 'Text'}
            </Badge>{' '}
            {source.url ? <span class="break">{source.url}</span> : source.source_id} · {source.fragments} fragment
            {source.fragments === 1 ? '' : 's'} · updated <Time ms={source.updated_at} relative />
          </span>
        </div>
        <div class="row-actions">
          <Button
            small
            variant="ghost"
            onClick={() => void toggleText()}
            busy={Boolean(show.busy)}
            aria-expanded={text !== undefined}
          >
            {text === undefined ? 'Show text' : 'Hide text'}
          </Button>
          {editable && !editing && (
            <Button
              small
              variant="ghost"
              onClick={() => void startEditing()}
              aria-label={`Edit ${source.title || source.source_id}`}
            >
              Edit
            </Button>
          )}
          {props.canDelete && !confirming && (
            <Button
              small
              variant="ghost"
              onClick={() => setConfirming(true)}
              aria-label={`Delete ${source.title || source.source_id}`}
            >
              Delete
            </Button>
          )}
        </div>
      </div>
      {confirming && (
        <ConfirmDelete
          what="source"
          busy={Boolean(remove.busy)}
          onDelete={() => void confirmRemove()}
          onKeep={() => setConfirming(false)}
        >
          Delete this source? The agent forgets it at once.
        </ConfirmDelete>
      )}
      {show.failure && <ErrorBox failure={show.failure} />}
      {remove.failure && <ErrorBox failure={remove.failure} />}
      {text !== undefined && <pre class="source-text">{text}</pre>}
      {editing && (
        <form class="source-edit" onSubmit={(e) => void saveEdit(e)} data-testid="source-edit">
          <Field id={`edit-title-${source.source_id}`} label="Title" optional>
            <input
              id={`edit-title-${source.source_id}`}
              value={editing.title}
              onInput={(e) => setEditing({ ...editing, title: valueOf(e) })}
            />
          </Field>
          <Field
            id={`edit-text-${source.source_id}`}
            label="Text"
            hint="Saving replaces the text: the agent answers from the new one at once."
            error={editing.text.trim() ? undefined : 'The text cannot be empty; delete the source instead.'}
          >
            <textarea
              id={`edit-text-${source.source_id}`}
              rows={8}
              value={editing.text}
              onInput={(e) => setEditing({ ...editing, text: valueOf(e) })}
            />
          </Field>
          {save.failure && <ErrorBox failure={save.failure} />}
          <div class="form-actions">
            <Button
              type="submit"
              variant="primary"
              busy={Boolean(save.busy)}
              busyLabel="Saving…"
              disabled={!editing.text.trim()}
            >
              Save text
            </Button>
            <Button onClick={() => setEditing(undefined)}>Cancel</Button>
          </div>
        </form>
      )}
    </li>
  );
}
