import {
  Server,
  type Tool,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { BuilderRateLimited } from '../../lib/builder/service';
import { ApiError } from '../../lib/errors';
import { LIMITS } from '../../lib/limits';
import type { Services } from '../../lib/services';
import type { BuilderPrincipal, BuilderSurface } from '../../workflows/contracts/builder-thread';
import type { AppContext } from '../context';
import type { AppDeps } from '../deps';
import { AUTH_ERRORS, type RouteDef, route } from '../route';
import { sessionUser } from '../session';

const MessageArg = z
  .string({ error: 'is required' })
  .trim()
  .min(1, 'must not be empty')
  .max(LIMITS.builder.messageChars, `must be at most ${LIMITS.builder.messageChars} characters`);

const ConstructorArgs = z.object({
  message: MessageArg,
  thread: z
    .string()
    .min(1, 'must not be empty')
    .max(LIMITS.builder.threadChars, `must be at most ${LIMITS.builder.threadChars} characters`)
    .regex(/^[^\x00-\x1F\x7F]*$/, 'must not contain control characters')
    .optional(),
});
const IncidentsArgs = z.object({ agent_id: z.string().min(1, 'must not be empty').max(64) });

/** The MCP tools (spec, Builder over MCP): two reads and the conversation with the builder. */
const MCP_TOOLS: Tool[] = [
  {
    name: 'agents',
    title: 'Agents',
    description:
      'Read-only: the agents of the workspace (id, name, number of knowledge sources and channels); the agent this key was issued for is marked.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'incidents',
    title: 'Incidents',
    description: "Read-only: what is broken in an agent, in the owner's words, with how to fix it.",
    inputSchema: {
      type: 'object',
      properties: {
        agent_id: { type: 'string', minLength: 1, maxLength: 64, description: 'Agent id (from `agents`)' },
      },
      required: ['agent_id'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'constructor',
    title: 'Builder',
    description:
      'A conversation with the builder, in plain language: it reads and changes agents (instructions, knowledge, ' +
      'site scans, triggers, actions, handoff). Changes visible to customers, irreversible or landing in another ' +
      'system are asked first: the answer then ends with a line in [square brackets]; reply "yes" in the same ' +
      'thread to apply it. The same `thread` continues a conversation.',
    inputSchema: {
      type: 'object',
      properties: {
        message: {
          type: 'string',
          minLength: 1,
          maxLength: LIMITS.builder.messageChars,
          description: 'Plain language',
        },
        thread: {
          type: 'string',
          minLength: 1,
          maxLength: LIMITS.builder.threadChars,
          description: 'Conversation name; the builder remembers earlier messages of the same thread',
        },
      },
      required: ['message'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  },
];

/** One HTTP request to the MCP endpoint, as its tools see it. */
interface McpCall {
  workspaceId: string;
  principal: BuilderPrincipal;
  /** The tool asked the caller to wait: `Retry-After` on the HTTP response. */
  retryAfter?: number;
  /** Builder turns whose results this response carries: acknowledged once it is written. */
  delivered?: {
    conversation: { workspaceId: string; principal: BuilderPrincipal; surface: BuilderSurface; thread: string | null };
    turnIds: string[];
  };
}

const text = (t: string, isError = false) => ({
  content: [{ type: 'text' as const, text: t }],
  ...(isError ? { isError } : {}),
});
const invalid = (error: z.ZodError) =>
  text(
    `Invalid arguments: ${error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ')}`,
    true,
  );

/** A fresh low-level server per request (all state lives in Temporal and Postgres). */
function builderMcpServer(services: Services, call: McpCall): Server {
  const server = new Server(
    { name: 'agent-platform-builder', title: 'Agent Platform builder', version: '1.0.0' },
    {
      capabilities: { tools: {} },
      instructions:
        'Use `agents` to see the workspace, `incidents` to see what is broken, and `constructor` to ask the builder for changes in plain language.',
    },
  );

  // Reads share one generous budget per workspace; over it, a tool result that says how long to wait.
  async function readBudget(): Promise<ReturnType<typeof text> | null> {
    try {
      await services.builder.countRequest(call.workspaceId, 'reads');
      return null;
    } catch (err) {
      if (!(err instanceof BuilderRateLimited)) throw err;
      call.retryAfter = err.retryAfter;
      return text(`Too many requests to the builder this minute. Try again in ${err.retryAfter} s.`, true);
    }
  }

  server.setRequestHandler('tools/list', async () => ({ tools: MCP_TOOLS }));

  server.setRequestHandler('tools/call', async (request) => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case 'agents': {
        const limited = await readBudget();
        if (limited) return limited;
        const marked = call.principal.kind === 'builder_key' ? call.principal.botId : null;
        const agents = await services.builder.overview.agents(call.workspaceId, marked);
        const payload = { agents };
        return { ...text(JSON.stringify(payload, null, 2)), structuredContent: payload };
      }
      case 'incidents': {
        const parsed = IncidentsArgs.safeParse(args);
        if (!parsed.success) return invalid(parsed.error);
        const limited = await readBudget();
        if (limited) return limited;
        try {
          const incidents = await services.builder.overview.incidents(call.workspaceId, parsed.data.agent_id);
          const payload = { agent_id: parsed.data.agent_id, incidents };
          return { ...text(JSON.stringify(payload, null, 2)), structuredContent: payload };
        } catch (err) {
          if (err instanceof ApiError && err.code === 'not_found') {
            return text(`No agent ${parsed.data.agent_id} in this workspace (see the agents tool).`, true);
          }
          throw err;
        }
      }
      case 'constructor': {
        const parsed = ConstructorArgs.safeParse(args);
        if (!parsed.success) return invalid(parsed.error);
        try {
          await services.builder.countRequest(call.workspaceId, 'messages');
        } catch (err) {
          if (!(err instanceof BuilderRateLimited)) throw err;
          call.retryAfter = err.retryAfter;
          return text(err.message, true);
        }
        const conversation = {
          workspaceId: call.workspaceId,
          principal: call.principal,
          surface: 'mcp' as const,
          thread: parsed.data.thread ?? null,
        };
        const answer = await services.builder.converse({
          ...conversation,
          principal: call.principal,
          message: parsed.data.message,
        });
        call.delivered = { conversation, turnIds: answer.turnIds };
        return {
          ...text(answer.text),
          structuredContent: {
            reply: answer.text,
            ...(answer.reply.awaitingConfirmation ? { awaiting_confirmation: answer.reply.awaitingConfirmation } : {}),
            ...(answer.reply.busy ? { busy: true } : {}),
            ...(parsed.data.thread ? { thread: parsed.data.thread } : {}),
          },
        };
      }
      default:
        return text(`Unknown tool "${request.params.name}". The tools are agents, incidents and constructor.`, true);
    }
  });
  return server;
}

/** Methods counted in the reads budget before the SDK serves them (tool calls count inside their tools). */
const COUNTED_METHODS = new Set(['initialize', 'server/discover', 'tools/list']);

const BuilderReply = z
  .object({
    reply: z.string().describe('The text to show: results of earlier turns the caller missed first'),
    awaiting_confirmation: z.string().optional().describe('What a `yes` would apply'),
    busy: z.boolean().optional().describe('The previous message is still being worked on; nothing changed'),
  })
  .meta({ id: 'BuilderReply' });

/** After the response is written, the thread learns which results its caller received. */
function acknowledgeWhenWritten(
  ctx: AppContext,
  services: Services,
  call: McpCall | { delivered?: McpCall['delivered'] },
) {
  const delivered = call.delivered;
  if (!delivered || delivered.turnIds.length === 0) return;
  ctx.res.once('finish', () => {
    services.builder
      .acknowledge(delivered.conversation, delivered.turnIds)
      .catch((err: unknown) => ctx.state.log.warn({ err }, 'builder results not acknowledged: they will be repeated'));
  });
}

function builderPrincipal(ctx: AppContext): { workspaceId: string; principal: BuilderPrincipal } {
  const p = ctx.state.principal!;
  return { workspaceId: p.workspaceId, principal: { kind: 'builder_key', keyId: p.keyId, botId: p.botId } };
}

export function builderRoutes(deps: AppDeps): RouteDef[] {
  const { services } = deps;
  // The current era: the SDK's per-request entry, JSON responses. The earlier era (initialize handshake) goes to a
  // stateless transport of the same SDK with JSON responses too: the entry's own legacy leg would answer SSE, and the
  // contract says every response is `application/json`.
  const factory = (ctx: { authInfo?: { extra?: Record<string, unknown> } }) =>
    builderMcpServer(services, (ctx.authInfo?.extra as { call: McpCall }).call);
  const modern = createMcpHandler(factory, {
    legacy: 'reject',
    responseMode: 'json',
    maxRequestBodySize: LIMITS.bodyBytes,
    onerror: (err) => deps.logger.warn({ err }, 'MCP request failed'),
  });
  async function serveLegacy(request: Request, call: McpCall, authInfo: AuthInfo): Promise<Response> {
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
  ): Promise<void> {
    const answer = await services.builder.converse({ ...conversation, principal, message });
    ctx.body = {
      reply: answer.text,
      ...(answer.reply.awaitingConfirmation ? { awaiting_confirmation: answer.reply.awaitingConfirmation } : {}),
      ...(answer.reply.busy ? { busy: true } : {}),
    };
    acknowledgeWhenWritten(ctx, services, {
      delivered: { conversation: { ...conversation, principal }, turnIds: answer.turnIds },
    });
  }

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
        "site is 403. The builder's own limits are tool results with `isError: true` (with `Retry-After`), not 429.",
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
        let message: { method?: unknown } | undefined;
        try {
          message = JSON.parse(raw.toString('utf8')) as { method?: unknown };
        } catch {
          message = undefined; // the SDK answers the parse error in JSON-RPC's own terms
        }
        if (message && typeof message.method === 'string' && COUNTED_METHODS.has(message.method)) {
          try {
            await services.builder.countRequest(workspaceId, 'reads');
          } catch (err) {
            if (!(err instanceof BuilderRateLimited)) throw err;
            ctx.set('Retry-After', String(err.retryAfter));
            ctx.body = {
              jsonrpc: '2.0',
              id: (message as { id?: unknown }).id ?? null,
              error: {
                code: -32000,
                message: `Rate limited: try again in ${err.retryAfter} s`,
                data: { retry_after: err.retryAfter },
              },
            };
            return;
          }
        }
        const call: McpCall = { workspaceId, principal };
        const headers = new Headers();
        for (const [name, value] of Object.entries(ctx.headers)) {
          if (typeof value === 'string') headers.set(name, value);
          else if (Array.isArray(value)) headers.set(name, value.join(', '));
        }
        const request = new Request(`${ctx.protocol}://${ctx.host}${ctx.originalUrl}`, {
          method: 'POST',
          headers,
          body: new Uint8Array(raw),
        });
        const authInfo: AuthInfo = {
          token: 'builder-key',
          clientId: ctx.state.principal!.keyId,
          scopes: [],
          extra: { call },
        };
        const response = (await isLegacyRequest(request.clone(), undefined, { maxRequestBodySize: LIMITS.bodyBytes }))
          ? await serveLegacy(request, call, authInfo)
          : await modern.fetch(request, { authInfo });
        ctx.status = response.status;
        response.headers.forEach((value, name) => {
          if (name !== 'content-length' && name !== 'transfer-encoding') ctx.set(name, value);
        });
        if (call.retryAfter !== undefined) ctx.set('Retry-After', String(call.retryAfter));
        const body = Buffer.from(await response.arrayBuffer());
        if (body.length) ctx.body = body;
        else ctx.body = null;
        acknowledgeWhenWritten(ctx, services, call);
      },
    }),
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
        await converseOverHttp(ctx, { workspaceId, surface: 'http', thread: null }, principal, body.message);
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
        await converseOverHttp(
          ctx,
          { workspaceId, surface: 'dashboard', thread: null },
          { kind: 'session', userId },
          body.message,
        );
      },
    }),
  ];
}
