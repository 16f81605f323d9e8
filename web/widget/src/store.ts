import type { Failure } from './api';
import { type Item, type State } from './state';
import { describeFailure } from './wording';

/**
 * What the widget's conversation holds and who is told when it changes: the state, its subscribers, and the edits of
 * the timeline's items (conversation.ts extends it with the calls behind them). DOM-free.
 */
export class Store {
  state: State = {
    open: false,
    config: null,
    unavailable: null,
    items: [],
    status: 'bot',
    operatorHere: false,
    operatorTyping: false,
    awaitingAnswer: false,
    sending: false,
    uploading: false,
    draft: '',
    unread: 0,
    satisfaction: null,
    contactSuggested: false,
    afterHours: null,
  };

  private listeners = new Set<() => void>();
  private seq = 0;

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  protected set(patch: Partial<State>): void {
    this.state = { ...this.state, ...patch };
    for (const listener of this.listeners) listener();
  }

  protected unsubscribeAll(): void {
    this.listeners.clear();
  }

  protected nextKey(): string {
    return `k${++this.seq}`;
  }

  protected update(key: string, patch: Partial<Item>): void {
    this.set({ items: this.state.items.map((it) => (it.key === key ? ({ ...it, ...patch } as Item) : it)) });
  }

  protected remove(key: string): void {
    this.set({ items: this.state.items.filter((it) => it.key !== key) });
  }

  protected add(item: Item): void {
    this.set({ items: [...this.state.items, item] });
  }

  protected appendText(key: string, delta: string): void {
    this.set({
      items: this.state.items.map((it) => (it.key === key ? ({ ...it, text: it.text + delta } as Item) : it)),
    });
  }

  protected notice(text: string, tone: 'error' | 'warning' | 'info', extra: Partial<Item> = {}): void {
    this.add({ kind: 'notice', key: this.nextKey(), tone, text, ...extra } as Item);
  }

  /** Drops the notices about earlier failed actions (an action just worked). */
  protected clearTransient(): void {
    if (this.state.items.some((it) => it.kind === 'notice' && it.transient)) {
      this.set({ items: this.state.items.filter((it) => !(it.kind === 'notice' && it.transient)) });
    }
  }

  /** The offers of a person under answers go: one was taken, or the conversation is with the team anyway. */
  protected withdrawOffers(): void {
    if (this.state.items.some((it) => it.kind === 'message' && it.offersPerson)) {
      this.set({
        items: this.state.items.map((it) =>
          it.kind === 'message' && it.offersPerson ? ({ ...it, offersPerson: false } as Item) : it,
        ),
      });
    }
  }

  protected failed(failure: Failure, action?: 'retry-send'): void {
    // The newest failure is the one that is true now: an earlier one's notice (and its Retry) goes.
    this.clearTransient();
    this.notice(describeFailure(failure), failure.status === 0 || failure.status >= 500 ? 'error' : 'warning', {
      transient: true,
      // Retry is offered where sending the same again is the cure: the network, or the service briefly away.
      action: failure.code === 'network' || failure.code === 'service_unavailable' ? action : undefined,
    });
  }
}
