import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { type FakeSite, startFakeSite } from '../support/fake-site';
import { type FakeSmtp, parseMessage, startFakeSmtp } from '../support/fake-smtp';
import { type OwnPlatform, http, startOwnPlatform, waitUntil } from '../support/helpers';
import { browserRequest } from '../support/widget';
import { launchChromium } from '../support/browser';
import { stackInfo } from '../support/stack-info';

/**
 * The dashboard as a new owner meets it, in Debian's headless Chromium against a platform of the file's own that
 * mails through a fake SMTP server (the test stack shares Postgres and Temporal): sign up, confirm the e-mail address
 * by the link mailed (the banner until then, sending it again, an old link), create an agent (keys shown once), teach
 * it a text and a site scan (live progress from a slow fake site on loopback), add a manual trigger, run it and follow
 * the run to the Temporal UI, reissue the secret key (the old one stops), allow a widget origin; then the same pages at
 * a phone's width. Screenshots go to test-artifacts/dashboard/.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');
const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

let browser: Browser;
let site: FakeSite;
let smtp: FakeSmtp;
let own: OwnPlatform;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  // This file's screenshots of an earlier run go (other files leave theirs here too).
  for (const name of readdirSync(ARTIFACTS)) if (name.startsWith('owner-')) rmSync(path.join(ARTIFACTS, name));
  // Crawl-delay 1: one page a second, so the scan runs long enough for its progress to be watched.
  site = await startFakeSite({ robotsTxt: 'User-agent: *\nCrawl-delay: 1\n' });
  smtp = await startFakeSmtp();
  own = await startOwnPlatform('owner-browser', {
    SMTP_URL: smtp.url,
    SMTP_FROM: 'Agent Platform <no-reply@platform.test>',
  });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await own?.stop();
  await smtp?.close();
  await site?.close();
});

/** The texts of the e-mails received for `email`, oldest first, once there are `count`. */
const mailsTo = (email: string, count: number) =>
  waitUntil(`${count} e-mail(s) to ${email}`, async () => {
    const mails = smtp.messages.filter((m) => m.to.includes(email));
    return mails.length >= count ? mails.map((m) => parseMessage(m.data).text) : undefined;
  });

let shots = 0;
const shot = (page: Page, name: string, fullPage = true) =>
  page.screenshot({
    path: path.join(ARTIFACTS, `owner-${String(++shots).padStart(2, '0')}-${name}.png`),
    fullPage,
  });

const messagesWith = (key: string) =>
  http(`/v1/api/messages?session_id=${randomUUID()}`, { headers: { 'X-Bot-Key': key } });

/** Every page the app draws fits its viewport's width (nothing scrolls sideways). */
async function expectNoSidewaysScroll(page: Page) {
  // Expressions as strings: they run in the page, and this file is typed for Node (no DOM library).
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  expect(overflow).toBeLessThanOrEqual(0);
}

/**
 * A table stacked on a phone names each value by a label beside it: every label must fit in its cell's height, or
 * it runs into the next line (as "Waiting for a human" did). Returns the labels that overflow.
 */
async function labelsRunningOver(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`[...document.querySelectorAll('.table-stack td[data-label]')]
    .filter((td) => td.getBoundingClientRect().height > 0 && td.scrollHeight > td.clientHeight + 1)
    .map((td) => td.dataset.label)`);
}

describe('dashboard, an owner', () => {
  let context: BrowserContext;
  const email = `owner+${randomUUID().slice(0, 8)}@example.com`;
  afterAll(async () => {
    await context?.close();
  });

  it('signs up, confirms the address, creates an agent, teaches it, scans a site, runs a trigger into Temporal, reissues a key, allows an origin', async () => {
    const api = own.baseUrl;
    const password = 'correct horse battery';
    context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (msg) => {
      // 401s while signed out are expected answers, not page errors; so are the old link's refusal and the refused
      // resend past the hour's limit.
      const expected =
        /401/.test(msg.text()) ||
        (/\b(400|429)\b/.test(msg.text()) && msg.location().url.includes('/v1/auth/verify-email'));
      if (msg.type() === 'error' && !expected) consoleErrors.push(msg.text());
    });

    // A page that needs a session sends the visitor to sign in, remembering where they were going.
    await page.goto(`${api}/agents`);
    await page.waitForURL(/\/signin\?next=%2Fagents$/);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shot(page, 'signin');

    await page.getByRole('link', { name: 'Create a workspace' }).click();
    await page.getByRole('heading', { name: 'Create your workspace' }).waitFor();
    await page.getByLabel('Workspace name').fill('Acme Widgets');
    await page.getByLabel('Your name').fill('Ana Owner');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByText('Use at least 10 characters.').waitFor();
    await page.getByLabel('Password').fill(password);
    await shot(page, 'signup');
    await page.getByRole('button', { name: 'Create workspace' }).click();

    // Signed in: the shell, the owner's navigation, the (empty) agents page.
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/agents');
    expect(await page.title()).toBe('Agents · Agent Platform');
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const item of ['Agents', 'Inbox', 'Notifications', 'Builder', 'Team', 'Billing']) {
      await nav.getByRole('link', { name: item, exact: true }).waitFor();
    }
    expect(await nav.getByRole('link', { name: 'Agents' }).getAttribute('aria-current')).toBe('page');
    await page.getByText('Acme Widgets').first().waitFor();
    await page.getByText('No agents yet').waitFor();
    // Until the owner confirms the address, a banner says what waits for it and where the link went.
    const banner = page.getByTestId('email-banner');
    await banner.getByText('Confirm your e-mail address to receive your 1,000 included credits').waitFor();
    expect(await banner.textContent()).toContain(`we sent a link to ${email}`);
    await shot(page, 'agents-empty');

    // The link, e-mailed to the configured address with its token in the fragment; sending it again voids it.
    const confirmLinkIn = (text: string) =>
      new RegExp(`${api.replace(/\./g, '\\.')}/verify-email#token=[A-Za-z0-9]{40}`).exec(text)?.[0];
    const firstLink = confirmLinkIn((await mailsTo(email, 1))[0])!;
    expect(firstLink).toBeDefined();
    const sendAgain = banner.getByRole('button', { name: 'Send it again' });
    await sendAgain.click();
    await banner.getByText(/^Sent\. Only the newest link works/).waitFor();
    await shot(page, 'email-sent-again', false);
    await mailsTo(email, 2);

    // The older link, followed: expired or used, and a new one is a click away for the signed-in owner.
    await page.goto(firstLink);
    await page.getByRole('heading', { name: 'This link has expired or was already used' }).waitFor();
    expect(page.url()).toBe(`${api}/verify-email`);
    await page.getByRole('button', { name: 'Send a new link' }).click();
    await page.getByText(/^Sent\. Only the newest link works/).waitFor();
    await shot(page, 'email-link-expired');
    await mailsTo(email, 3);

    // Back on the dashboard: one more is allowed, then the hour's limit is said.
    await page.goto(`${api}/agents`);
    await sendAgain.click();
    await banner.getByText(/^Sent\./).waitFor();
    await sendAgain.click();
    await banner.getByText(/^Several new links were sent in the last hour; try again in \d+ min\.$/).waitFor();
    await shot(page, 'email-limited', false);
    // At a phone's width the banner wraps, nothing scrolls sideways.
    await page.setViewportSize(PHONE);
    await expectNoSidewaysScroll(page);
    await shot(page, 'email-banner-phone', false);
    await page.setViewportSize(DESKTOP);

    // The newest link confirms the address: the included credits are added, and the banner is gone.
    const newest = confirmLinkIn((await mailsTo(email, 4))[3])!;
    await page.goto(newest);
    await page.getByRole('heading', { name: 'Your e-mail address is confirmed' }).waitFor();
    expect(await page.getByTestId('email-confirmed').textContent()).toContain(
      '1,000 included credits were added to your workspace',
    );
    expect(page.url()).toBe(`${api}/verify-email`);
    await shot(page, 'email-confirmed');
    await page.getByRole('link', { name: 'Go to your dashboard' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    await page.getByText('No agents yet').waitFor();
    expect(await banner.count()).toBe(0);

    // The user menu opens with the keyboard and closes with Escape.
    const userButton = page.getByRole('button', { name: /account menu/ });
    await userButton.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Account' }).first().waitFor();
    expect(await userButton.getAttribute('aria-expanded')).toBe('true');
    await shot(page, 'user-menu', false);
    await page.keyboard.press('Escape');
    expect(await userButton.getAttribute('aria-expanded')).toBe('false');

    // A new agent: the widget's snippet first; the keys, shown only this once, folded away for developers.
    await page.getByRole('button', { name: 'New agent' }).first().click();
    await page.getByLabel('Name').fill('Acme helper');
    await page.getByLabel('Instructions').fill('Answer questions about Acme Widgets, briefly and kindly.');
    await page.getByRole('button', { name: 'Create agent' }).click();
    const newSnippet = (await page.getByTestId('new-snippet').textContent()) ?? '';
    expect(newSnippet).toMatch(/^<script src="http:\/\/[^"]+\/widget\.js" data-key="pk_[^"]+" async><\/script>$/);
    expect(await page.getByTestId('new-secret-key').isVisible()).toBe(false);
    await shot(page, 'agent-created-snippet');
    await page.getByText('Keys for developers — shown only now').click();
    const secretKey = (await page.getByTestId('new-secret-key').textContent()) ?? '';
    expect(secretKey).toMatch(/^sk_/);
    const newPublicKey = (await page.getByTestId('new-public-key').textContent()) ?? '';
    expect(newPublicKey).toMatch(/^pk_/);
    expect(newSnippet).toContain(`data-key="${newPublicKey}"`);
    await page.getByText('only fingerprints are kept').waitFor();
    await page.getByRole('table', { name: 'Agents' }).getByRole('link', { name: 'Acme helper' }).waitFor();
    await shot(page, 'agent-created');
    expect((await messagesWith(secretKey)).status).toBe(200);

    await page.getByRole('link', { name: 'Open Acme helper' }).click();
    await page.getByRole('heading', { name: 'Acme helper', level: 1 }).waitFor();
    const botId = new URL(page.url()).pathname.split('/')[2];
    expect(botId).toBeTruthy();
    // Focus moves to the new page's heading (screen readers announce it).
    expect(await page.evaluate<string | undefined>('document.activeElement?.tagName')).toBe('H1');
    await page.getByLabel('Instructions').waitFor();
    await shot(page, 'agent-settings');

    // Knowledge: a text, then a scan of a (slow) site with live progress.
    await page.getByRole('link', { name: 'Knowledge' }).click();
    await page.waitForURL(`${api}/agents/${botId}/knowledge`);
    await page.getByText('No knowledge yet').waitFor();
    await page.locator('#add-text').getByLabel('Title').fill('Opening hours'); // not the sources' search
    await page.getByLabel('Text', { exact: true }).fill('The Acme shop is open from 9 to 17 on weekdays.');
    await page.getByRole('button', { name: 'Add text' }).click();
    await page.getByTestId('text-added').getByText('Added “Opening hours”.').waitFor();
    const sources = page.getByTestId('sources');
    await sources.getByText('Opening hours').waitFor();
    // A written text is edited in place; the agent answers from the new text at once.
    await sources.getByRole('button', { name: 'Edit Opening hours' }).click();
    const edit = sources.getByTestId('source-edit');
    expect(await edit.getByLabel('Text').inputValue()).toBe('The Acme shop is open from 9 to 17 on weekdays.');
    await edit.getByLabel('Text').fill('The Acme shop is open from 9 to 18 on weekdays, and 10 to 14 on Saturdays.');
    await edit.getByRole('button', { name: 'Save text' }).click();
    await edit.waitFor({ state: 'detached' });
    await sources.getByRole('button', { name: 'Show text' }).click();
    await sources.getByText('10 to 14 on Saturdays').waitFor();
    await sources.getByRole('button', { name: 'Hide text' }).click();

    await page.getByLabel('Start address').fill(site.url);
    await page.getByLabel('Pages at most').fill('5');
    await page.getByRole('button', { name: 'Start scan' }).click();
    const progress = page.getByTestId('scan-progress');
    await progress.waitFor({ timeout: 15_000 });
    await progress.locator('progress').waitFor();
    // The counters move while it runs (polled every 1.5 s).
    const firstFetched = Number(await page.getByTestId('scan-fetched').textContent());
    await page.waitForFunction(
      (before) => {
        // Runs in the page (this file is typed for Node, without the DOM library).
        const page = globalThis as unknown as {
          document: { querySelector(selector: string): { textContent: string | null } | null };
        };
        const el = page.document.querySelector('[data-testid="scan-fetched"]');
        return !el || Number(el.textContent) > before;
      },
      firstFetched,
      { timeout: 20_000 },
    );
    // The bar shows the part of the pages found so far that was fetched.
    const bar = await progress.locator('progress').evaluate((el) => ({
      value: (el as unknown as { value: number }).value,
      max: (el as unknown as { max: number }).max,
    }));
    expect(bar.value).toBeGreaterThan(0);
    expect(bar.value).toBeLessThanOrEqual(bar.max);
    await shot(page, 'scan-progress');
    await progress.waitFor({ state: 'detached', timeout: 45_000 });
    const recent = page.getByTestId('recent-scans');
    await recent.getByText('Done').first().waitFor();
    expect(await recent.textContent()).toContain(site.url);
    // The pages read are among the sources (the list is read again when the scan ends).
    await sources.getByText('Product 1', { exact: false }).first().waitFor({ timeout: 10_000 });
    const sourceText = (await sources.textContent()) ?? '';
    expect(sourceText).toContain(new URL(site.url).host);
    expect(sourceText).toContain('Opening hours');
    await shot(page, 'knowledge-done');

    // A manual trigger, run now; the run log links the run to its workflow in the Temporal UI.
    await page.getByRole('link', { name: 'Triggers & runs' }).click();
    await page.getByRole('heading', { name: 'Triggers', level: 2 }).waitFor();
    await page.getByText('No runs yet').waitFor();
    await page.getByRole('button', { name: 'New trigger' }).click();
    await expect(page.getByLabel('Manual').isChecked()).resolves.toBe(true);
    await page.getByLabel('Name').fill('Morning digest');
    await page.getByLabel('Task').fill('Summarise what visitors asked yesterday.');
    await page.getByRole('button', { name: 'Create trigger' }).click();
    const runNow = page.getByRole('button', { name: 'Run Morning digest now' });
    await runNow.waitFor();
    await runNow.click();
    await page.getByText('Run started: see the run log.').waitFor();
    const runs = page.getByTestId('runs');
    const row = runs.locator('tbody tr').first();
    await row.waitFor();
    await row.getByText('Done', { exact: true }).waitFor({ timeout: 30_000 });
    const runId = ((await row.getAttribute('data-testid')) ?? '').replace(/^run-/, '');
    expect(runId).toBeTruthy();
    // The run in full under its row: what woke it, its whole answer, the model and the ids.
    await row.getByRole('button', { name: 'Details' }).click();
    const detail = runs.getByTestId('run-detail');
    await detail.waitFor();
    expect(await row.getByRole('button', { name: 'Hide details' }).getAttribute('aria-expanded')).toBe('true');
    const detailText = (await detail.textContent()) ?? '';
    expect(detailText).toContain('Summarise what visitors asked yesterday.');
    expect(detailText).toContain(runId);
    expect(detailText).toMatch(/Tokens\s*\d+ in · \d+ out/);
    await shot(page, 'triggers-run');

    const link = row.getByRole('link', { name: /Open in Temporal/ });
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.getAttribute('rel')).toContain('noopener');
    const href = (await link.getAttribute('href')) ?? '';
    expect(href.startsWith(stackInfo().env.TEMPORAL_UI_URL)).toBe(true);
    const workflowId = decodeURIComponent(href.split('/workflows/')[1] ?? '');
    expect(workflowId).toContain(runId);
    const [temporalPage] = await Promise.all([context.waitForEvent('page'), link.click()]);
    await temporalPage.waitForLoadState('domcontentloaded');
    expect(temporalPage.url()).toContain(encodeURIComponent(workflowId));
    await temporalPage.getByText(workflowId).first().waitFor({ timeout: 30_000 });
    await shot(temporalPage, 'temporal-ui', false);
    await temporalPage.close();

    // Reissuing the secret key: confirm first; the new value is shown once; the old key stops at once.
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('button', { name: 'Reissue the secret key' }).click();
    await page.getByText('replaces the current one at once').waitFor();
    await shot(page, 'keys-confirm');
    await page.getByRole('button', { name: 'Reissue now' }).click();
    const newKey = (await page.getByTestId('issued-secret').textContent()) ?? '';
    expect(newKey).toMatch(/^sk_/);
    expect(newKey).not.toBe(secretKey);
    await shot(page, 'keys-reissued');
    expect((await messagesWith(secretKey)).status).toBe(401);
    expect((await messagesWith(newKey)).status).toBe(200);

    // The widget: an allowed origin (kept across a reload) and the embed snippet.
    await page.getByRole('link', { name: 'Widget' }).click();
    const snippet = (await page.getByTestId('widget-snippet').textContent()) ?? '';
    expect(snippet).toMatch(new RegExp(`^<script src="${api}/widget\\.js" data-key="pk_[^"]+" async></script>$`));
    await page.getByLabel('Add a site').fill('ftp://shop.example.com');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('The widget runs on web pages').waitFor();
    // A page's address, pasted: kept as its site, and said so.
    await page.getByLabel('Add a site').fill('https://Shop.Example.com/checkout?step=2');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const origins = page.getByRole('list', { name: 'Allowed sites' });
    await origins.getByText('https://shop.example.com').waitFor();
    expect(await page.getByTestId('origin-trimmed').textContent()).toContain('Added as https://shop.example.com');
    expect(await page.getByLabel('Add a site').inputValue()).toBe('');
    await page.getByLabel('Add a site').fill('shop.example.com');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('https://shop.example.com is already allowed.').waitFor();
    await page.reload();
    await origins.getByText('https://shop.example.com').waitFor();
    await shot(page, 'widget');

    // The widget's look: a colour typed wrong is said at the field; then colour, corner, greeting and team saved.
    await page.getByLabel('Colour', { exact: true }).fill('teal');
    await page.getByRole('button', { name: 'Save look' }).click();
    await page.getByText('A colour as #rrggbb').waitFor();
    await page.getByLabel('Colour', { exact: true }).fill('#0f766e');
    await page.getByLabel('Bottom left').check();
    await page.getByLabel('Greeting').fill('Welcome to Acme!');
    await page.getByLabel('Team name').fill('Acme support');
    await page.getByRole('button', { name: 'Save look' }).click();
    await page.getByText('The widget’s look is saved').waitFor();
    await shot(page, 'widget-look');
    const saved = await http(`/v1/widget/config?key=${/data-key="(pk_[^"]+)"/.exec(snippet)![1]}`);
    expect(saved.body.look).toMatchObject({
      color: '#0f766e',
      position: 'left',
      greeting: 'Welcome to Acme!',
      team_name: 'Acme support',
    });

    // Visitors on the shop and on a site the owner forgot: the dashboard names both, and allows the forgotten one.
    const publicKey = /data-key="(pk_[^"]+)"/.exec(snippet)![1];
    expect(
      (await browserRequest(`/v1/widget/config?key=${publicKey}`, { origin: 'https://shop.example.com' })).status,
    ).toBe(200);
    const forgotten = 'https://www.shop.example.com';
    expect((await browserRequest(`/v1/widget/config?key=${publicKey}`, { origin: forgotten })).status).toBe(403);
    const refusedSites = page.getByTestId('sites-refused');
    await waitUntil('the refused site on the page', async () => {
      await page.locator('#widget-sites').getByRole('button', { name: 'Refresh' }).click();
      return (await refusedSites.getByText(forgotten).count()) > 0;
    });
    await page.getByTestId('sites-running').getByText('https://shop.example.com').waitFor();
    await shot(page, 'widget-sites');
    await page.getByRole('button', { name: `Allow ${forgotten}` }).click();
    await origins.getByText(forgotten).waitFor();
    await page.getByTestId('sites-running').getByText(forgotten).waitFor();
    expect(await page.getByTestId('sites-running').textContent()).toContain('allowed — not loaded since');
    expect(await refusedSites.count()).toBe(0);

    expect(consoleErrors).toEqual([]);
  });

  it('says at once that a reset or invitation link lost its end, and offers a new one; a whole link goes on', async () => {
    const fresh = await browser.newContext({ viewport: DESKTOP });
    try {
      const page = await fresh.newPage();
      await page.goto(`${own.baseUrl}/reset-password#token=${'a'.repeat(23)}`);
      await page.getByRole('heading', { name: 'This link is incomplete' }).waitFor();
      expect(await page.getByRole('alert').textContent()).toContain('cut long links');
      expect(await page.getByLabel('New password', { exact: true }).count()).toBe(0);
      expect(page.url()).not.toContain('token');
      await shot(page, 'reset-link-cut');
      await page.getByRole('link', { name: 'Ask for a new link' }).click();
      await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
      // A link of the whole length (here not a real one), opened from the e-mail (a fresh load), goes on to the new
      // password; the API judges the token.
      await page.goto('about:blank');
      await page.goto(`${own.baseUrl}/reset-password#token=${'b'.repeat(40)}`);
      await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();

      // An invitation link cut the same way is said at once too; a whole one (not a real one here) is judged by the API.
      await page.goto('about:blank');
      await page.goto(`${own.baseUrl}/invite#token=${'c'.repeat(31)}`);
      await page.getByRole('heading', { name: 'This link is incomplete' }).waitFor();
      expect(await page.getByTestId('invite-cut').textContent()).toContain('cut long links');
      expect(await page.getByLabel('Password', { exact: true }).count()).toBe(0);
      await shot(page, 'invite-link-cut');
      await page.goto('about:blank');
      await page.goto(`${own.baseUrl}/invite#token=${'d'.repeat(40)}`);
      await page.getByTestId('invite-gone').waitFor();
    } finally {
      await fresh.close();
    }
  });

  it('at a phone’s width: the agent page fits, the navigation folds into a menu', async () => {
    const phone = await browser.newContext({ viewport: PHONE, storageState: await context.storageState() });
    try {
      const page = await phone.newPage();
      await page.goto(`${own.baseUrl}/agents`);
      await page.getByRole('link', { name: 'Acme helper' }).click();
      await page.getByRole('heading', { name: 'Acme helper', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'Knowledge' }).click();
      await page.getByTestId('sources').waitFor();
      await expectNoSidewaysScroll(page);
      // The side navigation is folded away behind the menu button.
      const nav = page.getByRole('navigation', { name: 'Main' });
      expect(await nav.isVisible()).toBe(false);
      await shot(page, 'phone-agent');

      const menu = page.getByRole('button', { name: /^Menu/ });
      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      await nav.getByRole('link', { name: 'Notifications' }).waitFor();
      await shot(page, 'phone-menu', false);
      await nav.getByRole('link', { name: 'Agents' }).click();
      await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
      expect(await nav.isVisible()).toBe(false);
      await expectNoSidewaysScroll(page);
      expect(await labelsRunningOver(page)).toEqual([]);
      await shot(page, 'phone-agents');

      await page.getByRole('link', { name: 'Acme helper' }).click();
      await page.getByRole('link', { name: 'Triggers & runs' }).click();
      await page.getByTestId('runs').waitFor();
      await expectNoSidewaysScroll(page);
      expect(await labelsRunningOver(page)).toEqual([]);
      await shot(page, 'phone-runs');
    } finally {
      await phone.close();
    }
  });

  it('chats with the agent, adds an action, talks to the builder, survives a failed request, changes the password, signs out and back in', async () => {
    const api = own.baseUrl;
    const page = await context.newPage();
    await page.goto(`${api}/agents`);
    await page.getByRole('link', { name: 'Acme helper' }).click();

    // Test chat, streamed as a visitor sees it: a model paced over two seconds shows its first pieces long before
    // its end; the whole answer stays.
    await page.getByRole('link', { name: 'Test chat' }).click();
    const streamed = page.waitForRequest((r) => r.url().endsWith('/test-chat/stream') && r.method() === 'POST');
    await page.getByLabel('Message').fill('[[fake:pace-200-2000-8]] When is the shop open?');
    await page.keyboard.press('Enter');
    await streamed;
    const log = page.getByRole('list', { name: 'Conversation' });
    const answer = log.locator('.chat-agent').last();
    await answer.getByText(/^Fake answer/).waitFor({ timeout: 20_000 });
    // The line starts with the speaker's name for screen readers ("Acme helper: "); the answer is what follows.
    const early = ((await answer.textContent()) ?? '').replace(/^Acme helper: /, '');
    await log.getByText('Fake answer: When is the shop open?').waitFor({ timeout: 20_000 });
    expect(early.length).toBeLessThan('Fake answer: When is the shop open?'.length);
    expect(await page.getByLabel('Message').inputValue()).toBe('');
    await shot(page, 'test-chat');

    // An action that needs approval.
    await page.getByRole('link', { name: 'Actions & approvals' }).click();
    await page.getByText('Nothing waits for approval').waitFor();
    await page.getByRole('button', { name: 'New action' }).click();
    await page.getByLabel('Name').fill('lookup_order');
    await page.getByLabel('Address').fill('https://api.example.com/orders/lookup');
    await page.getByLabel('What it does').fill('Looks an order up by its number.');
    await page.getByLabel('Arguments (JSON Schema)').fill('{"type": "object", "properties": {');
    await page.getByRole('button', { name: 'Add action' }).click();
    await page.getByText('Write a JSON object').waitFor();
    await page
      .getByLabel('Arguments (JSON Schema)')
      .fill('{"type": "object", "properties": {"number": {"type": "string"}}}');
    await page.getByLabel('Each call waits for approval here').check();
    await page.getByRole('button', { name: 'Add action' }).click();
    const actions = page.getByRole('list', { name: 'Actions' });
    await actions.getByText('lookup_order').waitFor();
    await actions.getByText('Needs approval').waitFor();
    await shot(page, 'actions');

    // A request that fails shows the failure and a retry; the retry loads the page.
    await page.route('**/v1/dashboard/bots', (route) => route.abort('connectionrefused'));
    await page.getByRole('link', { name: 'All agents' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('The service cannot be reached').waitFor();
    await shot(page, 'agents-error');
    await page.unroute('**/v1/dashboard/bots');
    await alert.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('table', { name: 'Agents' }).getByRole('link', { name: 'Acme helper' }).waitFor();

    // The builder answers (the fake model's words) while the page shows it is working.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Builder' }).click();
    await page.getByRole('heading', { name: 'Builder', level: 1 }).waitFor();
    await page.getByLabel('Message to the builder').fill('List my agents.');
    await page.getByRole('button', { name: 'Send' }).click();
    const builderLog = page.getByRole('list', { name: 'Conversation with the builder' });
    await builderLog.locator('.chat-agent:not(.chat-typing)').first().waitFor({ timeout: 60_000 });
    await shot(page, 'builder');
    // A reply with a secret shown once (a new builder key): on the page, never in the browser's storage.
    const tag = `panel-key-${randomUUID()}`;
    const scripted = await fetch(`${stackInfo().fakeOpenAIUrl.replace(/\/v1\/?$/, '')}/_control/script`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        tag,
        steps: [{ toolCalls: [{ name: 'issue_builder_key', arguments: '{}' }] }, { text: 'Here is a new key.' }],
      }),
    });
    expect(scripted.status).toBe(200);
    await page.getByLabel('Message to the builder').fill(`[[fake:script:${tag}]] Give me a builder key.`);
    await page.getByRole('button', { name: 'Send' }).click();
    await builderLog.getByText(/ck_[A-Za-z0-9]{32}/).waitFor({ timeout: 60_000 });
    const stored = () =>
      page.evaluate<string>('JSON.stringify([Object.entries(sessionStorage), Object.entries(localStorage)])');
    expect(await stored()).not.toMatch(/ck_/);
    // The session ends while the page is open (expired, or signed out elsewhere): whoever signs in next in this tab
    // finds the builder's conversation gone from the page's memory too.
    await context.clearCookies();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Agents' }).click();
    await page.waitForURL(/\/signin\?next=%2Fagents$/);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${api}/agents`);
    await nav.getByRole('link', { name: 'Builder' }).click();
    await page.getByRole('heading', { name: 'Builder', level: 1 }).waitFor();
    await builderLog.getByText(/For example/).waitFor();
    expect(await builderLog.innerText()).not.toMatch(/ck_/);

    // Account: a wrong current password is refused; the right one changes it.
    await page.getByRole('button', { name: /account menu/ }).click();
    await page.getByRole('link', { name: 'Account' }).first().click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password', { exact: true }).fill('a much better password');
    await page.getByLabel('New password again').fill('a much better password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('The current password is wrong.').waitFor();
    await page.getByLabel('Current password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed.').waitFor();
    // Names: the person's and the workspace's, saved and shown in the top bar at once.
    await page.getByLabel('Your name').fill('Maria Owner');
    await page.getByRole('button', { name: 'Save' }).first().click();
    await page.getByRole('button', { name: /Maria Owner.*account menu|account menu.*Maria Owner/ }).waitFor();
    await page.getByLabel('Workspace name').fill('');
    expect(await page.getByRole('button', { name: 'Save' }).nth(1).isDisabled()).toBe(true);
    await page.getByText('Enter a name.').waitFor();
    await page.getByLabel('Workspace name').fill('Acme Europe');
    await page.getByRole('button', { name: 'Save' }).nth(1).click();
    await page.locator('.workspace-name').getByText('Acme Europe').waitFor();
    await page.evaluate('window.scrollTo(0, 0)'); // the whole page from its top: the sticky bar over nothing
    await shot(page, 'account');

    // Sign out; a deep link asks to sign in and comes back to it.
    await page.getByRole('main').getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${api}/signin`);
    // Nothing of the session stays in the browser's storage.
    expect(await stored()).toBe('[[],[]]');
    await page.goto(`${api}/agents/${'none'}/keys`);
    await page.waitForURL(/\/signin\?next=%2Fagents%2Fnone%2Fkeys$/);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('a much better password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${api}/agents/none/keys`);
    await page.getByRole('heading', { name: 'Agent not found' }).waitFor();
    await page.close();
  });
});
