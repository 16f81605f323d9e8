import type { ComponentChildren } from 'preact';
import type { Item, Rating } from './conversation';
import { Linkified, MarkdownText } from '../../shared/markdown-view';
import { PersonIcon, ThumbDownIcon, ThumbUpIcon } from '../../shared/icons';
import { SourceList } from '../../shared/sources-view';
import { fromLabel } from './look';

type MessageItem = Extract<Item, { kind: 'message' }>;
type NoticeItem = Extract<Item, { kind: 'notice' }>;

/** Who wrote it, as a screen reader announces it and as the label above a person's message reads. */
const AUTHORS: Record<string, string> = { visitor: 'You', bot: 'Assistant', operator: 'From the team' };

export function MessageView(props: {
  item: MessageItem;
  botName: string;
  /** The owner's name for the team on people's replies; null: "the team". */
  teamName: string | null;
  onRate: (key: string, rating: Rating) => void;
  /** The answer's offer of a person was taken (`handoff_offered`). */
  onAskPerson: () => void;
  resolveUrl: (url: string) => string;
}) {
  const { item } = props;
  const known = item.author in AUTHORS;
  // Spec, Message: an unknown author is shown as its text line, not dropped.
  if (!known) {
    return (
      <p class="line">
        <Linkified text={item.text} />
      </p>
    );
  }
  const who =
    item.author === 'bot'
      ? props.botName
      : item.author === 'operator'
        ? fromLabel(props.teamName, item.authorName)
        : AUTHORS[item.author];
  return (
    <div class={`msg msg-${item.author}${item.pending ? ' msg-pending' : ''}`}>
      {item.author === 'operator' && (
        <span class="author" aria-hidden="true">
          {fromLabel(props.teamName, item.authorName)}
        </span>
      )}
      <div class={item.attachment ? 'bubble bubble-image' : 'bubble'}>
        <span class="sr-only">{who}: </span>
        {item.attachment && (
          <a class="thumb" href={props.resolveUrl(item.attachment.url)} target="_blank" rel="noopener noreferrer">
            <img
              src={props.resolveUrl(item.attachment.url)}
              alt={
                item.text
                  ? `Image: ${item.text}`
                  : item.author === 'visitor'
                    ? 'Image you sent'
                    : item.author === 'operator'
                      ? `Image from ${who}`
                      : 'Image'
              }
              loading="lazy"
            />
          </a>
        )}
        {item.text &&
          !item.attachment &&
          // The bot's and the team's answers are Markdown (drawn safely); what the visitor typed is shown as typed.
          (item.author === 'visitor' ? <Linkified text={item.text} /> : <MarkdownText text={item.text} />)}
      </div>
      {item.author === 'bot' && !item.pending && <SourceList sources={item.sources} />}
      {item.author === 'bot' && item.offersPerson && (
        <div class="offer-person">
          <button type="button" class="offer-button" onClick={props.onAskPerson}>
            <PersonIcon />
            Talk to a person
          </button>
        </div>
      )}
      {item.rateable && item.id && (
        <div class="rating" role="group" aria-label="Was this answer helpful?">
          <RateButton item={item} value="up" label="Helpful" onRate={props.onRate}>
            <ThumbUpIcon />
          </RateButton>
          <RateButton item={item} value="down" label="Not helpful" onRate={props.onRate}>
            <ThumbDownIcon />
          </RateButton>
        </div>
      )}
    </div>
  );
}

function RateButton(props: {
  item: MessageItem;
  value: Rating;
  label: string;
  onRate: (key: string, rating: Rating) => void;
  children: ComponentChildren;
}) {
  const pressed = props.item.rating === props.value;
  return (
    <button
      type="button"
      class="rate"
      aria-label={props.label}
      aria-pressed={pressed ? 'true' : 'false'}
      title={props.label}
      onClick={() => props.onRate(props.item.key, props.value)}
    >
      {props.children}
    </button>
  );
}

/** Service messages, failures and confirmations: apart from the conversation's words, never rated. */
export function NoticeView(props: { item: NoticeItem; onAction: (action: NonNullable<NoticeItem['action']>) => void }) {
  const { item } = props;
  return (
    <div class={`notice notice-${item.tone}`} role={item.tone === 'error' ? 'alert' : 'status'}>
      <span class="notice-mark" aria-hidden="true">
        {item.tone === 'info' ? 'i' : '!'}
      </span>
      <span class="notice-text">{item.text}</span>
      {item.action === 'retry-send' && (
        <button type="button" class="link" onClick={() => props.onAction('retry-send')}>
          Retry
        </button>
      )}
    </div>
  );
}
