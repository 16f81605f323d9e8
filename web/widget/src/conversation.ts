import type { Failure, Identity, Message, Session, WidgetApi } from './api';
import { type StreamFrame, readAfterHours } from '../../shared/sse';
import { forgetSession, loadSession, saveSession } from './storage';
import { pageContextOf } from './page-context';
import { satisfactionAfter } from './satisfaction-state';
import { handoffNotice } from './team';
import { type Rating, messageItem } from './state';
import { mergeMessages } from './merge';
import { Store } from './store';
import { ANSWER_PENDING, describeFailure, describeStreamError, imageProblem, uploadRefusal } from './wording';

export type { Item, Rating, State } from './state';

/**
 * The visitor's side of one conversation, apart from how it is drawn: what the timeline holds, the conversation's
 * status, and every call behind it (docs/widget.md). The Preact components subscribe to `state` and call the methods;
 * nothing here touches the DOM, so the rules (dedupe, pausing the poll, never losing typed text) live in one place.
 */

const TYPING_EVERY_MS = 3_000;
const DEFAULT_POLL_MS = 3_000;
const human = (status: string) => status === 'waiting' || status === 'operator';

export class Conversation extends Store {
  private session: Session | null;
  private creating: Promise<Session | Failure> | null = null;
  private cursor: string | undefined;
  /** Ids of messages already on the timeline (from the transcript, the poll, end frames and uploads). */
  private known = new Set<string>();
  /** Ids of answers still coming to this page's messages (`answer_pending`): rated like a streamed one when they come. */
  private awaited = new Set<string>();
  /**
   * A stream broke off before its end frame, which names the answer: the first of the agent's replies the poll brings
   * after it is that answer, rated like a streamed one.
   */
  private answerAfterBreak = false;
  /** Bumped when a send starts: a poll that began before it is discarded (its messages may be that send's). */
  private epoch = 0;
  private sendsInFlight = 0;
  private pollTimer: ReturnType<typeof setTimeout> | undefined;
  private pollRunning = false;
  private lastTypingAt = 0;
  private handingOff = false;

  constructor(
    private readonly api: WidgetApi,
    private readonly publicKey: string,
    private identity: Identity,
  ) {
    super();
    this.session = loadSession(publicKey);
  }

  identify(identity: Identity): void {
    this.identity = { ...this.identity, ...identity };
  }

  setDraft(draft: string): void {
    this.set({ draft });
  }

  setOpen(open: boolean): void {
    if (open === this.state.open) return;
    this.set({ open, unread: open ? 0 : this.state.unread });
    this.schedulePoll(0);
  }

  /** Reads the configuration and, with a stored session, the whole transcript so far. */
  async start(): Promise<void> {
    this.set({ unavailable: null });
    const config = await this.api.config();
    if (!config.ok) {
      this.set({
        unavailable:
          config.status === 0 || config.status === 403
            ? 'The chat is not available on this page right now.'
            : describeFailure(config),
      });
      return;
    }
    this.set({ config: config.value });
    if (this.session && this.state.items.length === 0) await this.loadTranscript(this.session);
    this.schedulePoll(0);
  }

  /** `GET /v1/widget/messages` from the start, following `next_cursor` until a page comes back empty. */
  private async loadTranscript(session: Session): Promise<void> {
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await this.api.messages(session, cursor);
      if (!res.ok) {
        if (res.status === 404) this.dropSession();
        return;
      }
      this.applyPoll(res.value.messages, res.value);
      cursor = res.value.next_cursor ?? cursor;
      this.cursor = cursor;
      if (res.value.messages.length === 0 || !res.value.next_cursor) return;
    }
  }

  /** The stored conversation is gone (erased, or its token no longer matches): start afresh. */
  private dropSession(): void {
    forgetSession(this.publicKey);
    this.session = null;
    this.cursor = undefined;
    this.set({ status: 'bot', operatorHere: false, operatorTyping: false, afterHours: null });
  }

  private async ensureSession(): Promise<Session | Failure> {
    if (this.session) return this.session;
    this.creating ??= this.api.createSession().then((res) => {
      this.creating = null;
      if (!res.ok) return res;
      this.session = res.value;
      saveSession(this.publicKey, res.value);
      return res.value;
    });
    return this.creating;
  }

  // ------------------------------------------------------------------------------------------------------------
  // Polling: while the panel is open, and while a person handles the conversation (their replies must arrive).

  private shouldPoll(): boolean {
    return !!this.session && !!this.state.config && (this.state.open || human(this.state.status));
  }

  private schedulePoll(delayMs = this.state.config?.poll_interval_ms ?? DEFAULT_POLL_MS): void {
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    if (!this.shouldPoll()) return;
    this.pollTimer = setTimeout(() => void this.pollOnce(), delayMs);
  }

  private async pollOnce(): Promise<void> {
    const session = this.session;
    if (!session || this.pollRunning) return;
    // A send in flight owns the timeline: its messages get their ids from its end frame first.
    if (this.sendsInFlight > 0) return this.schedulePoll();
    this.pollRunning = true;
    const epoch = this.epoch;
    let next: number | undefined;
    try {
      const res = await this.api.messages(session, this.cursor);
      if (session !== this.session) return;
      if (!res.ok) {
        if (res.status === 404) this.dropSession();
        if (res.status === 429) next = (res.retryAfter ?? 5) * 1000;
        return;
      }
      if (epoch !== this.epoch || this.sendsInFlight > 0) return; // read again with the same cursor
      this.applyPoll(res.value.messages, res.value);
      this.cursor = res.value.next_cursor ?? this.cursor;
    } finally {
      this.pollRunning = false;
      this.schedulePoll(next);
    }
  }

  private applyPoll(
    messages: Message[],
    poll: {
      status: string;
      operator_here?: boolean;
      operator_typing?: boolean;
      satisfaction_asked?: { resolved_at: number };
      after_hours?: { back_at: number | null };
    },
  ) {
    const merged = mergeMessages(this.state.items, messages, this.known, () => this.nextKey());
    const { fromTeam } = merged;
    const status = typeof poll.status === 'string' && poll.status ? poll.status : this.state.status;
    // An answer came: the notice that said it would (a broken connection, a turn the service stopped waiting for) goes,
    // and an answer this page waited for can be rated — after a broken connection, not once the conversation is with
    // the team (its reply is then the words of the hand-over).
    let items = merged.items;
    if (merged.replies) {
      const shown = new Set(this.state.items.map((it) => it.key));
      let afterBreak = this.answerAfterBreak && !human(status);
      this.answerAfterBreak = false;
      items = items
        .filter((it) => !(it.kind === 'notice' && it.untilAnswer))
        .map((it) => {
          if (it.kind !== 'message' || !it.id) return it;
          if (this.awaited.delete(it.id)) return { ...it, rateable: true };
          if (afterBreak && it.author === 'bot' && !shown.has(it.key)) {
            afterBreak = false;
            return { ...it, rateable: true };
          }
          return it;
        });
    }
    const unread = this.state.unread + (this.state.open ? 0 : fromTeam);
    if (human(status)) this.withdrawOffers();
    this.set({
      items,
      unread,
      status,
      // The team being away is said while the conversation waits for them (the poll says so, also after a reload); a
      // person's reply, or a resolve, ends it.
      afterHours: status === 'waiting' ? (readAfterHours(poll.after_hours) ?? null) : null,
      operatorHere: status === 'waiting' && poll.operator_here === true,
      operatorTyping: human(status) && poll.operator_typing === true,
      satisfaction: satisfactionAfter(this.state.satisfaction, poll.satisfaction_asked),
    });
  }

  // ------------------------------------------------------------------------------------------------------------
  // Sending

  /** Sends the draft and streams the answer into the timeline. Returns false when nothing was sent. */
  async send(): Promise<boolean> {
    const text = this.state.draft;
    if (!text.trim() || this.state.sending) return false;
    const visitorKey = this.nextKey();
    this.epoch++;
    this.sendsInFlight++;
    // Writing again answers the satisfaction question too: it goes.
    this.set({ draft: '', sending: true, awaitingAnswer: true, satisfaction: null });
    this.add({ kind: 'message', key: visitorKey, author: 'visitor', text, pending: true });
    try {
      const session = await this.ensureSession();
      if ('ok' in session) return this.unsent(visitorKey, text, session);
      return await this.stream(session, visitorKey, text);
    } finally {
      this.sendsInFlight--;
      this.set({ sending: false, awaitingAnswer: false });
      this.schedulePoll(human(this.state.status) ? 0 : undefined);
    }
  }

  /** The message never reached the API: it leaves the timeline and goes back into the message box. */
  private unsent(visitorKey: string, text: string, failure: Failure): false {
    this.remove(visitorKey);
    const draft = this.state.draft;
    this.set({ draft: draft ? `${text}\n${draft}` : text });
    this.failed(failure, 'retry-send');
    return false;
  }

  private async stream(session: Session, visitorKey: string, text: string): Promise<boolean> {
    let answerKey: string | undefined;
    let outageKey: string | undefined;
    let error: Extract<StreamFrame, { type: 'error' }> | undefined;
    let end: Extract<StreamFrame, { type: 'end' }> | undefined;

    let answered = false;
    const onFrame = (frame: StreamFrame) => {
      // The API took the message: the notices of earlier failures go now, not when the answer ends.
      if (!answered) {
        answered = true;
        this.clearTransient();
      }
      if (frame.type === 'delta') {
        this.set({ awaitingAnswer: false });
        if (frame.outage) {
          // A service message (quota, outage): a notice, never a bot reply (contract, ChatResponse `notice`).
          if (outageKey) this.appendText(outageKey, frame.delta);
          else this.notice(frame.delta, 'warning', { key: (outageKey = this.nextKey()) });
        } else if (answerKey) {
          this.appendText(answerKey, frame.delta);
        } else {
          answerKey = this.nextKey();
          this.add({ kind: 'message', key: answerKey, author: 'bot', text: frame.delta, pending: true });
        }
      } else if (frame.type === 'error') {
        error = frame;
      } else {
        end = frame;
      }
    };

    const res = await this.api.chatStream(
      session,
      { message: text, ...this.identity, page_context: pageContext() },
      onFrame,
    );
    if (!res.ok && res.code !== 'interrupted') {
      if (answerKey) this.remove(answerKey);
      if (res.status === 404) this.dropSession();
      return this.unsent(visitorKey, text, res);
    }
    this.clearTransient();
    if (!end) {
      // Accepted, then the connection broke: the message is the conversation's, and the poll brings the answer.
      this.update(visitorKey, { pending: false });
      if (answerKey) this.remove(answerKey);
      this.notice('The connection broke off during the answer. It will appear here when it is ready.', 'warning', {
        transient: true,
        untilAnswer: true,
      });
      this.answerAfterBreak = true;
      return true;
    }
    if (error && !end.visitorMessageId && !end.quotaExceeded) {
      // The turn could not be sent (a part of the service was out of reach): nothing of it is stored, not even the
      // message, so its text goes back to be sent again — as when the request itself is refused.
      if (answerKey) this.remove(answerKey);
      const failure = { ok: false, status: 503, code: 'service_unavailable', message: error.message } as const;
      return this.unsent(visitorKey, text, { ...failure, retryAfter: error.retryAfter });
    }
    if (end.visitorMessageId) this.known.add(end.visitorMessageId);
    this.update(visitorKey, { pending: false, id: end.visitorMessageId });

    if (error) {
      // Whatever streamed is not the answer; a complete one, if any, is in the transcript and the poll brings it.
      if (answerKey) this.remove(answerKey);
      // The turn goes on (the service stopped waiting for it): its answer comes, so no "try again", which would
      // send the message twice.
      if (end.answerPending) {
        this.notice(ANSWER_PENDING, 'warning', { transient: true, untilAnswer: true });
        if (end.messageId) this.awaited.add(end.messageId);
      } else this.notice(describeStreamError(error), 'error');
    } else if (end.quotaExceeded || end.outage) {
      if (answerKey) {
        const item = this.state.items.find((it) => it.key === answerKey);
        this.remove(answerKey);
        if (item && !outageKey) this.notice(item.text, 'warning', { key: (outageKey = this.nextKey()) });
      }
      if (end.messageId) this.known.add(end.messageId);
      if (outageKey) this.update(outageKey, { id: end.messageId });
    } else if (answerKey) {
      const item = this.state.items.find((it) => it.key === answerKey);
      if (end.messageId) this.known.add(end.messageId);
      if (!item?.text)
        this.remove(answerKey); // an empty answer is never shown (contract, ChatResponse)
      // The escalation confirmation is shown as the bot's words, but it is not an answer to rate.
      else
        this.update(answerKey, {
          pending: false,
          id: end.messageId,
          rateable: !!end.messageId && !end.handoff,
          sources: end.sources,
          // The agent could not answer: a button under its words asks for a person (not once one was asked for).
          offersPerson: end.handoffOffered && !end.handoff && !human(this.state.status),
          // Without an id (a hand-over) the poll brings it stored, perhaps as two messages: they claim this one.
          unclaimed: end.messageId ? undefined : item.text,
        });
    } else if (end.messageId) {
      this.known.add(end.messageId);
    }
    if (end.handoff) this.handedOver(end.afterHours);
    return true;
  }

  /**
   * The conversation went to the team (a turn's `handoff`, or `/handoff`): it waits for a person, offers of one go.
   * Outside the team's hours (`afterHours`) the visitor is asked for a contact at once.
   */
  private handedOver(afterHours: { backAt: number | null } | undefined): void {
    this.withdrawOffers();
    if (!human(this.state.status)) this.set({ status: 'waiting' });
    if (afterHours) this.set({ afterHours, contactSuggested: true });
  }

  // ------------------------------------------------------------------------------------------------------------
  // The other actions

  async handoff(): Promise<void> {
    // One request at a time: a second press while the first is on its way asks for nothing more.
    if (this.handingOff) return;
    this.handingOff = true;
    try {
      await this.askForPerson();
    } finally {
      this.handingOff = false;
    }
  }

  private async askForPerson(): Promise<void> {
    const session = await this.ensureSession();
    if ('ok' in session) return this.failed(session);
    const res = await this.api.handoff(session);
    if (!res.ok) {
      if (res.status === 404) {
        this.notice('Talking to a person is not available right now.', 'warning', { transient: true });
      } else this.failed(res);
      return;
    }
    if (res.value.status === 'bot') {
      // Nobody could be asked for (the monthly quota is used up): the conversation stays with the bot.
      this.notice('Talking to a person is not available right now.', 'warning', { transient: true });
      return;
    }
    this.clearTransient();
    const afterHours = readAfterHours(res.value.after_hours);
    // Outside the hours the API posts its own words (when the team is back, leave a contact); the poll brings them.
    if (!afterHours) {
      const said = handoffNotice(this.state.config?.team);
      this.notice(said.text, 'info');
      this.set({ contactSuggested: said.leaveContact });
    }
    this.handedOver(afterHours);
    this.schedulePoll(0);
  }

  /** How the help went (1–5, and a comment), once a person resolved the conversation; true when the API took it. */
  async rateSatisfaction(score: number, comment?: string): Promise<boolean> {
    const asked = this.state.satisfaction;
    if (!this.session || !asked || asked.answered) return false;
    const res = await this.api.satisfaction(this.session, { score, ...(comment?.trim() ? { comment } : {}) });
    if (!res.ok) {
      this.failed(res);
      return false;
    }
    this.clearTransient();
    this.set({ satisfaction: { ...asked, answered: true } });
    return true;
  }

  async rate(key: string, rating: Rating): Promise<void> {
    const item = this.state.items.find((it) => it.key === key);
    if (!this.session || item?.kind !== 'message' || !item.id) return;
    const before = item.rating;
    this.update(key, { rating });
    const res = await this.api.rating(this.session, item.id, rating);
    if (!res.ok) {
      this.update(key, { rating: before });
      this.failed(res);
    }
  }

  /** Checks the image before sending it: an image type the API takes, within its size. */
  async attach(file: File): Promise<void> {
    const limits = this.state.config?.attachments;
    const problem = imageProblem(file, limits);
    if (problem) return this.notice(problem, 'warning', { transient: true });
    const session = await this.ensureSession();
    if ('ok' in session) return this.failed(session);
    this.epoch++;
    this.sendsInFlight++;
    this.set({ uploading: true });
    try {
      const res = await this.api.upload(session, file);
      if (!res.ok) {
        const refused = uploadRefusal(res.status, limits);
        if (refused) this.notice(refused, 'warning', { transient: true });
        else this.failed(res);
        return;
      }
      this.clearTransient();
      const m = res.value.message;
      if (!m) {
        // The monthly quota is used up: its placeholder is a service message, like the chat's.
        return this.notice(res.value.answer || 'The image could not be sent right now.', 'warning');
      }
      this.known.add(m.id);
      this.add(messageItem(this.nextKey(), { ...m, author: m.author || 'visitor' }));
    } finally {
      this.sendsInFlight--;
      this.set({ uploading: false });
    }
  }

  /** The contact form was offered (opened by the panel): it is not offered again for the same handoff. */
  contactOffered(): void {
    if (this.state.contactSuggested) this.set({ contactSuggested: false });
  }

  /** Leaves the visitor's contact for the team; true when the API took it (the form then closes). */
  async contact(input: { contact: string; name?: string; note?: string }): Promise<boolean> {
    const session = await this.ensureSession();
    if ('ok' in session) {
      this.failed(session);
      return false;
    }
    const res = await this.api.contact(session, input);
    if (!res.ok) {
      this.failed(res);
      return false;
    }
    this.clearTransient();
    this.notice('Thank you! We have your contact and will get back to you.', 'info');
    return true;
  }

  /** The visitor is typing: operators see it (at most every 3 s, and only while a person handles the conversation). */
  typing(): void {
    const now = Date.now();
    if (!this.session || !human(this.state.status) || now - this.lastTypingAt < TYPING_EVERY_MS) return;
    this.lastTypingAt = now;
    void this.api.typing(this.session);
  }

  dispose(): void {
    clearTimeout(this.pollTimer);
    this.unsubscribeAll();
  }
}

/** What the page is, for the bot: its title and address, never its query string (page-context.ts). */
function pageContext(): string {
  return pageContextOf(document.title, location);
}
