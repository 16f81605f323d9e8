import { useEffect, useRef, useState } from 'preact/hooks';
import { type Message, inboxApi } from '../../api/inbox';
import { usePolling } from '../../use-polling';
import { MAX_BACKOFF_MS, THREAD_POLL_MS, announcementOf } from './model';
import { MessageLog, TRANSCRIPT_PAGE, type ThreadState, readyState } from './thread-model';

/**
 * One conversation, read and then polled with the API's cursor for what is new. A new message from the visitor or
 * the agent is announced, and counted as unseen when the operator has scrolled up (`onIncoming`); a status changed
 * elsewhere (resolved, taken by a person) tells `onChanged`. `add` puts messages this page sent into the transcript.
 */
export function useThread(props: {
  botId: string;
  sessionId: string;
  botName?: string;
  announce: (text: string) => void;
  onChanged: () => void;
  onIncoming: (count: number) => void;
}) {
  const { botId, sessionId } = props;
  // The polls outlive a render: they read the newest props through this.
  const latest = useRef(props);
  latest.current = props;
  const [thread, setThread] = useState<ThreadState>({ state: 'loading' });
  const log = useRef(new MessageLog());

  // What the polling of this conversation has seen: the first read announces nothing, a status change is news.
  const seen = useRef({ first: true, status: '' });
  useEffect(() => {
    seen.current = { first: true, status: '' };
  }, [botId, sessionId]);
  const pollNow = usePolling(
    async (stopped) => {
      const res = await log.current.readNew((cursor) => inboxApi.transcript(botId, sessionId, cursor, TRANSCRIPT_PAGE));
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
      setThread(readyState(t, log.current.ordered()));
      if (!first) {
        const incoming = res.added.filter((m) => m.author !== 'operator');
        const said = incoming.map((m) => announcementOf(m, latest.current.botName));
        if (said.length > 0) latest.current.announce(said.slice(-3).join(' '));
        if (incoming.length > 0) latest.current.onIncoming(incoming.length);
      }
      return 'ok';
    },
    { everyMs: THREAD_POLL_MS, maxBackoffMs: MAX_BACKOFF_MS },
    [botId, sessionId],
  );

  /** Messages this page stored (a reply, a note, an image), shown at once, with the status the API answered. */
  function add(messages: Message[], status?: string) {
    log.current.merge(messages);
    setThread((prev) =>
      prev.state === 'ready' ? { ...prev, messages: log.current.ordered(), status: status || prev.status } : prev,
    );
  }

  return { thread, setThread, pollNow, add };
}
