import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { configSchema } from '../../lib/config';
import { SPEC_DELIVERY_SCHEDULE } from '../../workflows/contracts/webhook-delivery';
import { http, newBot, ownerSession, testDb, waitUntil } from '../support/helpers';
import { addMember, sessionOf } from '../support/members';
import { stackInfo } from '../support/stack-info';
import { startWebhookReceiver, verifyDelivery } from '../support/webhook-receiver';

async function escalate(bot: BootstrapResult): Promise<string> {
  const session = randomUUID();
  const res = await http('/v1/api/chat', {
    key: bot.keys.secret_key,
    body: { session_id: session, message: 'a person, please', escalate: true },
  });
  expect(res.body.handoff).toBe(true);
  return session;
}

async function deliveryOf(session: string, until: (row: { status: string }) => boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await testDb().query(
      `SELECT id, status, attempts, last_error FROM webhook_deliveries WHERE session_id = $1`,
      [session],
    );
    if (res.rows[0] && until(res.rows[0])) return res.rows[0];
    if (Date.now() > deadline) throw new Error(`delivery for ${session} not finished: ${JSON.stringify(res.rows)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('outgoing webhook deliveries', () => {
  it('a receiver failing twice then answering 200 sees three signed attempts at 0, 1 and 6 times the first wait (1 s in production)', async () => {
    // The contract's 1, 5 and 25 s in production; the test stack shortens the first wait (WEBHOOK_RETRY_FIRST_MS).
    expect(configSchema.shape.WEBHOOK_RETRY_FIRST_MS.parse(undefined)).toBe(1_000);
    expect(SPEC_DELIVERY_SCHEDULE).toEqual({ firstRetryMs: 1_000 });
    const first = Number(stackInfo().env.WEBHOOK_RETRY_FIRST_MS ?? 1_000) / 1_000;
    const receiver = await startWebhookReceiver([500, 503, 200]);
    try {
      const bot = await newBot();
      await testDb().query(`UPDATE bots SET handoff_webhook_url = $2 WHERE id = $1`, [bot.bot_id, receiver.url]);
      await escalate(bot);
      const got = await receiver.waitFor(3, 20_000);
      const t0 = got[0].at;
      const offsets = got.map((d) => (d.at - t0) / 1000);
      expect(offsets[1]).toBeGreaterThanOrEqual(0.9 * first);
      expect(offsets[1]).toBeLessThan(first + 1.5);
      expect(offsets[2]).toBeGreaterThanOrEqual(5.9 * first);
      expect(offsets[2]).toBeLessThan(6 * first + 2);
      for (const d of got) expect(verifyDelivery(d, bot.keys.handoff_webhook_secret)).toBe(true);
      // Each attempt signs its own timestamp over the same body.
      expect(new Set(got.map((d) => d.rawBody)).size).toBe(1);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(receiver.received).toHaveLength(3);
      const row = await deliveryOf(got[0].body.session_id as string, (r) => r.status === 'delivered');
      expect(row.attempts).toBe(3);
      const attempts = await testDb().query(
        `SELECT attempt, status_code FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt`,
        [row.id],
      );
      expect(attempts.rows).toEqual([
        { attempt: 1, status_code: 500 },
        { attempt: 2, status_code: 503 },
        { attempt: 3, status_code: 200 },
      ]);
    } finally {
      await receiver.close();
    }
  }, 40_000);

  it('a receiver answering 400 sees exactly one attempt', async () => {
    const receiver = await startWebhookReceiver([400]);
    try {
      const bot = await newBot();
      await testDb().query(`UPDATE bots SET handoff_webhook_url = $2 WHERE id = $1`, [bot.bot_id, receiver.url]);
      const session = await escalate(bot);
      await receiver.waitFor(1);
      const row = await deliveryOf(session, (r) => r.status === 'failed');
      expect(row.attempts).toBe(1);
      await new Promise((r) => setTimeout(r, 2_000));
      expect(receiver.received).toHaveLength(1);
      // Final at once, and told like one given up after its retries.
      const told = await testDb().query(
        `SELECT data FROM notifications WHERE bot_id = $1 AND kind = 'delivery_failed'`,
        [bot.bot_id],
      );
      expect(told.rows.map((r) => r.data)).toEqual([
        expect.objectContaining({ delivery_id: row.id, attempts: 1, last_status: 400 }),
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('a private address is refused before any connection, and not retried', async () => {
    const bot = await newBot();
    await testDb().query(`UPDATE bots SET handoff_webhook_url = 'http://10.0.0.1/hooks' WHERE id = $1`, [bot.bot_id]);
    const session = await escalate(bot);
    const row = await deliveryOf(session, (r) => r.status === 'failed');
    expect(row.attempts).toBe(1);
    expect(row.last_error).toContain('outbound_blocked');
  });

  it('a receiver down through every retry: the workspace is told what failed, and "send again" delivers once it is up', async () => {
    // An address that refuses connections: a receiver's port, closed.
    const gone = await startWebhookReceiver([200]);
    await gone.close();
    const bot = await newBot({ botName: 'Shop agent' });
    const secret = bot.keys.handoff_webhook_secret;
    await testDb().query(`UPDATE bots SET handoff_webhook_url = $2 WHERE id = $1`, [
      bot.bot_id,
      `${gone.url}?token=sesame`,
    ]);
    const owner = await ownerSession(bot);
    const session = await escalate(bot);
    const failed = await deliveryOf(session, (r) => r.status === 'failed');
    expect(failed.attempts).toBe(4);

    // The dashboard's notifications say what failed: the event, the receiver (no path, no query: they carry tokens),
    // the error, the attempts, and where to send it again; never the signing secret.
    const origin = `http://127.0.0.1:${gone.port}`;
    const told = await waitUntil('the notification', async () => {
      const res = await http('/v1/dashboard/notifications', { headers: owner });
      return res.body.notifications.find((n: { kind: string }) => n.kind === 'delivery_failed');
    });
    expect(told).toMatchObject({
      bot_id: bot.bot_id,
      title: 'Shop agent: a webhook event could not be delivered',
      read_at: null,
      data: {
        delivery_id: failed.id,
        event: 'escalated',
        url: origin,
        session_id: session,
        attempts: 4,
        last_status: null,
        count: 1,
      },
    });
    expect(told.body).toContain(`"escalated" event`);
    expect(told.body).toContain(`to ${origin} after 4 attempts`);
    expect(told.body).toMatch(/ECONNREFUSED/);
    expect(told.body).toContain('send it again');
    expect(JSON.stringify(told)).not.toContain(secret);
    expect(JSON.stringify(told)).not.toContain('sesame');

    // A second event failing while that is unread updates it: one notification (and one e-mail) for an outage.
    const second = await escalate(bot);
    const failedAgain = await deliveryOf(second, (r) => r.status === 'failed');
    const updated = await waitUntil('the count of 2', async () => {
      const res = await http('/v1/dashboard/notifications', { headers: owner });
      const mine = res.body.notifications.filter((n: { kind: string }) => n.kind === 'delivery_failed');
      return mine.length === 1 && mine[0].data.count === 2 ? mine[0] : undefined;
    });
    expect(updated).toMatchObject({
      id: told.id,
      title: 'Shop agent: 2 webhook events could not be delivered',
      data: { delivery_id: failedAgain.id },
    });

    // The agent's page lists both, with the address as set (its owner and admins see it in the settings too).
    const list = async () => {
      const res = await http(`/v1/dashboard/bots/${bot.bot_id}/deliveries/failed`, { headers: owner });
      expect(res.status).toBe(200);
      return res.body.deliveries as { id: string; sent_again: { id: string; status: string } | null }[];
    };
    const listed = await list();
    expect(listed.map((d) => d.id)).toEqual([failedAgain.id, failed.id]);
    expect(listed[1]).toMatchObject({
      event: 'escalated',
      session_id: session,
      url: `${gone.url}?token=sesame`,
      attempts: 4,
      last_status: null,
      last_error: expect.stringContaining('ECONNREFUSED'),
      sent_again: null,
    });

    // Sending again is for the owner and admins; an operator may not, another workspace does not find it.
    const sendAgain = (id: string, headers: Record<string, string>, botId = bot.bot_id) =>
      http(`/v1/dashboard/bots/${botId}/deliveries/${id}/send-again`, { method: 'POST', headers });
    const operator = await sessionOf(await addMember(bot, 'operator'));
    expect((await sendAgain(failed.id, operator)).status).toBe(403);
    const stranger = await newBot();
    expect((await sendAgain(failed.id, await ownerSession(stranger), stranger.bot_id)).status).toBe(404);
    expect((await sendAgain('dlv_nope', owner)).status).toBe(404);

    // The receiver is back at the same address: "send again" delivers the same body, freshly signed.
    const back = await startWebhookReceiver([200], { port: gone.port });
    try {
      const again = await sendAgain(failed.id, owner);
      expect(again.status).toBe(202);
      expect(again.body).toMatchObject({ status: 'pending', resend_of: failed.id, id: expect.stringMatching(/^dlv_/) });
      const [got] = await back.waitFor(1);
      expect(verifyDelivery(got, secret)).toBe(true);
      const original = await testDb().query(`SELECT body FROM webhook_deliveries WHERE id = $1`, [failed.id]);
      expect(got.rawBody).toBe(original.rows[0].body);
      expect(got.body).toMatchObject({ event: 'escalated', session_id: session });
      await waitUntil('delivered', async () => {
        const d = (await list()).find((x) => x.id === failed.id);
        return d?.sent_again?.status === 'delivered' ? d : undefined;
      });
      expect((await list()).find((x) => x.id === failed.id)?.sent_again).toEqual({
        id: again.body.id,
        status: 'delivered',
      });
      // Once is enough: a second click is a conflict, and only one delivery arrived.
      const twice = await sendAgain(failed.id, owner);
      expect([twice.status, twice.body.code]).toEqual([409, 'conflict']);
      expect(back.received).toHaveLength(1);
    } finally {
      await back.close();
    }
  }, 60_000);
});
