import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import pino from 'pino';
import { createBuilderMcpEndpoint, withoutJsonModeWarning } from '../../api/mcp/endpoint';
import { type McpCall, UNAVAILABLE_TEXT, builderMcpServer } from '../../api/mcp/server';
import { createLogger } from '../../lib/logger';
import type { Services } from '../../lib/services';

describe("the builder's MCP endpoint at start", () => {
  afterEach(() => jest.restoreAllMocks());

  it("prints nothing about its JSON answers: the SDK's warning on json mode is held back", () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    // Making the endpoint calls no service: the SDK only builds its handler.
    const endpoint = createBuilderMcpEndpoint({ services: {} as Services, logger: createLogger('silent', 'test') });
    expect(typeof endpoint.handle).toBe('function');
    expect(warn).not.toHaveBeenCalled();
    expect(console.warn).toBe(warn);
  });

  it('lets every other warning through, and restores console.warn when the maker throws', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const made = withoutJsonModeWarning(() => {
      console.warn("responseMode: 'json' drops mid-call notifications. and more");
      console.warn('something else', 42);
      return 'made';
    });
    expect(made).toBe('made');
    expect(warn.mock.calls).toEqual([['something else', 42]]);
    expect(() =>
      withoutJsonModeWarning(() => {
        throw new Error('broken');
      }),
    ).toThrow('broken');
    expect(console.warn).toBe(warn);
  });
});

describe("the builder's MCP tools when something fails", () => {
  /** The MCP server over an in-memory pair, its services standing in (a stand-in throws what a bug would). */
  async function connected(agents: () => Promise<unknown>) {
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const services = {
      builder: { countRequest: async () => undefined, overview: { agents } },
    } as unknown as Services;
    const call: McpCall = { workspaceId: 'ws_test', principal: { kind: 'session', userId: 'usr_test' }, log };
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await builderMcpServer(services, call).connect(serverSide);
    const client = new Client({ name: 'unit', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await client.connect(clientSide);
    return { client, call, lines };
  }

  it("answers a bug with the protocol's internal error, without the failure's own words, and logs it", async () => {
    const { client, lines } = await connected(async () => {
      throw new Error('relation "bots" does not exist (SELECT secret FROM bots)');
    });
    try {
      const failed = await client.callTool({ name: 'agents', arguments: {} }).then(
        () => undefined,
        (err: unknown) => err as { code?: number; message?: string },
      );
      expect(failed?.code).toBe(-32603);
      expect(failed?.message).toMatch(/Internal error/);
      expect(failed?.message).not.toMatch(/relation|SELECT|secret/);
      expect(lines).toContainEqual(expect.objectContaining({ level: 50, msg: 'MCP tool call failed' }));
    } finally {
      await client.close();
    }
  });

  it('answers a dependency out of reach with a tool result that says when to try again', async () => {
    const { client, call, lines } = await connected(async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    });
    try {
      const result = await client.callTool({ name: 'agents', arguments: {} });
      expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: UNAVAILABLE_TEXT }] });
      expect(call.retryAfter).toBe(2); // the route's Retry-After
      expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: 'dependency unavailable' }));
    } finally {
      await client.close();
    }
  });
});
