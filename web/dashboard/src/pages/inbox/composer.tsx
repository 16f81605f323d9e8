import { useRef, useState } from 'preact/hooks';
import { type Failure, newIdempotencyKey } from '../../api/client';
import { type Message, inboxApi } from '../../api/inbox';
import { Button } from '../../ui/buttons';
import { ErrorBox } from '../../ui/status';
import { AttachImage } from './attach-image';
import { TYPING_EVERY_MS } from './model';
import { SavedReplies } from './saved-replies';
import { MAX_REPLY, countShown, replyTooLong } from './thread-model';

/**
 * The reply box under a conversation: a reply to the visitor (text, or an image) or an internal note for the team.
 * Typing a reply tells the visitor someone is writing; Enter sends, Shift+Enter adds a line. `onNote` and `onSent`
 * get what was stored, to show it at once.
 */
export function Composer(props: {
  botId: string;
  sessionId: string;
  visitor: string;
  /** Waiting for or with a person; otherwise a reply hands the conversation to whoever writes it. */
  open: boolean;
  input: { current: HTMLTextAreaElement | null };
  onNote: (message: Message) => void;
  onSent: (message: Message, status: string) => void;
}) {
  const { botId, sessionId } = props;
  const [draft, setDraft] = useState('');
  /** One per reply until it is stored: a reply sent again after a failure whose answer was lost is stored once. */
  const replyKey = useRef(newIdempotencyKey());
  /** The composer writes to the visitor, or an internal note for the team. */
  const [noting, setNoting] = useState(false);
  const [sending, setSending] = useState(false);
  const [sendFailure, setSendFailure] = useState<Failure | undefined>();
  const lastTyping = useRef(0);

  function onType(value: string) {
    setDraft(value);
    setSendFailure(undefined);
    const t = Date.now();
    // A note is not for the visitor: they do not see the team typing it.
    if (!noting && value.trim() && t - lastTyping.current >= TYPING_EVERY_MS) {
      lastTyping.current = t;
      // A lost typing signal only means the visitor does not see the dots: not worth telling the operator.
      void inboxApi.typing(botId, sessionId);
    }
  }

  async function send() {
    const text = draft.trim();
    if (!text || sending) return;
    const tooLong = replyTooLong(text);
    if (tooLong) return setSendFailure(tooLong);
    setSending(true);
    setSendFailure(undefined);
    if (noting) {
      const noted = await inboxApi.note(botId, sessionId, text);
      setSending(false);
      if (!noted.ok) return setSendFailure(noted);
      setDraft('');
      props.onNote(noted.value);
      return;
    }
    const res = await inboxApi.reply(botId, sessionId, text, replyKey.current);
    setSending(false);
    if (!res.ok) return setSendFailure(res);
    replyKey.current = newIdempotencyKey();
    setDraft('');
    lastTyping.current = 0;
    props.onSent({ id: res.value.id, author: 'operator', text, at: res.value.at }, res.value.status);
  }

  function onReplyKey(event: KeyboardEvent) {
    // Enter sends; Shift+Enter is a new line; Enter while an input method composes a word belongs to it.
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void send();
    }
  }

  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      {!props.open && !noting && (
        <p class="composer-note" id="reply-note">
          The assistant is answering this visitor. A reply from you hands the conversation to you.
        </p>
      )}
      <ComposerModes noting={noting} onNoting={setNoting} />
      <label for="reply" class="visually-hidden">
        {noting ? 'Internal note (the visitor does not see it)' : `Reply to ${props.visitor}`}
      </label>
      <div class="composer-row">
        {!noting && (
          <AttachImage
            botId={botId}
            sessionId={sessionId}
            disabled={sending}
            onFailure={setSendFailure}
            onSent={props.onSent}
          />
        )}
        <textarea
          id="reply"
          ref={props.input}
          rows={2}
          value={draft}
          class={noting ? 'is-note' : undefined}
          placeholder={noting ? 'A note for the team — the visitor does not see it…' : `Reply to ${props.visitor}…`}
          aria-describedby={`reply-hint${!props.open ? ' reply-note' : ''}`}
          aria-invalid={sendFailure ? true : undefined}
          onInput={(e) => onType((e.currentTarget as HTMLTextAreaElement).value)}
          onKeyDown={onReplyKey}
        />
        <Button type="submit" variant="primary" busy={sending} busyLabel="Sending…" disabled={!draft.trim()}>
          {noting ? 'Add note' : 'Send'}
        </Button>
      </div>
      <p class="composer-hint" id="reply-hint">
        Enter sends · Shift+Enter adds a line
        {countShown(draft.length) && (
          <span class={draft.length > MAX_REPLY ? 'over' : ''}>
            {' '}
            · {draft.length} / {MAX_REPLY}
          </span>
        )}
      </p>
      {sendFailure && <ErrorBox failure={sendFailure} title="Not sent." />}
      {!noting && (
        <SavedReplies
          draft={draft}
          onInsert={(text) => {
            onType(draft.trim() ? `${draft.trimEnd()}\n${text}` : text);
            props.input.current?.focus();
          }}
        />
      )}
    </form>
  );
}

/** Reply to the visitor, or write an internal note: two pressed-or-not buttons. */
function ComposerModes(props: { noting: boolean; onNoting: (noting: boolean) => void }) {
  return (
    <div class="composer-modes" role="group" aria-label="Write">
      <button
        type="button"
        class={`composer-mode${props.noting ? '' : ' is-on'}`}
        aria-pressed={!props.noting}
        onClick={() => props.onNoting(false)}
      >
        Reply
      </button>
      <button
        type="button"
        class={`composer-mode${props.noting ? ' is-on' : ''}`}
        aria-pressed={props.noting}
        onClick={() => props.onNoting(true)}
      >
        Internal note
      </button>
    </div>
  );
}
