import type { ComponentChildren } from 'preact';
import type { Message } from '../../api/inbox';
import { formatDateTime } from '../../ui/format';
import { ContactIcon, ThumbDownIcon, ThumbUpIcon } from '../../../../shared/icons';
import { Linkified, MarkdownText } from '../../../../shared/markdown-view';
import { SourceList } from '../../../../shared/sources-view';
import { authorLabel, clip, contactHref, dayLabel, timeFormat } from './model';
import './transcript.css';

/** The messages, with a line where the day changes. */
export function Transcript(props: { messages: Message[]; botName?: string }) {
  const byId = new Map(props.messages.map((m) => [m.id, m]));
  const rows: ComponentChildren[] = [];
  let day = '';
  for (const m of props.messages) {
    const d = new Date(m.at).toDateString();
    if (d !== day) {
      day = d;
      rows.push(
        <li key={`day-${d}`} class="day-line" role="presentation">
          <span>{dayLabel(m.at)}</span>
        </li>,
      );
    }
    rows.push(<MessageRow key={m.id} m={m} byId={byId} botName={props.botName} />);
  }
  if (props.messages.length === 0) return <p class="muted small transcript-empty">No messages yet.</p>;
  return (
    <ol class="transcript" data-testid="transcript">
      {rows}
    </ol>
  );
}

function Stamp(props: { at: number }) {
  return (
    <time class="msg-time" dateTime={new Date(props.at).toISOString()} title={formatDateTime(props.at)}>
      {timeFormat.format(new Date(props.at))}
    </time>
  );
}

function MessageRow(props: { m: Message; byId: Map<string, Message>; botName?: string }) {
  const { m } = props;
  if (m.author === 'event') return <EventRow m={m} byId={props.byId} botName={props.botName} />;
  const who = authorLabel(m.author, props.botName, m.author_name);
  // Spec, Message: an unknown author is shown as its text line, not dropped.
  if (!who) return <LineRow m={m} />;
  return (
    <li class={`msg msg-${m.author}`} id={`msg-${m.id}`} data-testid={`msg-${m.author}`}>
      <div class="msg-head">
        <span class="msg-author">{who}</span>
        <Stamp at={m.at} />
      </div>
      <div class={m.attachment ? 'msg-bubble msg-bubble-image' : 'msg-bubble'}>
        {m.attachment && (
          <a
            class="msg-image"
            href={m.attachment.url}
            target="_blank"
            rel="noopener noreferrer"
            title="Open the image full size in a new tab"
          >
            <img
              src={m.attachment.url}
              alt={m.text ? `Image: ${m.text}` : `Image sent by the ${m.author === 'visitor' ? 'visitor' : who}`}
              loading="lazy"
              width={m.attachment.width}
              height={m.attachment.height}
            />
            <span class="visually-hidden"> (opens full size in a new tab)</span>
          </a>
        )}
        {m.text &&
          !m.attachment &&
          (m.author === 'visitor' ? <Linkified text={m.text} /> : <MarkdownText text={m.text} />)}
        {m.text && m.attachment && <p class="msg-caption">{m.text}</p>}
        {m.author === 'bot' && <SourceList sources={m.sources} />}
      </div>
    </li>
  );
}

const SCORE_WORDS = ['', 'very bad', 'bad', 'okay', 'good', 'very good'];

function EventRow(props: { m: Message; byId: Map<string, Message>; botName?: string }) {
  const { m } = props;
  const ev = m.event;
  if (ev?.kind === 'rating' && (ev.rating === 'up' || ev.rating === 'down')) {
    const up = ev.rating === 'up';
    const rated = ev.ref ? props.byId.get(ev.ref) : undefined;
    return (
      <li
        class={`event event-rating ${up ? 'event-up' : 'event-down'}`}
        data-testid="event-rating"
        data-rating={ev.rating}
      >
        <span class="event-icon">{up ? <ThumbUpIcon size={18} /> : <ThumbDownIcon size={18} />}</span>
        <div class="event-body">
          <p class="event-title">
            The visitor rated {rated ? 'this answer' : 'an answer'} <strong>{up ? 'helpful' : 'not helpful'}</strong>
          </p>
          {rated ? (
            <a class="event-quote" href={`#msg-${rated.id}`}>
              “{clip(rated.text)}”
            </a>
          ) : (
            <p class="event-quote muted">An earlier answer (not on this page of the transcript).</p>
          )}
        </div>
        <Stamp at={m.at} />
      </li>
    );
  }
  if (ev?.kind === 'note') {
    return (
      <li class="event event-note" data-testid="event-note">
        <span class="event-icon" aria-hidden="true">
          ✎
        </span>
        <div class="event-body">
          <p class="event-title">
            Internal note{ev.by ? ` by ${ev.by}` : ''} <span class="muted small">— the visitor does not see it</span>
          </p>
          <p class="event-note-text">{ev.text ?? m.text}</p>
        </div>
        <Stamp at={m.at} />
      </li>
    );
  }
  if (ev?.kind === 'satisfaction' && typeof ev.score === 'number') {
    return (
      <li class="event event-satisfaction" data-testid="event-satisfaction" data-score={ev.score}>
        <span class="event-icon">{ev.score >= 4 ? <ThumbUpIcon size={18} /> : <ThumbDownIcon size={18} />}</span>
        <div class="event-body">
          <p class="event-title">
            The visitor rated the help <strong>{ev.score} of 5</strong> ({SCORE_WORDS[ev.score] ?? ''})
          </p>
          {ev.comment && <p class="event-quote">“{ev.comment}”</p>}
        </div>
        <Stamp at={m.at} />
      </li>
    );
  }
  if (ev?.kind === 'contact') {
    const contact = ev.contact ?? '';
    const href = contactHref(contact);
    return (
      <li class="event event-contact" data-testid="event-contact">
        <span class="event-icon">
          <ContactIcon size={18} />
        </span>
        <div class="event-body">
          <p class="event-title">The visitor left a contact</p>
          <dl class="contact-card">
            {ev.name && (
              <>
                <dt>Name</dt>
                <dd>{ev.name}</dd>
              </>
            )}
            <dt>Contact</dt>
            <dd>{href ? <a href={href}>{contact}</a> : contact || '—'}</dd>
            {ev.note && (
              <>
                <dt>Note</dt>
                <dd class="contact-note">{ev.note}</dd>
              </>
            )}
          </dl>
        </div>
        <Stamp at={m.at} />
      </li>
    );
  }
  // An unknown kind (or a rating without a known value) is shown as its text line.
  return <LineRow m={m} />;
}

/** A message or event this page does not know, shown as its text line (contract, Message). */
function LineRow(props: { m: Message }) {
  return (
    <li class="line-row" data-testid="line">
      <span class="line-text">
        <Linkified text={props.m.text} />
      </span>
      <Stamp at={props.m.at} />
    </li>
  );
}
