import { answer, converse, testChat } from './chat';
import type { ConversationDeps } from './deps';
import { eraseVisitor } from './erase';
import {
  addNote,
  inbox,
  listThreads,
  operatorAttach,
  operatorReply,
  operatorReplyFrom,
  operatorTyping,
  resolve,
  transcript,
  visitorPanel,
} from './operator';
import { openStream, testChatStream } from './stream';
import { pollMessages } from './poll';
import { attach, handoff, leaveContact, rate, rateSatisfaction, visitorTyping } from './visitor';

export type { ConversationDeps } from './deps';
export type { ChatInput } from './turn';
export type { AfterHoursView, ChatReply, ChatTurn } from './chat';
export type { ChatStream, StreamFrame } from './stream';
export type { Page } from './views';

/**
 * Conversations (docs/architecture.md, Who owns what): chat turns, handoff, polling, typing, the operator's side, and erasing a
 * visitor. Every surface — the HTTP API, the widget, the dashboard's test chat — calls these functions; each owns its
 * SQL and its Temporal calls, and answers failures as `ApiError`s in the contract's shape.
 *
 * One module per operation or small group, each function taking the same deps (deps.ts) first: chat.ts (a JSON turn,
 * the test chat), stream.ts (a streamed turn), poll.ts, visitor.ts, operator.ts, erase.ts; a turn's mechanics are
 * turn.ts, a conversation's row and its workflow sessions.ts. This assembles them, the deps bound once.
 */
export function createConversationService(deps: ConversationDeps) {
  return withDeps(deps, {
    answer,
    converse,
    testChat,
    openStream,
    testChatStream,
    handoff,
    poll: pollMessages,
    visitorTyping,
    rate,
    rateSatisfaction,
    leaveContact,
    attach,
    listThreads,
    inbox,
    transcript,
    visitorPanel,
    operatorReply,
    operatorReplyFrom,
    operatorAttach,
    addNote,
    operatorTyping,
    resolve,
    eraseVisitor,
  });
}

export type ConversationService = ReturnType<typeof createConversationService>;

/** An operation `(deps, ...args) => R` as the service offers it: `(...args) => R`. */
type WithDeps<Ops> = {
  [K in keyof Ops]: Ops[K] extends (deps: ConversationDeps, ...args: infer A) => infer R ? (...args: A) => R : never;
};

function withDeps<Ops extends Record<string, (deps: ConversationDeps, ...args: never[]) => unknown>>(
  deps: ConversationDeps,
  ops: Ops,
): WithDeps<Ops> {
  const bound = Object.entries(ops).map(([name, op]) => [name, (...args: never[]) => op(deps, ...args)]);
  return Object.fromEntries(bound) as WithDeps<Ops>;
}
