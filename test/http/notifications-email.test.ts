import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { type FakeSmtp, parseMessage, startFakeSmtp } from '../support/fake-smtp';
import { type OwnPlatform, http, newBot, ownerSession, startOwnPlatform, testDb, waitUntil } from '../support/helpers';
import { stackInfo } from '../support/stack-info';
import { startWebhookReceiver } from '../support/webhook-receiver';

/**
 * Pausing a trigger, and a webhook delivery given up, e-mail the owner when SMTP_URL is set
 * (docs/decisions/047-trigger-pause.md, docs/decisions/144-failed-deliveries-told.md). The e-mail goes through the
 * real nodemailer client to a real SMTP peer (test/support/fake-smtp.ts), sent by a worker of this file's own (its own
 * task queue, same Postgres and Temporal) started with SMTP_URL; the shared stack has no SMTP_URL and sends none.
 */
const SMTP_FROM_ADDRESS = 'alerts@platform.test';

const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** A failing bot's wait-mode webhook trigger, called five times through the API at `baseUrl`, paused. */
async function failFiveTimes(bot: BootstrapResult, triggerName: string, baseUrl: string) {
  await testDb().query(`UPDATE bots SET model = 'fake-fail-500' WHERE id = $1`, [bot.bot_id]);
  const session = await ownerSession(bot);
  const created = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, {
    body: { kind: 'webhook', name: triggerName, task: 'Import the order', mode: 'wait' },
    headers: session,
    baseUrl,
  });
  expect([created.status, created.text]).toEqual([201, expect.any(String)]);
  const t = created.body as { id: string; secret: string };
  for (let i = 0; i < 5; i++) {
    const body = JSON.stringify({ order: i });
    const res = await http(`/v1/hooks/${t.id}`, {
      method: 'POST',
      rawBody: body,
      headers: { 'Content-Type': 'application/json', 'X-Hook-Signature': sign(t.secret, body) },
      baseUrl,
    });
    expect([res.status, res.body?.code]).toEqual([502, 'run_failed']);
  }
  const paused = await waitUntil('the pause', async () => {
    const v = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers/${t.id}`, { headers: session, baseUrl });
    return v.body.enabled === false ? v.body : undefined;
  });
  expect(paused.disabled_reason).toBe('failures');
  return t;
}

/** The bot's notifications once the pause has written one (the row follows the trigger update in the activity). */
async function notificationsOf(botId: string) {
  return waitUntil('the notification', async () => {
    const rows = (
      await testDb().query(`SELECT id, kind, title, body, data, emailed_at FROM notifications WHERE bot_id = $1`, [
        botId,
      ])
    ).rows;
    return rows.length ? rows : undefined;
  });
}

describe('trigger pause notifications by e-mail', () => {
  let smtp: FakeSmtp;
  let own: OwnPlatform | undefined;
  let baseUrl: string;

  beforeAll(async () => {
    smtp = await startFakeSmtp();
    own = await startOwnPlatform('smtp-test', {
      SMTP_URL: smtp.url,
      SMTP_FROM: `Agent Platform Alerts <${SMTP_FROM_ADDRESS}>`,
    });
    baseUrl = own.baseUrl;
  }, 120_000);

  afterAll(async () => {
    await own?.stop();
    await smtp?.close();
  });

  it('with SMTP_URL set, the fifth failure in a row e-mails the owner once over SMTP and marks the notification emailed', async () => {
    const bot = await newBot({ botName: 'Order agent' });
    const t = await failFiveTimes(bot, 'Shop orders hook', baseUrl);

    const emailed = await waitUntil('emailed_at', async () => {
      const rows = await notificationsOf(bot.bot_id);
      return rows[0].emailed_at ? rows : undefined;
    });
    expect(emailed).toHaveLength(1);
    expect(emailed[0]).toMatchObject({
      kind: 'trigger_paused',
      data: { trigger_id: t.id, failures: 5 },
      emailed_at: expect.any(Date),
    });

    // The message was recorded before the server's 250, which came before emailed_at was set.
    const mails = smtp.messages.filter((m) => m.to.includes(bot.email));
    expect(mails).toHaveLength(1);
    const [mail] = mails;
    expect(mail.from).toBe(SMTP_FROM_ADDRESS);
    expect(mail.to).toEqual([bot.email]);
    expect(mail.auth).toBeUndefined();
    const parsed = parseMessage(mail.data);
    expect(parsed.headers.to).toBe(bot.email);
    expect(parsed.headers.from).toBe(`Agent Platform Alerts <${SMTP_FROM_ADDRESS}>`);
    expect(parsed.subject).toBe(emailed[0].title);
    expect(parsed.subject).toContain('Shop orders hook');
    expect(parsed.subject).toContain('Order agent');
    expect(parsed.subject).toContain('paused');
    expect(parsed.text).toBe(emailed[0].body);
    expect(parsed.text).toContain('5 runs failed in a row');
    expect(parsed.text).toContain('paused');

    // Nothing more arrives (one pause, one e-mail).
    await new Promise((r) => setTimeout(r, 1_000));
    expect(smtp.messages.filter((m) => m.to.includes(bot.email))).toHaveLength(1);
  }, 90_000);

  it('without SMTP_URL (the shared stack), the pause writes the notification only: emailed_at stays NULL', async () => {
    expect(stackInfo().env.SMTP_URL).toBeUndefined();
    const before = smtp.messages.length;
    const bot = await newBot({ botName: 'Quiet agent' });
    const t = await failFiveTimes(bot, 'Dashboard-only hook', stackInfo().apiUrl);

    const rows = await notificationsOf(bot.bot_id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      kind: 'trigger_paused',
      data: { trigger_id: t.id, failures: 5 },
      emailed_at: null,
    });
    // Still NULL a moment later, and no message reached any SMTP server we know of.
    await new Promise((r) => setTimeout(r, 1_000));
    const again = await testDb().query(`SELECT emailed_at FROM notifications WHERE id = $1`, [rows[0].id]);
    expect(again.rows[0].emailed_at).toBeNull();
    expect(smtp.messages).toHaveLength(before);
    expect(smtp.messages.some((m) => m.to.includes(bot.email))).toBe(false);
  }, 90_000);

  it('a webhook delivery given up e-mails the owner once; more failures while it is unread update the notification only', async () => {
    const receiver = await startWebhookReceiver([410]);
    try {
      const bot = await newBot({ botName: 'Hook agent' });
      await testDb().query(`UPDATE bots SET handoff_webhook_url = $2 WHERE id = $1`, [bot.bot_id, receiver.url]);
      const escalate = async () => {
        const res = await http('/v1/api/chat', {
          key: bot.keys.secret_key,
          body: { message: 'a person, please', escalate: true },
          baseUrl,
        });
        expect(res.body.handoff).toBe(true);
      };
      const given = async () =>
        (
          await testDb().query(
            `SELECT title, body, data, emailed_at FROM notifications WHERE bot_id = $1 AND kind = 'delivery_failed'`,
            [bot.bot_id],
          )
        ).rows;

      await escalate();
      const [told] = await waitUntil('the e-mail', async () => {
        const rows = await given();
        return rows[0]?.emailed_at ? rows : undefined;
      });
      const mails = () => smtp.messages.filter((m) => m.to.includes(bot.email));
      expect(mails()).toHaveLength(1);
      const parsed = parseMessage(mails()[0].data);
      expect(parsed.subject).toBe('Hook agent: a webhook event could not be delivered');
      expect(parsed.text).toBe(told.body);
      expect(parsed.text).toContain('HTTP 410');
      expect(parsed.text).toContain(new URL(receiver.url).origin);
      expect(parsed.text).not.toContain(bot.keys.handoff_webhook_secret);

      await escalate();
      await waitUntil('the second failure counted', async () => {
        const rows = await given();
        return rows.length === 1 && rows[0].data.count === 2;
      });
      await new Promise((r) => setTimeout(r, 1_000));
      expect(mails()).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  }, 90_000);
});
