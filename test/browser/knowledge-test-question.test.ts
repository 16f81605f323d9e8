import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { BootstrapResult } from '../../lib/accounts/service';
import { upsertSource } from '../../lib/knowledge/store';
import { readingDone, twoPagePdf, uploadFile } from '../support/documents';
import { newBot, scriptFakeModel, testDb } from '../support/helpers';
import { launchChromium, signIn } from '../support/browser';

/**
 * Seeing what the agent reads (issue 41, items 4 and 5; docs/decisions/153-see-what-the-agent-reads.md), in Debian's
 * headless Chromium against the test stack: the Knowledge tab's "Test a question" shows the ranked passages with their
 * source, heading path, page, score and text; the sources list finds a source by a word of its text and narrows to a
 * kind; the test chat shows under each answer the passages it read, and for a follow-up what it was searched with.
 * Screenshots go to test-artifacts/dashboard/knowledge-read-NN-*.png.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');
const DESKTOP = { width: 1280, height: 900 };
const PRICE = 'The Lumo desk lamp costs 49 euros, delivered in two days.';

let browser: Browser;
let bot: BootstrapResult;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
  bot = await newBot({ botName: 'Lamp shop helper', workspaceName: 'Lamp shop' });
  const db = testDb();
  const sources = [
    { id: 'lamp', title: 'Lumo desk lamp', text: 'The Lumo desk lamp has three brightness levels and a USB-C port.' },
    { id: 'lamp-price', title: 'Lumo lamp price', text: PRICE },
    { id: 'clock', title: 'Orbit wall clock', text: 'The Orbit wall clock runs silently on one AA battery.' },
  ];
  for (const s of sources) await upsertSource(db, { botId: bot.bot_id, sourceId: s.id, title: s.title, text: s.text });
  await upsertSource(db, {
    botId: bot.bot_id,
    sourceId: 'https://lamps.test/delivery',
    title: 'Delivery',
    text: 'Parcels leave the warehouse every weekday.',
    origin: 'scan',
    url: 'https://lamps.test/delivery',
  });
  // A two-page PDF: "Installation" on page 1, "Wi-Fi" on page 2.
  const upload = await uploadFile(bot.keys.secret_key, { name: 'lamp-manual.pdf', bytes: await twoPagePdf() });
  expect(upload.status).toBe(202);
  expect((await readingDone(bot.keys.secret_key, upload.body.source_id)).status).toBe('indexed');
}, 60_000);
afterAll(async () => browser?.close());

const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(ARTIFACTS, `knowledge-read-${name}.png`), fullPage: true });

/** Waits until the sources list shows exactly these titles (in any order). */
async function titlesNow(page: Page, expected: string[]) {
  const deadline = Date.now() + 10_000;
  let shown: string[] = [];
  while (Date.now() < deadline) {
    shown = (await page.getByTestId('sources').locator('.cell-main').allTextContents()).map((t) => t.trim()).sort();
    if (JSON.stringify(shown) === JSON.stringify([...expected].sort())) return;
    await page.waitForTimeout(100);
  }
  expect(shown).toEqual([...expected].sort());
}

describe('the Knowledge tab', () => {
  it('"Test a question" shows the ranked passages; the list searches text and narrows to a kind', async () => {
    const { context, page, errors } = await signIn(browser, bot, `/agents/${bot.bot_id}/knowledge`, {
      viewport: DESKTOP,
    });
    try {
      const panel = page.locator('#test-question');
      await panel.getByLabel('Question', { exact: true }).fill('How do I pair the lamp with my router?');
      await panel.getByRole('button', { name: 'Show passages' }).click();
      const passages = panel.getByRole('list', { name: 'Passages for the question' });
      await passages.waitFor();
      const first = passages.locator('.passage-item').first();
      expect(await first.locator('.passage-title').textContent()).toBe('Lamp manual');
      expect(await first.locator('.passage-place').textContent()).toBe('Wi-Fi · page 2');
      expect(await first.locator('.passage-score').textContent()).toMatch(/^score \d/);
      expect(await first.locator('.passage-text').textContent()).toContain('purple axolotl lamp');
      // The source is a link to it in the tab.
      expect(await first.locator('.passage-title').getAttribute('href')).toContain('?source=');
      await panel.scrollIntoViewIfNeeded();
      await shot(page, '01-test-a-question');

      // A follow-up asked alone finds nothing: said so.
      await panel.getByLabel('Question', { exact: true }).fill('and how much is it?');
      await panel.getByRole('button', { name: 'Show passages' }).click();
      await panel.getByText('Nothing in the knowledge matches “and how much is it?”').waitFor();
      await shot(page, '02-nothing-matches');

      // The list: a word only the PDF's text holds, then each kind.
      await titlesNow(page, ['Lumo desk lamp', 'Lumo lamp price', 'Orbit wall clock', 'Delivery', 'Lamp manual']);
      await page.getByLabel('Search titles and text').fill('axolotl');
      await titlesNow(page, ['Lamp manual']);
      await shot(page, '03-search-text');
      await page.getByLabel('Search titles and text').fill('');
      await page.getByLabel('Pages', { exact: true }).check();
      await titlesNow(page, ['Delivery']);
      await page.getByLabel('Files', { exact: true }).check();
      await titlesNow(page, ['Lamp manual']);
      await page.getByLabel('Texts', { exact: true }).check();
      await titlesNow(page, ['Lumo desk lamp', 'Lumo lamp price', 'Orbit wall clock']);
      await page.getByLabel('Search titles and text').fill('battery');
      await titlesNow(page, ['Orbit wall clock']);
      await page.getByLabel('Search titles and text').fill('axolotl');
      await page.getByText('No text matches “axolotl”').waitFor();
      await shot(page, '04-kind-texts-no-match');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});

describe('the test chat', () => {
  it('shows the passages each answer read; a follow-up is searched with its context', async () => {
    const { marker } = await scriptFakeModel(
      [
        { text: 'The Lumo desk lamp has three brightness levels.' },
        { text: 'How much does the Lumo desk lamp cost?' },
        { text: 'It costs 49 euros.' },
      ],
      'chat-read',
    );
    const { context, page, errors } = await signIn(browser, bot, `/agents/${bot.bot_id}/chat`, {
      viewport: DESKTOP,
    });
    try {
      const log = page.getByRole('list', { name: 'Conversation' });
      const box = page.getByLabel('Message');
      await box.fill(`Tell me about the Lumo desk lamp ${marker}`);
      await box.press('Enter');
      const firstRead = log.locator('.chat-agent').first().getByTestId('answer-passages');
      await firstRead.waitFor({ timeout: 20_000 });
      expect(await firstRead.locator('summary').textContent()).toMatch(/^Passages read \(\d\)$/);
      expect(await firstRead.getByTestId('searched-with').count()).toBe(0);

      await box.fill('and how much is it?');
      await box.press('Enter');
      const answer = log.locator('.chat-agent').nth(1);
      await answer.getByText('It costs 49 euros.').waitFor({ timeout: 20_000 });
      const read = answer.getByTestId('answer-passages');
      await read.waitFor();
      await read.locator('summary').click();
      expect(await read.getByTestId('searched-with').textContent()).toBe(
        'Searched as: “How much does the Lumo desk lamp cost?” (the message did not stand alone)',
      );
      const texts = await read.locator('.passage-text').allTextContents();
      expect(texts).toContain(PRICE);
      await read.scrollIntoViewIfNeeded();
      await shot(page, '05-test-chat-follow-up');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
