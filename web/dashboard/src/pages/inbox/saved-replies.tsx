import { useState } from 'preact/hooks';
import { inboxApi } from '../../api/inbox';
import { Button } from '../../ui/buttons';
import { valueOf } from '../../ui/fields';
import { useAction, useResource } from '../../ui/resource';
import { ErrorBox } from '../../ui/status';
import './saved-replies.css';
import { LIMITS } from '../../../../shared/contract';

/**
 * The team's saved replies under the composer: pick one to put its text into the reply (the operator can still edit
 * it), save what is typed under a title, delete one. Shared by the workspace.
 */
export function SavedReplies(props: { draft: string; onInsert: (text: string) => void }) {
  const replies = useResource(() => inboxApi.savedReplies(), []);
  const [filter, setFilter] = useState('');
  const [title, setTitle] = useState('');
  const [status, setStatus] = useState('');
  const action = useAction();
  const list = (replies.data?.replies ?? []).filter((r) =>
    `${r.title} ${r.text}`.toLowerCase().includes(filter.trim().toLowerCase()),
  );

  async function save(event: Event) {
    event.preventDefault();
    const res = await action.run(() => inboxApi.saveReply({ title: title.trim(), text: props.draft.trim() }));
    if (res.ok) {
      setTitle('');
      setStatus(`Saved as “${res.value.title}”.`);
      replies.reload();
    }
  }

  async function remove(id: string, name: string) {
    const res = await action.run(() => inboxApi.deleteSavedReply(id));
    if (res.ok) {
      setStatus(`“${name}” deleted.`);
      replies.reload();
    }
  }

  return (
    <details class="saved-replies" data-testid="saved-replies">
      <summary>Saved replies{replies.data ? ` (${replies.data.replies.length})` : ''}</summary>
      {(replies.data?.replies.length ?? 0) > 5 && (
        <input
          type="search"
          class="saved-filter"
          aria-label="Find a saved reply"
          placeholder="Find…"
          value={filter}
          onInput={(e) => setFilter(valueOf(e))}
        />
      )}
      {replies.data && replies.data.replies.length === 0 && (
        <p class="muted small">None yet: type a reply you send often, then save it here under a title.</p>
      )}
      <ul class="saved-list" aria-label="Saved replies">
        {list.map((r) => (
          <li key={r.id} class="saved-row">
            <button
              type="button"
              class="saved-use"
              title={r.text}
              onClick={() => {
                props.onInsert(r.text);
                setStatus(`“${r.title}” put in the reply.`);
              }}
            >
              <strong>{r.title}</strong> <span class="muted">{r.text}</span>
            </button>
            <Button small variant="ghost" aria-label={`Delete ${r.title}`} onClick={() => void remove(r.id, r.title)}>
              Delete
            </Button>
          </li>
        ))}
      </ul>
      {props.draft.trim() && (
        <form class="saved-save" onSubmit={(e) => void save(e)}>
          <input
            aria-label="Title for the text typed above"
            placeholder="Save the text above as…"
            maxLength={LIMITS.inbox.savedReplyTitleChars}
            value={title}
            onInput={(e) => setTitle(valueOf(e))}
          />
          <Button type="submit" small disabled={!title.trim()} busy={Boolean(action.busy)} busyLabel="Saving…">
            Save reply
          </Button>
        </form>
      )}
      {action.failure && <ErrorBox failure={action.failure} />}
      {replies.state === 'error' && <ErrorBox failure={replies.failure} onRetry={replies.retry} />}
      <p class="visually-hidden" aria-live="polite">
        {status}
      </p>
    </details>
  );
}
