import { z } from 'zod';
import { BuilderRateLimited } from '../../lib/builder/service';
import { ApiError } from '../../lib/errors';
import { LIMITS } from '../../lib/limits';
import { BuilderReply } from '../../lib/schemas/builder';
import type { Services } from '../../lib/services';
import type { BuilderPrincipal } from '../../workflows/contracts/builder-thread';
import type { AppContext } from '../context';
import type { AppDeps } from '../deps';
import { sendFetchResponse, toFetchRequest } from '../fetch-bridge';
import { createBuilderMcpEndpoint } from '../mcp/endpoint';
import { type McpCall, MessageArg } from '../mcp/server';
import { AUTH_ERRORS, type Reply, type RouteDef, SENT_BY_HANDLER, reply, route } from '../route';
import { sessionUser } from '../session';

/** Methods counted in the reads budget before the SDK serves them (tool calls count inside their tools). */
const COUNTED_METHODS = new Set(['initialize', 'server/discover', 'tools/list']);

/**
 * After the response is written, the thread learns which results its caller received: none when the caller
 * cancelled the request (it drops the response) or went away before the response was written ('finish' never comes).
 */
function acknowledgeWhenWritten(ctx: AppContext, services: Services, call: Pick<McpCall, 'delivered' | 'cancelled'>) {
  const delivered = call.delivered;
  if (!delivered || delivered.turnIds.length === 0) return;
  ctx.res.once('finish', () => {
    if (call.cancelled?.aborted) return;
    services.builder
      .acknowledge(delivered.conversation, delivered.turnIds)
      .catch((err: unknown) => ctx.state.log.warn({ err }, 'builder results not acknowledged: they will be repeated'));
  });
}

/** Whether a response body holds a JSON-RPC result (one message, or one of a batch). */
function carriesResult(body: unknown): boolean {
  if (!Buffer.isBuffer(body)) return false;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    return (Array.isArray(parsed) ? parsed : [parsed]).some(
      (m) => typeof m === 'object' && m !== null && 'result' in m,
    );
  } catch {
    return false;
  }
}

/** A POSTed JSON-RPC message as far as the route reads it (one message; a batch is the endpoint's to judge). */
interface JsonRpcInput {
  method?: unknown;
  id?: unknown;
}

/**
 * A spent budget said in the protocol's terms, with `Retry-After`: a request gets its answer — a tool call a tool result
 * with `isError` (contract: the builder's limits are tool results, not 429), anything else a JSON-RPC error —, and input
 * that gets no answer (a notification, a response, a batch) is not accepted: 429 with a JSON-RPC error without an id,
 * as Streamable HTTP answers input it cannot accept.
 */
type JsonRpcMessage = Record<string, unknown>;

function answerRateLimited(
  ctx: AppContext,
  message: JsonRpcInput | undefined,
  err: BuilderRateLimited,
): JsonRpcMessage | Reply<429, JsonRpcMessage> {
  ctx.set('Retry-After', String(err.retryAfter));
  const id = typeof message?.id === 'string' || typeof message?.id === 'number' ? message.id : undefined;
  const error = { code: -32000, message: err.message, data: { retry_after: err.retryAfter } };
  if (id === undefined || typeof message?.method !== 'string') {
    return reply(429, { jsonrpc: '2.0', id: null, error });
  } else if (message.method === 'tools/call') {
    const text = `${err.message}. Nothing was changed.`;
    return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }], isError: true } };
  }
  return { jsonrpc: '2.0', id, error };
}

function builderPrincipal(ctx: AppContext): { workspaceId: string; principal: BuilderPrincipal } {
  const p = ctx.state.principal!;
  return { workspaceId: p.workspaceId, principal: { kind: 'builder_key', keyId: p.keyId, botId: p.botId } };
}

export function builderRoutes(deps: AppDeps): RouteDef[] {
  return [...mcpRoutes(deps), ...builderHttpRoutes(deps)];
}

/** The builder over MCP. */
function mcpRoutes(deps: AppDeps): RouteDef[] {
  const { services } = deps;
  const mcp = createBuilderMcpEndpoint({ services, logger: deps.logger });

  return [
    route({
      method: 'post',
      path: '/v1/api/mcp',
      operationId: 'mcp',
      tag: 'Builder',
      summary: 'The builder over MCP: one JSON-RPC 2.0 message per POST (Streamable HTTP), JSON responses.',
      description:
        'Both protocol eras: the current one (no handshake; version and capabilities in `params._meta` and the ' +
        '`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` headers; `server/discover`) and the earlier one with ' +
        '`initialize`. Tools `agents`, `incidents`, `constructor`. `GET` is 405; a request whose `Origin` is another ' +
        "site is 403. The builder's own limits are tool results with `isError: true` (with `Retry-After`), not 429. " +
        `Every POST counts in the key's budget of ${LIMITS.builder.mcpRequestsPerMinute} a minute: past it a request ` +
        'gets its answer as a tool result or JSON-RPC error, a notification or batch 429. JSON-RPC batches only in ' +
        `revision 2025-03-26 (no \`MCP-Protocol-Version\`, or that one), at most ${LIMITS.builder.mcpBatchMessages} ` +
        `messages and ${LIMITS.builder.mcpCancellationsPerRequest} cancellations; otherwise 400 with a JSON-RPC error.`,
      keys: ['builder'],
      keyHeader: 'authorization',
      sameOrigin: true,
      rawBody: true,
      headers: [
        {
          name: 'MCP-Protocol-Version',
          description: 'Protocol revision (current era; the earlier era after initialize)',
        },
      ],
      responses: {
        200: {
          description: 'A JSON-RPC response',
          schema: z.record(z.string(), z.unknown()),
          headers: ['Retry-After'],
        },
        202: { description: 'A notification was accepted' },
        400: {
          description:
            'Input the endpoint does not accept (not JSON-RPC, a batch it refuses): a JSON-RPC error without an id',
          schema: z.record(z.string(), z.unknown()),
        },
        429: {
          description: "A notification or batch past the key's request budget: a JSON-RPC error without an id",
          schema: z.record(z.string(), z.unknown()),
          headers: ['Retry-After'],
        },
      },
      errors: [
        'bad_request',
        ...AUTH_ERRORS,
        'forbidden',
        'payload_too_large',
        'unsupported_media_type',
        'internal_error',
      ],
      handler: async (ctx) => {
        const { workspaceId, principal } = builderPrincipal(ctx);
        const raw = ctx.state.rawBody ?? Buffer.alloc(0);
        let message: JsonRpcInput | undefined;
        try {
          const parsed = JSON.parse(raw.toString('utf8')) as unknown;
          if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) message = parsed;
        } catch {
          message = undefined; // the SDK answers the parse error in JSON-RPC's own terms
        }
        // Every POST counts in the key's budget, whatever it carries; a handshake or tool list also in the reads.
        const read = typeof message?.method === 'string' && COUNTED_METHODS.has(message.method);
        try {
          await services.builder.countMcpRequest(ctx.state.principal!.keyId, workspaceId, read);
        } catch (err) {
          if (!(err instanceof BuilderRateLimited)) throw err;
          return answerRateLimited(ctx, message, err);
        }
        const call: McpCall = { workspaceId, principal, log: ctx.state.log };
        const response = await mcp.handle(toFetchRequest(ctx, raw), call, ctx.state.principal!.keyId);
        await sendFetchResponse(ctx, response);
        if (call.retryAfter !== undefined) ctx.set('Retry-After', String(call.retryAfter));
        // Only results the response carries (a JSON-RPC result, not an error in its place).
        if (carriesResult(ctx.body)) acknowledgeWhenWritten(ctx, services, call);
        // The MCP SDK's own response (any status, JSON-RPC bodies it shapes) was copied onto ctx.
        return SENT_BY_HANDLER;
      },
    }),
  ];
}

/** The builder in one HTTP call, and the dashboard's builder panel. */
function builderHttpRoutes(deps: AppDeps): RouteDef[] {
  const { services } = deps;

  /** The workspace's builder message budget (shared by every surface); past it, 429 with `Retry-After`. */
  async function countMessage(workspaceId: string): Promise<void> {
    try {
      await services.builder.countRequest(workspaceId, 'messages');
    } catch (err) {
      if (!(err instanceof BuilderRateLimited)) throw err;
      throw new ApiError(
        'rate_limited',
        err.message,
        { retry_after: err.retryAfter },
        { 'Retry-After': String(err.retryAfter) },
      );
    }
  }

  /** A builder turn answered as one JSON body (the HTTP call, the dashboard's panel). */
  async function converseOverHttp(
    ctx: AppContext,
    conversation: { workspaceId: string; surface: 'http' | 'dashboard'; thread: null },
    principal: BuilderPrincipal,
    message: string,
  ): Promise<z.infer<typeof BuilderReply>> {
    const answer = await services.builder.converse({ ...conversation, principal, message });
    acknowledgeWhenWritten(ctx, services, {
      delivered: { conversation: { ...conversation, principal }, turnIds: answer.turnIds },
    });
    return {
      reply: answer.text,
      ...(answer.reply.awaitingConfirmation ? { awaiting_confirmation: answer.reply.awaitingConfirmation } : {}),
      ...(answer.reply.busy ? { busy: true } : {}),
    };
  }

  return [
    route({
      method: 'post',
      path: '/v1/dashboard/builder',
      operationId: 'builderMessage',
      tag: 'Builder',
      summary: 'The builder in one HTTP call (`X-Bot-Key: ck_…`).',
      description:
        'The same builder as the MCP tool `constructor`, in its own conversation. Shares the workspace budget of ' +
        '12 builder messages a minute (429 `rate_limited` with `Retry-After` past it). A change that needs consent ' +
        'is named in `awaiting_confirmation` (and the reply ends with it in square brackets); send `yes` to apply it.',
      keys: ['builder'],
      body: z.object({ message: MessageArg }).meta({ id: 'BuilderRequest' }),
      responses: { 200: { description: "The builder's reply", schema: BuilderReply } },
      errors: ['bad_request', ...AUTH_ERRORS, 'payload_too_large', 'rate_limited', 'internal_error'],
      handler: async (ctx, { body }) => {
        const { workspaceId, principal } = builderPrincipal(ctx);
        await countMessage(workspaceId);
        return await converseOverHttp(ctx, { workspaceId, surface: 'http', thread: null }, principal, body.message);
      },
    }),
    route({
      method: 'post',
      path: '/v1/dashboard/assistant',
      operationId: 'dashboardBuilder',
      tag: 'Builder',
      unstable: true,
      session: true,
      summary:
        "The dashboard's builder panel: the signed-in owner or admin talks to the builder (its own conversation).",
      description:
        'Separate from MCP threads and the HTTP call. The person is signed in, so a builder key can be issued from here (it revokes nothing). Same limits and consent as the `constructor` tool.',
      body: z.object({ message: MessageArg }).meta({ id: 'DashboardBuilderRequest' }),
      responses: { 200: { description: "The builder's reply", schema: BuilderReply } },
      errors: ['bad_request', 'unauthorized', 'forbidden', 'payload_too_large', 'rate_limited', 'internal_error'],
      handler: async (ctx, { body }) => {
        const { workspaceId, userId } = sessionUser(ctx);
        await countMessage(workspaceId);
        return await converseOverHttp(
          ctx,
          { workspaceId, surface: 'dashboard', thread: null },
          { kind: 'session', userId },
          body.message,
        );
      },
    }),
  ];
}
