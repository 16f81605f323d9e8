import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { http, newBot, testDb } from '../support/helpers';
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
  it('a receiver failing twice then answering 200 sees three signed attempts at about 0, 1 and 6 s', async () => {
    const receiver = await startWebhookReceiver([500, 503, 200]);
    try {
      const bot = await newBot();
      await testDb().query(`UPDATE bots SET handoff_webhook_url = $2 WHERE id = $1`, [bot.bot_id, receiver.url]);
      await escalate(bot);
      const got = await receiver.waitFor(3, 20_000);
      const t0 = got[0].at;
      const offsets = got.map((d) => (d.at - t0) / 1000);
      expect(offsets[1]).toBeGreaterThanOrEqual(0.9);
      expect(offsets[1]).toBeLessThan(2.5);
      expect(offsets[2]).toBeGreaterThanOrEqual(5.9);
      expect(offsets[2]).toBeLessThan(8);
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
});
