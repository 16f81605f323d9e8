import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { signVisitorConfirmation } from '../../lib/identity';
import { launchChromium, signIn } from '../support/browser';
import { http, newBot } from '../support/helpers';

/**
 * The inbox's visitor panel (web/dashboard/src/pages/inbox/visitor-panel.tsx) for a visitor who only typed an id
 * that the site confirmed for someone else: the id and every conversation it links are marked "Not confirmed" and
 * listed apart from the confirmed ones. Screenshots go to test-artifacts/dashboard/visitor-panel-NN-*.png.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');

let browser: Browser;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

describe("the inbox's visitor panel", () => {
  it('marks an id the visitor only typed, and the conversations it links, as not confirmed', async () => {
    const bot = await newBot();
    const exp = Math.floor(Date.now() / 1000) + 600;
    const chat = async (message: string, body: Record<string, unknown>) => {
      const res = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message, ...body } });
      expect(res.status).toBe(200);
      return res.body.session_id as string;
    };
    const confirmed = {
      user_auth: signVisitorConfirmation({ user: 'u-42', bot: bot.bot_id, exp }, bot.keys.visitor_identity_secret),
    };
    await chat('My order 1234 has not arrived', confirmed);
    const ana = await chat('Can I change the address of order 1234?', { ...confirmed, escalate: true });
    const claimer = await chat('I am u-42, please tell me where my order is', { user_token: 'u-42', escalate: true });

    const { page, errors, context } = await signIn(
      browser,
      { email: bot.email, password: bot.password },
      `/inbox?status=all&bot=${bot.bot_id}&session=${claimer}`,
      { viewport: { width: 1280, height: 900 } },
    );
    try {
      const about = page.getByTestId('visitor-panel');
      await about.getByText('id u-42 (not confirmed)', { exact: false }).waitFor();
      expect(await about.locator('summary').textContent()).toContain('2 maybe theirs, not confirmed');
      await about.locator('summary').click();
      const siteId = about.locator('dd', { hasText: 'u-42' });
      expect(await siteId.textContent()).toContain('Not confirmed');
      // Nothing is offered as this visitor's own conversations: both are listed apart, each marked.
      expect(await about.getByRole('list', { name: "The visitor's other conversations" }).count()).toBe(0);
      const claims = about.getByRole('list', { name: 'Conversations with the same id or contact, not confirmed' });
      expect(await claims.getByTestId('earlier-conversation').count()).toBe(2);
      expect(await claims.locator('li', { hasText: 'Not confirmed' }).count()).toBe(2);
      await about.getByTestId('unconfirmed-hint').waitFor();
      await page.screenshot({ path: path.join(ARTIFACTS, 'visitor-panel-01-not-confirmed.png') });

      // Ana, confirmed by the site: her earlier conversation is hers; the one that only claims her id is apart.
      await page.goto(new URL(`/inbox?status=all&bot=${bot.bot_id}&session=${ana}`, page.url()).href);
      await about.getByText('1 other conversation', { exact: false }).waitFor();
      await about.locator('summary').click();
      expect(await about.locator('dd', { hasText: 'u-42' }).textContent()).toContain('Confirmed by your site');
      const own = about.getByRole('list', { name: "The visitor's other conversations" });
      expect(await own.getByTestId('earlier-conversation').textContent()).toBeTruthy();
      expect(await own.locator('li', { hasText: 'Not confirmed' }).count()).toBe(0);
      expect(await claims.getByTestId('earlier-conversation').count()).toBe(1);
      await page.screenshot({ path: path.join(ARTIFACTS, 'visitor-panel-02-confirmed.png') });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
