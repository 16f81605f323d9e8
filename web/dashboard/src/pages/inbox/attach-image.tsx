import { useRef, useState } from 'preact/hooks';
import { type Failure, newIdempotencyKey } from '../../api/client';
import { type Message, inboxApi } from '../../api/inbox';
import { ImageIcon } from '../../../../shared/icons';
import { LIMITS } from '../../../../shared/contract';

/** What the API takes (docs/decisions/097-operator-images.md): the same images as a visitor may send. */
const TYPES = 'image/png,image/jpeg,image/gif,image/webp';
const MAX_BYTES = LIMITS.widget.attachmentBytes;

/**
 * The composer's image button: a picked image goes to the visitor at once as a reply from this person (the visitor's
 * widget shows it at its next poll). Too large a file is said here, before it is sent; anything else the API
 * refuses (not an image, a quota) is said by the composer's error line.
 */
export function AttachImage(props: {
  botId: string;
  sessionId: string;
  disabled?: boolean;
  onSent: (message: Message, status: string) => void;
  onFailure: (failure: Failure | undefined) => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  /** One per image until it is stored: the same image picked again after a failure whose answer was lost is stored once. */
  const imageKey = useRef(newIdempotencyKey());

  async function send(file: File) {
    if (file.size > MAX_BYTES) {
      props.onFailure({
        status: 413,
        code: 'payload_too_large',
        message: `An image can be at most ${MAX_BYTES / 1024 / 1024} MiB.`,
      });
      return;
    }
    setBusy(true);
    props.onFailure(undefined);
    const res = await inboxApi.attach(props.botId, props.sessionId, file, imageKey.current);
    setBusy(false);
    if (!res.ok) return props.onFailure(res);
    imageKey.current = newIdempotencyKey();
    props.onSent(res.value.message, res.value.status);
  }

  return (
    <>
      <input
        ref={input}
        type="file"
        accept={TYPES}
        class="visually-hidden"
        tabIndex={-1}
        aria-hidden="true"
        data-testid="attach-input"
        onChange={(e) => {
          const el = e.currentTarget as HTMLInputElement;
          const file = el.files?.[0];
          el.value = '';
          if (file) void send(file);
        }}
      />
      <button
        type="button"
        class="btn btn-secondary composer-attach"
        aria-label={busy ? 'Sending the image…' : 'Send an image'}
        title="Send an image"
        disabled={props.disabled || busy}
        aria-busy={busy || undefined}
        onClick={() => input.current?.click()}
      >
        {busy ? <span class="spinner spinner-small" aria-hidden="true" /> : <ImageIcon />}
      </button>
    </>
  );
}
