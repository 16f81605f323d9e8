import { type RotatedKey, type SeenKey, teamApi } from '../../api/team';
import { Button } from '../../ui/buttons';
import { Time } from '../../ui/format';
import { Panel } from '../../ui/page';
import { Loaded, type Resource, useAction } from '../../ui/resource';
import { OnceSecrets } from '../../ui/secrets';
import { Badge, ErrorBox } from '../../ui/status';
import { plural } from './model';

/**
 * The team page's "Keys to rotate" (docs/decisions/142-keys-outlive-holders.md): the keys that still work and that people
 * who left the team, or are operators now, were shown when they created an agent or reissued a key — grouped by
 * person, fingerprints only — with "Rotate them all": one action, the old keys stop at once, the new values shown here
 * once. The owner chooses whether a departure rotates them at once instead.
 */

const KIND: Record<SeenKey['kind'], string> = {
  secret: 'Secret key',
  identity: 'Visitor identity secret',
  webhook: 'Handoff webhook secret',
  builder: 'Builder key',
};

const keyName = (k: { kind: SeenKey['kind']; bot_name: string | null }) =>
  `${KIND[k.kind]}${k.bot_name ? ` of ${k.bot_name}` : ' of the workspace'}`;

export type SeenKeysData = { seen_keys: SeenKey[]; rotate_keys_on_departure: boolean };

export function SeenKeys(props: {
  seen: { resource: Resource<SeenKeysData>; retry: () => void; reload: () => void };
  owner: boolean;
  /** New values to show once: rotated here, or at once by a removal (the workspace's setting). */
  rotated: RotatedKey[] | undefined;
  onRotated: (rotated: RotatedKey[] | undefined) => void;
  onSetting: (rotate: boolean) => void;
}) {
  const action = useAction();

  async function rotateAll() {
    const res = await action.run(() => teamApi.rotateSeenKeys());
    if (res.ok) {
      props.onRotated(res.value.rotated);
      props.seen.reload();
    }
  }

  return (
    <Panel
      title="Keys to rotate"
      id="seen-keys"
      description="Keys that still work and that someone who left the team, or is an operator now, was shown when they created an agent or reissued a key. Rotate them: the old ones stop at once, and the new ones are shown here once for your servers."
    >
      {props.rotated && <RotatedValues rotated={props.rotated} onDone={() => props.onRotated(undefined)} />}
      <Loaded resource={props.seen.resource} retry={props.seen.retry} label="Loading keys to rotate…">
        {(data) => (
          <>
            {data.seen_keys.length === 0 ? (
              <p class="muted">No key that still works was shown to anyone who left.</p>
            ) : (
              <>
                <ul class="seen-people" data-testid="seen-keys">
                  {groups(data.seen_keys).map((g) => (
                    <li key={g.id} class="seen-person" data-testid="seen-person">
                      <div class="seen-who">
                        <strong>{g.email}</strong>{' '}
                        <Badge tone="warning">{g.now === 'removed' ? 'Removed' : 'Now an operator'}</Badge>
                      </div>
                      <ul class="seen-keys">
                        {g.keys.map((k) => (
                          <li key={`${k.bot_id}-${k.kind}-${k.fingerprint}`} data-testid="seen-key">
                            {keyName(k)} <code class="fingerprint">{k.fingerprint}</code>{' '}
                            <span class="muted small">
                              · shown <Time ms={k.shown_at} relative />
                            </span>
                          </li>
                        ))}
                      </ul>
                    </li>
                  ))}
                </ul>
                <div class="form-actions">
                  <Button
                    variant="danger"
                    busy={action.busy !== false}
                    busyLabel="Rotating…"
                    onClick={() => void rotateAll()}
                  >
                    Rotate them all ({plural(distinctKeys(data.seen_keys), 'key')})
                  </Button>
                </div>
              </>
            )}
            {action.failure && <ErrorBox failure={action.failure} title="Not rotated." />}
            {props.owner && <RotateSetting value={data.rotate_keys_on_departure} onChange={props.onSetting} />}
          </>
        )}
      </Loaded>
    </Panel>
  );
}

/** The new values, once; a builder key that was revoked has none (reissue one on the agent's Keys tab). */
function RotatedValues(props: { rotated: RotatedKey[]; onDone: () => void }) {
  const values = props.rotated
    .filter((k): k is RotatedKey & { key: string } => k.key !== null)
    .map((k) => ({ label: keyName(k), value: k.key, testId: `rotated-${k.kind}` }));
  const revoked = props.rotated.filter((k) => k.key === null);
  if (!values.length && !revoked.length) {
    return (
      <p class="muted" role="status">
        Nothing was left to rotate.
      </p>
    );
  }
  return (
    <OnceSecrets title="New keys" values={values} onDone={props.onDone}>
      <p>
        The keys they saw stopped working. Put the new ones where your servers and webhooks read them.
        {revoked.length > 0 &&
          ` ${plural(revoked.length, 'builder key')} they saw ${revoked.length === 1 ? 'was' : 'were'} revoked.`}
      </p>
    </OnceSecrets>
  );
}

function RotateSetting(props: { value: boolean; onChange: (rotate: boolean) => void }) {
  const action = useAction();
  async function change(rotate: boolean) {
    const res = await action.run(() => teamApi.setRotateOnDeparture(rotate));
    if (res.ok) props.onChange(res.value.rotate_keys_on_departure);
  }
  return (
    <>
      <label class="check">
        <input
          type="checkbox"
          checked={props.value}
          disabled={action.busy !== false}
          onChange={(e) => void change((e.currentTarget as HTMLInputElement).checked)}
        />
        <span>
          Rotate them at once when someone leaves or is made an operator
          <span class="hint">
            The new keys are then shown once to whoever removed them; servers using the old ones stop until updated.
          </span>
        </span>
      </label>
      {action.failure && <ErrorBox failure={action.failure} title="Not changed." />}
    </>
  );
}

function groups(keys: SeenKey[]) {
  const byPerson = new Map<string, { id: string; email: string; now: string; keys: SeenKey[] }>();
  for (const k of keys) {
    const g = byPerson.get(k.seen_by.id) ?? { ...k.seen_by, keys: [] };
    g.keys.push(k);
    byPerson.set(k.seen_by.id, g);
  }
  return [...byPerson.values()];
}

/** Keys seen by several people are rotated once. */
const distinctKeys = (keys: SeenKey[]) => new Set(keys.map((k) => `${k.bot_id}|${k.kind}|${k.fingerprint}`)).size;
