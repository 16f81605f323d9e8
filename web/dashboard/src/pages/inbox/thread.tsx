import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { type Failure, newIdempotencyKey } from '../../api/client';
import {
  type Message,
  type Teammate,
  type ThreadSummary,
  type Transcript as TranscriptData,
  inboxApi,
} from '../../api/inbox';
import { useSession } from '../../session';
import { Button } from '../../ui/buttons';
import { formatDateTime, formatRelative } from '../../ui/format';
import { Badge, ErrorBox, Loading, describeFailure } from '../../ui/status';
import { usePolling } from '../../use-polling';
import {
  MAX_BACKOFF_MS,
  MAX_REPLY,
  THREAD_POLL_MS,
  TYPING_EVERY_MS,
  announcementOf,
  isOpen,
  statusInfo,
  visitorName,
} from './model';
// Before the parts' own styles: the transcript's phone rules (transcript.css) override this file's.
import './thread.css';
import { Transcript } from './transcript';
import { SavedReplies } from './saved-replies';
import { AssigneeControl, ReplyingLine } from './assignee';
import { AttachImage } from './attach-image';
import { HandoverBadges } from './handover-badges';
import { Briefing } from './briefing';
import { VisitorPanel } from './visitor-panel';
import { useNow } from './use-now';

export function TypingDots() {
  return (
    <span class="typing-dots" aria-hidden="true">
      <span />
      <span />
      <span />
    </span>
  );
}

type ThreadState =
  | { state: 'loading' }
  | { state: 'error'; failure: Failure }
  | {
      state: 'ready';
      messages: Message[];
      status: string;
      visitorUser: string | null;
      visitorTyping: boolean;
      assignee: Teammate | null;
      replying: Teammate | null;
      /** Why it came to the team, and the briefing written then: the transcript's own, so shown for any thread. */
      why: Pick<TranscriptData, 'escalation_reason' | 'after_hours'>;
      briefing: TranscriptData['briefing'];
      stale?: Failure;
    };

/**
 * One conversation: its transcript (read in pages, then polled with the cursor for what is new; messages are kept by
 * id, so a page read twice adds nothing), the visitor's typing, the reply box and Resolve.
 */
export function ThreadView(props: {
  botId: string;
  sessionId: string;
  botName?: string;
  summary?: ThreadSummary;
  focusOnOpen: boolean;
  onBack: () => void;
  announce: (text: string) => void;
  onChanged: () => void;
}) {
  const { botId, sessionId } = props;
  // The polls outlive a render: they read the newest props through this.
  const latest = useRef(props);
  latest.current = props;
  const [thread, setThread] = useState<ThreadState>({ state: 'loading' });
  const [draft, setDraft] = useState('');
  /** One per reply until it is stored: a reply sent again after a failure whose answer was lost is stored once. */
  const replyKey = useRef(newIdempotencyKey());
  /** The composer writes to the visitor, or an internal note for the team. */
  const [noting, setNoting] = useState(false);
  const [sending, setSending] = useState(false);
  const [sendFailure, setSendFailure] = useState<Failure | undefined>();
  const [resolving, setResolving] = useState(false);
  const [resolveFailure, setResolveFailure] = useState<Failure | undefined>();
  const [resolvedNote, setResolvedNote] = useState(false);
  const [unseen, setUnseen] = useState(0);
  const cursor = useRef<string | undefined>(undefined);
  const byId = useRef(new Map<string, Message>());
  const lastTyping = useRef(0);
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const heading = useRef<HTMLHeadingElement>(null);
  const replyBox = useRef<HTMLTextAreaElement>(null);
  const now = useNow();
  const session = useSession();

  /** Adds what is new; returns the messages that were not known before. */
  function merge(messages: Message[]): Message[] {
    const added: Message[] = [];
    for (const m of messages) {
      if (!byId.current.has(m.id)) added.push(m);
      byId.current.set(m.id, m);
    }
    return added;
  }

  const ordered = () => [...byId.current.values()].sort((a, b) => a.at - b.at);

  async function readNew(): Promise<
    { ok: true; value: TranscriptData; added: Message[] } | { ok: false; failure: Failure }
  > {
    const added: Message[] = [];
    let last: TranscriptData | undefined;
    // Follow the pages to the end; the next poll continues after the last message read (`resume_cursor`), so it
    // reads only what is new.
    for (let page = 0; page < 50; page++) {
      const res = await inboxApi.transcript(botId, sessionId, cursor.current, 200);
      if (!res.ok) return { ok: false, failure: res };
      last = res.value;
      added.push(...merge(res.value.messages));
      cursor.current = res.value.resume_cursor;
      if (!res.value.next_cursor) break;
    }
    return { ok: true, value: last!, added };
  }

  // What the polling of this conversation has seen: the first read announces nothing, a status change is news.
  const seen = useRef({ first: true, status: '' });
  useEffect(() => {
    seen.current = { first: true, status: '' };
  }, [botId, sessionId]);
  const pollNow = usePolling(
    async (stopped) => {
      const res = await readNew();
      if (stopped()) return 'stop';
      if (!res.ok) {
        setThread((prev) =>
          prev.state === 'ready' ? { ...prev, stale: res.failure } : { state: 'error', failure: res.failure },
        );
        // A conversation that does not exist (or not in this workspace) is not asked about again.
        return res.failure.status === 404 || res.failure.status === 403 ? 'stop' : 'failed';
      }
      const t = res.value;
      const first = seen.current.first;
      // Its status changed under us (resolved elsewhere, or a person took it): the list is read again now.
      if (!first && t.status !== seen.current.status) latest.current.onChanged();
      seen.current = { first: false, status: t.status };
      setThread({
        state: 'ready',
        messages: ordered(),
        status: t.status,
        visitorUser: t.visitor_user,
        visitorTyping: t.visitor_typing,
        assignee: t.assignee,
        replying: t.replying,
        why: { escalation_reason: t.escalation_reason, after_hours: t.after_hours },
        briefing: t.briefing,
      });
      if (!first) {
        const incoming = res.added.filter((m) => m.author !== 'operator');
        const said = incoming.map((m) => announcementOf(m, latest.current.botName));
        if (said.length > 0) latest.current.announce(said.slice(-3).join(' '));
        if (incoming.length > 0 && !stick.current) setUnseen((n) => n + incoming.length);
      }
      return 'ok';
    },
    { everyMs: THREAD_POLL_MS, maxBackoffMs: MAX_BACKOFF_MS },
    [botId, sessionId],
  );

  // The newest message stays in view, unless the operator scrolled up to read; then a button says how many came.
  const count = thread.state === 'ready' ? thread.messages.length : 0;
  const typing = thread.state === 'ready' && thread.visitorTyping;
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [count, typing, thread.state, resolvedNote, thread.state === 'ready' && thread.status]);

  // An image that finishes loading can push the newest message out of view: keep it in view, as above. (`load` does not
  // bubble; a listener in the capture phase hears every image of the transcript.)
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const keepNewestInView = () => {
      if (stick.current) el.scrollTop = el.scrollHeight;
    };
    el.addEventListener('load', keepNewestInView, true);
    return () => el.removeEventListener('load', keepNewestInView, true);
  }, [thread.state]);

  // Opened from the list: focus goes to the reply box on wide screens, to the heading on phones (where the list was
  // replaced, so the screen reader should hear what opened).
  const focused = useRef(false);
  useEffect(() => {
    if (focused.current || thread.state !== 'ready' || !props.focusOnOpen) return;
    focused.current = true;
    if (matchMedia('(max-width: 760px)').matches) heading.current?.focus({ preventScroll: true });
    else replyBox.current?.focus({ preventScroll: true });
  }, [thread.state]);

  function onScroll() {
    const el = scroller.current;
    if (!el) return;
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
    if (stick.current) setUnseen(0);
  }

  function jumpToNewest() {
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
    stick.current = true;
    setUnseen(0);
  }

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
    if (text.length > MAX_REPLY) {
      setSendFailure({ status: 400, code: 'bad_request', message: `A reply can be at most ${MAX_REPLY} characters.` });
      return;
    }
    setSending(true);
    setSendFailure(undefined);
    if (noting) {
      const noted = await inboxApi.note(botId, sessionId, text);
      setSending(false);
      if (!noted.ok) return setSendFailure(noted);
      setDraft('');
      merge([noted.value]);
      stick.current = true;
      setThread((prev) => (prev.state === 'ready' ? { ...prev, messages: ordered() } : prev));
      return;
    }
    const res = await inboxApi.reply(botId, sessionId, text, replyKey.current);
    setSending(false);
    if (!res.ok) {
      setSendFailure(res);
      return;
    }
    replyKey.current = newIdempotencyKey();
    setDraft('');
    lastTyping.current = 0;
    merge([{ id: res.value.id, author: 'operator', text, at: res.value.at }]);
    stick.current = true;
    setResolvedNote(false);
    setThread((prev) =>
      prev.state === 'ready' ? { ...prev, messages: ordered(), status: res.value.status || prev.status } : prev,
    );
    props.onChanged();
    pollNow();
  }

  function onReplyKey(event: KeyboardEvent) {
    // Enter sends; Shift+Enter is a new line; Enter while an input method composes a word belongs to it.
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void send();
    }
  }

  async function resolve() {
    setResolving(true);
    setResolveFailure(undefined);
    const res = await inboxApi.resolve(botId, sessionId);
    setResolving(false);
    if (!res.ok) {
      setResolveFailure(res);
      return;
    }
    setThread((prev) => (prev.state === 'ready' ? { ...prev, status: res.value.status || 'bot' } : prev));
    setResolvedNote(true);
    props.announce('Resolved. The assistant answers this visitor again.');
    heading.current?.focus({ preventScroll: true });
    props.onChanged();
  }

  const status = thread.state === 'ready' ? thread.status : (props.summary?.status ?? '');
  const st = statusInfo(status);
  const why = thread.state === 'ready' ? thread.why : props.summary;
  const visitor = visitorName(
    props.summary?.visitor_name ||
      (thread.state === 'ready' ? thread.visitorUser : (props.summary?.visitor_user ?? null)),
    sessionId,
  );
  // The panel is read again when the visitor leaves a contact or rates the help.
  const aboutVersion =
    thread.state === 'ready'
      ? thread.messages.filter((m) => m.event?.kind === 'contact' || m.event?.kind === 'satisfaction').length
      : 0;

  return (
    <div
      class="thread"
      onKeyDown={(e) => e.key === 'Escape' && matchMedia('(max-width: 760px)').matches && props.onBack()}
    >
      <header class="thread-header">
        <button type="button" class="btn btn-ghost btn-small thread-back" onClick={props.onBack}>
          <span aria-hidden="true">←</span> Back<span class="visually-hidden"> to the list</span>
        </button>
        <div class="thread-title">
          <h2 ref={heading} tabIndex={-1} data-testid="thread-title">
            {visitor}
          </h2>
          <p class="thread-subtitle">
            {status && <Badge tone={st.tone}>{st.label}</Badge>}
            {why && <HandoverBadges thread={why} detailed />}
            {props.botName && <span>{props.botName}</span>}
            {props.summary?.escalated_at && isOpen(status) && (
              <span title={formatDateTime(props.summary.escalated_at)}>
                handed over {formatRelative(props.summary.escalated_at, now)}
              </span>
            )}
          </p>
          {thread.state === 'ready' && (
            <AssigneeControl
              botId={botId}
              sessionId={sessionId}
              assignee={thread.assignee}
              me={session.me.user.id}
              onAssigned={(assignee) => {
                setThread((prev) => (prev.state === 'ready' ? { ...prev, assignee } : prev));
                props.onChanged();
              }}
            />
          )}
        </div>
        {isOpen(status) && (
          <Button variant="secondary" busy={resolving} busyLabel="Resolving…" onClick={() => void resolve()}>
            <span aria-hidden="true">✓</span> Resolve
          </Button>
        )}
      </header>
      {resolveFailure && (
        <div class="thread-banner">
          <ErrorBox failure={resolveFailure} title="Not resolved." onRetry={() => void resolve()} />
        </div>
      )}
      {resolvedNote && !isOpen(status) && (
        <p class="thread-banner notice notice-success" data-testid="resolved-note">
          Resolved. The assistant answers this visitor again; the request has left the open list.
        </p>
      )}
      {thread.state === 'ready' && thread.stale && (
        <p class="stale-line thread-stale" role="status">
          <span class="stale-dot" aria-hidden="true" /> Not refreshed: {describeFailure(thread.stale)} Retrying…
        </p>
      )}

      <div class="thread-context">
        <VisitorPanel botId={props.botId} sessionId={sessionId} version={aboutVersion} />
        {thread.state === 'ready' && <Briefing briefing={thread.briefing} open={isOpen(thread.status)} now={now} />}
      </div>

      <div class="thread-scroll" ref={scroller} onScroll={onScroll} tabIndex={0} aria-label="Transcript">
        {thread.state === 'loading' && <Loading label="Loading the conversation…" />}
        {thread.state === 'error' && (
          <div class="thread-error">
            {thread.failure.status === 404 ? (
              <p class="notice notice-warning" role="alert">
                This conversation does not exist, or it is not one of your workspace&rsquo;s agents.
              </p>
            ) : (
              <ErrorBox
                failure={thread.failure}
                title="The conversation cannot be read."
                onRetry={() => {
                  setThread({ state: 'loading' });
                  pollNow();
                }}
              />
            )}
          </div>
        )}
        {thread.state === 'ready' && <Transcript messages={thread.messages} botName={props.botName} />}
        {thread.state === 'ready' && thread.visitorTyping && (
          <p class="visitor-typing" data-testid="visitor-typing">
            <TypingDots /> Visitor is typing…
          </p>
        )}
      </div>
      {unseen > 0 && (
        <button type="button" class="new-below" onClick={jumpToNewest}>
          {unseen === 1 ? '1 new message' : `${unseen} new messages`} <span aria-hidden="true">↓</span>
        </button>
      )}

      {thread.state === 'ready' && <ReplyingLine replying={thread.replying} />}
      {thread.state === 'ready' && (
        <form
          class="composer"
          onSubmit={(e) => {
            e.preventDefault();
            void send();
          }}
        >
          {!isOpen(thread.status) && !noting && (
            <p class="composer-note" id="reply-note">
              The assistant is answering this visitor. A reply from you hands the conversation to you.
            </p>
          )}
          <div class="composer-modes" role="group" aria-label="Write">
            <button
              type="button"
              class={`composer-mode${noting ? '' : ' is-on'}`}
              aria-pressed={!noting}
              onClick={() => setNoting(false)}
            >
              Reply
            </button>
            <button
              type="button"
              class={`composer-mode${noting ? ' is-on' : ''}`}
              aria-pressed={noting}
              onClick={() => setNoting(true)}
            >
              Internal note
            </button>
          </div>
          <label for="reply" class="visually-hidden">
            {noting ? 'Internal note (the visitor does not see it)' : `Reply to ${visitor}`}
          </label>
          <div class="composer-row">
            {!noting && (
              <AttachImage
                botId={botId}
                sessionId={sessionId}
                disabled={sending}
                onFailure={setSendFailure}
                onSent={(message, status) => {
                  merge([message]);
                  stick.current = true;
                  setResolvedNote(false);
                  setThread((prev) =>
                    prev.state === 'ready' ? { ...prev, messages: ordered(), status: status || prev.status } : prev,
                  );
                  props.onChanged();
                  pollNow();
                }}
              />
            )}
            <textarea
              id="reply"
              ref={replyBox}
              rows={2}
              value={draft}
              class={noting ? 'is-note' : undefined}
              placeholder={noting ? 'A note for the team — the visitor does not see it…' : `Reply to ${visitor}…`}
              aria-describedby={`reply-hint${!isOpen(thread.status) ? ' reply-note' : ''}`}
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
            {draft.length > MAX_REPLY - 1000 && (
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
                replyBox.current?.focus();
              }}
            />
          )}
        </form>
      )}
    </div>
  );
}
