import { createHash, randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import type { Db } from '../db';
import { LIMITS } from '../limits';
import { countInWindows } from '../rate-windows';
import type { SecretBox } from '../secret-box';
import { type DeltaHub, notifyHolder } from '../streams/listener';
import { type Temporal, isWorkflowTaskFailing, resendUnprocessedUpdate } from '../temporal';
import { builderThreadWorkflow } from '../../workflows/builder-thread';
import {
  type BuilderPrincipal,
  type BuilderReply,
  type BuilderSurface,
  type BuilderThreadInput,
  builderDeliveredSignal,
  builderThreadWorkflowId,
  builderTurnUpdate,
  principalOwner,
} from '../../workflows/contracts/builder-thread';
import { createBuilderOverview } from './overview';

const NO_LLM_TEXT =
  'The builder needs an LLM to talk: the platform has none configured (OPENAI_API_KEY). Nothing was changed. ' +
  'The agents and incidents tools work without one.';

/** A message the server kept refusing because the thread's workflow task keeps failing (its worker overloaded). */
const WORKER_BUSY_TEXT =
  'The builder cannot take messages at the moment (its worker is overloaded), so nothing was changed. ' +
  'Send your message again in a few seconds.';

/**
 * A builder budget is spent (contract, Limits): the 13th builder message of a minute, the 121st read, or a builder key's
 * 241st request to the MCP endpoint. Nothing was changed; try again in `retryAfter` seconds.
 */
export class BuilderRateLimited extends Error {
  constructor(
    readonly retryAfter: number,
    message = `Too many builder messages in this workspace this minute: nothing was changed. Try again in ${retryAfter} s.`,
  ) {
    super(message);
    this.name = 'BuilderRateLimited';
  }
}

export interface BuilderAnswer {
  /** The reply as the caller reads it: results of turns it missed first, then this one, secrets shown once. */
  text: string;
  reply: BuilderReply;
  late: BuilderReply[];
  /** Tell the thread these were written to the caller (`acknowledge`), so they are not repeated. */
  turnIds: string[];
}

export interface BuilderServiceDeps {
  db: Db;
  temporal: Temporal;
  secrets: SecretBox;
  /** Whether an LLM is configured (without one, `converse` says so and starts nothing). */
  llmConfigured: boolean;
  /** A call queued behind a running turn of its thread answers "busy" after this long. */
  queueWaitMs?: number;
  /** API processes: hears cancellations of the calls this process holds, sent from any replica. */
  deltaHub?: DeltaHub;
}

/** The hub key of one client's call (its JSON-RPC id): hashed, so a notification names neither. */
function callKey(clientId: string, requestId: unknown): string {
  return `builder-call:${createHash('sha256')
    .update(`${clientId}\n${JSON.stringify(requestId)}`)
    .digest('base64url')}`;
}

/**
 * The builder (contract, Builder over MCP): every surface — the MCP tool `constructor`, `POST /v1/dashboard/builder`, the
 * dashboard's panel — talks to it here. Each builder conversation is a builderThread workflow; the read-only views
 * (`agents`, `incidents`) are SQL over the read model.
 */
export function createBuilderService(deps: BuilderServiceDeps) {
  const overview = createBuilderOverview({ db: deps.db });
  const queueWaitMs = deps.queueWaitMs ?? LIMITS.builder.queueWaitSeconds * 1000;

  /** The conversation of this principal on this surface (and thread): never another principal's. */
  function thread(
    workspaceId: string,
    principal: BuilderPrincipal,
    surface: BuilderSurface,
    thread: string | null,
  ): BuilderThreadInput {
    return { workspaceId, owner: principalOwner(principal), surface, thread };
  }

  return {
    overview,

    /**
     * Calls `onCancel` when the client cancels its call `requestId` (`notifications/cancelled`) on any API replica:
     * behind a balancer the cancellation often reaches another process than the one that holds the call. Returns
     * the unsubscribe.
     */
    onCallCancelled(clientId: string, requestId: unknown, onCancel: () => void): () => void {
      const hub = deps.deltaHub;
      if (!hub) return () => undefined;
      const unsubscribe = hub.subscribe(callKey(clientId, requestId), onCancel);
      // Listening by the time a cancellation comes (seconds later); when Postgres is down, the call fails anyway.
      hub.ready().catch(() => undefined);
      return unsubscribe;
    },

    /** Tells the process holding the client's call `requestId`, whichever it is, that the call was cancelled. */
    async cancelCall(clientId: string, requestId: unknown): Promise<void> {
      await notifyHolder(deps.db, callKey(clientId, requestId));
    },

    /**
     * Counts a request in the workspace's builder budget: `messages` (12 a minute) or `reads` (handshakes, tool
     * lists, `agents`, `incidents`: 120). Over it: BuilderRateLimited with the seconds to wait.
     */
    async countRequest(workspaceId: string, kind: 'messages' | 'reads'): Promise<void> {
      const limit = kind === 'messages' ? LIMITS.builder.messagesPerMinute : LIMITS.builder.readsPerMinute;
      const [window] = await countInWindows(deps.db, [`builder-${kind}|${workspaceId}`]);
      if (window.count > limit) throw new BuilderRateLimited(Math.max(1, window.reset));
    },

    /**
     * Counts one POST to the MCP endpoint, whatever it carries (a request, a notification, a batch of the earlier
     * protocol), in the builder key's request budget (docs/decisions/135-mcp-request-budget.md), and a handshake or tool
     * list (`read`) also in the workspace's reads: one round trip. Over either: BuilderRateLimited.
     */
    async countMcpRequest(keyId: string, workspaceId: string, read: boolean): Promise<void> {
      const own = `mcp-requests|${keyId}`;
      const windows = await countInWindows(deps.db, [own, ...(read ? [`builder-reads|${workspaceId}`] : [])]);
      for (const w of windows) {
        const limit = w.bucket === own ? LIMITS.builder.mcpRequestsPerMinute : LIMITS.builder.readsPerMinute;
        if (w.count > limit) {
          const retryAfter = Math.max(1, w.reset);
          throw new BuilderRateLimited(
            retryAfter,
            w.bucket === own
              ? `Too many requests with this builder key this minute (${limit}): try again in ${retryAfter} s`
              : `Too many requests to the builder this minute: try again in ${retryAfter} s`,
          );
        }
      }
    },

    /**
     * One message to the builder: a turn of the conversation's workflow (started on first use). Waits for the turn;
     * the caller writes the answer and then calls `acknowledge` with its `turnIds`. A resent call with the same
     * `turnId` is the same turn (Temporal runs an update once).
     */
    async converse(input: {
      workspaceId: string;
      principal: BuilderPrincipal;
      surface: BuilderSurface;
      thread: string | null;
      message: string;
      turnId?: string;
    }): Promise<BuilderAnswer> {
      const turnId = input.turnId ?? `bt_${randomUUID()}`;
      if (!deps.llmConfigured) {
        const reply = { turnId, text: NO_LLM_TEXT, at: Date.now() };
        return { text: NO_LLM_TEXT, reply, late: [], turnIds: [] };
      }
      const args = thread(input.workspaceId, input.principal, input.surface, input.thread);
      const workflowId = builderThreadWorkflowId(args);
      const now = Date.now();
      const sent = resendUnprocessedUpdate(() =>
        deps.temporal.client.workflow.executeUpdateWithStart(builderTurnUpdate, {
          args: [{ turnId, message: input.message, principal: input.principal, waitUntil: now + queueWaitMs, at: now }],
          updateId: turnId,
          startWorkflowOperation: new WithStartWorkflowOperation(builderThreadWorkflow, {
            workflowId,
            taskQueue: deps.temporal.taskQueue,
            workflowIdConflictPolicy: 'USE_EXISTING',
            args: [args],
            searchAttributes: { WorkspaceId: [input.workspaceId] },
          }),
        }),
      );
      const result = await sent.catch((err) => {
        // Still refused after the resends: the thread's workflow task keeps failing (its worker short of CPU, or
        // stalled). Nothing of the message was admitted, so it is "busy", as a call queued too long behind a turn.
        if (!isWorkflowTaskFailing(err)) throw err;
        return { late: [], reply: { turnId, text: WORKER_BUSY_TEXT, busy: true, at: Date.now() } };
      });
      const shown = [...result.late, result.reply].map((r) => this.render(r));
      const text =
        result.late.length === 0
          ? shown[0]
          : `${shown
              .slice(0, -1)
              .map((t, i) => `Result of your earlier message (${new Date(result.late[i].at).toISOString()}):\n${t}`)
              .join('\n\n')}\n\nNow, to this message:\n${shown.at(-1)}`;
      return {
        text,
        reply: result.reply,
        late: result.late,
        turnIds: [...result.late.map((r) => r.turnId), ...(result.reply.busy ? [] : [result.reply.turnId])],
      };
    },

    /** A reply as its reader sees it: the text, then the secrets shown once (opened only here, never stored open). */
    render(reply: BuilderReply): string {
      const secrets = (reply.sealedSecrets ?? []).map((s) => deps.secrets.open(s));
      return secrets.length ? `${reply.text}\n\n${secrets.join('\n')}` : reply.text;
    },

    /** The caller received these turns' results: they are not put before the next response. */
    async acknowledge(
      conversation: {
        workspaceId: string;
        principal: BuilderPrincipal;
        surface: BuilderSurface;
        thread: string | null;
      },
      turnIds: string[],
    ): Promise<void> {
      if (turnIds.length === 0) return;
      const workflowId = builderThreadWorkflowId(
        thread(conversation.workspaceId, conversation.principal, conversation.surface, conversation.thread),
      );
      await deps.temporal.client.workflow.getHandle(workflowId).signal(builderDeliveredSignal, { turnIds });
    },
  };
}

export type BuilderService = ReturnType<typeof createBuilderService>;
