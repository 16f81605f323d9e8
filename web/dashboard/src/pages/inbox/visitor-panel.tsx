import { inboxApi } from '../../api/ops';
import { Link } from '../../router';
import { Time, useResource } from '../../ui';
import { addressOf, clip, contactHref, statusInfo } from './model';
import './visitor-panel.css';

/**
 * About the visitor, above the transcript: the site's id for them, the contact they left, how they rated the help, and
 * their other conversations with this agent (same id or same contact), each a link that opens it here. Read when the
 * conversation opens and again when a new contact or rating arrives (`version`).
 */
export function VisitorPanel(props: { botId: string; sessionId: string; version: number }) {
  const panel = useResource(
    () => inboxApi.visitor(props.botId, props.sessionId),
    [props.botId, props.sessionId, props.version],
  );
  const v = panel.data;
  if (!v) return null;
  const summary = [v.name, v.contact, v.user && `id ${v.user}`].filter(Boolean).join(' · ') || 'Nothing left yet';
  return (
    <details class="visitor-panel" data-testid="visitor-panel">
      <summary>
        <span class="visitor-panel-title">About the visitor</span>
        <span class="muted small">
          {summary}
          {v.earlier.length > 0 && ` · ${v.earlier.length} other conversation${v.earlier.length === 1 ? '' : 's'}`}
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
              <code>{v.user}</code>
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
      {v.earlier.length > 0 && (
        <>
          <h3 class="subheading">Other conversations</h3>
          <ul class="list" aria-label="The visitor's other conversations">
            {v.earlier.map((c) => (
              <li key={c.session_id} class="list-row">
                <Link
                  href={addressOf({ status: 'all', agent: '', bot: props.botId, session: c.session_id })}
                  data-testid="earlier-conversation"
                >
                  {c.last_message ? clip(c.last_message.text, 80) : 'No messages'}
                </Link>
                <span class="muted small">
                  {statusInfo(c.status).label} · <Time ms={c.last_message_at} relative />
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </details>
  );
}

function contactLink(contact: string) {
  const href = contactHref(contact);
  return href ? <a href={href}>{contact}</a> : contact;
}
