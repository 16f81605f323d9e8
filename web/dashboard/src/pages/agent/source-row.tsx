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
  const [editing, setEditing] = useState<{ title: string; text: string } | undefined>();
  const remove = useAction();
  const show = useAction();
  const save = useAction();
  const editable = props.canDelete && source.origin === 'api';
  const kind = KIND[source.kind] ?? KIND.text;

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
        <div>
          <span class="cell-main">{source.title || source.source_id}</span>
          <span class="cell-sub">
            <Badge tone={kind.tone}>{kind.label}</Badge>{' '}
            {source.status === 'reading' && <Badge tone="info">Reading…</Badge>}
            {source.status === 'failed' && <Badge tone="danger">Failed</Badge>}{' '}
            {source.url ? (
              <span class="break">{source.url}</span>
            ) : source.file ? (
              <a
                href={knowledgeFileUrl(props.botId, source.source_id)}
                download={source.file.name}
                data-testid="download"
              >
                {source.file.name}
              </a>
            ) : (
              source.source_id
            )}
            {source.file &&
              ` (${formatSize(source.file.size)}${source.file.pages ? `, ${source.file.pages} pages` : ''})`}{' '}
            · {source.fragments} passage
            {source.fragments === 1 ? '' : 's'} · updated <Time ms={source.updated_at} relative />
          </span>
          {source.status === 'failed' && source.reason && (
            <span class="cell-sub source-reason" data-testid="source-reason">
              {source.reason}
            </span>
          )}
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
      {passages !== undefined && (
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
      )}
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
