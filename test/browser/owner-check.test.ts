import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { BootstrapResult } from '../../lib/accounts/service';
import { retrievePassages } from '../../lib/knowledge/retrieve';
import { launchChromium, openPage, signIn } from '../support/browser';
import { type OwnPlatform, http, newBot, startOwnPlatform, testDb, waitUntil } from '../support/helpers';
import { addMember } from '../support/members';
import { GIVES_UP, visit } from '../support/reports';

/**
 * The owner's check of an agent (issue 41, item 7) as an owner meets it in the dashboard, in Debian's headless Chromium
 * against the test stack: the agent's Check tab, empty at first; test questions added by hand (the source searched and
 * picked) and from "what is missing" (its markup left out); "Run the check" and each question's result — found first,
 * found further down, not found, its source gone — with the passages the agent read; the score's trend over runs after
 * the knowledge got better; an operator reads it all but changes nothing; a running check's progress (an agent of its
 * own platform with embeddings, whose slow question keeps the run going). Screenshots: test-artifacts/dashboard/check-*.png.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

let browser: Browser;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  for (const name of readdirSync(ARTIFACTS)) if (name.startsWith('check-')) rmSync(path.join(ARTIFACTS, name));
  browser = await launchChromium();
});

afterAll(async () => browser?.close());

const shot = (page: Page, name: string, fullPage = true) =>
  page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage });

async function write(bot: BootstrapResult, source_id: string, title: string, text: string, baseUrl?: string) {
  const res = await http('/v1/api/knowledge', { key: bot.keys.secret_key, body: { source_id, title, text }, baseUrl });
  expect(res.status).toBe(202);
}

/** Fills the open question form: the question, the source found by searching `find` and picked by its title. */
async function fillQuestion(page: Page, question: string | undefined, find: string, title: string) {
  const form = page.getByTestId('check-form');
  if (question !== undefined) await form.getByLabel('Question', { exact: true }).fill(question);
  // The search has answered for these words (it matches titles, ids and the sources' text), and offers the source.
  const answered = page.waitForResponse(
    (res) => res.url().includes('/knowledge?') && new URL(res.url()).searchParams.get('q') === find && res.ok(),
  );
  await form.getByLabel('Find a source by title or id').fill(find);
  await answered;
  await waitUntil('the source to be offered', async () =>
    form.getByRole('radio', { name: new RegExp(`^${title}`) }).isVisible(),
  );
  await form.getByRole('radio', { name: new RegExp(`^${title}`) }).check();
  return form;
}

const questionRow = (page: Page, text: string) =>
  page.getByTestId('check-question').filter({ has: page.locator('.check-question-text', { hasText: text }) });

async function expectNoSidewaysScroll(page: Page) {
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  expect(overflow).toBeLessThanOrEqual(0);
}

describe("an agent's Check tab", () => {
  let bot: BootstrapResult;

  beforeAll(async () => {
    bot = await newBot({ botName: 'Shop helper', workspaceName: 'Check shop' });
    await write(bot, 'shipping', 'Shipping times', 'Parcels ship within two days of your order.');
    await write(bot, 'returns-policy', 'Returns policy', 'Returns are free within 30 days: send the item back.');
    await write(
      bot,
      'returns-faq',
      'Returns',
      'Returns: returns are free. Free returns, easy returns, returns of gifts.',
    );
    await write(bot, 'gift-cards', 'Gift cards', 'We sell gift cards of 25 and 50 euros.');
    // A question visitors asked that the agent could not answer: "what is missing" lists it.
    await visit(bot, `${GIVES_UP} Do you sell gift cards?`);
  }, 60_000);

  it('adds questions by hand and from what is missing, runs the check, and shows each result and the trend', async () => {
    const { context, page, errors } = await signIn(browser, bot, `/agents/${bot.bot_id}/check`, { viewport: DESKTOP });
    try {
      await page.getByText('No test questions yet').waitFor();
      await page.getByTestId('check-never-run').waitFor();
      expect(await page.getByRole('button', { name: 'Run the check' }).isDisabled()).toBe(true);
      expect(await page.getByRole('link', { name: 'Check', exact: true }).getAttribute('aria-current')).toBe('page');
      await shot(page, 'check-01-empty');

      // By hand: the question, the source searched by title and picked, a note.
      await page.getByRole('button', { name: 'Add a question' }).click();
      const form = await fillQuestion(page, 'How fast do parcels ship?', 'Shipping', 'Shipping times');
      await form.getByLabel('Note').fill('Asked every day');
      await shot(page, 'check-02-add-form');
      await form.getByRole('button', { name: 'Add question' }).click();
      const fast = questionRow(page, 'How fast do parcels ship?');
      await fast.waitFor();
      expect(await fast.getByTestId('check-outcome').textContent()).toBe('Not checked yet');
      expect(await fast.getByTestId('check-expected').textContent()).toBe('Shipping times');
      expect(await fast.locator('.check-question-note').textContent()).toBe('Asked every day');

      // From what is missing: the visitor's question, without the markup it was sent with.
      await page.getByRole('button', { name: 'Add a question' }).click();
      await page.getByRole('button', { name: 'Pick from what is missing' }).click();
      const gap = page.getByTestId('check-gap').filter({ hasText: 'gift cards' });
      await gap.getByRole('button', { name: 'Use this question' }).click();
      const box = page.getByTestId('check-form').getByLabel('Question', { exact: true });
      expect(await box.inputValue()).toBe('Do you sell gift cards?');
      await (
        await fillQuestion(page, undefined, 'gift', 'Gift cards')
      )
        .getByRole('button', { name: 'Add question' })
        .click();
      await questionRow(page, 'Do you sell gift cards?').waitFor();

      for (const [question, find, title] of [
        ['Are returns free?', 'policy', 'Returns policy'],
        ['What is your phone number?', 'shipping', 'Shipping times'],
      ]) {
        await page.getByRole('button', { name: 'Add a question' }).click();
        await (await fillQuestion(page, question, find, title)).getByRole('button', { name: 'Add question' }).click();
        await questionRow(page, question).waitFor();
      }

      // Run it: each question's result, the score.
      await page.getByRole('button', { name: 'Run the check' }).click();
      await page.getByTestId('check-trend-summary').getByText('3 of 4 found (75%)').waitFor({ timeout: 30_000 });
      const outcome = async (q: string) => (await questionRow(page, q).getByTestId('check-outcome').textContent())!;
      expect(await outcome('How fast do parcels ship?')).toBe('Found first');
      expect(await outcome('Do you sell gift cards?')).toBe('Found first');
      const rank = (await retrievePassages(testDb(), bot.bot_id, 'Are returns free?')).findIndex(
        (p) => p.sourceId === 'returns-policy',
      );
      expect(rank).toBeGreaterThan(0);
      expect(await outcome('Are returns free?')).toBe(`Found at rank ${rank + 1}`);
      expect(await outcome('What is your phone number?')).toBe('Not found');

      // What the agent read for a question: its passages, the expected source marked.
      const returns = questionRow(page, 'Are returns free?');
      await returns.getByText(/What the agent read/).click();
      const passages = returns.getByTestId('check-passage');
      expect(await passages.count()).toBeGreaterThan(rank);
      expect(await passages.nth(rank).locator('.cell-main').textContent()).toBe('Returns policy');
      expect(await passages.nth(rank).getByText('Expected source').isVisible()).toBe(true);
      expect(await passages.nth(0).getByText('Expected source').count()).toBe(0);
      await shot(page, 'check-03-results');

      // The knowledge gets better: the phone number is written down, and the question pointed at it.
      await write(bot, 'contact', 'Contact', 'Our phone number is +372 555 0101.');
      const phone = questionRow(page, 'What is your phone number?');
      await phone.getByRole('button', { name: 'Edit' }).click();
      const edit = await fillQuestion(page, undefined, 'Contact', 'Contact');
      await edit.getByRole('button', { name: 'Save question' }).click();
      await phone.getByTestId('check-expected').getByText('Contact').waitFor();
      // Not checked with this source yet: the last check asked the question of another source.
      await phone.getByText(/Changed since that check/).waitFor();

      await page.getByRole('button', { name: 'Run the check' }).click();
      const summary = page.getByTestId('check-trend-summary');
      await summary.getByText('4 of 4 found (100%)').waitFor({ timeout: 30_000 });
      expect(await summary.textContent()).toContain('up 25 points since the check before');
      expect(await outcome('What is your phone number?')).toBe('Found first');
      expect(await page.getByTestId('check-trend').locator('circle').count()).toBe(2);
      expect(await page.getByTestId('check-trend').getAttribute('aria-label')).toBe(
        'Score of the last 2 checks, oldest to newest: 75%, 100%',
      );
      expect(await page.getByTestId('check-run').count()).toBe(2);

      // A source deleted later: its question says so, and the next check reports it.
      expect((await http('/v1/api/knowledge/gift-cards', { method: 'DELETE', key: bot.keys.secret_key })).status).toBe(
        200,
      );
      await page.reload();
      const gifts = questionRow(page, 'Do you sell gift cards?');
      await gifts.getByText('No longer exists').waitFor();
      await page.getByRole('button', { name: 'Run the check' }).click();
      await summary.getByText('3 of 4 found (75%)').waitFor({ timeout: 30_000 });
      expect(await outcome('Do you sell gift cards?')).toBe('Source no longer exists');
      expect(await page.getByTestId('check-run').first().textContent()).toContain('1 source gone');
      await shot(page, 'check-04-trend');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('starts a question from what is missing, and fits a phone', async () => {
    // "Add to the check" on a question it could not answer opens the Check tab's form with the question.
    const { context, page, errors } = await signIn(browser, bot, `/agents/${bot.bot_id}/insights`, {
      viewport: PHONE,
    });
    try {
      const gap = page.getByTestId('gap').filter({ hasText: 'gift cards' });
      await gap.getByRole('link', { name: /Add to the check/ }).click();
      await page.waitForURL(/\/check\?question=/);
      const box = page.getByTestId('check-form').getByLabel('Question', { exact: true });
      expect(await box.inputValue()).toBe('Do you sell gift cards?');
      // The form has the focus: the question is there, the source is what is left to choose.
      expect(await page.evaluate<string>('document.activeElement.tagName')).toBe('TEXTAREA');
      await questionRow(page, 'How fast do parcels ship?').getByText('Found first').waitFor();
      await expectNoSidewaysScroll(page);
      await shot(page, 'check-05-phone');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('lets an operator read the results but not change them', async () => {
    const operator = await addMember(bot, 'operator');
    const { context, page, errors } = await signIn(browser, operator, `/agents/${bot.bot_id}/check`, {
      viewport: DESKTOP,
    });
    try {
      await questionRow(page, 'How fast do parcels ship?').getByText('Found first').waitFor();
      await page.getByTestId('check-trend').waitFor();
      expect(await page.getByRole('button', { name: 'Run the check' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Add a question' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Edit' }).count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});

describe('a check under way', () => {
  let own: OwnPlatform;

  beforeAll(async () => {
    own = await startOwnPlatform('owner-check-browser', { EMBEDDING_MODEL: 'fake-embed' });
  }, 120_000);

  afterAll(async () => own?.stop());

  it('shows its progress, then its result', async () => {
    const bot = await newBot();
    await write(bot, 'mascot', 'Mascot', 'The company mascot is a purple axolotl named Quentin.', own.baseUrl);
    const owner = await http('/v1/auth/login', {
      body: { email: bot.email, password: bot.password },
      baseUrl: own.baseUrl,
    });
    const headers = { Cookie: (owner.headers.get('set-cookie') ?? '').split(';')[0] };
    // Ten quick questions and an eleventh whose embedding the fake model answers slowly: the second batch takes a while.
    for (let i = 1; i <= 11; i++) {
      const question = i === 11 ? 'Who is the mascot? [[fake:slow-4000]]' : `Is question ${i} about the mascot?`;
      const res = await http(`/v1/dashboard/bots/${bot.bot_id}/checks/questions`, {
        headers,
        body: { question, expected_source_id: 'mascot' },
        baseUrl: own.baseUrl,
      });
      expect(res.status).toBe(201);
    }
    const { context, page, errors } = await openPage(browser, `${own.baseUrl}/agents/${bot.bot_id}/check`, {
      viewport: DESKTOP,
    });
    try {
      await page.getByLabel('E-mail').fill(bot.email);
      await page.getByLabel('Password', { exact: true }).fill(bot.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByTestId('check-questions').waitFor();
      await page.getByRole('button', { name: 'Run the check' }).click();
      const progress = page.getByTestId('check-progress');
      await progress.getByText('Checked 10 of 11 questions').waitFor({ timeout: 20_000 });
      expect(await progress.locator('progress').getAttribute('value')).toBe('10');
      expect(await page.getByRole('button', { name: 'Checking…' }).isDisabled()).toBe(true);
      await shot(page, 'check-06-progress');
      await page
        .getByTestId('check-trend-summary')
        .getByText(/of 11 found/)
        .waitFor({ timeout: 30_000 });
      expect(await progress.count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Run the check' }).isEnabled()).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
