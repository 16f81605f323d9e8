/**
 * One conversation of the inbox apart from the DOM: the messages read so far (kept by id, so a page read twice adds
 * nothing), reading the transcript's pages up to what is new, what the thread shows of a transcript, and a reply's
 * bound. Unit-tested (test/unit/inbox-model.test.ts).
 */
import type { Failure, Result } from '../../api/client';
import { type InboxMessage, type InboxTranscript, LIMITS, type Teammate } from '../../../../shared/contract';

type Message = InboxMessage;
type Transcript = InboxTranscript;

export type ThreadState =
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
      why: Pick<Transcript, 'escalation_reason' | 'after_hours'>;
      briefing: Transcript['briefing'];
      stale?: Failure;
    };

/** Pages of the transcript one read follows at most, and their size (the API's largest page). */
const MAX_PAGES = 50;
export const TRANSCRIPT_PAGE = LIMITS.pageSize.max;

/** The messages of one conversation read so far, by id, and where the next read goes on from. */
export class MessageLog {
  private byId = new Map<string, Message>();
  private cursor: string | undefined;

  /** Adds what is new; returns the messages that were not known before. */
  merge(messages: Message[]): Message[] {
    const added: Message[] = [];
    for (const m of messages) {
      if (!this.byId.has(m.id)) added.push(m);
      this.byId.set(m.id, m);
    }
    return added;
  }

  ordered(): Message[] {
    return [...this.byId.values()].sort((a, b) => a.at - b.at);
  }

  /**
   * Follows the pages to the end; the next read continues after the last message read (`resume_cursor`), so it reads
   * only what is new. The transcript's last page, and the messages that were not known before.
   */
  async readNew(
    read: (cursor: string | undefined) => Promise<Result<Transcript>>,
  ): Promise<{ ok: true; value: Transcript; added: Message[] } | { ok: false; failure: Failure }> {
    const added: Message[] = [];
    let last: Transcript | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await read(this.cursor);
      if (!res.ok) return { ok: false, failure: res };
      last = res.value;
      added.push(...this.merge(res.value.messages));
      this.cursor = res.value.resume_cursor;
      if (!res.value.next_cursor) break;
    }
    return { ok: true, value: last!, added };
  }
}

/** What the thread shows of a transcript just read, with every message read so far. */
export function readyState(t: Transcript, messages: Message[]): ThreadState {
  return {
    state: 'ready',
    messages,
    status: t.status,
    visitorUser: t.visitor_user,
    visitorTyping: t.visitor_typing,
    assignee: t.assignee,
    replying: t.replying,
    why: { escalation_reason: t.escalation_reason, after_hours: t.after_hours },
    briefing: t.briefing,
  };
}

/** The longest reply or note the API takes; the composer counts the characters in its last thousand. */
export const MAX_REPLY = LIMITS.messageChars;
export const countShown = (length: number) => length > MAX_REPLY - 1000;

/** A reply too long to send, said before sending it, in the API's own shape. */
export function replyTooLong(text: string): Failure | undefined {
  if (text.length <= MAX_REPLY) return undefined;
  return { status: 400, code: 'bad_request', message: `A reply can be at most ${MAX_REPLY} characters.` };
}

/** Changes when the visitor leaves a contact or rates the help: the visitor panel is read again then. */
export const aboutVersion = (messages: Message[]) =>
  messages.filter((m) => m.event?.kind === 'contact' || m.event?.kind === 'satisfaction').length;
