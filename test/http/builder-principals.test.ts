import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { BootstrapResult } from '../../lib/accounts/service';
import { insertApiKey } from '../../lib/bots/service';
import {
  fakeRequests,
  newBot,
  testDb,
  waitUntil,
  type FakeScriptStep,
  scriptFakeModel,
  toolCall as call,
  toolText as textOf,
} from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * Two programs connected to one workspace with two builder keys (issue 17, item 5): each holds its own builder
 * conversations. A change program A asked for and that awaits consent is not applied by program B's "yes", even in a
 * thread of the same name, and B sees nothing of A's conversation, of A's secrets shown once, or of the results of A's
 * turns that finished while A was not waiting. Those wait for A, also when A's call was cancelled rather than dropped.
 */

const script = (steps: FakeScriptStep[]) => scriptFakeModel(steps, 'principals');

async function connect(key: string, mode: 'legacy' | 'auto' = 'legacy', observe?: typeof fetch): Promise<Client> {
  const client = new Client({ name: 'principals-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stackInfo().apiUrl}/v1/api/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
      ...(observe ? { fetch: observe } : {}),
    }),
  );
  return client;
}

/** A workspace with two programs: A with the workspace's first builder key, B with a second one, paired separately. */
async function twoPrograms(
  mode: 'legacy' | 'auto' = 'legacy',
): Promise<{ bot: BootstrapResult; a: Client; b: Client }> {
  const bot = await newBot({ botName: 'Support desk' });
  const { key: second } = await insertApiKey(testDb(), {
    workspaceId: bot.workspace_id,
    botId: null,
    kind: 'builder',
    issuedVia: 'pairing',
    label: 'Program B',
  });
  return { bot, a: await connect(bot.keys.builder_key, mode), b: await connect(second, mode) };
}

let bot: BootstrapResult;
let a: Client;
let b: Client;
beforeAll(async () => {
  ({ bot, a, b } = await twoPrograms());
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

const constructor = (client: Client, message: string, thread?: string, timeout?: number) =>
  client.callTool(
    { name: 'constructor', arguments: { message, ...(thread ? { thread } : {}) } },
    timeout ? { timeout } : undefined,
  );

const nameOf = async () =>
  (await testDb().query<{ name: string }>(`SELECT name FROM bots WHERE id = $1`, [bot.bot_id])).rows[0].name;

describe('builder conversations belong to the program that holds the key', () => {
  it("B's yes does not apply A's pending change, in the same thread name or none; A's yes does", async () => {
    const thread = `shared-${randomUUID()}`;
    const before = await nameOf();
    const asked = await script([
      { toolCalls: [call('update_agent', { agent_id: bot.bot_id, changes: { name: 'Renamed by A' } })] },
      { text: 'Renaming awaits your yes.' },
    ]);
    const pending = await constructor(a, `${asked.marker} rename the agent`, thread);
    expect(textOf(pending)).toMatch(/\[Awaiting confirmation: change agent ".*": name to "Renamed by A"\./);

    // B, in a thread of the same name: its "yes" is an ordinary message to the model in B's own conversation.
    const tag = `b-${randomUUID()}`;
    const fromB = await constructor(b, `[[fake:tag:${tag}]] yes`, thread);
    expect(textOf(fromB)).not.toContain('Done:');
    expect(textOf(fromB)).not.toContain('Renamed by A');
    expect(textOf(fromB)).not.toContain('Awaiting confirmation');
    expect(await nameOf()).toBe(before);
    // What B's model saw is B's conversation only: nothing of A's messages.
    const seenByB = JSON.stringify((await fakeRequests(tag)).map((r) => r.body.messages));
    expect(seenByB).not.toContain('rename the agent');
    expect(seenByB).not.toContain('Renaming awaits your yes');
    expect(await nameOf()).toBe(before);
    await constructor(b, 'yes');
    expect(await nameOf()).toBe(before);

    // A's yes, in A's thread, applies exactly what A was asked.
    const done = await constructor(a, 'yes', thread);
    expect(textOf(done)).toMatch(/Done: change agent ".*": name to "Renamed by A"/);
    expect(await nameOf()).toBe('Renamed by A');
  });

  it('a secret shown once to A never reaches B, whose conversation of the same name is its own', async () => {
    const thread = `secret-${randomUUID()}`;
    const made = await script([
      { toolCalls: [call('create_trigger', { agent_id: bot.bot_id, trigger: { kind: 'webhook', task: 'Orders' } })] },
      { text: 'Created the webhook trigger.' },
    ]);
    const shown = textOf(await constructor(a, `${made.marker} add an orders webhook`, thread));
    const secret = /trsec_[A-Za-z0-9]+/.exec(shown)?.[0];
    expect(secret).toBeDefined();
    const tag = `b-${randomUUID()}`;
    const fromB = textOf(await constructor(b, `[[fake:tag:${tag}]] what did you just create?`, thread));
    expect(fromB).not.toContain(secret!);
    expect(fromB).not.toContain('Result of your earlier message');
    expect(JSON.stringify((await fakeRequests(tag)).map((r) => r.body.messages))).not.toContain('orders webhook');
  });

  it.each([
    ['a thread of the same name', `late-${randomUUID()}`],
    ['no thread', undefined],
  ])("A's result that finished while A was away waits for A: B, in %s, never receives it", async (_, thread) => {
    // A workspace of its own: with the shared one's messages these would pass its 12 builder messages a minute. The
    // current protocol era, whose client aborts the HTTP request of a call that timed out (the earlier era's only
    // sends a cancellation: the next test).
    const { bot: desk, a: programA, b: programB } = await twoPrograms('auto');
    try {
      const title = `Late for A ${randomUUID()}`;
      const slow = await script([
        // The model's first step outlasts A's patience: A's call times out and the turn goes on without A.
        { toolCalls: [call('add_knowledge', { agent_id: desk.bot_id, title, text: `FACT: ${title}` })], delayMs: 1500 },
        { text: `A, your fact "${title}" is in.` },
        { text: 'A, here is the next answer.' },
      ]);
      await expect(constructor(programA, `${slow.marker} add a fact`, thread, 500)).rejects.toThrow(/timed out/i);
      await waitUntil("A's turn to finish without A", async () => (await fakeRequests(slow.tag)).length >= 2);

      const tag = `b-${randomUUID()}`;
      const fromB = textOf(await constructor(programB, `[[fake:tag:${tag}]] anything new?`, thread));
      expect(fromB).not.toContain(title);
      expect(fromB).not.toContain('Result of your earlier message');
      expect(JSON.stringify((await fakeRequests(tag)).map((r) => r.body.messages))).not.toContain(title);

      // A's next message, in A's conversation, leads with it.
      const toA = textOf(await constructor(programA, 'and now?', thread));
      expect(toA).toMatch(/^Result of your earlier message/);
      expect(toA.indexOf(`A, your fact "${title}" is in.`)).toBeGreaterThan(0);
      expect(toA.indexOf(`A, your fact "${title}" is in.`)).toBeLessThan(toA.indexOf('A, here is the next answer.'));
    } finally {
      await Promise.all([programA.close(), programB.close()]);
    }
  });

  it("an earlier-era program's call that timed out and was cancelled: its result, written to the cancelled request, still leads the next answer", async () => {
    // The earlier protocol era's client, on a timeout, only sends `notifications/cancelled`: the HTTP request stays
    // open, the answer is written to it and read, and the client drops it. Every exchange is recorded to show that.
    const desk = await newBot({ botName: 'Legacy desk' });
    const exchanges: { sent: any; received: Promise<string> }[] = [];
    const observe: typeof fetch = (input, init) => {
      const response = fetch(input, init);
      const sent = typeof init?.body === 'string' ? JSON.parse(init.body) : null;
      exchanges.push({ sent, received: response.then((r) => r.clone().text()) });
      return response;
    };
    const program = await connect(desk.keys.builder_key, 'legacy', observe);
    try {
      const thread = `legacy-late-${randomUUID()}`;
      const title = `Late for the earlier era ${randomUUID()}`;
      const slow = await script([
        { toolCalls: [call('add_knowledge', { agent_id: desk.bot_id, title, text: `FACT: ${title}` })], delayMs: 1500 },
        { text: `Your fact "${title}" is in.` },
        { text: 'Here is the next answer.' },
      ]);
      await expect(constructor(program, `${slow.marker} add a fact`, thread, 500)).rejects.toThrow(/timed out/i);

      // The answer was still written to that request once the turn finished, and the client had cancelled it.
      const asked = exchanges.find((e) => e.sent?.method === 'tools/call');
      expect(asked).toBeDefined();
      const written = JSON.parse(await asked!.received) as { id: unknown; result?: { content?: unknown } };
      expect(written.id).toBe(asked!.sent.id);
      expect(textOf(written.result ?? {})).toContain(`Your fact "${title}" is in.`);
      expect(
        exchanges.some(
          (e) => e.sent?.method === 'notifications/cancelled' && e.sent.params?.requestId === asked!.sent.id,
        ),
      ).toBe(true);

      // The program never had it: its next message leads with it.
      const next = textOf(await constructor(program, 'and now?', thread));
      expect(next).toMatch(/^Result of your earlier message/);
      expect(next.indexOf(`Your fact "${title}" is in.`)).toBeGreaterThan(0);
      expect(next.indexOf(`Your fact "${title}" is in.`)).toBeLessThan(next.indexOf('Here is the next answer.'));
    } finally {
      await program.close();
    }
  });
});
