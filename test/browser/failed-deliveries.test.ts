import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, signIn } from '../support/browser';
import { http, newBot, testDb, waitUntil } from '../support/helpers';
import { startWebhookReceiver } from '../support/webhook-receiver';

/**
 * A webhook delivery given up, as its owner meets it (docs/decisions/144-failed-deliveries-told.md): the dashboard's
 * notification says what failed and links to the agent's settings, which list the delivery with "Send again"; once
 * the receiver is back, sending again delivers it. Screenshots go to test-artifacts/dashboard/deliveries-NN-*.png.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');
const shot = (page: Page, name: string, fullPage = true) =>
  page.screenshot({ path: path.join(ARTIFACTS, `deliveries-${name}.png`), fullPage });

let browser: Browser;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

describe('a webhook delivery given up', () => {
  it('is told in the notifications, listed on the agent page, and delivered by "Send again" once the receiver is up', async () => {
    const gone = await startWebhookReceiver([200]);
    await gone.close();
    const bot = await newBot({ botName: 'Shop agent' });
    await testDb().query(`UPDATE bots SET handoff_webhook_url = $2 WHERE id = $1`, [bot.bot_id, gone.url]);
    const chat = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { message: 'I need a person, please', escalate: true },
    });
    expect(chat.body.handoff).toBe(true);
    await waitUntil('the delivery given up', async () => {
      const r = await testDb().query(`SELECT status FROM webhook_deliveries WHERE session_id = $1`, [
        chat.body.session_id,
      ]);
      return r.rows[0]?.status === 'failed';
    });

    const { page, errors, context } = await signIn(
      browser,
      { email: bot.email, password: bot.password },
      '/notifications',
      { viewport: { width: 1280, height: 900 } },
    );
    try {
      const told = page.getByTestId('notification').filter({ hasText: 'Webhook failed' });
      await told.waitFor();
      expect(await told.textContent()).toContain('Shop agent: a webhook event could not be delivered');
      expect(await told.textContent()).toContain(`to http://127.0.0.1:${gone.port} after 4 attempts`);
      await shot(page, '01-notification');

      await told.getByRole('link', { name: 'See what failed and send it again' }).click();
      const row = page.getByTestId('failed-delivery');
      await row.waitFor();
      expect(await row.textContent()).toContain('Handed to your team');
      expect(await row.textContent()).toContain(gone.url);
      expect(await row.textContent()).toContain('4 attempts');
      expect(await row.getByTestId('failed-delivery-error').textContent()).toContain('ECONNREFUSED');
      await row.scrollIntoViewIfNeeded();
      await shot(page, '02-agent-page', false);

      const back = await startWebhookReceiver([200], { port: gone.port });
      try {
        await row.getByRole('button', { name: /Send the .* event again/ }).click();
        await row.getByText('Delivered when sent again').waitFor({ timeout: 20_000 });
        expect(back.received).toHaveLength(1);
        expect(back.received[0].body).toMatchObject({ event: 'escalated', session_id: chat.body.session_id });
        await shot(page, '03-sent-again', false);
      } finally {
        await back.close();
      }
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
