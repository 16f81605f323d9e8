import { useState } from 'preact/hooks';
import { type Bot, type KeyKind, agents } from '../../api/agents';
import { Button } from '../../ui/buttons';
import { Panel } from '../../ui/page';
import { useAction } from '../../ui/resource';
import { CopyField, OnceSecrets } from '../../ui/secrets';
import { ErrorBox, Notice } from '../../ui/status';
import type { TabProps } from './tab';

interface KeyInfo {
  kind: KeyKind;
  label: string;
  use: string;
  field:
    | 'secret_key_fingerprint'
    | 'visitor_identity_secret_fingerprint'
    | 'handoff_webhook_secret_fingerprint'
    | 'builder_key_fingerprint';
  /** What stops when it is reissued. */
  effect: string;
}

const KEYS: KeyInfo[] = [
  {
    kind: 'secret',
    label: 'Secret key',
    use: 'Your server calls the API with it (X-Bot-Key). Never put it in a web page.',
    field: 'secret_key_fingerprint',
    effect: 'Every server using the current secret key gets 401 until it has the new one.',
  },
  {
    kind: 'identity',
    label: 'Visitor identity secret',
    use: 'Your server signs who a visitor is (user_auth) with it.',
    field: 'visitor_identity_secret_fingerprint',
    effect: 'Confirmations signed with the current secret stop being accepted.',
  },
  {
    kind: 'webhook',
    label: 'Handoff webhook secret',
    use: 'Signs the handoff events sent to your webhook address.',
    field: 'handoff_webhook_secret_fingerprint',
    effect: 'Your receiver must check signatures with the new secret from now on.',
  },
  {
    kind: 'builder',
    label: 'Builder key',
    use: 'MCP clients and the builder API act on the workspace with it.',
    field: 'builder_key_fingerprint',
    effect: 'Every earlier builder key of the workspace stops, paired clients included.',
  },
];

/** The agent's keys by fingerprint; reissuing one (after a confirmation) shows the new value once. */
export function KeysTab(props: TabProps) {
  const { bot } = props;
  return (
    <>
      <Panel title="Public key" description="Identifies the agent in the widget; safe to put in web pages.">
        <CopyField label="Public key" value={bot.public_key} />
      </Panel>
      <Panel
        title="Secrets"
        description="Only fingerprints are shown: a secret's full value appears once, when it is made. If one leaked or got lost, reissue it."
      >
        <ul class="list">
          {KEYS.map((info) => (
            <KeyRow key={info.kind} info={info} {...props} />
          ))}
        </ul>
      </Panel>
    </>
  );
}

function KeyRow(props: TabProps & { info: KeyInfo }) {
  const { bot, info } = props;
  const [confirming, setConfirming] = useState(false);
  const [issued, setIssued] = useState<string | undefined>();
  const action = useAction();
  const fingerprint = bot[info.field as keyof Bot] as string | null | undefined;

  async function reissue() {
    const res = await action.run(() => agents.reissue(bot.id, info.kind));
    setConfirming(false);
    if (res.ok) {
      setIssued(res.value.key);
      props.onChange({ ...bot, [info.field]: res.value.fingerprint });
    }
  }

  const rowId = `key-${info.kind}`;
  return (
    <li aria-labelledby={`${rowId}-label`} data-testid={rowId}>
      <div class="list-row">
        <div>
          <strong id={`${rowId}-label`}>{info.label}</strong>
          <span class="cell-sub">{info.use}</span>
          <span class="cell-sub">
            {fingerprint ? (
              <>
                Fingerprint <span class="fingerprint">{fingerprint}</span>
              </>
            ) : fingerprint === null ? (
              'None issued for this agent yet.'
            ) : (
              'Fingerprint not shown.'
            )}
          </span>
        </div>
        {!confirming && (
          <Button small onClick={() => setConfirming(true)} aria-label={`Reissue the ${info.label.toLowerCase()}`}>
            Reissue…
          </Button>
        )}
      </div>
      {confirming && (
        <div class="confirm" role="group" aria-label={`Confirm reissuing the ${info.label.toLowerCase()}`}>
          <Notice tone="warning">
            A new {info.label.toLowerCase()} replaces the current one at once. {info.effect}
          </Notice>
          <div class="form-actions">
            <Button variant="danger" busy={Boolean(action.busy)} busyLabel="Reissuing…" onClick={() => void reissue()}>
              Reissue now
            </Button>
            <Button variant="ghost" disabled={Boolean(action.busy)} onClick={() => setConfirming(false)}>
              Cancel
            </Button>
          </div>
        </div>
      )}
      {action.failure && <ErrorBox failure={action.failure} />}
      {issued && (
        <OnceSecrets
          title={`New ${info.label.toLowerCase()}`}
          values={[{ label: info.label, value: issued, testId: `issued-${info.kind}` }]}
          onDone={() => setIssued(undefined)}
        />
      )}
    </li>
  );
}
