import { useState } from 'preact/hooks';
import { type Bot, type BotKeys, agents } from '../api/agents';
import { Link } from '../router';
import { useSession } from '../session';
import { AgentCreated } from './agent-created';
import { Button } from '../ui/buttons';
import { Field, valueOf } from '../ui/fields';
import { Time, formatNumber } from '../ui/format';
import { Empty, Page, Panel } from '../ui/page';
import { Loaded, useAction, useResource } from '../ui/resource';
import { ErrorBox } from '../ui/status';

/** `/agents`: the workspace's agents; owners and admins create new ones here (keys shown once). */
export function AgentsPage() {
  const session = useSession();
  const list = useResource(() => agents.list());
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ bot: Bot; keys: BotKeys } | undefined>();

  // A workspace made by sign-up gets agents, and so keys, once its owner's address is confirmed (the API says 403).
  const unconfirmed = !session.me.user.email_verified;
  const createButton = session.admin && !unconfirmed && !creating && (
    <Button variant="primary" onClick={() => setCreating(true)}>
      New agent
    </Button>
  );

  return (
    <Page
      title="Agents"
      description="Each agent answers visitors from its own knowledge, wakes on its triggers and calls its actions."
      actions={createButton}
    >
      {creating && (
        <CreateAgent
          onCancel={() => setCreating(false)}
          onCreated={(result) => {
            setCreating(false);
            setCreated(result);
            list.reload();
          }}
        />
      )}
      {created && <AgentCreated bot={created.bot} keys={created.keys} onDone={() => setCreated(undefined)} />}
      <Panel>
        <Loaded resource={list.resource} retry={list.retry} label="Loading agents…">
          {({ bots }) =>
            bots.length === 0 ? (
              <Empty title="No agents yet">
                {unconfirmed ? (
                  <p data-testid="agents-wait-for-confirmation">
                    Confirm your e-mail address to create your first agent: an agent comes with keys, and keys are
                    issued once the address is shown to be yours. Follow the link we sent you, or send it again above.
                  </p>
                ) : session.admin ? (
                  <p>Create your first agent: give it a name, then teach it with texts or a scan of your site.</p>
                ) : (
                  <p>An owner or admin of the workspace creates agents.</p>
                )}
                {createButton}
              </Empty>
            ) : (
              <div class="table-wrap">
                <table class="table table-stack" aria-label="Agents">
                  <thead>
                    <tr>
                      <th scope="col">Agent</th>
                      <th scope="col" class="num">
                        Knowledge sources
                      </th>
                      <th scope="col" class="num">
                        Waiting for a human
                      </th>
                      <th scope="col">Created</th>
                    </tr>
                  </thead>
                  <tbody>
                    {bots.map((bot) => (
                      <tr key={bot.id}>
                        <td>
                          <Link class="cell-main" href={`/agents/${bot.id}`}>
                            {bot.name}
                          </Link>
                          <span class="cell-sub">{bot.id}</span>
                        </td>
                        <td class="num" data-label="Knowledge sources">
                          {bot.knowledge_sources === undefined ? '—' : formatNumber(bot.knowledge_sources)}
                        </td>
                        <td class="num" data-label="Waiting for a human">
                          {bot.open_requests ? (
                            <Link href="/inbox">{formatNumber(bot.open_requests)}</Link>
                          ) : (
                            (bot.open_requests ?? '—')
                          )}
                        </td>
                        <td data-label="Created">
                          <Time ms={bot.created_at} relative />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )
          }
        </Loaded>
      </Panel>
    </Page>
  );
}

function CreateAgent(props: { onCancel: () => void; onCreated: (result: { bot: Bot; keys: BotKeys }) => void }) {
  const [name, setName] = useState('');
  const [instructions, setInstructions] = useState('');
  const action = useAction();

  async function submit(event: Event) {
    event.preventDefault();
    const res = await action.run(() =>
      agents.create({ name: name.trim(), instructions: instructions.trim() || undefined }),
    );
    if (res.ok) props.onCreated(res.value);
  }

  return (
    <Panel title="New agent" id="new-agent">
      <form onSubmit={(e) => void submit(e)}>
        <Field id="agent-name" label="Name" hint="Visitors may see it; you can change it later.">
          <input
            id="agent-name"
            required
            maxLength={200}
            autoComplete="off"
            value={name}
            onInput={(e) => setName(valueOf(e))}
            autoFocus
          />
        </Field>
        <Field
          id="agent-instructions"
          label="Instructions"
          optional
          hint="How the agent should behave: tone, what it helps with, what it must not do."
        >
          <textarea
            id="agent-instructions"
            rows={4}
            value={instructions}
            onInput={(e) => setInstructions(valueOf(e))}
          />
        </Field>
        {action.failure && <ErrorBox failure={action.failure} />}
        <div class="form-actions">
          <Button type="submit" variant="primary" busy={Boolean(action.busy)} busyLabel="Creating…">
            Create agent
          </Button>
          <Button variant="ghost" onClick={props.onCancel} disabled={Boolean(action.busy)}>
            Cancel
          </Button>
        </div>
      </form>
    </Panel>
  );
}
