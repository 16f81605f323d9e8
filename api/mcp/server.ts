import { ProtocolError, ProtocolErrorCode, Server, type Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { BuilderRateLimited } from '../../lib/builder/service';
import { asData } from '../../lib/builder/untrusted';
import { ApiError, isUnavailableError, SERVICE_RETRY_AFTER_SECONDS } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { LIMITS } from '../../lib/limits';
import type { Services } from '../../lib/services';
import type { BuilderPrincipal, BuilderSurface } from '../../workflows/contracts/builder-thread';

/**
 * The builder's MCP server (contract, Builder over MCP): its tools, their arguments and what each answers. The HTTP
 * side (the route, budgets, the protocol eras) is api/routes/builder.ts over api/mcp/endpoint.ts.
 */

/** A message to the builder, on every surface (the MCP tool, the HTTP call, the dashboard's panel). */
export const MessageArg = z
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

/** The MCP tools (contract, Builder over MCP): two reads and the conversation with the builder. */
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
    description:
      "Read-only: what is broken in an agent, in the owner's words, with how to fix it. Its text quotes other " +
      'systems (errors, addresses), so it comes marked as data.',
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
export interface McpCall {
  workspaceId: string;
  principal: BuilderPrincipal;
  /** The request's logger (with its id). */
  log?: Logger;
  /** The tool asked the caller to wait: `Retry-After` on the HTTP response. */
  retryAfter?: number;
  /**
   * Aborted when the caller cancels this request (`notifications/cancelled`, the earlier era's client on a timeout):
   * it still reads the response but drops it, so the results it carries are not acknowledged (api/mcp/endpoint.ts).
   */
  cancelled?: AbortSignal;
  /** Builder turns whose results this response carries: acknowledged once it is written. */
  delivered?: {
    conversation: { workspaceId: string; principal: BuilderPrincipal; surface: BuilderSurface; thread: string | null };
    turnIds: string[];
  };
}

/** A tool call that a part of the service out of reach stopped; a message that did reach the builder is not lost. */
export const UNAVAILABLE_TEXT =
  `The builder is briefly unavailable (a part of the service cannot be reached). Try again in ` +
  `${SERVICE_RETRY_AFTER_SECONDS} s. If this message reached the builder, its result comes before your next answer.`;

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
export function builderMcpServer(services: Services, call: McpCall): Server {
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

  server.setRequestHandler('tools/call', async (request, ctx) => {
    /** The tool's answer; what it throws is answered below. */
    const answer = async () => {
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
            // Incidents quote what other systems answered (errors, addresses, names): the client's model reads them
            // as data, as the builder's own model does; programs read `structuredContent`.
            return { ...text(asData('incidents', JSON.stringify(payload, null, 2))), structuredContent: payload };
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
          // A cancelled request's results are not received (the SDK does not send them, or the caller drops them):
          // unacknowledged, they lead the conversation's next answer.
          if (!ctx.mcpReq.signal.aborted && !call.cancelled?.aborted) {
            call.delivered = { conversation, turnIds: answer.turnIds };
          }
          return {
            ...text(answer.text),
            structuredContent: {
              reply: answer.text,
              ...(answer.reply.awaitingConfirmation
                ? { awaiting_confirmation: answer.reply.awaitingConfirmation }
                : {}),
              ...(answer.reply.busy ? { busy: true } : {}),
              ...(parsed.data.thread ? { thread: parsed.data.thread } : {}),
            },
          };
        }
        default:
          return text(`Unknown tool "${request.params.name}". The tools are agents, incidents and constructor.`, true);
      }
    };
    try {
      return await answer();
    } catch (err) {
      // A part of the service out of reach (Temporal, Postgres): said as a tool result the caller can act on, with
      // when to try again, as the HTTP API's 503 says it. Anything else is a bug: logged, and the caller gets the
      // protocol's internal error without the failure's own words.
      if (isUnavailableError(err) || (err instanceof ApiError && err.code === 'service_unavailable')) {
        call.log?.warn({ err }, 'dependency unavailable');
        call.retryAfter = SERVICE_RETRY_AFTER_SECONDS;
        return text(UNAVAILABLE_TEXT, true);
      }
      call.log?.error({ err }, 'MCP tool call failed');
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error; it is safe to retry');
    }
  });

  return server;
}
