import type { Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { builder } from '../api/builder';
import type { Failure } from '../api/client';
import { useSession } from '../session';
import { useNow } from '../use-now';
import { Button } from '../ui/buttons';
import { Page, Panel } from '../ui/page';
import { ErrorBox, Notice } from '../ui/status';

interface Turn {
  id: number;
  author: 'you' | 'builder';
  text: string;
  /** The change the builder asks to confirm before making it. */
  confirm?: string;
}

/**
 * The conversation survives moving between pages, in this page's memory only: replies can carry secrets shown once
 * (a new builder key, a trigger's secret), and nothing of them may outlive the page in the browser's storage. It is
 * kept for the person who had it: someone else signing in in this tab starts with an empty conversation.
 */
let kept: { userId: string; turns: Turn[] } | undefined;
/** Counts forgettings: a page opened before one (an answer arriving after the session ended) writes nothing back. */
let forgotten = 0;

/** Forgets the conversation (at sign-out or when the session ends: the next person sees nothing of it). */
export function forgetBuilderConversation(): void {
  kept = undefined;
  forgotten++;
}

/**
 * `/builder`: the workspace's builder in plain language (`POST /v1/dashboard/assistant`). It can create and change
 * agents, knowledge, triggers and keys; changes visitors would notice are asked first, answered with the yes and no
 * buttons. Answers can take up to a minute: the page shows how long it has been working.
 */
export function BuilderPage() {
  const userId = useSession().me.user.id;
  const [turns, setTurns] = useState<Turn[]>(() => (kept?.userId === userId ? kept.turns : []));
  const [opened] = useState(forgotten);
  const [text, setText] = useState('');
  const [sending, setSending] = useState<number | undefined>();
  // While an answer is worked on, how long it has been is counted in seconds.
  const now = useNow(1000, sending !== undefined);
  const [failure, setFailure] = useState<Failure | undefined>();
  const [busyNote, setBusyNote] = useState(false);
  const log = useRef<HTMLOListElement>(null);
  const input = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    if (opened === forgotten) kept = { userId, turns: turns.slice(-100) };
    log.current?.lastElementChild?.scrollIntoView({ block: 'nearest' });
  }, [turns, sending]);

  const last = turns[turns.length - 1];
  const awaiting = last?.author === 'builder' ? last.confirm : undefined;

  async function send(message: string) {
    if (!message.trim() || sending !== undefined) return;
    setFailure(undefined);
    setBusyNote(false);
    setTurns((prev) => [...prev, { id: Date.now(), author: 'you', text: message.trim() }]);
    setText('');
    setSending(Date.now());
    const res = await builder.send(message.trim());
    setSending(undefined);
    if (!res.ok) {
      setFailure(res);
      return;
    }
    if (res.value.busy) setBusyNote(true);
    setTurns((prev) => [
      ...prev,
      { id: Date.now() + 1, author: 'builder', text: res.value.reply, confirm: res.value.awaiting_confirmation },
    ]);
    input.current?.focus();
  }

  const elapsed = sending === undefined ? 0 : Math.max(0, Math.round((now - sending) / 1000));
  return (
    <Page
      title="Builder"
      description="Tell the builder what you want — “a support agent for my shop that knows our returns policy” — and it sets it up. It asks before changes your visitors would notice."
      actions={
        turns.length > 0 && (
          <Button
            variant="ghost"
            disabled={sending !== undefined}
            onClick={() => {
              setTurns([]);
              setFailure(undefined);
            }}
          >
            Clear the conversation
          </Button>
        )
      }
    >
      <Panel>
        <Conversation turns={turns} working={sending === undefined ? undefined : elapsed} log={log} />
        {sending !== undefined && elapsed > 20 && (
          <p class="muted small">Bigger changes take up to a minute. You can keep this page open.</p>
        )}
        {busyNote && (
          <Notice tone="warning">
            The builder was still working on an earlier message; its result comes with your next message.
          </Notice>
        )}
        {failure &&
          (failure.code === 'llm_unavailable' ? (
            <Notice tone="error">
              The builder needs a language model, and none is configured or answering now. Try again later, or ask the
              platform&rsquo;s operators to set one up.
            </Notice>
          ) : (
            <ErrorBox failure={failure} />
          ))}
        {awaiting && sending === undefined ? <ConfirmChange onAnswer={(yes) => void send(yes ? 'yes' : 'no')} /> : null}
        <form
          class="chat-form"
          onSubmit={(e) => {
            e.preventDefault();
            void send(text);
          }}
        >
          <label for="builder-input" class="visually-hidden">
            Message to the builder
          </label>
          <textarea
            id="builder-input"
            ref={input}
            rows={3}
            placeholder="What should the builder do? Enter sends, Shift+Enter adds a line"
            value={text}
            onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
                e.preventDefault();
                void send(text);
              }
            }}
          />
          <Button
            type="submit"
            variant="primary"
            busy={sending !== undefined}
            busyLabel="Working…"
            disabled={!text.trim()}
          >
            Send
          </Button>
        </form>
      </Panel>
    </Page>
  );
}

/** The conversation so far, and while an answer is worked on, for how long (`working`, in seconds). */
function Conversation(props: { turns: Turn[]; working: number | undefined; log: Ref<HTMLOListElement> }) {
  const { turns, working } = props;
  return (
    <ol class="chat-log chat-log-tall" ref={props.log} aria-label="Conversation with the builder" aria-live="polite">
      {turns.length === 0 && (
        <li class="chat-empty">
          For example: “Create an agent called Support for Acme Widgets, and scan https://acme.example.com”.
        </li>
      )}
      {turns.map((turn) => (
        <li key={turn.id} class={`chat-line chat-${turn.author === 'you' ? 'you' : 'agent'}`}>
          <span class="visually-hidden">{turn.author === 'you' ? 'You' : 'Builder'}: </span>
          {turn.text}
          {turn.confirm && (
            <span class="chat-confirm">
              <strong>Waiting for your answer:</strong> {turn.confirm}
            </span>
          )}
        </li>
      ))}
      {working !== undefined && (
        <li class="chat-line chat-agent chat-typing" role="status">
          <span class="spinner spinner-small" aria-hidden="true" /> Working on it… {working > 2 ? `${working} s` : ''}
        </li>
      )}
    </ol>
  );
}

/** The builder asks before a change visitors would notice: yes applies it, no leaves everything as it is. */
function ConfirmChange(props: { onAnswer: (yes: boolean) => void }) {
  return (
    <div class="confirm" role="group" aria-label="Apply the change?">
      <p class="confirm-question">Apply this change?</p>
      <div class="form-actions">
        <Button variant="primary" onClick={() => props.onAnswer(true)}>
          Yes, apply it
        </Button>
        <Button onClick={() => props.onAnswer(false)}>No</Button>
      </div>
    </div>
  );
}
