import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Locator } from 'playwright-core';
import type { BootstrapResult } from '../../lib/accounts/service';
import { http as api, newBot, ownerSession, waitUntil } from '../support/helpers';
import { type ShopPage, launchChromium, signIn, startShopPage } from '../support/browser';

/**
 * Answers name their sources (issue 21.1), as people see them, in Debian's headless Chromium against the test stack:
 * under a bot answer a small labelled list "Sources: [1] … · [2] …" (web/shared/sources-view.tsx) — a page a site
 * scan read is a link to its address (a new tab), a text written through the API is its title as text, a title is
 * never HTML. In the widget (a live answer from the stream's end frame, and after a reload from the poll), the
 * dashboard's test chat and the inbox's transcript. Screenshots go to test-artifacts/{widget,dashboard}/sources-*.png.
 */
const WIDGET_ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'widget');
const DASHBOARD_ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');

/** Each source holds a FACT line: the fake model repeats it and, asked to cite (`[[fake:cite]]`), adds its " [n]". */
const SHIPPING = 'Parcels leave our warehouse every weekday.\nFACT: parcels ship within two days';
const HOSTILE_TITLE = 'Parcel sizes <img src=x onerror="window.hacked=1">';
const SIZES = 'Parcels of every size are welcome.\nFACT: parcels up to 30 kg ship at one price';
const QUESTION = '[[fake:cite]] How fast do parcels ship, and are parcels returns free?';

let browser: Browser;
let shop: ShopPage;
let site: http.Server;
let returnsUrl: string;
let bot: BootstrapResult;

beforeAll(async () => {
  mkdirSync(WIDGET_ARTIFACTS, { recursive: true });
  mkdirSync(DASHBOARD_ARTIFACTS, { recursive: true });
  // A page of the shop's own site, read by a site scan: its source has the page's address.
  site = http.createServer((req, res) => {
    if (req.url !== '/returns') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<html><head><title>Returns policy</title></head><body>' +
        '<p>Returns of unused parcels are accepted at our shop.</p>' +
        '<p>FACT: parcels returns are free for sixty days</p></body></html>',
    );
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  returnsUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/returns`;

  bot = await newBot({ botName: 'Parcel helper', workspaceName: 'Parcels' });
  for (const [source_id, title, text] of [
    ['shipping', 'Shipping times', SHIPPING],
    ['sizes', HOSTILE_TITLE, SIZES],
  ]) {
    const res = await api('/v1/api/knowledge', { key: bot.keys.secret_key, body: { source_id, title, text } });
    expect(res.status).toBe(202);
  }
  const scan = await api('/v1/admin/scrape', {
    key: bot.keys.secret_key,
    body: { url: returnsUrl, max_pages: 1, refresh_days: 0 },
  });
  expect(scan.status).toBe(202);
  await waitUntil(
    'the page indexed',
    async () => (await api('/v1/api/knowledge', { key: bot.keys.secret_key })).body.sources.length === 3,
    30_000,
  );

  shop = await startShopPage();
  const allowed = await api(`/v1/dashboard/bots/${bot.bot_id}`, {
    method: 'PATCH',
    body: { allowed_origins: [shop.origin] },
    headers: await ownerSession(bot),
  });
  expect(allowed.status).toBe(200);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await shop?.close();
  await new Promise((resolve) => site?.close(resolve));
});

interface Shown {
  label: string | null;
  items: string[];
  links: { text: string; href: string | null; target: string | null; rel: string | null }[];
  images: number;
}

/** What the sources list under an answer shows: its label, its items' text, its links. */
async function sourcesUnder(answer: Locator): Promise<Shown> {
  const list = answer.getByRole('list', { name: 'Sources' });
  await list.waitFor();
  const links = [];
  for (const link of await list.getByRole('link').all()) {
    links.push({
      text: (await link.textContent()) ?? '',
      href: await link.getAttribute('href'),
      target: await link.getAttribute('target'),
      rel: await link.getAttribute('rel'),
    });
  }
  return {
    label: await list.getAttribute('aria-label'),
    items: (await list.getByRole('listitem').allTextContents()).map((t) => t.trim()),
    links,
    images: await answer.locator('.answer-sources img').count(),
  };
}

/** The number the answer text cites a fact by: "… FACT: parcels ship within two days [2]" → 2. */
function refOf(answerText: string, fact: string): number {
  const m = new RegExp(`${fact} \\[(\\d+)\\]`).exec(answerText);
  expect([fact, m?.[0]]).toEqual([fact, expect.any(String)]);
  return Number(m![1]);
}

/**
 * The three sources, each shown as "[n] title" with the n the answer cites it by; the scanned page a link to its
 * address in a new tab, the two texts no links; the hostile title as its characters, no image.
 */
function expectSources(shown: Shown, answerText: string): void {
  const shipping = refOf(answerText, 'FACT: parcels ship within two days');
  const sizes = refOf(answerText, 'FACT: parcels up to 30 kg ship at one price');
  const returns = refOf(answerText, 'FACT: parcels returns are free for sixty days');
  expect(shown.label).toBe('Sources');
  expect([...shown.items].sort()).toEqual(
    [`[${shipping}] Shipping times`, `[${sizes}] ${HOSTILE_TITLE}`, `[${returns}] Returns policy`].sort(),
  );
  expect(shown.links).toEqual([
    { text: `[${returns}] Returns policy`, href: returnsUrl, target: '_blank', rel: 'noopener noreferrer' },
  ]);
  expect(shown.images).toBe(0);
}

describe('the sources an answer used, under it', () => {
  it('in the widget: a live answer (the end frame) and the same after a reload (the poll)', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 860 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      await page.goto(`${shop.origin}/?key=${encodeURIComponent(bot.keys.public_key)}&open=1`);
      const box = page.getByRole('textbox', { name: 'Message' });
      await box.fill(QUESTION);
      await box.press('Enter');
      await page.getByRole('button', { name: 'Helpful', exact: true }).waitFor();
      const answer = page.locator('.msg-bot').last();
      // The answer's [n] markers stay readable text (the Markdown leaves them alone).
      const text = (await answer.locator('.bubble').textContent()) ?? '';
      expect(text).toMatch(/FACT: parcels ship within two days \[\d\]/);
      expectSources(await sourcesUnder(answer), text);
      // Small and apart from the bubble: under it, in a smaller type than the answer.
      const sizes = await page.evaluate<{ list: string; bubble: string; under: boolean }>(
        `(() => { const root = document.querySelector('agent-platform-widget').shadowRoot;
           const msg = [...root.querySelectorAll('.msg-bot')].at(-1);
           const list = msg.querySelector('.answer-sources'), bubble = msg.querySelector('.bubble');
           return { list: getComputedStyle(list).fontSize, bubble: getComputedStyle(bubble).fontSize,
                    under: list.getBoundingClientRect().top >= bubble.getBoundingClientRect().bottom }; })()`,
      );
      expect(sizes).toEqual({ list: '12px', bubble: '15px', under: true });
      await page.screenshot({ path: path.join(WIDGET_ARTIFACTS, 'sources-01-live-answer.png') });

      // Reloaded: the conversation comes back from the poll, the answer with its sources.
      await page.reload();
      const restored = page.locator('.msg-bot', { hasText: 'FACT: parcels ship within two days' });
      await restored.waitFor();
      expect(await page.locator('.msg-bot').count()).toBe(1);
      expectSources(await sourcesUnder(restored), (await restored.locator('.bubble').textContent()) ?? '');
      await page.screenshot({ path: path.join(WIDGET_ARTIFACTS, 'sources-02-after-reload.png') });

      expect(await page.evaluate('window.hacked')).toBeUndefined();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  async function signedIn(address: string) {
    const { context, page, errors } = await signIn(browser, bot, address, { viewport: { width: 1280, height: 860 } });
    return { page, errors, close: () => context.close() };
  }

  it("in the dashboard's test chat, under the streamed answer", async () => {
    const { page, errors, close } = await signedIn(`/agents/${bot.bot_id}/chat`);
    try {
      const box = page.getByLabel('Message');
      await box.fill(QUESTION);
      await box.press('Enter');
      const log = page.getByRole('list', { name: 'Conversation' });
      const answer = log.locator('.chat-agent').last();
      await answer.getByRole('list', { name: 'Sources' }).waitFor({ timeout: 20_000 });
      expectSources(await sourcesUnder(answer), (await answer.textContent()) ?? '');
      await page.screenshot({ path: path.join(DASHBOARD_ARTIFACTS, 'sources-01-test-chat.png'), fullPage: true });
      expect(await page.evaluate('window.hacked')).toBeUndefined();
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it("in the inbox's transcript, under the bot's message", async () => {
    const chat = await api('/v1/api/chat', { key: bot.keys.secret_key, body: { message: QUESTION } });
    expect(chat.status).toBe(200);
    expect(chat.body.sources).toHaveLength(3);
    const { page, errors, close } = await signedIn(`/inbox?bot=${bot.bot_id}&session=${chat.body.session_id}`);
    try {
      const answer = page.getByTestId('msg-bot').last();
      await answer.waitFor({ timeout: 15_000 });
      expect(await answer.locator('.msg-bubble').textContent()).toMatch(/FACT: parcels ship within two days \[\d\]/);
      expectSources(await sourcesUnder(answer), chat.body.answer);
      // The visitor's message has none.
      expect(await page.getByTestId('msg-visitor').getByRole('list', { name: 'Sources' }).count()).toBe(0);
      await page.screenshot({ path: path.join(DASHBOARD_ARTIFACTS, 'sources-02-inbox-transcript.png') });
      expect(await page.evaluate('window.hacked')).toBeUndefined();
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);
});
