import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import type { BootstrapResult } from '../../lib/accounts/service';
import { http, newBot, ownerSession, testDb, waitUntil } from '../support/helpers';
import { type ShopPage, launchChromium, makePng, startShopPage } from '../support/browser';
import { stackInfo } from '../support/stack-info';
import { allowOrigins } from '../support/widget';

/**
 * The operator's dashboard pages (web/dashboard: inbox, notifications, billing, team) in Debian's headless Chromium
 * against the test stack, with three people in three browser profiles: the workspace's owner invites an operator on
 * the Team page; the operator accepts the invitation in a second profile and lands in the inbox; a visitor in a third
 * profile, on a shop page of another origin with the widget, starts a conversation and asks for a person. The request
 * appears in the operator's inbox without a reload; the operator opens it, types (the visitor sees it), replies (the
 * visitor reads it), sees the visitor's rating, contact and image, and resolves it (it leaves the open list and the
 * visitor's widget leaves the handed-over state). Then billing with some usage, notifications, the team, and phone
 * widths. Screenshots go to test-artifacts/dashboard/operator-NN-*.png for people to look at.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');
const PHONE = { width: 390, height: 844 };

let browser: Browser;
let shop: ShopPage;
let shopOrigin: string;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
  // The integrator's site: the widget's script tag on a page of its own origin (another port is another origin).
  shop = await startShopPage();
  shopOrigin = shop.origin;
});

afterAll(async () => {
  await browser?.close();
  await shop?.close();
});

const api = (p: string) => `${stackInfo().apiUrl}${p}`;

/** A browser profile of its own (its own cookies and storage), collecting the page's script errors. */
async function openContext(
  viewport = { width: 1280, height: 820 },
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  return { context, page, errors };
}

const shot = (page: Page, name: string, fullPage = true) =>
  page.screenshot({ path: path.join(ARTIFACTS, `operator-${name}.png`), fullPage });

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

const heading = (page: Page, name: string) => page.getByRole('heading', { name, level: 1 });

/** The visitor's widget (an open shadow root: Playwright's role and text locators reach inside). */
const widgetLog = (page: Page) => page.getByRole('log', { name: 'Conversation' });
const widgetBox = (page: Page) => page.getByRole('textbox', { name: 'Message' });

async function widgetSend(page: Page, text: string): Promise<void> {
  await widgetBox(page).fill(text);
  await widgetBox(page).press('Enter');
}

/** What the page's polite live region last said. */
const announced = (page: Page) => page.getByTestId('inbox-announcer').textContent();

/** A few chats through the public API, so billing has usage to show (each answer is a run charged in credits). */
async function chatALittle(bot: BootstrapResult, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: `billing-${i}-${Date.now()}`, message: `Question number ${i + 1} about shipping` },
    });
    expect(res.status).toBe(200);
  }
}

const threadItems = (page: Page): Locator => page.getByTestId('thread');

describe('the operator dashboard', () => {
  it('an operator invited on the Team page answers a widget conversation in the inbox and resolves it', async () => {
    const bot = await newBot({ botName: 'Acme helper', workspaceName: 'Acme' });
    await allowOrigins(bot, [shopOrigin]);
    const operatorEmail = `ana+${Date.now()}@example.com`;
    const operatorPassword = 'operator-password-1';

    const owner = await openContext();
    const operator = await openContext();
    const visitor = await openContext({ width: 1100, height: 800 });
    try {
      // ---- The owner invites an operator on the Team page.
      await owner.page.goto(api('/team'));
      await owner.page.waitForURL(/\/signin\?next=%2Fteam/);
      await signIn(owner.page, bot.email, bot.password);
      await heading(owner.page, 'Team').waitFor();
      await owner.page.getByTestId('member').first().waitFor();
      await owner.page.getByLabel('E-mail').fill('not an address');
      await owner.page.getByRole('button', { name: 'Send invitation' }).click();
      await owner.page.getByText('Enter an e-mail address').waitFor();
      await owner.page.getByLabel('E-mail').fill(operatorEmail);
      await owner.page.getByLabel('Role', { exact: true }).selectOption('operator');
      await owner.page.getByRole('button', { name: 'Send invitation' }).click();
      const inviteUrl = await owner.page.getByTestId('invite-url').inputValue();
      expect(inviteUrl).toMatch(/\/invite#token=[\w-]+$/);
      await owner.page.getByTestId('invitation').filter({ hasText: operatorEmail }).waitFor();
      await shot(owner.page, '01-team-invited');
      // A second invitation, revoked: its row goes.
      await owner.page.getByLabel('E-mail').fill('someone.else@example.com');
      await owner.page.getByRole('button', { name: 'Send invitation' }).click();
      const other = owner.page.getByTestId('invitation').filter({ hasText: 'someone.else@example.com' });
      await other.waitFor();
      await other.getByRole('button', { name: 'Revoke the invitation for someone.else@example.com' }).click();
      await other.waitFor({ state: 'detached' });
      expect(await owner.page.getByTestId('invitation').count()).toBe(1);

      // ---- The operator accepts in a second browser and lands in the inbox; no owner-only pages in the nav.
      await operator.page.goto(inviteUrl);
      await operator.page.getByRole('heading', { name: 'Join Acme' }).waitFor();
      // The token left the address bar (and the history) as soon as the page read it.
      expect(operator.page.url()).not.toContain('token');
      await operator.page.getByLabel('Your name').fill('Ana Operator');
      await operator.page.getByLabel('Choose a password').fill(operatorPassword);
      await operator.page.getByRole('button', { name: 'Join Acme' }).click();
      await operator.page.waitForURL(/\/inbox$/);
      await heading(operator.page, 'Inbox').waitFor();
      await operator.page.getByText('No one is waiting for a person').waitFor();
      const nav = operator.page.getByRole('navigation', { name: 'Main' });
      expect(await nav.getByRole('link', { name: 'Team' }).count()).toBe(0);
      expect(await nav.getByRole('link', { name: 'Billing' }).count()).toBe(0);
      await shot(operator.page, '02-inbox-empty');

      // ---- A visitor on the shop's page talks to the bot, then asks for a person.
      await visitor.page.goto(`${shopOrigin}/?key=${encodeURIComponent(bot.keys.public_key)}`);
      await visitor.page.getByRole('button', { name: 'Chat with Acme helper' }).click();
      await widgetSend(visitor.page, 'Where is my order 1234?');
      const helpful = visitor.page.getByRole('button', { name: 'Helpful', exact: true });
      await helpful.waitFor();
      await visitor.page.getByRole('button', { name: 'Talk to a person' }).click();
      await visitor.page.getByText('Waiting for a person…').waitFor();

      // ---- The request appears in the operator's inbox without a reload, and is announced.
      const request = threadItems(operator.page).first();
      await request.waitFor({ timeout: 15_000 });
      expect(await request.textContent()).toContain('Waiting');
      expect(await request.textContent()).toContain('Acme helper');
      await waitUntil('the new request announced', async () =>
        (await announced(operator.page))?.includes('New request'),
      );
      await shot(operator.page, '03-request-arrived');
      // Off the inbox too: the nav's Inbox badge and the tab's title count the visitors waiting.
      await waitUntil('the inbox badge', async () =>
        (await operator.page.getByTestId('nav-badge-inbox').textContent())?.startsWith('1') ? true : undefined,
      );
      expect(await operator.page.title()).toMatch(/^\(1\) /);

      // ---- The operator opens it: the transcript, the address, and the visitor learns someone is reading.
      await request.click();
      await operator.page.waitForURL(/\/inbox\?bot=bot_[^&]+&session=[^&]+$/);
      const transcript = operator.page.getByTestId('transcript');
      await transcript.getByText('Where is my order 1234?', { exact: true }).waitFor();
      await operator.page.getByTestId('msg-bot').first().waitFor();
      const replyBox = operator.page.getByRole('textbox', { name: /^Reply to / });
      // Opened from the list, focus is in the reply box, ready to type.
      expect(await operator.page.evaluate<string | undefined>('document.activeElement?.id')).toBe('reply');
      await visitor.page.getByText('Someone from the team is reading').waitFor();

      // ---- Typing reaches the visitor as the typing line; Enter sends the reply, which the visitor reads.
      const typingCall = operator.page.waitForRequest((r) => r.url().endsWith('/typing') && r.method() === 'POST');
      await replyBox.pressSequentially('Hi, this is Ana from Acme. Let me check order 1234', { delay: 15 });
      await typingCall;
      await visitor.page.getByText('Someone from the team is typing…').waitFor();
      await shot(visitor.page, '04-visitor-sees-typing');
      await replyBox.press('Shift+Enter');
      await replyBox.pressSequentially('One moment, please.');
      expect(await replyBox.inputValue()).toBe(
        'Hi, this is Ana from Acme. Let me check order 1234\nOne moment, please.',
      );
      await replyBox.press('Enter');
      await operator.page.getByTestId('msg-operator').waitFor();
      expect(await replyBox.inputValue()).toBe('');
      await widgetLog(visitor.page).getByText('One moment, please.').waitFor();
      await visitor.page.getByText('You are chatting with a person').waitFor();
      // The visitor sees who answered: the operator's first name.
      await widgetLog(visitor.page).getByText('Ana from the team', { exact: true }).waitFor();

      // A saved reply: the typed text saved under a title, then put into the next reply and sent.
      await replyBox.fill('Our shop ships every weekday before 3 pm.');
      const saved = operator.page.getByTestId('saved-replies');
      await saved.locator('summary').click();
      await saved.getByLabel('Title for the text typed above').fill('Shipping days');
      await saved.getByRole('button', { name: 'Save reply' }).click();
      await saved.getByRole('button', { name: /^Shipping days/ }).waitFor();
      await replyBox.fill('');
      await saved.getByRole('button', { name: /^Shipping days/ }).click();
      expect(await replyBox.inputValue()).toBe('Our shop ships every weekday before 3 pm.');
      await replyBox.press('Enter');
      await widgetLog(visitor.page).getByText('Our shop ships every weekday before 3 pm.').waitFor();

      // A reply whose answer is lost on its way back (stored, then a 503, as when Temporal goes away mid-call): the
      // draft stays, and sent again it is stored once (the same Idempotency-Key for every try of one draft).
      let answerLost = true;
      await operator.page.route('**/reply', async (route) => {
        if (!answerLost) return route.continue();
        answerLost = false;
        await route.fetch();
        await route.fulfill({
          status: 503,
          contentType: 'application/json',
          headers: { 'Retry-After': '2' },
          body: JSON.stringify({
            error: 'Service temporarily unavailable, retry shortly',
            code: 'service_unavailable',
          }),
        });
      });
      await replyBox.fill('Your parcel left the warehouse.');
      await replyBox.press('Enter');
      await operator.page.getByText('Service temporarily unavailable', { exact: false }).waitFor();
      expect(await replyBox.inputValue()).toBe('Your parcel left the warehouse.');
      await replyBox.press('Enter');
      await waitUntil('the draft to be sent', async () => (await replyBox.inputValue()) === '');
      await operator.page.unroute('**/reply');
      await widgetLog(visitor.page).getByText('Your parcel left the warehouse.').waitFor();
      for (let i = 0; i < 2; i++) {
        await visitor.page.waitForResponse((r) => r.url().includes('/v1/widget/messages'));
      }
      expect(await widgetLog(visitor.page).getByText('Your parcel left the warehouse.').count()).toBe(1);
      const sentReplies = operator.page
        .getByTestId('msg-operator')
        .filter({ hasText: 'Your parcel left the warehouse.' });
      expect(await sentReplies.count()).toBe(1);

      // An internal note: in the transcript for the team, signed; never in the visitor's widget.
      await operator.page.getByRole('button', { name: 'Internal note' }).click();
      const noteBox = operator.page.getByRole('textbox', { name: /^Internal note/ });
      await noteBox.fill('Order 1234 is in the warehouse, not shipped yet');
      await operator.page.getByRole('button', { name: 'Add note' }).click();
      const note = operator.page.getByTestId('event-note');
      await note.waitFor();
      expect(await note.textContent()).toContain('Internal note by Ana Operator');
      expect(await note.textContent()).toContain('Order 1234 is in the warehouse, not shipped yet');
      await operator.page.getByRole('button', { name: 'Reply', exact: true }).click();
      // The widget polls after the note was written: what it reads has no note.
      for (let i = 0; i < 2; i++) {
        await visitor.page.waitForResponse((r) => r.url().includes('/v1/widget/messages'));
      }
      expect(await widgetLog(visitor.page).getByText('in the warehouse', { exact: false }).count()).toBe(0);
      await waitUntil('the list says a person has it', async () =>
        (await request.textContent())?.includes('With a person'),
      );

      // ---- The visitor rates the bot's answer, types, writes, sends an image and leaves a contact.
      await helpful.click();
      const rating = operator.page.getByTestId('event-rating');
      await rating.waitFor();
      expect(await rating.textContent()).toContain('helpful');
      expect(await rating.getAttribute('data-rating')).toBe('up');
      const botAnswer = (await operator.page.getByTestId('msg-bot').first().locator('.msg-bubble').textContent())!;
      expect(await rating.locator('.event-quote').textContent()).toContain(botAnswer.slice(0, 40));

      await widgetBox(visitor.page).pressSequentially('Thank you, it was', { delay: 30 });
      await operator.page.getByTestId('visitor-typing').waitFor();
      await waitUntil('the list shows the visitor typing', async () =>
        (await request.textContent())?.includes('Visitor is typing'),
      );
      await shot(operator.page, '05-visitor-typing');
      await widgetBox(visitor.page).pressSequentially(' a birthday present.');
      await widgetBox(visitor.page).press('Enter');
      await transcript.getByText('Thank you, it was a birthday present.').waitFor();
      await waitUntil('the visitor message announced', async () =>
        (await announced(operator.page))?.includes('Visitor: Thank you, it was a birthday present.'),
      );

      await visitor.page
        .locator('input[type=file]')
        .setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: makePng(160, 100) });
      const image = transcript.locator('.msg-visitor img');
      await image.waitFor();
      expect(await image.getAttribute('alt')).toBeTruthy();
      await waitUntil('the image loaded', () =>
        operator.page.evaluate<boolean>(`document.querySelector('.msg-visitor img').naturalWidth === 160`),
      );
      expect(await transcript.locator('.msg-visitor a.msg-image').getAttribute('target')).toBe('_blank');

      // The operator sends an image back (the composer's image button): in the transcript, and in the visitor's
      // widget as the team's, signed.
      await operator.page
        .getByTestId('attach-input')
        .setInputFiles({ name: 'label.png', mimeType: 'image/png', buffer: makePng(120, 80) });
      await transcript.locator('.msg-operator img').waitFor();
      const sentBack = widgetLog(visitor.page).getByRole('img', { name: 'Image from Ana from the team' });
      await sentBack.waitFor();
      await waitUntil('the operator’s image loaded in the widget', async () =>
        sentBack.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth === 120),
      );
      await sentBack.scrollIntoViewIfNeeded();
      await shot(visitor.page, '05b-visitor-sees-image', false);
      await shot(operator.page, '05c-image-sent', false);

      await visitor.page.getByRole('button', { name: 'Leave your contact' }).click();
      await visitor.page.getByLabel('Name').fill('Maria Visitor');
      await visitor.page.getByLabel('E-mail or phone (required)').fill('maria@example.com');
      await visitor.page.getByLabel('Note').fill('Please call after 5 pm');
      await visitor.page.getByRole('button', { name: 'Send contact' }).click();
      const contact = operator.page.getByTestId('event-contact');
      await contact.waitFor();
      expect(await contact.textContent()).toContain('Maria Visitor');
      expect(await contact.getByRole('link', { name: 'maria@example.com' }).getAttribute('href')).toBe(
        'mailto:maria@example.com',
      );
      expect(await contact.textContent()).toContain('Please call after 5 pm');
      // The visitor panel says who this is; the list and the title name the visitor by the contact they left.
      const about = operator.page.getByTestId('visitor-panel');
      await about.getByText('Maria Visitor · maria@example.com', { exact: false }).waitFor();
      await about.locator('summary').click();
      expect(await about.getByRole('link', { name: 'maria@example.com' }).getAttribute('href')).toBe(
        'mailto:maria@example.com',
      );
      await operator.page.getByTestId('thread-title').getByText('Maria Visitor').waitFor();
      await operator.page.locator('.thread-visitor', { hasText: 'Maria Visitor' }).first().waitFor();

      // Authors and event kinds this page does not know (contract, Message) are shown as their text line.
      const sid = new URL(operator.page.url()).searchParams.get('session')!;
      await testDb().query(
        `INSERT INTO messages (id, session_id, bot_id, author, text, event, at)
         VALUES ($1, $3, $4, 'system', 'The visitor came back from the checkout page', NULL, $5),
                ($2, $3, $4, 'event', 'Survey answered: 5 of 5', '{"kind":"survey","score":5}', $5)`,
        [`msg_future_a_${Date.now()}`, `msg_future_b_${Date.now()}`, sid, bot.bot_id, Date.now()],
      );
      const lines = operator.page.getByTestId('line');
      await lines.filter({ hasText: 'The visitor came back from the checkout page' }).waitFor();
      await lines.filter({ hasText: 'Survey answered: 5 of 5' }).waitFor();
      // The visitor panel and the briefing, both open, leave the transcript at least half of the room they share.
      const box = async (selector: string) => (await operator.page.locator(selector).boundingBox())!;
      const [panel, scroller] = [await box('.visitor-panel'), await box('.thread-scroll')];
      expect(scroller.height).toBeGreaterThanOrEqual(scroller.y - panel.y);
      await shot(operator.page, '06-conversation');

      // ---- A reload keeps the view: the same conversation opens from the address.
      const address = operator.page.url();
      await operator.page.reload();
      await operator.page.getByTestId('event-contact').waitFor();
      expect(operator.page.url()).toBe(address);
      expect(await operator.page.getByTestId('thread-title').textContent()).toBeTruthy();

      // ---- Resolve: it leaves the open list; the visitor's widget is back with the assistant.
      await operator.page.getByRole('button', { name: 'Resolve' }).click();
      await operator.page.getByTestId('resolved-note').waitFor();
      await operator.page.getByText('No one is waiting for a person').waitFor();
      expect(await threadItems(operator.page).count()).toBe(0);
      expect(await operator.page.getByRole('button', { name: 'Resolve' }).count()).toBe(0);
      await shot(operator.page, '07-resolved');
      await visitor.page.getByRole('button', { name: 'Talk to a person' }).waitFor({ timeout: 15_000 });
      expect(await visitor.page.getByText('You are chatting with a person').count()).toBe(0);
      await shot(visitor.page, '08-visitor-after-resolve');

      // All recent conversations still show it, answered by the assistant again.
      await operator.page.getByLabel('All recent').check();
      await operator.page.waitForURL(/status=all/);
      await waitUntil('the conversation among all recent ones', async () =>
        (await threadItems(operator.page).first().textContent())?.includes('Assistant'),
      );

      // ---- A phone: the conversation takes the screen, with a way back to the list.
      await operator.page.setViewportSize(PHONE);
      await operator.page.getByRole('button', { name: /Back/ }).waitFor();
      expect(await operator.page.getByTestId('thread-list').isVisible()).toBe(false);
      await shot(operator.page, '09-phone-conversation', false);
      await operator.page.getByRole('button', { name: /Back/ }).click();
      await operator.page.getByTestId('thread-list').waitFor();
      await operator.page.waitForURL(/\/inbox\?status=all$/);
      expect(await operator.page.evaluate<string | undefined>('document.activeElement?.dataset.key')).toContain(
        bot.bot_id,
      );
      await shot(operator.page, '10-phone-list', false);
      expect(operator.errors).toEqual([]);

      // ---- The owner's notifications: each links where it can be dealt with (the contact to its conversation, an
      // approval to the agent's actions, a paused trigger to its triggers); one, then all, marked read.
      const stamp = Date.now();
      await testDb().query(
        `INSERT INTO notifications (id, workspace_id, bot_id, kind, title, body, data, created_at) VALUES
           ($1, $3, $4, 'trigger_paused', 'Trigger “Nightly sync” paused', 'It failed 5 times in a row.', '{}',
            now() - interval '2 hours'),
           ($2, $3, $4, 'approval_requested', 'An action waits for approval', 'Refund order 1234 (EUR 40).', '{}',
            now() - interval '1 hour')`,
        [`ntf_paused_${stamp}`, `ntf_approval_${stamp}`, bot.workspace_id, bot.bot_id],
      );
      await owner.page.goto(api('/notifications'));
      const notices = owner.page.getByTestId('notification');
      const notice = notices.filter({ hasText: /contact/i }).first();
      await notice.waitFor();
      expect(await notice.getByRole('link').getAttribute('href')).toMatch(/^\/inbox\?.*session=/);
      expect(await notices.filter({ hasText: 'Nightly sync' }).getByRole('link').getAttribute('href')).toBe(
        `/agents/${bot.bot_id}/triggers`,
      );
      expect(await notices.filter({ hasText: 'Refund order' }).getByRole('link').getAttribute('href')).toBe(
        `/agents/${bot.bot_id}/actions`,
      );
      await notices
        .filter({ hasText: 'Nightly sync' })
        .getByRole('button', { name: /^Mark .* as read$/ })
        .click();
      // The request for a person is one of them, and opens its conversation.
      expect(
        await notices.filter({ hasText: 'A visitor asked for a person' }).getByRole('link').getAttribute('href'),
      ).toMatch(/^\/inbox\?bot=bot_[^&]+&session=/);
      await waitUntil('one read', async () =>
        (await owner.page.locator('.notification-unread').count()) === 3 ? true : undefined,
      );
      await shot(owner.page, '11-notifications');
      await owner.page.getByRole('button', { name: 'Mark all as read' }).click();
      await owner.page.locator('.notification-unread').first().waitFor({ state: 'detached' });
      expect(await owner.page.getByRole('button', { name: /^Mark all as read|Marking/ }).count()).toBe(0);
      await waitUntil('the nav without an unread count', async () =>
        (await owner.page.getByTestId('nav-badge-notifications').count()) === 0 ? true : undefined,
      );

      // ---- The team now: the operator is a member; the owner may change roles and remove (after a confirmation).
      await owner.page.goto(api('/team'));
      const member = owner.page.getByTestId('member').filter({ hasText: operatorEmail });
      await member.waitFor();
      expect(await member.getByRole('combobox').inputValue()).toBe('operator');
      expect(await owner.page.getByTestId('invitations').count()).toBe(0);
      await shot(owner.page, '12-team');
      await member.getByRole('button', { name: /^Remove/ }).click();
      const dialog = owner.page.getByRole('dialog');
      await dialog.waitFor();
      await shot(owner.page, '13-team-remove-confirm', false);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
      expect(await member.count()).toBe(1);

      // The owner makes the operator an admin (kept after a reload), then removes them: their open inbox, whose
      // session has ended, goes to the sign-in page by itself.
      await member.getByRole('combobox').selectOption('admin');
      await owner.page.getByText(`${operatorEmail} is now admin.`).waitFor();
      await owner.page.reload();
      await member.waitFor();
      expect(await member.getByRole('combobox').inputValue()).toBe('admin');
      await member.getByRole('button', { name: /^Remove/ }).click();
      await dialog.getByRole('button', { name: /^Remove Ana Operator/ }).click();
      await member.waitFor({ state: 'detached' });
      expect(await owner.page.getByTestId('member').count()).toBe(1);
      await operator.page.waitForURL(/\/signin\?next=/);
      expect(owner.errors).toEqual([]);
      expect(visitor.errors).toEqual([]);
    } finally {
      await owner.context.close();
      await operator.context.close();
      await visitor.context.close();
    }
  }, 240_000);

  it('the inbox filters by agent and shows loading and error states, retrying by itself', async () => {
    const bot = await newBot({ botName: 'Shop helper', workspaceName: 'Two agents' });
    const cookie = await ownerSession(bot);
    const created = await http('/v1/dashboard/bots', { body: { name: 'Returns desk' }, headers: cookie });
    expect(created.status).toBe(201);
    const second = { bot_id: created.body.bot.id as string, secret: created.body.keys.secret_key as string };
    // One request for a person on each agent, through the public API.
    const ask = async (key: string, session: string, message: string) => {
      expect((await http('/v1/api/chat', { key, body: { session_id: session, message } })).status).toBe(200);
      expect((await http('/v1/api/handoff', { key, body: { session_id: session } })).status).toBe(200);
    };
    await ask(bot.keys.secret_key, `shop-${Date.now()}`, 'Do you ship to Norway?');
    await ask(second.secret, `returns-${Date.now()}`, 'I want to return a lamp');

    const { context, page, errors } = await openContext();
    try {
      // The first read fails: an error with a retry, in place of the list.
      await page.route('**/v1/dashboard/inbox?**', (route) => route.abort('internetdisconnected'));
      await page.goto(api('/inbox'));
      await signIn(page, bot.email, bot.password);
      await page.getByText('The inbox cannot be read.').waitFor();
      await shot(page, '17-inbox-error');
      await page.unroute('**/v1/dashboard/inbox?**');
      await page.getByRole('button', { name: 'Try again' }).click();
      await waitUntil('both requests', async () => ((await threadItems(page).count()) === 2 ? true : undefined));

      // Filter by agent: the address says so, and a reload keeps it.
      await page.getByLabel('Agent').selectOption({ label: 'Returns desk' });
      await page.waitForURL(new RegExp(`agent=${second.bot_id}`));
      await waitUntil('one request', async () => ((await threadItems(page).count()) === 1 ? true : undefined));
      expect(await threadItems(page).first().textContent()).toContain('Returns desk');
      await page.reload();
      await threadItems(page).first().waitFor();
      expect(await threadItems(page).count()).toBe(1);
      expect(await page.getByLabel('Agent').inputValue()).toBe(second.bot_id);

      // A refresh that fails keeps what is shown and says so; the next one clears it.
      await threadItems(page).first().click();
      await page.getByTestId('transcript').getByText('I want to return a lamp', { exact: true }).waitFor();
      await page.route('**/v1/dashboard/**', (route) => route.abort('internetdisconnected'));
      await page.getByText('Not refreshed:').first().waitFor({ timeout: 15_000 });
      expect(await threadItems(page).count()).toBe(1);
      await page.getByTestId('transcript').getByText('I want to return a lamp', { exact: true }).waitFor();
      await shot(page, '18-inbox-offline');
      await page.unroute('**/v1/dashboard/**');
      await page.getByText('Not refreshed:').first().waitFor({ state: 'detached', timeout: 30_000 });

      // A conversation that does not exist says so.
      await page.goto(api(`/inbox?bot=${bot.bot_id}&session=no-such-session`));
      await page.getByText('This conversation does not exist').waitFor();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('billing shows the plan, the month’s usage as a meter and per-day charts with a table, the ledger and the plans', async () => {
    const bot = await newBot({ botName: 'Billing bot', workspaceName: 'Acme billing' });
    await chatALittle(bot, 4);
    const { context, page, errors } = await openContext();
    try {
      await page.goto(api('/billing'));
      await signIn(page, bot.email, bot.password);
      await heading(page, 'Billing').waitFor();
      await page.getByText('No payment provider is connected').waitFor();
      expect(await page.textContent('body')).toContain('agentctl billing');
      await page.getByTestId('conversations-used').waitFor();
      expect(Number(await page.getByTestId('conversations-used').textContent())).toBeGreaterThanOrEqual(4);
      const meter = page.getByRole('meter', { name: 'Conversations used' });
      expect(await meter.getAttribute('aria-valuetext')).toMatch(/^\d+ of [\d,. ]+ \(/);
      const chart = page.getByRole('img', { name: /Conversations per day/ });
      await chart.waitFor();
      expect(await chart.locator('rect.chart-fill').count()).toBe(30);
      await page.getByTestId('ledger').locator('tbody tr').first().waitFor();
      expect(await page.getByTestId('ledger').textContent()).toContain('−');
      await page.locator('.plan-current').waitFor();
      await shot(page, '14-billing');

      await page.getByRole('button', { name: 'Show as table' }).click();
      const table = page.getByRole('table', { name: 'Conversations and credits per day' });
      await table.waitFor();
      expect(await table.locator('tbody tr').count()).toBe(30);
      await shot(page, '15-billing-table');
      await page.getByRole('button', { name: 'Show charts' }).click();

      await page.setViewportSize(PHONE);
      await chart.waitFor();
      await shot(page, '16-billing-phone');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
