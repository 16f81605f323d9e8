import { useState } from 'preact/hooks';
import { type Source, agents } from '../../api/agents';
import { knowledgeFileUrl } from '../../api/uploads';
import { Button, ConfirmDelete } from '../../ui/buttons';
import { Field, valueOf } from '../../ui/fields';
import { Time } from '../../ui/format';
import { useAction } from '../../ui/resource';
import { Badge, ErrorBox } from '../../ui/status';
import { formatSize } from './uploads-model';

type Passage = { text: string; heading_path: string[]; page: number | null };
/** A written text being edited: its title and text as typed. */
type Editing = { title: string; text: string };

const KIND: Record<string, { label: string; tone: 'info' | 'neutral' | 'success' }> = {
  page: { label: 'Page', tone: 'info' },
  file: { label: 'File', tone: 'success' },
  text: { label: 'Text', tone: 'neutral' },
};

/**
 * One knowledge source in a list: its title, kind and size, its text on demand, and (for admins) editing a written
 * text in place and deleting it.
 */
export function SourceRow(props: {
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
  /** The passages the source was split into, with their headings and pages, when asked for. */
  const [passages, setPassages] = useState<Passage[] | undefined>();
  /** The text being edited (a written text only: a scanned page is read again from its site). */
  const [editing, setEditing] = useState<Editing | undefined>();
  const remove = useAction();
  const show = useAction();
  const save = useAction();
  const editable = props.canDelete && source.origin === 'api';

  async function togglePassages() {
    if (passages !== undefined) return setPassages(undefined);
    const res = await show.run(() => agents.source(props.botId, source.source_id, { passages: true }));
    if (res.ok) setPassages(res.value.passages ?? []);
  }

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
        <SourceSummary botId={props.botId} source={source} />
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
          <Button small variant="ghost" onClick={() => void togglePassages()} aria-expanded={passages !== undefined}>
            {passages === undefined ? 'Show passages' : 'Hide passages'}
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
      {passages !== undefined && <SourcePassages passages={passages} />}
      {editing && (
        <SourceEditForm
          sourceId={source.source_id}
          editing={editing}
          save={save}
          onChange={setEditing}
          onSubmit={(e) => void saveEdit(e)}
          onCancel={() => setEditing(undefined)}
        />
      )}
    </li>
  );
}

/** What a source is: its title, kind, state and size, where it came from, and when it changed. */
function SourceSummary({ botId, source }: { botId: string; source: Source }) {
  const kind = KIND[source.kind] ?? KIND.text;
  return (
    <div>
      <span class="cell-main">{source.title || source.source_id}</span>
      <span class="cell-sub">
        <Badge tone={kind.tone}>{kind.label}</Badge>{' '}
        {source.status === 'reading' && <Badge tone="info">Reading…</Badge>}
        {source.status === 'failed' && <Badge tone="danger">Failed</Badge>}{' '}
        {source.url ? (
          <span class="break">{source.url}</span>
        ) : source.file ? (
          <a href={knowledgeFileUrl(botId, source.source_id)} download={source.file.name} data-testid="download">
            {source.file.name}
          </a>
        ) : (
          source.source_id
        )}
        {source.file && ` (${formatSize(source.file.size)}${source.file.pages ? `, ${source.file.pages} pages` : ''})`}{' '}
        · {source.fragments} passage
        {source.fragments === 1 ? '' : 's'} · updated <Time ms={source.updated_at} relative />
      </span>
      {source.status === 'failed' && source.reason && (
        <span class="cell-sub source-reason" data-testid="source-reason">
          {source.reason}
        </span>
      )}
    </div>
  );
}

/** The passages the source was split into, with their headings and pages. */
function SourcePassages({ passages }: { passages: Passage[] }) {
  return (
    <ol class="source-passages" aria-label="Passages" data-testid="passages">
      {passages.map((p, i) => (
        <li key={i}>
          <span class="muted small">
            {[...p.heading_path].join(' › ') || 'No heading'}
            {p.page !== null ? ` · page ${p.page}` : ''}
          </span>
          <p>{p.text}</p>
        </li>
      ))}
    </ol>
  );
}

/** Editing a written text in place: saving replaces its text, and the agent answers from the new one at once. */
function SourceEditForm(props: {
  sourceId: string;
  editing: Editing;
  save: Pick<ReturnType<typeof useAction>, 'busy' | 'failure'>;
  onChange: (editing: Editing) => void;
  onSubmit: (event: Event) => void;
  onCancel: () => void;
}) {
  const { sourceId, editing, save, onChange } = props;
  return (
    <form class="source-edit" onSubmit={props.onSubmit} data-testid="source-edit">
      <Field id={`edit-title-${sourceId}`} label="Title" optional>
        <input
          id={`edit-title-${sourceId}`}
          value={editing.title}
          onInput={(e) => onChange({ ...editing, title: valueOf(e) })}
        />
      </Field>
      <Field
        id={`edit-text-${sourceId}`}
        label="Text"
        hint="Saving replaces the text: the agent answers from the new one at once."
        error={editing.text.trim() ? undefined : 'The text cannot be empty; delete the source instead.'}
      >
        <textarea
          id={`edit-text-${sourceId}`}
          rows={8}
          value={editing.text}
          onInput={(e) => onChange({ ...editing, text: valueOf(e) })}
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
        <Button onClick={props.onCancel}>Cancel</Button>
      </div>
    </form>
  );
}
