import { useState } from 'preact/hooks';
import { type Action, type Approval, automation } from '../../api/automation';
import { Button, ConfirmDelete, RefreshButton } from '../../ui/buttons';
import { Field, valueOf } from '../../ui/fields';
import { Time } from '../../ui/format';
import { Empty, Panel } from '../../ui/page';
import { Loaded, useAction, useResource } from '../../ui/resource';
import { Badge, ErrorBox } from '../../ui/status';
import type { TabProps } from './tab';

/** HTTP actions the agent may call, and the calls that wait for a person's approval. */
export function ActionsTab(props: TabProps) {
  return (
    <>
      <Approvals botId={props.bot.id} />
      <Actions botId={props.bot.id} />
    </>
  );
}

function Approvals(props: { botId: string }) {
  const approvals = useResource(() => automation.approvals(props.botId), [props.botId]);
  return (
    <Panel
      title="Waiting for approval"
      id="approvals"
      description="Calls of actions marked “needs approval”: the run waits until someone decides."
      actions={<RefreshButton resource={approvals} />}
    >
      <Loaded resource={approvals.resource} retry={approvals.retry} label="Loading approvals…">
        {(data) => {
          const waiting = data.approvals.filter((a) => a.status === 'waiting' || a.status === 'pending');
          const decided = data.approvals.filter((a) => !waiting.includes(a)).slice(0, 10);
          return (
            <>
              {waiting.length === 0 ? (
                <Empty title="Nothing waits for approval" />
              ) : (
                <ul class="list" aria-label="Waiting for approval">
                  {waiting.map((approval) => (
                    <ApprovalRow
                      key={approval.id}
                      botId={props.botId}
                      approval={approval}
                      onDecided={(status) =>
                        approvals.set((d) => ({
                          approvals: d.approvals.map((a) => (a.id === approval.id ? { ...a, status } : a)),
                        }))
                      }
                    />
                  ))}
                </ul>
              )}
              {decided.length > 0 && (
                <details class="details">
                  <summary>Recent decisions ({decided.length})</summary>
                  <ul class="list">
                    {decided.map((a) => (
                      <li key={a.id} class="list-row">
                        <div>
                          <code>{a.action}</code>
                          <span class="cell-sub">
                            Run {a.run_id} · <Time ms={a.created_at} relative />
                          </span>
                        </div>
                        <Badge
                          tone={a.status === 'approved' ? 'success' : a.status === 'rejected' ? 'danger' : 'neutral'}
                        >
                          {a.status}
                        </Badge>
                      </li>
                    ))}
                  </ul>
                </details>
              )}
            </>
          );
        }}
      </Loaded>
    </Panel>
  );
}

function ApprovalRow(props: { botId: string; approval: Approval; onDecided: (status: string) => void }) {
  const { approval } = props;
  const action = useAction();
  async function decide(approve: boolean) {
    const res = await action.run(
      () => automation.decide(props.botId, approval.id, approve),
      approve ? 'approve' : 'reject',
    );
    if (res.ok) props.onDecided(res.value.status);
  }
  return (
    <li>
      <div class="list-row">
        <div>
          <span class="cell-main">
            <code>{approval.action}</code>
          </span>
          <span class="cell-sub">
            Run {approval.run_id} · asked <Time ms={approval.created_at} relative />
          </span>
          <pre class="source-text">{JSON.stringify(approval.arguments, null, 2)}</pre>
        </div>
        <div class="row-actions">
          <Button
            small
            variant="primary"
            busy={action.busy === 'approve'}
            busyLabel="Approving…"
            disabled={Boolean(action.busy)}
            onClick={() => void decide(true)}
          >
            Approve
          </Button>
          <Button
            small
            busy={action.busy === 'reject'}
            busyLabel="Rejecting…"
            disabled={Boolean(action.busy)}
            onClick={() => void decide(false)}
          >
            Reject
          </Button>
        </div>
      </div>
      {action.failure && <ErrorBox failure={action.failure} />}
    </li>
  );
}

function Actions(props: { botId: string }) {
  const actions = useResource(() => automation.actions(props.botId), [props.botId]);
  const [adding, setAdding] = useState(false);
  return (
    <Panel
      title="Actions"
      id="actions"
      description="HTTP endpoints of yours the agent may call while it works, described so the model knows when to."
      actions={
        !adding && (
          <Button small variant="primary" onClick={() => setAdding(true)}>
            New action
          </Button>
        )
      }
    >
      {adding && (
        <AddAction
          botId={props.botId}
          onCancel={() => setAdding(false)}
          onAdded={(a) => {
            setAdding(false);
            actions.set((d) => ({ actions: [...d.actions, a] }));
          }}
        />
      )}
      <Loaded resource={actions.resource} retry={actions.retry} label="Loading actions…">
        {(data) =>
          data.actions.length === 0 ? (
            <Empty title="No actions">
              <p>With actions the agent can look things up or change them in your systems.</p>
            </Empty>
          ) : (
            <ul class="list" aria-label="Actions">
              {data.actions.map((a) => (
                <ActionRow
                  key={a.id}
                  botId={props.botId}
                  action={a}
                  onRemoved={() => actions.set((d) => ({ actions: d.actions.filter((x) => x.id !== a.id) }))}
                />
              ))}
            </ul>
          )
        }
      </Loaded>
    </Panel>
  );
}

function ActionRow(props: { botId: string; action: Action; onRemoved: () => void }) {
  const { action: a } = props;
  const remove = useAction();
  const [confirming, setConfirming] = useState(false);
  async function confirm() {
    const res = await remove.run(() => automation.removeAction(props.botId, a.name));
    if (res.ok) props.onRemoved();
  }
  return (
    <li>
      <div class="list-row">
        <div>
          <span class="cell-main">
            <code>{a.name}</code>
          </span>{' '}
          {a.requires_approval && <Badge tone="warning">Needs approval</Badge>}{' '}
          {a.admin_only && <Badge>Admins only</Badge>}
          <span class="cell-sub">{a.description}</span>
          <span class="cell-sub">
            <code>
              {a.method} {a.url}
            </code>
          </span>
        </div>
        {!confirming && (
          <div class="row-actions">
            <Button small variant="ghost" onClick={() => setConfirming(true)} aria-label={`Delete ${a.name}`}>
              Delete
            </Button>
          </div>
        )}
      </div>
      {confirming && (
        <ConfirmDelete
          what="action"
          busy={Boolean(remove.busy)}
          onDelete={() => void confirm()}
          onKeep={() => setConfirming(false)}
        >
          Delete {a.name}? Runs stop calling it at once.
        </ConfirmDelete>
      )}
      {remove.failure && <ErrorBox failure={remove.failure} />}
    </li>
  );
}

const EMPTY_SCHEMA = '{\n  "type": "object",\n  "properties": {}\n}';

function AddAction(props: { botId: string; onCancel: () => void; onAdded: (a: Action) => void }) {
  const [form, setForm] = useState({
    name: '',
    description: '',
    method: 'POST' as Action['method'],
    url: '',
    parameters: EMPTY_SCHEMA,
    admin_only: false,
    requires_approval: false,
  });
  const [schemaError, setSchemaError] = useState<string | undefined>();
  const action = useAction();

  async function submit(event: Event) {
    event.preventDefault();
    let parameters: Record<string, unknown>;
    try {
      parameters = JSON.parse(form.parameters || '{}') as Record<string, unknown>;
      if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) throw new Error();
    } catch {
      setSchemaError('Write a JSON object (a JSON Schema of the arguments).');
      return;
    }
    setSchemaError(undefined);
    const res = await action.run(() =>
      automation.createAction(props.botId, { ...form, name: form.name.trim(), url: form.url.trim(), parameters }),
    );
    if (res.ok) props.onAdded(res.value);
  }

  return (
    <form class="subform" onSubmit={(e) => void submit(e)} aria-labelledby="new-action-title">
      <h3 id="new-action-title" class="subheading">
        New action
      </h3>
      <div class="form-row">
        <Field id="action-name" label="Name" hint="Letters, digits, _ and -; the model sees it.">
          <input
            id="action-name"
            required
            pattern="[A-Za-z0-9_\-]{1,64}"
            spellcheck={false}
            value={form.name}
            onInput={(e) => setForm({ ...form, name: valueOf(e) })}
          />
        </Field>
        <Field id="action-method" label="Method">
          <select
            id="action-method"
            value={form.method}
            onChange={(e) => setForm({ ...form, method: valueOf(e) as Action['method'] })}
          >
            {['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </Field>
      </div>
      <Field id="action-url" label="Address">
        <input
          id="action-url"
          type="url"
          required
          placeholder="https://api.example.com/orders/lookup"
          value={form.url}
          onInput={(e) => setForm({ ...form, url: valueOf(e) })}
        />
      </Field>
      <Field id="action-description" label="What it does" hint="The model decides from this when to call it.">
        <textarea
          id="action-description"
          rows={2}
          required
          value={form.description}
          onInput={(e) => setForm({ ...form, description: valueOf(e) })}
        />
      </Field>
      <Field id="action-parameters" label="Arguments (JSON Schema)" error={schemaError}>
        <textarea
          id="action-parameters"
          class="mono"
          rows={5}
          spellcheck={false}
          value={form.parameters}
          onInput={(e) => setForm({ ...form, parameters: valueOf(e) })}
        />
      </Field>
      <label class="check">
        <input
          type="checkbox"
          checked={form.requires_approval}
          onChange={(e) => setForm({ ...form, requires_approval: (e.currentTarget as HTMLInputElement).checked })}
        />
        <span>Each call waits for approval here</span>
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={form.admin_only}
          onChange={(e) => setForm({ ...form, admin_only: (e.currentTarget as HTMLInputElement).checked })}
        />
        <span>Only for visitors confirmed as admins</span>
      </label>
      {action.failure && <ErrorBox failure={action.failure} />}
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={Boolean(action.busy)} busyLabel="Adding…">
          Add action
        </Button>
        <Button variant="ghost" disabled={Boolean(action.busy)} onClick={props.onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
