import { useEffect, useRef, useState } from 'preact/hooks';
import { type FoundPassage, agents } from '../../api/agents';
import { Button } from '../../ui/buttons';
import { Panel } from '../../ui/page';
import { useAction } from '../../ui/resource';
import { ErrorBox } from '../../ui/status';
import { MarkdownText } from '../../../../shared/markdown-view';
import type { AnswerSource } from '../../../../shared/sources';
import { SourceList } from '../../../../shared/sources-view';
import { ReadPassages } from './passage-list';
import type { TabProps } from './tab';

interface Line {
  id: number;
  author: 'you' | 'agent' | 'notice';
  text: string;
  /** An answer's knowledge sources, from the stream's end frame. */
  sources?: AnswerSource[];
  /** The passages the answer read, and what a follow-up was searched with (`…/threads/{sid}/passages`). */
  read?: { searchedWith: string | null; passages: FoundPassage[] };
}

/** A conversation with the agent as a visitor would have it, streamed as they see it (you are confirmed as its admin). */
export function ChatTab(props: TabProps) {
  const [lines, setLines] = useState<Line[]>([]);
  const [sessionId, setSessionId] = useState<string | undefined>();
  const [text, setText] = useState('');
  const action = useAction();
  const log = useRef<HTMLOListElement>(null);
  const input = useRef<HTMLTextAreaElement>(null);
  const nextId = useRef(0);

  useEffect(() => {
    log.current?.lastElementChild?.scrollIntoView({ block: 'nearest' });
  }, [lines, action.busy]);

  /** The agent's answer has begun arriving (the "is answering" line gives way to it). */
  const streaming = Boolean(action.busy) && lines.at(-1)?.author !== 'you';
  const add = (author: Line['author'], value: string) =>
    setLines((prev) => [...prev, { id: nextId.current++, author, text: value }]);

  async function send(event?: Event) {
    event?.preventDefault();
    const message = text.trim();
    if (!message || action.busy) return;
    add('you', message);
    setText('');
    // The answer grows in one line as its pieces arrive; what the end frame says comes after it.
    const answerId = nextId.current++;
    let answer = '';
    let outage = false;
    const after: string[] = [];
    let failed: string | undefined;
    let answered: string | undefined;
    const res = await action.run(() =>
      agents.testChatStream(props.bot.id, message, sessionId, (frame) => {
        if (frame.type === 'delta') {
          answer += frame.delta;
          outage ||= frame.outage;
          const line: Line = { id: answerId, author: outage ? 'notice' : 'agent', text: answer };
          setLines((prev) =>
            prev.some((l) => l.id === answerId) ? prev.map((l) => (l.id === answerId ? line : l)) : [...prev, line],
          );
        } else if (frame.type === 'error') {
          failed = frame.message;
        } else {
          if (frame.sessionId) setSessionId(frame.sessionId);
          const sources = frame.sources;
          // Under the answer: not under a service message, nor under an answer that broke off.
          if (sources && !outage && !frame.outage && !failed) {
            setLines((prev) => prev.map((l) => (l.id === answerId && l.author === 'agent' ? { ...l, sources } : l)));
          }
          if (!outage && !frame.outage && !failed && !frame.handoff) answered = frame.sessionId ?? sessionId;
          if (frame.handoff) after.push('The conversation went to a human: answer it from the Inbox.');
          if (frame.quotaExceeded) after.push('The monthly conversation limit is used up.');
        }
      }),
    );
    if (answered) void showRead(answerId, answered, message);
    if (failed) add('notice', `The answer could not be finished: ${failed}`);
    for (const notice of after) add('notice', notice);
    if (!res.ok && answer) add('notice', 'The answer broke off; the full answer is in the conversation.');
    input.current?.focus();
  }

  /** The passages the answer read, under it (its run's, the newest of the conversation for this message). */
  async function showRead(answerId: number, session: string, message: string) {
    const res = await agents.passagesRead(props.bot.id, session);
    const latest = res.ok ? res.value.answers[0] : undefined;
    if (!latest || latest.question !== message) return;
    const read = { searchedWith: latest.searched_with, passages: latest.passages };
    setLines((prev) => prev.map((l) => (l.id === answerId && l.author === 'agent' ? { ...l, read } : l)));
  }

  function restart() {
    setLines([]);
    setSessionId(undefined);
    action.clear();
    input.current?.focus();
  }

  return (
    <Panel
      title="Test chat"
      description="Talk to the agent as a visitor would. Conversations here count like any other."
      actions={
        lines.length > 0 && (
          <Button small variant="ghost" onClick={restart} disabled={Boolean(action.busy)}>
            New conversation
          </Button>
        )
      }
    >
      <ol class="chat-log" ref={log} aria-label="Conversation" aria-live="polite">
        {lines.length === 0 && <li class="chat-empty">Ask something your visitors would ask.</li>}
        {lines.map((line) => (
          <ChatLine key={line.id} line={line} botId={props.bot.id} botName={props.bot.name} />
        ))}
        {action.busy && !streaming && (
          <li class="chat-line chat-agent chat-typing" role="status">
            <span class="spinner spinner-small" aria-hidden="true" /> {props.bot.name} is answering…
          </li>
        )}
      </ol>
      {action.failure && <ErrorBox failure={action.failure} />}
      <form class="chat-form" onSubmit={(e) => void send(e)}>
        <label for="chat-input" class="visually-hidden">
          Message
        </label>
        <textarea
          id="chat-input"
          ref={input}
          rows={2}
          placeholder="Type a message; Enter sends, Shift+Enter adds a line"
          value={text}
          onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              void send();
            }
          }}
        />
        <Button
          type="submit"
          variant="primary"
          busy={Boolean(action.busy)}
          busyLabel="Sending…"
          disabled={!text.trim()}
        >
          Send
        </Button>
      </form>
    </Panel>
  );
}

/** One line of the conversation: yours, a notice, or the agent's answer with its sources and the passages it read. */
function ChatLine({ line, botId, botName }: { line: Line; botId: string; botName: string }) {
  return (
    <li class={`chat-line chat-${line.author}`}>
      <span class="visually-hidden">
        {line.author === 'you' ? 'You' : line.author === 'agent' ? botName : 'Notice'}:{' '}
      </span>
      {line.author === 'agent' ? (
        <>
          <MarkdownText text={line.text} />
          <SourceList sources={line.sources} />
          {line.read && (
            <ReadPassages botId={botId} searchedWith={line.read.searchedWith} passages={line.read.passages} />
          )}
        </>
      ) : (
        line.text
      )}
    </li>
  );
}
