import { useEffect, useRef, useState } from 'preact/hooks';
import type { Conversation } from './conversation';
import { CloseIcon } from '../../shared/icons';
import { LIMITS } from '../../shared/contract';

/** "Leave your contact": the team gets it as an event of the conversation (docs/widget.md); the visitor, a thank-you. */
export function ContactForm(props: {
  conversation: Conversation;
  /** Why it opened by itself, said above the fields (the team is away). */
  prompt?: string;
  onDone: () => void;
}) {
  const [name, setName] = useState('');
  const [contact, setContact] = useState('');
  const [note, setNote] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);

  async function submit(e: Event) {
    e.preventDefault();
    const value = contact.trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value) && !/^\+?[\d\s().-]{6,}$/.test(value)) {
      setError('Enter an e-mail address or a phone number.');
      return;
    }
    setError(null);
    setBusy(true);
    const ok = await props.conversation.contact({
      contact: value,
      name: name.trim() || undefined,
      note: note.trim() || undefined,
    });
    setBusy(false);
    if (ok) props.onDone();
  }

  return (
    <form
      class="contact"
      aria-labelledby="ap-contact-title"
      aria-describedby={props.prompt ? 'ap-contact-prompt' : undefined}
      onSubmit={(e) => void submit(e)}
      noValidate
    >
      <div class="contact-head">
        <h3 id="ap-contact-title">Leave your contact</h3>
        <button type="button" class="icon-button" aria-label="Cancel" onClick={props.onDone}>
          <CloseIcon size={18} />
        </button>
      </div>
      {props.prompt && (
        <p id="ap-contact-prompt" class="contact-prompt">
          {props.prompt}
        </p>
      )}
      <label for="ap-contact-name">Name</label>
      <input
        id="ap-contact-name"
        ref={first}
        autoComplete="name"
        maxLength={LIMITS.widget.contactNameChars}
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
      />
      <label for="ap-contact-value">E-mail or phone (required)</label>
      <input
        id="ap-contact-value"
        autoComplete="email"
        required
        maxLength={LIMITS.widget.contactChars}
        aria-invalid={error ? 'true' : 'false'}
        aria-describedby={error ? 'ap-contact-error' : undefined}
        value={contact}
        onInput={(e) => {
          setContact(e.currentTarget.value);
          setError(null);
        }}
      />
      {error && (
        <p id="ap-contact-error" class="field-error" role="alert">
          {error}
        </p>
      )}
      <label for="ap-contact-note">Note</label>
      <textarea
        id="ap-contact-note"
        rows={2}
        maxLength={LIMITS.widget.contactNoteChars}
        value={note}
        onInput={(e) => setNote(e.currentTarget.value)}
      />
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Sending…' : 'Send contact'}
      </button>
    </form>
  );
}
