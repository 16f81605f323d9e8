import { useState } from 'preact/hooks';
import { type BuilderKey, teamApi } from '../../api/team';
import { Button } from '../../ui/buttons';
import { Time } from '../../ui/format';
import { Panel } from '../../ui/page';
import { Loaded, type Resource, useAction } from '../../ui/resource';
import { Badge, ErrorBox } from '../../ui/status';

/**
 * The team page's "Builder keys": the workspace's builder keys in force (the owner sees every one, an admin the ones
 * they issued), with who issued each, for which device or agent, when, and when last used; each can be revoked. A
 * person removed from the team, or an admin made an operator, takes the keys they issued with them.
 */
export function BuilderKeys(props: {
  keys: { resource: Resource<{ builder_keys: BuilderKey[] }>; retry: () => void };
  owner: boolean;
  onRevoked: (key: BuilderKey) => void;
}) {
  return (
    <Panel
      title="Builder keys"
      id="builder-keys"
      description={
        props.owner
          ? 'Programs connected to this workspace (paired clients, keys issued in the builder or for an agent). Revoke one and it stops at once.'
          : 'The builder keys you issued. Revoke one and the program using it stops at once.'
      }
    >
      <Loaded resource={props.keys.resource} retry={props.keys.retry} label="Loading builder keys…">
        {(data) =>
          data.builder_keys.length === 0 ? (
            <p class="muted">No builder keys in force.</p>
          ) : (
            <ul class="member-list" data-testid="builder-keys">
              {data.builder_keys.map((k) => (
                <KeyRow key={k.id} builderKey={k} onRevoked={() => props.onRevoked(k)} />
              ))}
            </ul>
          )
        }
      </Loaded>
    </Panel>
  );
}

const VIA: Record<string, string> = {
  pairing: 'Paired client',
  builder: 'Builder panel',
  dashboard: 'Reissued in the dashboard',
  agentctl: 'agentctl',
};

function KeyRow(props: { builderKey: BuilderKey; onRevoked: () => void }) {
  const k = props.builderKey;
  const action = useAction();
  const [confirming, setConfirming] = useState(false);
  const name = k.label ?? (k.bot_name ? `Agent ${k.bot_name}` : 'Builder key');
  const issuer = k.issued_by ? k.issued_by.name?.trim() || k.issued_by.email : null;

  async function revoke() {
    const res = await action.run(() => teamApi.revokeBuilderKey(k.id));
    if (res.ok || res.status === 404) props.onRevoked();
  }

  return (
    <li class="member" data-testid="builder-key">
      <span class="avatar member-avatar avatar-pending" aria-hidden="true">
        ck
      </span>
      <div class="member-who">
        <span class="member-name">
          {name} <code class="muted small">{k.fingerprint}</code>
        </span>
        <span class="muted small">
          {k.issued_via && VIA[k.issued_via] ? `${VIA[k.issued_via]} · ` : ''}
          {issuer ? <>Issued by {issuer} </> : <>Issued </>}
          <Time ms={k.created_at} relative /> ·{' '}
          {k.last_used_at ? (
            <>
              used <Time ms={k.last_used_at} relative />
            </>
          ) : (
            'never used'
          )}
        </span>
      </div>
      <div class="member-role">{k.bot_id ? <Badge>Agent</Badge> : <Badge tone="info">Workspace</Badge>}</div>
      <div class="member-actions">
        {confirming ? (
          <div class="confirm-inline" role="group" aria-label={`Confirm revoking ${name}`}>
            <span>The program using it stops at once.</span>
            <Button
              small
              variant="danger"
              busy={action.busy !== false}
              busyLabel="Revoking…"
              onClick={() => void revoke()}
            >
              Revoke
            </Button>
            <Button small variant="ghost" disabled={action.busy !== false} onClick={() => setConfirming(false)}>
              Keep
            </Button>
          </div>
        ) : (
          <Button
            small
            variant="ghost"
            class="danger-text"
            onClick={() => setConfirming(true)}
            aria-label={`Revoke ${name}`}
          >
            Revoke
          </Button>
        )}
      </div>
      {action.failure && action.failure.status !== 404 && (
        <div class="member-error">
          <ErrorBox failure={action.failure} title="Not revoked." />
        </div>
      )}
    </li>
  );
}
