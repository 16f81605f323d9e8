import type { Attachment, Message, WidgetConfig } from './api';
import type { AnswerSource } from '../../shared/sources';
import type { SatisfactionAsked } from './satisfaction-state';

/** What the widget's conversation holds (conversation.ts keeps it; the components draw it). DOM-free. */

export type Rating = 'up' | 'down';

export type Item =
  | {
      kind: 'message';
      key: string;
      id?: string;
      author: string;
      text: string;
      attachment?: Attachment;
      /** Who of the team wrote an operator's reply (their first name), when they said. */
      authorName?: string;
      /** Shown before the API confirmed it (a visitor message on its way, an answer still streaming). */
      pending?: boolean;
      /** A bot answer of this page's turns: its id came in the end frame, so it can be rated. */
      rateable?: boolean;
      rating?: Rating;
      /** A bot answer's knowledge sources (its end frame's, or the poll's), drawn under it. */
      sources?: AnswerSource[];
      /** The agent could not answer and offers a person (the end frame's `handoff_offered`): a button under it. */
      offersPerson?: boolean;
      /**
       * A streamed answer its end frame gave no id (a hand-over): the part of its text no stored message of the poll
       * has claimed yet (the API may store it as the agent's words, then the team's away words).
       */
      unclaimed?: string;
    }
  | {
      kind: 'notice';
      key: string;
      id?: string;
      tone: 'error' | 'warning' | 'info';
      text: string;
      /** A notice about one failed action: it goes when the next action succeeds. */
      transient?: boolean;
      /** It says an answer is still coming: it also goes when the poll brings one. */
      untilAnswer?: boolean;
      action?: 'retry-send' | 'reload';
    };

export interface State {
  open: boolean;
  config: WidgetConfig | null;
  /** The configuration could not be read: the widget cannot work on this page (or right now). */
  unavailable: string | null;
  items: Item[];
  /** `bot` until a person is asked for; `waiting` and `operator` from the poll (contract, Poll response). */
  status: string;
  operatorHere: boolean;
  operatorTyping: boolean;
  /** A message is on its way and its answer has not started. */
  awaitingAnswer: boolean;
  sending: boolean;
  uploading: boolean;
  /** What the visitor typed and has not sent: kept here so that no failure and no closing of the panel loses it. */
  draft: string;
  /** Operator messages that came while the panel was closed. */
  unread: number;
  /**
   * A person resolved the conversation (`resolvedAt`, from the poll): the visitor is asked how it went until they
   * answer (`answered`: thanked) or write again.
   */
  satisfaction: SatisfactionAsked | null;
  /** Nobody of the team is there to answer a handoff: the contact form is offered (once). */
  contactSuggested: boolean;
  /**
   * Handed over outside the team's hours (`after_hours` of the turn or the handoff): the team is back at `backAt`
   * (Unix ms; null when unknown). Kept while the conversation waits for a person.
   */
  afterHours: { backAt: number | null } | null;
}

/** A message of the API as the timeline holds it. */
export function messageItem(key: string, m: Message): Item {
  return {
    kind: 'message',
    key,
    id: m.id,
    author: m.author,
    text: m.text,
    attachment: m.attachment,
    ...(m.author_name ? { authorName: m.author_name } : {}),
    ...(m.author === 'bot' && m.sources?.length ? { sources: m.sources } : {}),
  };
}
