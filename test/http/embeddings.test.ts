import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BootstrapResult } from '../../lib/accounts/service';
import { retrievePassages } from '../../lib/knowledge/retrieve';
import { type OwnPlatform, http, newBot, startOwnPlatform, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * Embeddings end to end: an API and a worker of their own (same Postgres, Temporal and fake OpenAI) started with
 * EMBEDDING_MODEL, on a task queue of their own so the shared stack's worker (no embeddings) never takes their work.
 */
const FACT = 'FACT: The company mascot is a purple axolotl named Quentin.';
/** The fake echoes FACT lines that start a line of the prompt: a passage's first line carries its "[n] title: ". */
const SOURCE = `Our company history in short.\n\n${FACT}\n\nOffices are open on weekdays.`;
const EMBEDDING_MODEL = 'fake-embed';

interface Recorded {
  path: string;
  body: Record<string, any>;
}

const fakeBase = () => stackInfo().fakeOpenAIUrl.replace(/\/v1\/?$/, '');

/** Every request the fake OpenAI recorded with this tag (chat and embeddings alike). */
async function recorded(tag: string): Promise<Recorded[]> {
  const res = await fetch(`${fakeBase()}/_control/requests?tag=${encodeURIComponent(tag)}`);
  return ((await res.json()) as { requests: Recorded[] }).requests;
}

async function fragments(botId: string, sourceId: string) {
  const res = await testDb().query<{ embedding: number[] | null; bits: string | null }>(
    `SELECT embedding, embedding_bits::text AS bits FROM knowledge_fragments
      WHERE bot_id = $1 AND source_id = $2 ORDER BY ordinal`,
    [botId, sourceId],
  );
  return res.rows;
}

function expectUnitVectors(rows: { embedding: number[] | null; bits: string | null }[]) {
  expect(rows.length).toBeGreaterThan(0);
  for (const { embedding, bits } of rows) {
    expect(embedding).toHaveLength(64); // the fake's default dimensions
    expect(Math.hypot(...embedding!)).toBeCloseTo(1, 4);
    expect(bits).toHaveLength(64);
  }
}

describe('with EMBEDDING_MODEL configured', () => {
  let own: OwnPlatform;
  let baseUrl: string;

  beforeAll(async () => {
    own = await startOwnPlatform('embeddings-test', { EMBEDDING_MODEL });
    baseUrl = own.baseUrl;
  }, 120_000);

  afterAll(async () => own?.stop());

  const write = (bot: BootstrapResult, body: unknown, path = '/v1/api/knowledge') =>
    http(path, { key: bot.keys.secret_key, body, baseUrl });
  const chat = (bot: BootstrapResult, message: string) =>
    http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: randomUUID(), message }, baseUrl });

  it('stores fragment embeddings on both write paths, and a question is embedded and answered with the fact', async () => {
    const bot = await newBot();
    expect((await write(bot, { source_id: 'mascot', title: 'Mascot', text: SOURCE })).status).toBe(202);
    expect(
      (await write(bot, { source_id: 'admin', text: 'Refunds take five days.' }, '/v1/admin/sources')).status,
    ).toBe(202);
    expectUnitVectors(await fragments(bot.bot_id, 'mascot'));
    expectUnitVectors(await fragments(bot.bot_id, 'admin'));

    // Only stopwords and the marker: full text alone finds nothing, so the fact can only come in by its embedding.
    const question = 'Who is she?';
    expect(await retrievePassages(testDb(), bot.bot_id, question)).toEqual([]);

    const tag = randomUUID();
    const res = await chat(bot, `${question} [[fake:tag:${tag}]]`);
    expect(res.status).toBe(200);
    expect(res.body.answer).toContain(FACT);

    const requests = await recorded(tag);
    const embeddings = requests.filter((r) => r.path === '/v1/embeddings');
    expect(embeddings).toHaveLength(1); // one call per question
    expect(embeddings[0].body.model).toBe(EMBEDDING_MODEL);
    expect(embeddings[0].body.input).toEqual([expect.stringContaining(question)]);
    const completions = requests.filter((r) => r.path === '/v1/chat/completions');
    expect(completions.length).toBeGreaterThan(0);
    expect(JSON.stringify(completions[0].body.messages)).toContain(FACT);
  });

  it('a question whose embedding fails is answered with full-text retrieval alone', async () => {
    const bot = await newBot();
    expect((await write(bot, { source_id: 'mascot', text: SOURCE })).status).toBe(202);

    // The script marker comes first, so the chat completion follows the script; embeddings ignore scripts and
    // take the failure.
    const tag = randomUUID();
    const script = await fetch(`${fakeBase()}/_control/script`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tag, steps: [{ text: 'Scripted answer.' }] }),
    });
    expect(script.status).toBe(200);
    const res = await chat(bot, `[[fake:script:${tag}]][[fake:fail-503]] What is the mascot called?`);
    expect(res.status).toBe(200);
    expect(res.body.answer).toBe('Scripted answer.');
    // Full text alone found the passage; the fake's answer would have echoed its FACT line, the prompt has it.

    const requests = await recorded(tag);
    expect(requests.filter((r) => r.path === '/v1/embeddings')).toHaveLength(1);
    const completion = requests.find((r) => r.path === '/v1/chat/completions');
    expect(JSON.stringify(completion?.body.messages)).toContain(FACT);
  });

  it('a write whose embedding fails is refused with a retryable 503 and writes nothing', async () => {
    const bot = await newBot();
    const res = await write(bot, { source_id: 'broken', text: `Hello. [[fake:fail-503]]` });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('service_unavailable');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await http('/v1/api/knowledge/broken', { key: bot.keys.secret_key, baseUrl })).status).toBe(404);
    expect((await testDb().query(`SELECT 1 FROM knowledge_fragments WHERE bot_id = $1`, [bot.bot_id])).rowCount).toBe(
      0,
    );
  });

  it('a site scan stores embeddings for the pages it indexes', async () => {
    const site: Server = createServer((req, res) => {
      if (req.url !== '/') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(`<!doctype html><html><head><title>Mascot</title></head><body><main><p>${FACT}</p></main></body></html>`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    try {
      const bot = await newBot();
      const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
      const res = await http('/v1/admin/scrape', {
        key: bot.keys.secret_key,
        body: { url, max_pages: 1, refresh_days: 0 },
        baseUrl,
      });
      expect(res.status).toBe(202);

      const deadline = Date.now() + 40_000;
      let status: string | undefined;
      while (Date.now() < deadline) {
        status = (await testDb().query(`SELECT status FROM site_scans WHERE bot_id = $1`, [bot.bot_id])).rows[0]
          ?.status;
        if (status && status !== 'scanning') break;
        await new Promise((r) => setTimeout(r, 150));
      }
      expect(status).toBe('done');
      const source = await testDb().query<{ source_id: string }>(
        `SELECT source_id FROM knowledge_sources WHERE bot_id = $1 AND origin = 'scan'`,
        [bot.bot_id],
      );
      expect(source.rows).toHaveLength(1);
      expectUnitVectors(await fragments(bot.bot_id, source.rows[0].source_id));
    } finally {
      await new Promise((resolve) => site.close(resolve));
    }
  }, 60_000);
});

describe('without EMBEDDING_MODEL (the shared stack)', () => {
  it('stores no embeddings and asks the model for none: retrieval is full text alone', async () => {
    const bot = await newBot();
    const write = await http('/v1/api/knowledge', {
      key: bot.keys.secret_key,
      body: { source_id: 'mascot', text: SOURCE },
    });
    expect(write.status).toBe(202);
    const rows = await fragments(bot.bot_id, 'mascot');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.embedding === null && r.bits === null)).toBe(true);

    const tag = randomUUID();
    const res = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: randomUUID(), message: `What is the mascot called? [[fake:tag:${tag}]]` },
    });
    expect(res.status).toBe(200);
    expect(res.body.answer).toContain(FACT);
    const requests = await recorded(tag);
    expect(requests.map((r) => r.path)).not.toContain('/v1/embeddings');
    expect(requests.map((r) => r.path)).toContain('/v1/chat/completions');
  });
});
