import { useState } from 'preact/hooks';
import { agents } from '../../api/agents';
import { navigate } from '../../router';
import { Button } from '../../ui/buttons';
import { Field, valueOf } from '../../ui/fields';
import { Panel } from '../../ui/page';
import { useAction } from '../../ui/resource';
import { ErrorBox, Notice } from '../../ui/status';
import type { TabProps } from './tab';

/** Deleting an agent, at the foot of its settings: after typing its name, since nothing of it comes back. */
export function DeleteAgent(props: TabProps) {
  const { bot } = props;
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const action = useAction();
  const matches = typed.trim() === bot.name.trim();

  async function remove(event: Event) {
    event.preventDefault();
    if (!matches) return;
    const res = await action.run(() => agents.remove(bot.id));
    if (res.ok) navigate('/agents', { replace: true });
  }

  return (
    <Panel
      title="Delete this agent"
      tone="danger"
      id="delete-agent"
      description="Its knowledge, triggers, actions, keys and conversations go with it. This cannot be undone."
    >
      {!open ? (
        <Button variant="danger" onClick={() => setOpen(true)}>
          Delete agent…
        </Button>
      ) : (
        <form onSubmit={(e) => void remove(e)}>
          <Notice tone="warning">Widgets and integrations using this agent&rsquo;s keys stop working at once.</Notice>
          <Field
            id="delete-confirm"
            label={
              <>
                Type <strong>{bot.name}</strong> to confirm
              </>
            }
          >
            <input
              id="delete-confirm"
              autoComplete="off"
              spellcheck={false}
              value={typed}
              onInput={(e) => setTyped(valueOf(e))}
              autoFocus
            />
          </Field>
          {action.failure && <ErrorBox failure={action.failure} />}
          <div class="form-actions">
            <Button
              type="submit"
              variant="danger"
              disabled={!matches}
              busy={Boolean(action.busy)}
              busyLabel="Deleting…"
            >
              Delete {bot.name} for good
            </Button>
            <Button
              variant="ghost"
              onClick={() => {
                setOpen(false);
                setTyped('');
              }}
              disabled={Boolean(action.busy)}
            >
              Cancel
            </Button>
          </div>
        </form>
      )}
    </Panel>
  );
}
