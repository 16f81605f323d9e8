import { type VisitorPanel as Panel, inboxApi } from '../../api/inbox';
import { Link } from '../../router';
import { Time } from '../../ui/format';
import { useResource } from '../../ui/resource';
import { Badge } from '../../ui/status';
import { addressOf, clip, contactHref, statusInfo } from './model';
import './visitor-panel.css';

/**
 * About the visitor, above the transcript: the site's id for them, the contact they left, how they rated the help, and
 * their other conversations with this agent (same id or same contact), each a link that opens it here. Only the site
 * confirms who a visitor is (a signed `user_auth`): an id or a contact typed in the chat is anyone's claim, so those
 * are marked "not confirmed" and listed apart (docs/decisions/133-confirmed-identities-only.md). Read when the
 * conversation opens and again when a new contact or rating arrives (`version`).
 */
export function VisitorPanel(props: { botId: string; sessionId: string; version: number }) {
  const panel = useResource(
    () => inboxApi.visitor(props.botId, props.sessionId),
    [props.botId, props.sessionId, props.version],
  );
  const v = panel.data;
  if (!v) return null;
  const summary =
    [v.name, v.contact, v.user && `id ${v.user}${v.user_confirmed ? '' : ' (not confirmed)'}`]
      .filter(Boolean)
      .join(' · ') || 'Nothing left yet';
  const confirmed = v.earlier.filter((c) => c.confirmed);
  const claimed = v.earlier.filter((c) => !c.confirmed);
  return (
    <details class="visitor-panel" data-testid="visitor-panel">
      <summary>
        <span class="visitor-panel-title">About the visitor</span>
        <span class="muted small">
          {summary}
          {confirmed.length > 0 && ` · ${confirmed.length} other conversation${confirmed.length === 1 ? '' : 's'}`}
          {claimed.length > 0 && ` · ${claimed.length} maybe theirs, not confirmed`}
        </span>
      </summary>
      <dl class="dl">
        {v.name && (
          <>
            <dt>Name</dt>
            <dd>{v.name}</dd>
          </>
        )}
        {v.contact && (
          <>
            <dt>Contact</dt>
            <dd>{contactLink(v.contact)}</dd>
          </>
        )}
        {v.note && (
          <>
            <dt>Note</dt>
            <dd>{v.note}</dd>
          </>
        )}
        {v.user && (
          <>
            <dt>Site&rsquo;s id</dt>
            <dd>
              <code>{v.user}</code>{' '}
              {v.user_confirmed ? (
                <Badge tone="success">Confirmed by your site</Badge>
              ) : (
                <Badge tone="warning">Not confirmed</Badge>
              )}
            </dd>
          </>
        )}
        <dt>First seen</dt>
        <dd>
          <Time ms={v.first_seen_at} />
        </dd>
        {v.satisfaction && (
          <>
            <dt>Rated the help</dt>
            <dd>
              {v.satisfaction.score} of 5{v.satisfaction.comment ? ` — “${v.satisfaction.comment}”` : ''}
            </dd>
          </>
        )}
      </dl>
      {confirmed.length > 0 && (
        <>
          <h3 class="subheading">Other conversations</h3>
          <Earlier list={confirmed} botId={props.botId} label="The visitor's other conversations" />
        </>
      )}
      {claimed.length > 0 && (
        <>
          <h3 class="subheading">Maybe the same visitor — not confirmed</h3>
          <p class="muted small" data-testid="unconfirmed-hint">
            Linked by an id or a contact typed in the chat, which anyone can type. Check who you are talking to before
            you share anything from these.
          </p>
          <Earlier
            list={claimed}
            botId={props.botId}
            label="Conversations with the same id or contact, not confirmed"
          />
        </>
      )}
    </details>
  );
}

function Earlier(props: { list: Panel['earlier']; botId: string; label: string }) {
  return (
    <ul class="list" aria-label={props.label}>
      {props.list.map((c) => (
        <li key={c.session_id} class="list-row">
          <Link
            href={addressOf({ status: 'all', agent: '', bot: props.botId, session: c.session_id })}
            data-testid="earlier-conversation"
          >
            {!c.last_message
              ? 'No messages'
              : c.last_message.attachment && !c.last_message.text.trim()
                ? 'Sent an image'
                : clip(c.last_message.text, 80)}
          </Link>
          <span class="muted small">
            {!c.confirmed && (
              <>
                <Badge tone="warning">Not confirmed</Badge> {c.linked_by === 'user' ? 'same id' : 'same contact'} ·{' '}
              </>
            )}
            {statusInfo(c.status).label} · <Time ms={c.last_message_at} relative />
          </span>
        </li>
      ))}
    </ul>
  );
}

function contactLink(contact: string) {
  const href = contactHref(contact);
  return href ? <a href={href}>{contact}</a> : contact;
}
