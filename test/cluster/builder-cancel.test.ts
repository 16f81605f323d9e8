import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type FakeScriptStep, newBot, scriptFakeModel, toolCall as call, toolText as textOf } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * A builder call cancelled on another API replica than the one holding it (test/cluster/global-setup.ts: two replicas
 * behind a round-robin balancer, so a program's cancellation and its call usually land apart). The earlier protocol
 * era's client, on a timeout, only sends `notifications/cancelled` and drops the answer written to its call: the
 * replica holding the call must hear of it, or the results count as received and the program never sees them.
 */
const replicas = () => (stackInfo() as ReturnType<typeof stackInfo> & { replicas: string[] }).replicas;

describe('a builder call cancelled on another replica', () => {
  it('is not acknowledged by the replica that holds it: its results lead the next answer', async () => {
    const desk = await newBot({ botName: 'Cancel desk' });
    const [holder, other] = replicas();
    const sent: { method?: string; to: string }[] = [];
    // Tool calls go to one replica, everything else (the handshake, the cancellation) to the other.
    const route: typeof fetch = (input, init) => {
      const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string }) : {};
      const to = body.method === 'tools/call' ? holder : other;
      sent.push({ method: body.method, to });
      const url = new URL(String(input instanceof Request ? input.url : input));
      return fetch(new URL(url.pathname + url.search, to).href, init);
    };
    const program = new Client({ name: 'cancel-test', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await program.connect(
      new StreamableHTTPClientTransport(new URL(`${stackInfo().apiUrl}/v1/api/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${desk.keys.builder_key}` } },
        fetch: route,
      }),
    );
    try {
      const thread = `cancelled-elsewhere-${randomUUID()}`;
      const title = `Cancelled elsewhere ${randomUUID()}`;
      const steps: FakeScriptStep[] = [
        { toolCalls: [call('add_knowledge', { agent_id: desk.bot_id, title, text: `FACT: ${title}` })], delayMs: 1500 },
        { text: `Your fact "${title}" is in.` },
        { text: 'Here is the next answer.' },
      ];
      const slow = await scriptFakeModel(steps, 'cancel-elsewhere');
      const ask = (message: string, timeout?: number) =>
        program.callTool({ name: 'constructor', arguments: { message, thread } }, timeout ? { timeout } : undefined);
      await expect(ask(`${slow.marker} add a fact`, 500)).rejects.toThrow(/timed out/i);
      expect(sent).toContainEqual({ method: 'tools/call', to: holder });
      expect(sent).toContainEqual({ method: 'notifications/cancelled', to: other });

      // The program never had the result: its next message leads with it.
      const next = textOf((await ask('and now?')) as { content?: unknown });
      expect(next).toMatch(/^Result of your earlier message/);
      expect(next.indexOf(`Your fact "${title}" is in.`)).toBeGreaterThan(0);
      expect(next.indexOf(`Your fact "${title}" is in.`)).toBeLessThan(next.indexOf('Here is the next answer.'));
    } finally {
      await program.close();
    }
  });
});
