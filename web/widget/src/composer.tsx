import { useRef } from 'preact/hooks';
import type { Conversation, State } from './conversation';
import { ACCEPTED_IMAGES } from './wording';
import { ImageIcon, SendIcon } from '../../shared/icons';
import { LIMITS } from '../../shared/contract';

/** The message box at the panel's foot: an image to attach, the text (Enter sends), and Send. */
export function Composer(props: {
  conversation: Conversation;
  state: State;
  input: { current: HTMLTextAreaElement | null };
}) {
  const { conversation, state } = props;
  const file = useRef<HTMLInputElement>(null);
  const disabled = !!state.unavailable;

  const submit = (e?: Event) => {
    e?.preventDefault();
    void conversation.send();
  };

  return (
    <form class="composer" onSubmit={submit}>
      <input
        ref={file}
        type="file"
        accept={ACCEPTED_IMAGES}
        class="file"
        tabIndex={-1}
        aria-hidden="true"
        onChange={(e) => {
          const el = e.currentTarget;
          const chosen = el.files?.[0];
          el.value = '';
          if (chosen) void conversation.attach(chosen);
        }}
      />
      <button
        type="button"
        class="icon-button attach"
        aria-label="Attach an image"
        title="Attach an image"
        disabled={disabled || state.uploading}
        onClick={() => file.current?.click()}
      >
        <ImageIcon />
      </button>
      <textarea
        ref={props.input}
        class="input"
        rows={1}
        aria-label="Message"
        placeholder={state.uploading ? 'Sending the image…' : 'Write a message…'}
        maxLength={LIMITS.messageChars}
        disabled={disabled}
        value={state.draft}
        onInput={(e) => {
          conversation.setDraft(e.currentTarget.value);
          conversation.typing();
        }}
        onKeyDown={(e) => {
          // Enter sends, Shift+Enter is a new line; never while an input method is composing a character.
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) submit(e);
        }}
      />
      <button
        type="submit"
        class="icon-button send"
        aria-label="Send"
        title="Send"
        disabled={disabled || state.sending || !state.draft.trim()}
      >
        <SendIcon />
      </button>
    </form>
  );
}
