import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startWorker } from '../../stack/platform';
import { freePort } from '../../stack/processes';
import { startTemporalDev } from '../../stack/temporal-dev';
import { startTemporalServer } from '../../stack/temporal-server';
import {
  type OwnPlatform,
  http,
  mcpPost,
  newBot,
  ownerSession,
  sseFrames,
  startOwnPlatform,
  testDb,
  transcriptOf,
  waitUntil,
  turnRunning,
} from '../support/helpers';
import { onProductionShape, stackInfo } from '../support/stack-info';
import { conversationWorkflowId } from '../../workflows/contracts/conversation';

/** The test's own Temporal, to stop and start again. */
interface OwnTemporal {
  address: string;
  stop(): Promise<void>;
  /** Started again after `stop`: resolves once it serves. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * On the single-machine stack a dev server (its history in a file, so it survives the stop); on the production shape
 * a real Temporal server (its four services stop, its Postgres stays), as test/cluster/temporal-outage.test.ts runs
 * this file.
 */
async function startOwnTemporal(): Promise<OwnTemporal> {
  const name = `temporal-outage-${process.pid}`;
  if (onProductionShape()) {
    const server = await startTemporalServer({
      dataDir: path.join(stackInfo().dataDir, name),
      namespace: stackInfo().namespace,
      quiet: true,
    });
    return {
      address: server.address,
      stop: () => server.stopServices(),
      start: () => server.startServices(),
      close: () => server.stop(),
    };
  }
  const port = await freePort();
  const start = () =>
    startTemporalDev({ port, dbFile: path.join(stackInfo().dataDir, `${name}.db`), headless: true, quiet: true });
  let dev = await start();
  return {
    address: dev.address,
    stop: () => dev.stop(),
    async start() {
      dev = await start();
    },
    close: () => dev.stop(),
  };
}

/** A TCP relay to Temporal that can vanish: what the platform sees when the server's host goes away. */
interface Relay {
  address: string;
  /** The open connections stop carrying anything and are cut after `cutAfterMs`; new ones are refused until `restore`. */
  vanish(cutAfterMs: number): void;
  restore(): void;
  close(): Promise<void>;
}

async function startRelay(target: string): Promise<Relay> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const open = new Set<net.Socket>();
  let away = false;
  const server = net.createServer((client) => {
    if (away) return client.destroy();
    const upstream = net.connect(port, host);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ]) {
      open.add(from);
      from.on('data', (chunk: Buffer) => {
        if (!away) to.write(chunk);
      });
      from.on('close', () => {
        open.delete(from);
        to.destroy();
      });
      from.on('error', () => to.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    vanish(cutAfterMs) {
      away = true;
      setTimeout(() => {
        for (const socket of open) socket.destroy();
      }, cutAfterMs);
    },
    restore() {
      away = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A Temporal server of its own, with its own worker and API, so stopping it disturbs no other test (docs/decisions/024-temporal-outage.md).
 */
describe('Temporal stopped while the platform runs', () => {
  let temporal: OwnTemporal;
  let own: OwnPlatform;

  beforeAll(async () => {
    temporal = await startOwnTemporal();
    own = await startOwnPlatform('temporal-outage', {
      TEMPORAL_ADDRESS: temporal.address,
      LLM_TURN_TIMEOUT_MS: '30000',
    });
  }, 180_000);

  afterAll(async () => {
    await own?.stop();
    await temporal?.close();
  });

  const OUTAGE_MS = 15_000;
  const chat = (key: string, message: string) =>
    http('/v1/api/chat', { key, body: { session_id: randomUUID(), message }, baseUrl: own.baseUrl });

  it('a new chat during the stop is 503 within 5 s (a stream: an llm_overloaded frame), and chats work again within 5 s of its return', async () => {
    const bot = await newBot();
    expect((await chat(bot.keys.secret_key, 'before')).status).toBe(200);

    await temporal.stop();
    const stopped = Date.now();
    const down = await chat(bot.keys.secret_key, 'during');
    expect(Date.now() - stopped).toBeLessThan(5_000);
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('service_unavailable');
    expect(down.headers.get('retry-after')).toBe('2');

    // A stream has begun before its turn is sent: it ends with the frame that says retry, and when — not the
    // internal error frame, which says a bug.
    const streamSent = Date.now();
    const streamed = await sseFrames('/v1/api/chat/stream', {
      key: bot.keys.secret_key,
      body: { session_id: randomUUID(), message: 'during, streamed' },
      baseUrl: own.baseUrl,
    });
    expect(Date.now() - streamSent).toBeLessThan(5_000);
    expect(streamed.status).toBe(200);
    expect(streamed.frames).toEqual([
      { error: expect.any(String), code: 'llm_overloaded', retry_after: 2 },
      expect.objectContaining({ done: true, handoff: false }),
    ]);
    // The widget's stream says the same, and its end frame names no visitor message: nothing of the turn is stored,
    // so the widget gives the text back to be sent again (where a stored message would be sent twice).
    const visitor = await http('/v1/widget/session', {
      method: 'POST',
      key: bot.keys.public_key,
      baseUrl: own.baseUrl,
    });
    expect(visitor.status).toBe(201);
    const fromWidget = await sseFrames('/v1/widget/chat/stream', {
      key: bot.keys.public_key,
      body: { session_id: visitor.body.session_id, message: 'during, from the widget' },
      headers: { 'X-Visitor-Token': visitor.body.visitor_token },
      baseUrl: own.baseUrl,
    });
    expect(fromWidget.frames).toEqual([
      { error: expect.any(String), code: 'llm_overloaded', retry_after: 2 },
      expect.objectContaining({ done: true, handoff: false }),
    ]);
    expect(fromWidget.frames[1]).not.toHaveProperty('visitor_message_id');

    // The builder over MCP: a tool result that says it is briefly away and when to try again (with `Retry-After`),
    // not a JSON-RPC error carrying gRPC's words.
    const builderCall = await mcpPost(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'constructor', arguments: { message: 'hi' } } },
      { key: bot.keys.builder_key, baseUrl: own.baseUrl },
    );
    expect(builderCall.status).toBe(200);
    expect(builderCall.headers.get('retry-after')).toBe('2');
    expect(builderCall.body.result.isError).toBe(true);
    expect(builderCall.body.result.content[0].text).toMatch(/briefly unavailable.*try again in 2 s/i);
    expect(builderCall.text).not.toMatch(/UNAVAILABLE|grpc|ECONNREFUSED|Update-With-Start|127\.0\.0\.1/);

    // An outage of 15 s: the worker's pollers, which the SDK backs off up to 10 s apart, ask again only seconds after
    // the return unless a fresh worker takes over (worker/supervisor.ts).
    await new Promise((r) => setTimeout(r, Math.max(0, stopped + OUTAGE_MS - Date.now())));
    await temporal.start();
    const back = Date.now();
    await waitUntil(
      'a chat to be answered again',
      async () => (await chat(bot.keys.secret_key, 'after')).status === 200,
      15_000,
    );
    expect(Date.now() - back).toBeLessThan(5_000);
  }, 90_000);

  it('chats sent while Temporal is away are each 503 within 5 s, those sent while the connection still looked up too', async () => {
    // The platform reaches Temporal through a relay that can make it vanish the way a stopped server's host does:
    // the connections open go silent and are cut half a second later, new ones are refused.
    const relay = await startRelay(temporal.address);
    const viaRelay = await startOwnPlatform('temporal-relay', {
      TEMPORAL_ADDRESS: relay.address,
      LLM_TURN_TIMEOUT_MS: '30000',
    });
    try {
      const bot = await newBot();
      const send = (message: string) =>
        http('/v1/api/chat', {
          key: bot.keys.secret_key,
          body: { session_id: randomUUID(), message },
          baseUrl: viaRelay.baseUrl,
        });
      expect((await send('before')).status).toBe(200);
      const away = Date.now();
      relay.vanish(500);
      // One every 100 ms from the moment it is away: the first while the API's connection still looks up (a turn
      // sent then was resent until Temporal came back: docs/decisions/149-temporal-outage-bounded-wait.md), then after.
      const sent = await Promise.all(
        Array.from({ length: 21 }, async (_, i) => {
          await new Promise((r) => setTimeout(r, i * 100));
          const at = Date.now();
          const res = await send(`during ${i}`);
          return { i, status: res.status, code: res.body?.code, within5s: Date.now() - at < 5_000 };
        }),
      );
      // Away for longer than any of them may wait.
      await new Promise((r) => setTimeout(r, Math.max(0, away + 8_000 - Date.now())));
      relay.restore();
      expect(sent).toEqual(sent.map(({ i }) => ({ i, status: 503, code: 'service_unavailable', within5s: true })));
      await waitUntil('a chat to be answered again', async () => (await send('after')).status === 200, 15_000);
    } finally {
      relay.restore();
      await viaRelay.stop();
      await relay.close();
    }
  }, 120_000);

  it('a turn that reached Temporal but no worker before it stopped is 503 within 5 s; sent again with its Idempotency-Key after the return, it is answered once', async () => {
    const bot = await newBot();
    const session = randomUUID();
    const send = () =>
      http('/v1/api/chat', {
        key: bot.keys.secret_key,
        body: { session_id: session, message: 'wait for me' },
        headers: { 'Idempotency-Key': `outage-${session}` },
        baseUrl: own.baseUrl,
      });
    // No worker: the turn's update reaches the server and waits there for one to accept it.
    await own.worker.stop();
    const pending = send();
    const connection = await Connection.connect({ address: temporal.address });
    try {
      const client = new Client({ connection, namespace: own.env.TEMPORAL_NAMESPACE ?? 'default' });
      const handle = client.workflow.getHandle(conversationWorkflowId(bot.bot_id, session));
      await waitUntil('the conversation workflow to be started by the turn', () =>
        handle.describe().then(
          () => true,
          () => false,
        ),
      );
    } finally {
      await connection.close();
    }
    await new Promise((r) => setTimeout(r, 500)); // the update admitted beside the start

    // The server stops: an update no worker has accepted goes with it (it lives in the server's memory only), and the
    // visitor is told to retry rather than held for as long as the server is away.
    await temporal.stop();
    const stopped = Date.now();
    const lost = await pending;
    expect(Date.now() - stopped).toBeLessThan(5_000);
    expect(lost.status).toBe(503);
    expect(lost.body.code).toBe('service_unavailable');
    expect(await transcriptOf(session)).toEqual([]);

    await temporal.start();
    own.worker = await startWorker(own.env, { quiet: true });
    let res = await send();
    // The API's channel may still be reconnecting to the returned server: the retry a client makes on 503.
    for (let tries = 0; res.status === 503 && tries < 10; tries++) {
      await new Promise((r) => setTimeout(r, 1_000));
      res = await send();
    }
    expect(res.status).toBe(200);
    expect(res.body.answer).toBe('Fake answer: wait for me');
    expect(await transcriptOf(session)).toEqual([
      { author: 'visitor', text: 'wait for me' },
      { author: 'bot', text: res.body.answer },
    ]);
  }, 90_000);

  it('a turn in flight when Temporal stops for 10 s is answered, and so is a trigger waiting for its run', async () => {
    const bot = await newBot();
    await testDb().query(`UPDATE bots SET model = 'fake-slow-2000' WHERE id = $1`, [bot.bot_id]);
    const session = randomUUID();
    const pending = http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: session, message: 'outlast the scheduler' },
      baseUrl: own.baseUrl,
    });
    // A webhook trigger in wait mode: its caller holds the request open for the run's answer.
    const trigger = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, {
      body: { kind: 'webhook', task: 'Summarise the order', mode: 'wait' },
      headers: await ownerSession(bot),
    });
    expect(trigger.status).toBe(201);
    const order = 'order 42: two lamps';
    const hooked = http(`/v1/hooks/${trigger.body.id}`, {
      method: 'POST',
      rawBody: order,
      headers: {
        'Content-Type': 'text/plain',
        'X-Hook-Signature': `sha256=${createHmac('sha256', trigger.body.secret).update(order).digest('hex')}`,
      },
      baseUrl: own.baseUrl,
    });
    await turnRunning(bot.bot_id);
    await waitUntil('the trigger run to be running', async () => {
      const runs = await testDb().query(
        `SELECT 1 FROM runs WHERE bot_id = $1 AND trigger_kind = 'webhook' AND status = 'running'`,
        [bot.bot_id],
      );
      return runs.rowCount === 1;
    });

    await temporal.stop();
    await new Promise((r) => setTimeout(r, 10_000));
    await temporal.start();

    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.answer).toBe('Fake answer: outlast the scheduler');
    // Not 502 run_failed ("did not finish in time") for a run that went on: its answer, once Temporal is back.
    const run = await hooked;
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ status: 'done', answer: expect.stringContaining('Fake answer') });
    expect(await transcriptOf(session)).toEqual([
      { author: 'visitor', text: 'outlast the scheduler' },
      { author: 'bot', text: res.body.answer },
    ]);
  }, 90_000);
});
