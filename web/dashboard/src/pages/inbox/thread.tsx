import { useEffect, useRef, useState } from 'preact/hooks';
import type { Failure } from '../../api/client';
import { type Message, type ThreadSummary, inboxApi } from '../../api/inbox';
import { useSession } from '../../session';
import { ErrorBox, Loading, describeFailure } from '../../ui/status';
import { useNow } from '../../use-now';
import { RELATIVE_TIMES_MS, isOpen, visitorName } from './model';
// Before the parts' own styles: the transcript's phone rules (transcript.css) override this file's.
import './thread.css';
import { Transcript } from './transcript';
import { ReplyingLine } from './assignee';
import { Briefing } from './briefing';
import { VisitorPanel } from './visitor-panel';
import { Composer } from './composer';
import { ThreadHeader } from './thread-header';
import { TypingDots } from './typing-dots';
import { aboutVersion } from './thread-model';
import { useNewestInView } from './use-newest-in-view';
import { useThread } from './use-thread';

/** Phones show the list or a conversation, not both: there Escape and the heading's focus stand for the list. */
const onPhone = () => matchMedia('(max-width: 760px)').matches;

/**
 * One conversation: its transcript (read in pages, then polled with the cursor for what is new), the visitor's
 * typing, what is known of the visitor, the briefing, the reply box and Resolve.
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
  const { botId, sessionId, summary } = props;
  const { thread, setThread, pollNow, add } = useThread({ ...props, onIncoming: (count) => view.incoming(count) });
  const [resolving, setResolving] = useState(false);
  const [resolveFailure, setResolveFailure] = useState<Failure | undefined>();
  const [resolvedNote, setResolvedNote] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const replyBox = useRef<HTMLTextAreaElement>(null);
  const now = useNow(RELATIVE_TIMES_MS);
  const session = useSession();
  const ready = thread.state === 'ready' ? thread : undefined;

  // The newest message stays in view, unless the operator scrolled up to read; then a button says how many came.
  const view = useNewestInView(
    [ready?.messages.length ?? 0, ready?.visitorTyping, thread.state, resolvedNote, ready?.status],
    thread.state,
  );

  // Opened from the list: focus goes to the reply box on wide screens, to the heading on phones (where the list was
  // replaced, so the screen reader should hear what opened).
  const focused = useRef(false);
  useEffect(() => {
    if (focused.current || thread.state !== 'ready' || !props.focusOnOpen) return;
    focused.current = true;
    if (onPhone()) heading.current?.focus({ preventScroll: true });
    else replyBox.current?.focus({ preventScroll: true });
  }, [thread.state]);

  /** A reply or an image stored: shown at once, and the list and the transcript are read again. */
  function sent(message: Message, status: string) {
    add([message], status);
    view.follow();
    setResolvedNote(false);
    props.onChanged();
    pollNow();
  }

  async function resolve() {
    setResolving(true);
    setResolveFailure(undefined);
    const res = await inboxApi.resolve(botId, sessionId);
    setResolving(false);
    if (!res.ok) return setResolveFailure(res);
    setThread((prev) => (prev.state === 'ready' ? { ...prev, status: res.value.status || 'bot' } : prev));
    setResolvedNote(true);
    props.announce('Resolved. The assistant answers this visitor again.');
    heading.current?.focus({ preventScroll: true });
    props.onChanged();
  }

  const status = ready ? ready.status : (summary?.status ?? '');
  const visitor = visitorName(
    summary?.visitor_name || (ready ? ready.visitorUser : (summary?.visitor_user ?? null)),
    sessionId,
  );

  return (
    <div class="thread" onKeyDown={(e) => e.key === 'Escape' && onPhone() && props.onBack()}>
      <ThreadHeader
        heading={heading}
        visitor={visitor}
        status={status}
        why={ready ? ready.why : summary}
        botName={props.botName}
        summary={summary}
        now={now}
        assignment={ready && { botId, sessionId, assignee: ready.assignee, me: session.me.user.id }}
        onAssigned={(assignee) => {
          setThread((prev) => (prev.state === 'ready' ? { ...prev, assignee } : prev));
          props.onChanged();
        }}
        resolving={resolving}
        onResolve={() => void resolve()}
        onBack={props.onBack}
      />
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
      {ready?.stale && (
        <p class="stale-line thread-stale" role="status">
          <span class="stale-dot" aria-hidden="true" /> Not refreshed: {describeFailure(ready.stale)} Retrying…
        </p>
      )}

      <div class="thread-context">
        <VisitorPanel botId={botId} sessionId={sessionId} version={ready ? aboutVersion(ready.messages) : 0} />
        {ready && <Briefing briefing={ready.briefing} open={isOpen(ready.status)} now={now} />}
      </div>

      <div class="thread-scroll" ref={view.scroller} onScroll={view.onScroll} tabIndex={0} aria-label="Transcript">
        {thread.state === 'loading' && <Loading label="Loading the conversation…" />}
        {thread.state === 'error' && (
          <ThreadError
            failure={thread.failure}
            onRetry={() => {
              setThread({ state: 'loading' });
              pollNow();
            }}
          />
        )}
        {ready && <Transcript messages={ready.messages} botName={props.botName} />}
        {ready?.visitorTyping && (
          <p class="visitor-typing" data-testid="visitor-typing">
            <TypingDots /> Visitor is typing…
          </p>
        )}
      </div>
      {view.unseen > 0 && (
        <button type="button" class="new-below" onClick={view.jumpToNewest}>
          {view.unseen === 1 ? '1 new message' : `${view.unseen} new messages`} <span aria-hidden="true">↓</span>
        </button>
      )}

      {ready && <ReplyingLine replying={ready.replying} />}
      {ready && (
        <Composer
          botId={botId}
          sessionId={sessionId}
          visitor={visitor}
          open={isOpen(ready.status)}
          input={replyBox}
          onNote={(note) => {
            add([note]);
            view.follow();
          }}
          onSent={sent}
        />
      )}
    </div>
  );
}

/** The transcript could not be read: a conversation that is not there, or the API's words with a retry. */
function ThreadError(props: { failure: Failure; onRetry: () => void }) {
  return (
    <div class="thread-error">
      {props.failure.status === 404 ? (
        <p class="notice notice-warning" role="alert">
          This conversation does not exist, or it is not one of your workspace&rsquo;s agents.
        </p>
      ) : (
        <ErrorBox failure={props.failure} title="The conversation cannot be read." onRetry={props.onRetry} />
      )}
    </div>
  );
}
