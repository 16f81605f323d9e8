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
 * The builder's MCP endpoint over the SDK's web-standard transports, both protocol eras. The current era goes to the
 * SDK's per-request entry with JSON responses. The earlier era (an `initialize` handshake) goes to a stateless
 * transport of the same SDK with JSON responses too: the entry's own legacy leg would answer SSE, and the contract
 * says every response is `application/json`. Each request gets a fresh server (all state lives in Temporal and
 * Postgres); the caller's identity reaches the tools through `authInfo.extra`.
 */
export function createBuilderMcpEndpoint(deps: { services: Services; logger: Logger }): BuilderMcpEndpoint {
  const factory = (ctx: { authInfo?: { extra?: Record<string, unknown> } }) =>
    builderMcpServer(deps.services, (ctx.authInfo?.extra as { call: McpCall }).call);
  const modern = createMcpHandler(factory, {
    legacy: 'reject',
    responseMode: 'json',
    maxRequestBodySize: LIMITS.bodyBytes,
    onerror: (err) => deps.logger.warn({ err }, 'MCP request failed'),
  });

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
      return legacy ? serveLegacy(request, authInfo) : modern.fetch(request, { authInfo });
    },
  };
}
