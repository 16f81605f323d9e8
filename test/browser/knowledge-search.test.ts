import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { upsertSource } from '../../lib/knowledge/store';
import { newBot, testDb } from '../support/helpers';
import { launchChromium, signIn } from '../support/browser';

/**
 * Finding a source in a large knowledge base (web/dashboard/src/pages/agent/knowledge-sources.tsx): the list newest
 * first, a search by title, id or text asked once typing pauses, "Oldest first" on demand, pages that follow both, a search
 * that finds nothing said with a way back, and the `?source=` link still opening one source. Screenshots go to
 * test-artifacts/dashboard/knowledge-search-NN-*.png.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');
const DESKTOP = { width: 1280, height: 900 };

let browser: Browser;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(ARTIFACTS, `knowledge-search-${name}.png`), fullPage: true });

/** The titles the list shows, top to bottom. */
const titles = async (page: Page) =>
  (await page.getByTestId('sources').locator('.cell-main').allTextContents()).map((t) => t.trim());

/** Waits until the list shows exactly these titles (a new search or order replaces it once its answer comes). */
async function expectTitles(page: Page, expected: string[]) {
  await page.waitForFunction(
    (want) => {
      const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): { textContent: string }[] } })
        .document;
      const shown = Array.from(doc.querySelectorAll('[data-testid="sources"] .cell-main'), (el) =>
        el.textContent.trim(),
      );
      return JSON.stringify(shown) === JSON.stringify(want);
    },
    expected,
    { timeout: 10_000 },
  );
  expect(await titles(page)).toEqual(expected);
}

const pad = (n: number) => String(n).padStart(2, '0');

describe('searching the knowledge tab', () => {
  it('finds sources by title or id, newest or oldest first, page by page; says when none matches', async () => {
    const bot = await newBot();
    // 23 notes, then three FAQ sources found by their ids, then one by its title; one at a time for a known order.
    const seeded = [
      ...Array.from({ length: 23 }, (_, i) => ({ id: `note-${pad(i + 1)}`, title: `Opening note ${pad(i + 1)}` })),
      { id: 'faq-shipping', title: 'Shipping times' },
      { id: 'faq-returns', title: 'Returns and refunds' },
      { id: 'faq-gift-cards', title: 'Gift cards' },
      { id: 'policy-7', title: 'FAQ: payment methods' },
    ];
    for (const { id, title } of seeded) {
      await upsertSource(testDb(), { botId: bot.bot_id, sourceId: id, title, text: `About ${title.toLowerCase()}.` });
    }
    const notes = seeded.slice(0, 23).map((s) => s.title);
    const newestFirst = seeded.map((s) => s.title).reverse();

    const { context, page, errors } = await signIn(browser, bot, `/agents/${bot.bot_id}/knowledge`, {
      viewport: DESKTOP,
    });
    try {
      // Newest first by default: the last written heads the list; 20 a page.
      await expectTitles(page, newestFirst.slice(0, 20));
      expect(await page.getByLabel('Newest first').isChecked()).toBe(true);
      await shot(page, '01-newest-first');

      // Typing asks the API once, when typing pauses, not for every key.
      const asked: string[] = [];
      page.on('request', (req) => {
        const url = new URL(req.url());
        if (url.pathname.endsWith('/knowledge') && url.searchParams.has('q')) asked.push(url.searchParams.get('q')!);
      });
      await page.getByLabel('Search titles and text').pressSequentially('FAQ', { delay: 60 });
      await expectTitles(page, ['FAQ: payment methods', 'Gift cards', 'Returns and refunds', 'Shipping times']);
      expect(asked).toEqual(['FAQ']);
      expect(await page.getByTestId('sources-count').textContent()).toContain('4 sources match “FAQ”.');
      expect(await page.getByRole('navigation', { name: 'Source pages' }).count()).toBe(0);
      await shot(page, '02-search-faq');

      // Oldest first: the same matches the other way round.
      await page.getByLabel('Oldest first').check();
      await expectTitles(page, ['Shipping times', 'Returns and refunds', 'Gift cards', 'FAQ: payment methods']);
      await shot(page, '03-search-oldest-first');

      // Pages follow the search and the order: 23 notes are 20, then 3, each once.
      const search = page.getByLabel('Search titles and text');
      await search.fill('opening NOTE');
      await expectTitles(page, notes.slice(0, 20));
      expect(await page.getByTestId('sources-count').textContent()).toBe(
        'Showing 1–20 of the sources matching “opening NOTE”. Clear the search',
      );
      const pager = page.getByRole('navigation', { name: 'Source pages' });
      await pager.getByRole('button', { name: 'Next →' }).click();
      await expectTitles(page, notes.slice(20));
      await pager.getByText('Page 2').waitFor();
      expect(await page.getByTestId('sources-count').textContent()).toBe(
        '23 sources match “opening NOTE”; showing 21–23. Clear the search',
      );
      await shot(page, '04-search-page-2');
      // Another order starts again from the first page, newest first now.
      await page.getByLabel('Newest first').check();
      await expectTitles(page, [...notes].reverse().slice(0, 20));
      await pager.getByRole('button', { name: 'Next →' }).click();
      await expectTitles(page, [...notes].reverse().slice(20));

      // Nothing matches: said, with a way back to the whole list.
      await search.fill('100%_off');
      await page.getByText('No source matches “100%_off”', { exact: true }).waitFor();
      await shot(page, '05-no-match');
      await page.getByRole('button', { name: 'Clear the search' }).click();
      await expectTitles(page, newestFirst.slice(0, 20));
      expect(await search.inputValue()).toBe('');
      expect(await page.getByTestId('sources-count').count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }

    // The `?source=` link still opens the tab on one source, before the list (which keeps its search and order).
    const linked = await signIn(browser, bot, `/agents/${bot.bot_id}/knowledge?source=note-01`, { viewport: DESKTOP });
    try {
      const focused = linked.page.getByTestId('focused-source');
      await focused.getByText('Opening note 01', { exact: true }).waitFor();
      expect(await focused.locator('.source-text').textContent()).toBe('About opening note 01.');
      await expectTitles(linked.page, newestFirst.slice(0, 20));
      await linked.page.getByLabel('Search titles and text').fill('gift');
      await expectTitles(linked.page, ['Gift cards']);
      expect(await linked.page.getByTestId('sources-count').textContent()).toContain('1 source matches “gift”.');
      expect(await focused.getByText('Opening note 01', { exact: true }).isVisible()).toBe(true);
      await shot(linked.page, '06-linked-source-and-search');
      expect(linked.errors).toEqual([]);
    } finally {
      await linked.context.close();
    }
  }, 90_000);
});
