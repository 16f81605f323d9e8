import { useState } from 'preact/hooks';
import { type Trigger, type TriggerCreate, type TriggerKind, automation } from '../../api/automation';
import { Button, ConfirmDelete } from '../../ui/buttons';
import { Field, Segmented, valueOf } from '../../ui/fields';
import { Empty, Panel } from '../../ui/page';
import { Loaded, useAction, useResource } from '../../ui/resource';
import { CopyField, OnceSecrets } from '../../ui/secrets';
import { Badge, ErrorBox } from '../../ui/status';
import { KIND_LABEL, RunLog } from './run-log';
import type { TabProps } from './tab';

/** Triggers (what wakes the agent) and the run log (every wake-up, linked to its workflow in the Temporal UI). */
export function TriggersTab(props: TabProps) {
  const triggers = useResource(() => automation.triggers(props.bot.id), [props.bot.id]);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<(Trigger & { secret?: string }) | undefined>();
  const [runsVersion, setRunsVersion] = useState(0);
  // A run started here: its row is written a moment after the answer, so the log is read until it shows up.
  const [awaited, setAwaited] = useState<{ runId: string; since: number } | undefined>();
  const byId = new Map((triggers.data?.triggers ?? []).map((t) => [t.id, t]));

  return (
    <>
      <Panel
        title="Triggers"
        id="triggers"
        description="What wakes the agent besides chat: a signed webhook, a schedule, a watched address, or a button."
        actions={
          !creating && (
            <Button variant="primary" small onClick={() => setCreating(true)}>
              New trigger
            </Button>
          )
        }
      >
        {creating && (
          <CreateTrigger
            botId={props.bot.id}
            onCancel={() => setCreating(false)}
            onCreated={(trigger) => {
              setCreating(false);
              setCreated(trigger);
              triggers.reload();
            }}
          />
        )}
        {created?.kind === 'webhook' && created.hook_url && (
          <OnceSecrets
            title={`Webhook trigger “${created.name}” created`}
            values={[
              { label: 'Address (POST)', value: created.hook_url, testId: 'hook-url' },
              ...(created.secret ? [{ label: 'Signing secret', value: created.secret, testId: 'hook-secret' }] : []),
            ]}
            onDone={() => setCreated(undefined)}
          >
            <p class="small">
              Sign each request&rsquo;s raw body: header{' '}
              <code>X-Hook-Signature: sha256=&lt;HMAC-SHA256(body, secret)&gt;</code>.
            </p>
          </OnceSecrets>
        )}
        <Loaded resource={triggers.resource} retry={triggers.retry} label="Loading triggers…">
          {(data) =>
            data.triggers.length === 0 ? (
              <Empty title="No triggers">
                <p>Without triggers the agent wakes only when someone chats with it.</p>
              </Empty>
            ) : (
              <ul class="list" aria-label="Triggers">
                {data.triggers.map((trigger) => (
                  <TriggerRow
                    key={trigger.id}
                    botId={props.bot.id}
                    trigger={trigger}
                    onChanged={(next) =>
                      triggers.set((d) => ({ triggers: d.triggers.map((t) => (t.id === next.id ? next : t)) }))
                    }
                    onRemoved={() => triggers.set((d) => ({ triggers: d.triggers.filter((t) => t.id !== trigger.id) }))}
                    onRan={(runId) => {
                      if (runId) setAwaited({ runId, since: Date.now() });
                      setRunsVersion((v) => v + 1);
                    }}
                  />
                ))}
              </ul>
            )
          }
        </Loaded>
      </Panel>
      <RunLog
        botId={props.bot.id}
        version={runsVersion}
        triggers={byId}
        awaited={awaited}
        onFound={() => setAwaited(undefined)}
      />
    </>
  );
}

function describeTrigger(t: Trigger): string {
  if (t.kind === 'schedule' && t.schedule) {
    return t.schedule.cron ? `Cron ${t.schedule.cron} (UTC)` : `Every ${formatSeconds(t.schedule.every_seconds ?? 0)}`;
  }
  if (t.kind === 'poll' && t.poll) return `Reads ${t.poll.url} every ${formatSeconds(t.poll.every_seconds ?? 0)}`;
  if (t.kind === 'webhook') return t.mode === 'wait' ? 'Webhook, answers with the result' : 'Webhook, answers at once';
  return 'Started from here or by the builder';
}

function formatSeconds(s: number): string {
  if (s % 86_400 === 0) return `${s / 86_400} d`;
  if (s % 3600 === 0) return `${s / 3600} h`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

function TriggerRow(props: {
  botId: string;
  trigger: Trigger;
  onChanged: (t: Trigger) => void;
  onRemoved: () => void;
  onRan: (runId?: string) => void;
}) {
  const { trigger } = props;
  const action = useAction();
  const [confirming, setConfirming] = useState(false);
  const [ran, setRan] = useState('');

  async function toggle() {
    const res = await action.run(
      () => automation.setTriggerEnabled(props.botId, trigger.id, !trigger.enabled),
      'toggle',
    );
    if (res.ok) props.onChanged(res.value);
  }
  async function run() {
    setRan('');
    const res = await action.run(() => automation.runTrigger(props.botId, trigger.id), 'run');
    if (res.ok) {
      setRan(res.value.status === 'done' ? 'Run finished: see the run log.' : 'Run started: see the run log.');
      props.onRan(res.value.run_id);
    } else {
      props.onRan(); // a failed synchronous run is in the log too
    }
  }
  async function remove() {
    const res = await action.run(() => automation.removeTrigger(props.botId, trigger.id), 'remove');
    if (res.ok) props.onRemoved();
  }

  const status = trigger.enabled ? (
    <Badge tone="success">On</Badge>
  ) : trigger.disabled_reason === 'failures' ? (
    <Badge tone="danger">Paused after failures</Badge>
  ) : (
    <Badge>Off</Badge>
  );

  return (
    <li data-testid={`trigger-${trigger.id}`}>
      <div class="list-row">
        <div>
          <span class="cell-main">{trigger.name}</span>{' '}
          <Badge tone="info">{KIND_LABEL[trigger.kind] ?? trigger.kind}</Badge> {status}
          <span class="cell-sub">{describeTrigger(trigger)}</span>
          <span class="cell-sub clamp">Task: {trigger.task}</span>
          {trigger.consecutive_failures > 0 && (
            <span class="cell-sub text-error">{trigger.consecutive_failures} failed runs in a row</span>
          )}
          {trigger.hook_url && <CopyField label="Address" value={trigger.hook_url} />}
        </div>
        <div class="row-actions">
          <Button
            small
            variant="primary"
            disabled={!trigger.enabled || Boolean(action.busy)}
            busy={action.busy === 'run'}
            busyLabel="Starting…"
            onClick={() => void run()}
            aria-label={`Run ${trigger.name} now`}
          >
            Run now
          </Button>
          <Button
            small
            busy={action.busy === 'toggle'}
            disabled={Boolean(action.busy)}
            onClick={() => void toggle()}
            aria-label={`${trigger.enabled ? 'Turn off' : 'Turn on'} ${trigger.name}`}
          >
            {trigger.enabled ? 'Turn off' : 'Turn on'}
          </Button>
          {!confirming && (
            <Button
              small
              variant="ghost"
              disabled={Boolean(action.busy)}
              onClick={() => setConfirming(true)}
              aria-label={`Delete ${trigger.name}`}
            >
              Delete
            </Button>
          )}
        </div>
      </div>
      {confirming && (
        <ConfirmDelete
          what="trigger"
          busy={action.busy === 'remove'}
          locked={Boolean(action.busy)}
          onDelete={() => void remove()}
          onKeep={() => setConfirming(false)}
        >
          Delete “{trigger.name}”? Its address stops answering and its schedule is removed.
        </ConfirmDelete>
      )}
      {action.failure && <ErrorBox failure={action.failure} />}
      <p class="live-status" aria-live="polite">
        {ran}
      </p>
    </li>
  );
}

function CreateTrigger(props: {
  botId: string;
  onCancel: () => void;
  onCreated: (t: Trigger & { secret?: string }) => void;
}) {
  const [kind, setKind] = useState<TriggerKind>('manual');
  const [name, setName] = useState('');
  const [task, setTask] = useState('');
  const [mode, setMode] = useState<'ack' | 'wait'>('ack');
  const [repeat, setRepeat] = useState<'every' | 'cron'>('every');
  const [every, setEvery] = useState('60');
  const [cron, setCron] = useState('0 9 * * 1-5');
  const [pollUrl, setPollUrl] = useState('');
  const action = useAction();

  async function submit(event: Event) {
    event.preventDefault();
    const body: TriggerCreate = { kind, task: task.trim(), name: name.trim() || undefined };
    if (kind === 'webhook' || kind === 'manual') body.mode = mode;
    if (kind === 'schedule')
      body.schedule = repeat === 'cron' ? { cron: cron.trim() } : { every_seconds: Number(every) };
    if (kind === 'poll') body.poll = { url: pollUrl.trim(), every_seconds: Number(every) };
    const res = await action.run(() => automation.createTrigger(props.botId, body));
    if (res.ok) props.onCreated(res.value);
  }

  const kinds: { id: TriggerKind; label: string }[] = [
    { id: 'manual', label: 'Manual' },
    { id: 'webhook', label: 'Webhook' },
    { id: 'schedule', label: 'Schedule' },
    { id: 'poll', label: 'Poll an address' },
  ];

  return (
    <form class="subform" onSubmit={(e) => void submit(e)} aria-labelledby="new-trigger-title">
      <h3 id="new-trigger-title" class="subheading">
        New trigger
      </h3>
      <Segmented
        legend="Kind"
        name="trigger-kind"
        value={kind}
        options={kinds.map((k) => ({ value: k.id, label: k.label }))}
        onChange={setKind}
      />
      <Field id="trigger-name" label="Name" optional>
        <input id="trigger-name" maxLength={200} value={name} onInput={(e) => setName(valueOf(e))} />
      </Field>
      <Field
        id="trigger-task"
        label="Task"
        hint="What the agent should do each time it wakes; the request body or page comes with it."
      >
        <textarea id="trigger-task" rows={3} required value={task} onInput={(e) => setTask(valueOf(e))} />
      </Field>
      {(kind === 'webhook' || kind === 'manual') && (
        <Segmented
          legend="Answer"
          name="trigger-mode"
          value={mode}
          options={[
            { value: 'ack', label: 'At once (202), run in the background' },
            { value: 'wait', label: 'Wait for the result' },
          ]}
          onChange={setMode}
        />
      )}
      {kind === 'schedule' && (
        <Segmented
          legend="Repeat"
          name="trigger-repeat"
          value={repeat}
          options={[
            { value: 'every', label: 'At a fixed interval' },
            { value: 'cron', label: 'Cron expression' },
          ]}
          onChange={setRepeat}
        />
      )}
      {kind === 'poll' && (
        <Field
          id="trigger-poll-url"
          label="Address to read"
          hint="Public http(s) only; the agent runs when its content changes."
        >
          <input id="trigger-poll-url" type="url" required value={pollUrl} onInput={(e) => setPollUrl(valueOf(e))} />
        </Field>
      )}
      {(kind === 'poll' || (kind === 'schedule' && repeat === 'every')) && (
        <Field id="trigger-every" label="Every (seconds)" hint="60 = each minute, 3600 = each hour, 86400 = each day.">
          <input
            id="trigger-every"
            type="number"
            min={1}
            required
            value={every}
            onInput={(e) => setEvery(valueOf(e))}
          />
        </Field>
      )}
      {kind === 'schedule' && repeat === 'cron' && (
        <Field id="trigger-cron" label="Cron (5 fields, UTC)" hint="0 9 * * 1-5 = weekdays at 09:00 UTC.">
          <input id="trigger-cron" required spellcheck={false} value={cron} onInput={(e) => setCron(valueOf(e))} />
        </Field>
      )}
      {action.failure && <ErrorBox failure={action.failure} />}
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={Boolean(action.busy)} busyLabel="Creating…">
          Create trigger
        </Button>
        <Button variant="ghost" disabled={Boolean(action.busy)} onClick={props.onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
