import {
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { BuilderActivities } from '../activities/builder';
import { failureInfo } from './failures';
import {
  type BuilderMessage,
  type BuilderPrincipal,
  type BuilderReply,
  type BuilderThreadInput,
  type BuilderToolCall,
  type BuilderTurnInput,
  type BuilderTurnResult,
  builderDeliveredSignal,
  builderTurnUpdate,
  principalOwner,
} from './contracts/builder-thread';

/** A turn has up to three minutes (contract, Limits: builder turn). */
const TURN_BUDGET_MS = 3 * 60_000;
/** Model steps in one turn: each is a model call and the tool calls it asked for. */
const MAX_STEPS = 8;
/** Messages of earlier turns the model sees (user and assistant texts). */
export const HISTORY_MESSAGES = 40;
/** A result finished this recently may still be on its way to its own caller: the next turn waits for its receipt. */
const RECEIPT_GRACE_MS = 3_000;
/** Start afresh well before the history gets long (each turn is a handful of events per step). */
const TURNS_BEFORE_CONTINUE_AS_NEW = 100;
/** A builder conversation untouched this long ends; its next message starts a new one. */
export const IDLE_END_MS = 30 * 24 * 3600 * 1000;

const BUSY_TEXT =
  'The builder is still working on the previous message of this conversation, so nothing was changed. ' +
  'Send your message again in a moment.';

/** A turn that could not ask the model because the workspace has no credits left (README, Credits). */
const NO_CREDITS_TEXT =
  "No credits left: the builder's AI is paid from this workspace's credits, and there are none, so nothing more was " +
  'changed. Add credits on the Billing page (a new workspace gets its included credits once its owner confirms the ' +
  'e-mail address), then send the message again.';

/** Patch id: a turn that asked the model is charged after it (added after release; older turns replay without it). */
const TURNS_CHARGED = 'builder-turns-charged';

/** Answers that apply what awaits confirmation; anything else declines it. */
const CONSENT = /^\s*(yes|y|yes please|ok|okay|confirm|confirmed|go ahead|do it|apply it)\s*[.!]*\s*$/i;

// The model's step: one LLM call. Heartbeats while it waits, so a worker that dies is noticed in seconds and the step
// runs again elsewhere; the backend refusing the key or funds is not retried.
const { thinkBuilderStep } = proxyActivities<BuilderActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3, nonRetryableErrorTypes: ['llm_unavailable'] },
});
// One tool call: a service function (SQL, a workflow start). Bounded, retried on infrastructure errors only.
const { actBuilderTool } = proxyActivities<BuilderActivities>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumAttempts: 5 },
});
// A turn's charge: one statement, idempotent on the turn id, so retrying it is safe; bounded so a turn whose charge
// cannot be written (Postgres away for longer) still answers its caller.
const { chargeBuilderTurn } = proxyActivities<BuilderActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumAttempts: 5 },
});

interface Pending {
  call: BuilderToolCall;
  summary: string;
  /** Asked by a turn that had untrusted content in view: its arguments may be the injected text's. */
  untrusted?: boolean;
}

interface Carried {
  history: BuilderMessage[];
  pending: Pending | null;
  undelivered: BuilderReply[];
  /** See `untrustedWithin` below; absent in conversations carried over before it existed. */
  untrustedWithin?: number;
}

/** A builder conversation run's state, which its handlers read and change; turns run one at a time. */
interface Thread {
  readonly input: BuilderThreadInput;
  history: BuilderMessage[];
  pending: Pending | null;
  undelivered: BuilderReply[];
  // Prompt injection (docs/decisions/109-builder-prompt-injection.md): where in `history`, counted from its
  // end (1 = the last message), the newest reply written with untrusted content in view is; 0 when the history holds
  // none. Tool results are never remembered, but a reply may repeat what they said, and the model sees the history
  // in every later turn: while such a reply is in it, every turn is tainted from its start, and so is its own reply
  // (it could repeat the injected text in turn). So a conversation that read untrusted content keeps asking for as
  // long as it lives: every reply the model writes after that renews it.
  // Kept as a plain count in the workflow's state, so a replay computes it again exactly.
  untrustedWithin: number;
  /** Turns asked for in this run: continuing as new and the idle end count them. */
  turns: number;
  /** A turn is under way: the next in line waits for it. */
  running: boolean;
  /** Turn ids waiting for the turn in progress, in order of arrival. */
  readonly queue: string[];
}

/** Who a turn's activities act for. */
type TurnBase = { workspaceId: string; principal: BuilderPrincipal };

/** What one turn gathers while its model steps run. */
interface TurnState {
  /** The model's steps and the tool results, after the user's message. */
  readonly steps: BuilderMessage[];
  /** Secrets shown once (new keys), sealed for the caller only. */
  readonly secrets: string[];
  /** The last change made, by tool name and canonical arguments: the same change twice in a row is not made again. */
  lastChange: string;
  /**
   * Set once a tool brought in what visitors or other systems wrote, or from the start when the history the model is
   * given holds a reply written after such a read: then this turn only asks.
   */
  tainted: boolean;
  /** What the model used in this turn: charged once at its end, as a run is (README, Credits). */
  readonly used: { steps: number; promptTokens: number; completionTokens: number };
}

/**
 * One builder conversation (contract, Builder over MCP, behaviour of `constructor`): its memory, what awaits the owner's
 * consent, and the results its callers have not received yet. Turns run one after another; a call queued past its
 * wait answers "busy" and changes nothing; a turn whose caller went still finishes, and its result leads the next
 * response. Each turn is an agent loop of activities — a model step, then the tool calls it asked for — so a worker
 * that dies mid-turn costs only the step in flight.
 */
export async function builderThreadWorkflow(input: BuilderThreadInput, carried?: Carried): Promise<void> {
  const t: Thread = {
    input,
    history: carried?.history ?? [],
    pending: carried?.pending ?? null,
    undelivered: carried?.undelivered ?? [],
    untrustedWithin: carried?.untrustedWithin ?? 0,
    turns: 0,
    running: false,
    queue: [],
  };

  setHandler(builderDeliveredSignal, ({ turnIds }) => {
    t.undelivered = t.undelivered.filter((r) => !turnIds.includes(r.turnId));
  });

  setHandler(builderTurnUpdate, (turn) => takeTurn(t, turn), {
    // Whose conversation this is decides who may speak in it: a turn from another principal is refused before
    // it enters the history (the ids keep principals apart already; this holds even if one were reused).
    validator: (turn) => {
      if (input.owner && principalOwner(turn.principal) !== input.owner) {
        throw new Error('This builder conversation belongs to another client');
      }
    },
  });

  // Live until the history gets long (then continue as new with the memory) or the conversation sits idle.
  for (;;) {
    const seen = t.turns;
    await condition(() => t.turns >= TURNS_BEFORE_CONTINUE_AS_NEW, IDLE_END_MS);
    if (t.turns >= TURNS_BEFORE_CONTINUE_AS_NEW) {
      await condition(allHandlersFinished);
      const { history, pending, undelivered, untrustedWithin } = t;
      await continueAsNew<typeof builderThreadWorkflow>(input, { history, pending, undelivered, untrustedWithin });
    }
    if (t.turns === seen) {
      await condition(allHandlersFinished);
      return;
    }
  }
}

/** A turn asked for: it waits its place in line (busy past its wait), then runs; late results lead its answer. */
async function takeTurn(t: Thread, turn: BuilderTurnInput): Promise<BuilderTurnResult> {
  t.turns++;
  t.queue.push(turn.turnId);
  const inLine = await condition(
    () => !t.running && t.queue[0] === turn.turnId,
    Math.max(0, turn.waitUntil - Date.now()),
  );
  if (!inLine) {
    t.queue.splice(t.queue.indexOf(turn.turnId), 1);
    return { late: [], reply: { turnId: turn.turnId, text: BUSY_TEXT, busy: true, at: Date.now() } };
  }
  t.queue.shift();
  t.running = true;
  try {
    // A result that has just finished is probably being written to its own caller: wait for that receipt briefly.
    await condition(() => t.undelivered.every((r) => Date.now() - r.at >= RECEIPT_GRACE_MS), RECEIPT_GRACE_MS);
    const late = [...t.undelivered];
    const reply = await runTurn(t, turn);
    t.undelivered.push(reply);
    return { late, reply };
  } finally {
    t.running = false;
  }
}

async function runTurn(t: Thread, turn: BuilderTurnInput): Promise<BuilderReply> {
  const deadline = Date.now() + TURN_BUDGET_MS;
  const base: TurnBase = { workspaceId: t.input.workspaceId, principal: turn.principal };
  const asked = takePending(t);

  if (asked && CONSENT.test(turn.message)) {
    // Consent applies exactly what was asked, without the model: nothing else can slip in.
    const text = await applyConsented(base, asked);
    remember(t, turn.message, text, asked.untrusted ?? false);
    return { turnId: turn.turnId, text, at: Date.now() };
  }

  const s: TurnState = {
    steps: [],
    secrets: [],
    lastChange: '',
    tainted: t.untrustedWithin > 0,
    used: { steps: 0, promptTokens: 0, completionTokens: 0 },
  };
  let text: string;
  try {
    text = await modelSteps(t, turn, base, asked, deadline, s);
  } catch (err) {
    text = failureText(err);
  }
  // The model steps that answered are paid for, however the turn ended (the changes they made stay made); a turn
  // that never reached the model — a refusal, no credits — costs nothing.
  if (s.used.steps > 0 && patched(TURNS_CHARGED)) await chargeTurn(t, turn, s.used);
  const awaiting = t.pending?.summary;
  const reply = text + (awaiting ? `\n\n[Awaiting confirmation: ${awaiting}. Reply "yes" to apply it.]` : '');
  remember(t, turn.message, reply, s.tainted);
  return {
    turnId: turn.turnId,
    text: reply,
    ...(awaiting ? { awaitingConfirmation: awaiting } : {}),
    ...(s.secrets.length ? { sealedSecrets: s.secrets } : {}),
    at: Date.now(),
  };
}

/** What awaited consent is this turn's to apply or decline: either way it no longer waits. */
function takePending(t: Thread): Pending | null {
  const asked = t.pending;
  t.pending = null;
  return asked;
}

/** The agent loop: a model step, then the tool calls it asked for, until it answers or the turn's budget is spent. */
async function modelSteps(
  t: Thread,
  turn: BuilderTurnInput,
  base: TurnBase,
  asked: Pending | null,
  deadline: number,
  s: TurnState,
): Promise<string> {
  const user: BuilderMessage = { role: 'user', content: turn.message };
  for (let step = 0; ; step++) {
    if (step >= MAX_STEPS || Date.now() > deadline) {
      return 'I stopped here: this took longer than one turn may. Everything listed above as done is done.';
    }
    const thought = await thinkBuilderStep({
      ...base,
      screen: step === 0,
      declined: asked && step === 0 ? asked.summary : undefined,
      messages: [...t.history, user, ...s.steps],
    });
    if (thought.promptTokens !== undefined || thought.completionTokens !== undefined) {
      s.used.steps++;
      s.used.promptTokens += thought.promptTokens ?? 0;
      s.used.completionTokens += thought.completionTokens ?? 0;
    }
    if (thought.toolCalls.length === 0) return thought.text;
    s.steps.push({
      role: 'assistant',
      content: thought.text || null,
      tool_calls: thought.toolCalls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      })),
    });
    for (const call of thought.toolCalls) {
      s.steps.push({ role: 'tool', tool_call_id: call.id, content: await toolResult(t, base, call, s) });
    }
  }
}

/** Performs one tool call the model asked for (or says why not) and returns what the model is told of it. */
async function toolResult(t: Thread, base: TurnBase, call: BuilderToolCall, s: TurnState): Promise<string> {
  const signature = `${call.name}\n${canonical(call.arguments)}`;
  if (signature === s.lastChange) return 'Not performed: the same change was just made in this turn.';
  const outcome = await actBuilderTool({ ...base, call, consented: false, tainted: s.tainted });
  if (outcome.untrusted) s.tainted = true;
  if (outcome.showOnce) s.secrets.push(...outcome.showOnce);
  if (outcome.changed) s.lastChange = signature;
  if (!outcome.needsConsent) return outcome.content;
  if (t.pending) return 'Not applied: another change already awaits confirmation. Offer this one after it.';
  t.pending = { call, summary: outcome.needsConsent.summary, untrusted: s.tainted };
  return `Not applied yet: ${outcome.needsConsent.summary} needs the owner's confirmation. It will be applied if they answer "yes". Tell them what will change.`;
}

/** What the caller is told when a turn could not finish. */
function failureText(err: unknown): string {
  const info = failureInfo(err, { fallbackMessage: 'The builder could not finish this turn' });
  return info.type === 'no_credits'
    ? NO_CREDITS_TEXT
    : info.type === 'llm_unavailable'
      ? `The builder's AI backend refused the request (${info.message}). Nothing more was changed; the owner needs to check the LLM key or funds.`
      : `The builder could not finish this turn (${info.message}). Send the message again.`;
}

async function chargeTurn(t: Thread, turn: BuilderTurnInput, used: TurnState['used']): Promise<void> {
  try {
    await chargeBuilderTurn({
      workspaceId: t.input.workspaceId,
      turnId: turn.turnId,
      promptTokens: used.promptTokens,
      completionTokens: used.completionTokens,
    });
  } catch {
    // Postgres stayed away through the retries: the turn's answer still reaches its caller.
  }
}

async function applyConsented(base: TurnBase, asked: Pending): Promise<string> {
  try {
    const outcome = await actBuilderTool({ ...base, call: asked.call, consented: true });
    return `Done: ${asked.summary}.\n\n${outcome.content}`;
  } catch (err) {
    return `That could not be applied (${failureInfo(err).message}). Nothing was changed.`;
  }
}

/** Keeps a turn in the model's memory; `untrusted`: its reply was written with untrusted content in view. */
function remember(t: Thread, message: string, reply: string, untrusted: boolean) {
  t.history = [
    ...t.history,
    { role: 'user' as const, content: message },
    { role: 'assistant' as const, content: reply },
  ].slice(-HISTORY_MESSAGES);
  // The newest untrusted reply moves two places back with each turn, and is out once the window no longer holds it.
  if (untrusted) t.untrustedWithin = 1;
  else if (t.untrustedWithin > 0)
    t.untrustedWithin = t.untrustedWithin + 2 <= t.history.length ? t.untrustedWithin + 2 : 0;
}

/** Arguments compared by meaning, not spelling: key order and spacing do not make a call different. */
function canonical(json: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(json)));
  } catch {
    return json.trim();
  }
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v as Record<string, unknown>)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}
