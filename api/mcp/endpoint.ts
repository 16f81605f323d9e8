import {
  type AuthInfo,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  isLegacyRequest,
} from '@modelcontextprotocol/server';
import { LIMITS } from '../../lib/limits';
import type { Logger } from '../../lib/logger';
import type { Services } from '../../lib/services';
import { type McpCall, builderMcpServer } from './server';

export interface BuilderMcpEndpoint {
  /** Answers one MCP request (a Fetch `Request`) for the principal in `call`, in either protocol era. */
  handle(request: Request, call: McpCall, clientId: string): Promise<Response>;
}

/**
 * Runs `make` without the one warning the SDK prints to stderr whenever a handler is made with `responseMode: 'json'`
 * (mid-call notifications are dropped). JSON answers are the contract's choice, not an accident, so the warning told
 * an operator nothing on every API start; any other warning passes through.
 */
export function withoutJsonModeWarning<T>(make: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith("responseMode: 'json' drops mid-call notifications")) return;
    warn(...args);
  };
  try {
    return make();
  } finally {
    console.warn = warn;
  }
}

/**
 * The builder's MCP endpoint over the SDK's web-standard transports, both protocol eras. The current era goes to the
 * SDK's per-request entry with JSON responses. The earlier era (an `initialize` handshake) goes to a stateless
 * transport of the same SDK with JSON responses too: the entry's own legacy leg would answer SSE, and the contract
 * says every response is `application/json`. Each request gets a fresh server (all state lives in Temporal and
 * Postgres); the caller's identity reaches the tools through `authInfo.extra`.
 */
export function createBuilderMcpEndpoint(deps: { services: Services; logger: Logger }): BuilderMcpEndpoint {
  /**
   * Tool calls in flight in this process, by the key that sent them and their JSON-RPC id. Each POST gets a fresh
   * server, so the SDK's own handling of `notifications/cancelled` (aborting the named request in the server that
   * received the notification) never reaches the call, which another POST holds: a cancellation from the same key
   * aborts the call's `cancelled` signal here, and through the builder service in whichever replica holds it (behind a
   * balancer the cancellation's POST often lands elsewhere than the call's).
   */
  const inFlight = new Map<string, Set<AbortController>>();
  const inFlightKey = (clientId: string, id: unknown) => `${clientId}\n${JSON.stringify(id)}`;

  async function track(clientId: string, messages: JsonRpcMessage[], call: McpCall): Promise<() => void> {
    // A batch may name a call twice: each call is cancelled once (and `refusal` bounded how many there are).
    const cancelled = new Set<string>();
    for (const m of messages) {
      if (m.method === 'notifications/cancelled') {
        const requestId = m.params?.requestId;
        if (cancelled.has(JSON.stringify(requestId))) continue;
        cancelled.add(JSON.stringify(requestId));
        for (const c of inFlight.get(inFlightKey(clientId, requestId)) ?? []) c.abort();
        // Best effort, as the protocol's cancellation is: without it the other replica's call counts as received.
        await deps.services.builder
          .cancelCall(clientId, requestId)
          .catch((err: unknown) => deps.logger.warn({ err }, 'an MCP cancellation could not reach the other replicas'));
      }
    }
    const ids = messages
      .filter((m) => m.method === 'tools/call' && (typeof m.id === 'string' || typeof m.id === 'number'))
      .map((m) => m.id);
    if (ids.length === 0) return () => undefined;
    const controller = new AbortController();
    call.cancelled = controller.signal;
    const keys = ids.map((id) => inFlightKey(clientId, id));
    for (const key of keys) inFlight.set(key, (inFlight.get(key) ?? new Set()).add(controller));
    const unsubscribe = ids.map((id) => deps.services.builder.onCallCancelled(clientId, id, () => controller.abort()));
    return () => {
      for (const stop of unsubscribe) stop();
      for (const key of keys) {
        const set = inFlight.get(key);
        set?.delete(controller);
        if (set?.size === 0) inFlight.delete(key);
      }
    };
  }

  const factory = (ctx: { authInfo?: { extra?: Record<string, unknown> } }) =>
    builderMcpServer(deps.services, (ctx.authInfo?.extra as { call: McpCall }).call);
  const modern = withoutJsonModeWarning(() =>
    createMcpHandler(factory, {
      legacy: 'reject',
      responseMode: 'json',
      maxRequestBodySize: LIMITS.bodyBytes,
      onerror: (err) => deps.logger.warn({ err }, 'MCP request failed'),
    }),
  );

  async function serveLegacy(request: Request, authInfo: AuthInfo): Promise<Response> {
    const server = factory({ authInfo });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { authInfo });
    } finally {
      await server.close();
    }
  }

  return {
    async handle(request, call, clientId) {
      const authInfo: AuthInfo = { token: 'builder-key', clientId, scopes: [], extra: { call } };
      const legacy = await isLegacyRequest(request.clone(), undefined, { maxRequestBodySize: LIMITS.bodyBytes });
      const { messages, batch } = await jsonRpcMessages(request);
      // Refused before anything of it is acted on: a cancellation tells every replica (a Postgres notification).
      const refused = batch ? batchRefusal(request, legacy, messages) : null;
      if (refused) return refused;
      const untrack = await track(clientId, messages, call);
      try {
        return await (legacy ? serveLegacy(request, authInfo) : modern.fetch(request, { authInfo }));
      } finally {
        untrack();
      }
    },
  };
}

interface JsonRpcMessage {
  method?: unknown;
  id?: unknown;
  params?: { requestId?: unknown };
}

/** The JSON-RPC messages of a POST (one, or a batch of the earlier era); none when its body is not JSON. */
async function jsonRpcMessages(request: Request): Promise<{ messages: JsonRpcMessage[]; batch: boolean }> {
  try {
    const parsed = JSON.parse(await request.clone().text()) as unknown;
    const messages = (Array.isArray(parsed) ? parsed : [parsed]).filter(
      (m): m is JsonRpcMessage => typeof m === 'object' && m !== null,
    );
    return { messages, batch: Array.isArray(parsed) };
  } catch {
    return { messages: [], batch: false };
  }
}

/** The one protocol revision with JSON-RPC batches (2025-06-18 removed them; the current era has none). */
const BATCH_REVISION = '2025-03-26';

/**
 * Why a JSON-RPC batch is not accepted, as Streamable HTTP refuses input (400 with a JSON-RPC error without an id,
 * `-32600` Invalid Request, which the SDK clients report with its text), or null when it is served. Batches belong to
 * revision 2025-03-26 only: a client of that revision sends no `MCP-Protocol-Version`, or names that one; a batch
 * naming a later one, or claiming the current era, is refused. A served batch holds at most `mcpBatchMessages`
 * messages (as the SDK's transport), and at most `mcpCancellationsPerRequest` cancellations
 * (docs/decisions/135-mcp-request-budget.md).
 */
function batchRefusal(request: Request, legacy: boolean, messages: JsonRpcMessage[]): Response | null {
  const refuse = (message: string) =>
    Response.json(
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: ${message}` } },
      {
        status: 400,
      },
    );
  // Nothing in it to act on: the SDK says what is wrong with it.
  if (messages.length === 0) return null;
  const revision = request.headers.get('mcp-protocol-version')?.trim() || BATCH_REVISION;
  if (!legacy || revision !== BATCH_REVISION) {
    return refuse(
      `JSON-RPC batches exist in protocol revision ${BATCH_REVISION} only` +
        `${legacy ? `, not in ${revision}` : ''}: send one message per POST`,
    );
  }
  const { mcpBatchMessages, mcpCancellationsPerRequest } = LIMITS.builder;
  if (messages.length > mcpBatchMessages) return refuse(`a batch holds at most ${mcpBatchMessages} messages`);
  const cancellations = messages.filter((m) => m.method === 'notifications/cancelled').length;
  if (cancellations > mcpCancellationsPerRequest) {
    return refuse(`a request cancels at most ${mcpCancellationsPerRequest} calls (notifications/cancelled)`);
  }
  return null;
}
