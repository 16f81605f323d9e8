import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { BootstrapResult } from '../../lib/accounts/service';
import { http, inOneRateWindow, newBot, ownerSession, testDb, waitUntil } from '../support/helpers';
import { type ShopPage, launchChromium, makePng, startShopPage } from '../support/browser';
import { pixels } from '../support/images';
import { stackInfo } from '../support/stack-info';

/**
 * The visitor's widget (web/widget, served by the API at /widget.js) embedded in a page of ANOTHER origin — a small
 * shop page on its own port, with hostile CSS — in Debian's headless Chromium against the test stack. The visitor gets
 * a streamed answer, rates it, asks for a person, sees the operator type and reply (through the operator API), sends
 * an image and a contact, and keeps the conversation across a reload; service messages are notices apart from the
 * bot's replies; a page of an origin the bot does not allow gets a widget that says it cannot work. Screenshots go to
 * test-artifacts/widget/ for people to look at.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'widget');

/** Styles a careless (or hostile) host page might have: none of them may reach the widget. */
const HOSTILE_CSS = `
  * { color: red !important; font-size: 40px; font-family: "Times New Roman", serif !important; line-height: 3 !important; }
  button { background: yellow !important; border: 4px dashed green !important; padding: 20px !important; }
  div, p, h2 { margin: 25px !important; letter-spacing: 4px !important; }
  textarea, input { background: black !important; }
  body > * { opacity: 0.9; }
`;

let browser: Browser;
let shop: ShopPage;
let shopOrigin: string;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
  // The integrator's site: a page with the script tag, on an origin of its own, with hostile CSS.
  shop = await startShopPage({ css: HOSTILE_CSS });
  shopOrigin = shop.origin;
});

afterAll(async () => {
  await browser?.close();
  await shop?.close();
});

async function allowShop(bot: BootstrapResult, origins = [shopOrigin]): Promise<void> {
  const res = await http(`/v1/dashboard/bots/${bot.bot_id}`, {
    method: 'PATCH',
    body: { allowed_origins: origins },
    headers: await ownerSession(bot),
  });
  expect([res.status, res.text]).toEqual([200, expect.any(String)]);
}

async function openShop(
  bot: BootstrapResult,
  opts: { open?: boolean; viewport?: { width: number; height: number } } = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1100, height: 760 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${shopOrigin}/?key=${encodeURIComponent(bot.keys.public_key)}${opts.open ? '&open=1' : ''}`);
  await page.getByRole('button', { name: /^Chat with/ }).waitFor();
  return { context, page, errors };
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

const messageBox = (page: Page) => page.getByRole('textbox', { name: 'Message' });
const log = (page: Page) => page.getByRole('log', { name: 'Conversation' });

async function send(page: Page, text: string): Promise<void> {
  await messageBox(page).fill(text);
  await messageBox(page).press('Enter');
}

/** The session the widget keeps in the page's localStorage (docs/widget.md): what the operator API is asked about. */
/** The widget's next chat streams answer with these frames (as the API writes them) until unrouted. */
async function serveStream(page: Page, frames: object[]): Promise<void> {
  await page.route('**/v1/widget/chat/stream**', (route) =>
    route.fulfill({
      status: 200,
      contentType: 'text/event-stream',
      headers: { 'Access-Control-Allow-Origin': shopOrigin },
      body: frames.map((frame) => `data: ${JSON.stringify(frame)}\n\n`).join(''),
    }),
  );
}

/** The widget's poll answers as the API does, with `message` added: a late answer, as the transcript would bring it. */
async function pollBrings(page: Page, message: { id: string; author: string; text: string }): Promise<void> {
  await page.route('**/v1/widget/messages**', async (route) => {
    const response = await route.fetch();
    const poll = (await response.json()) as { messages: object[] };
    await route.fulfill({ response, json: { ...poll, messages: [...poll.messages, { ...message, at: Date.now() }] } });
  });
}

const overloaded = (retryAfter: number) => ({
  error: 'The AI backend is busy or the turn did not finish; retry shortly',
  code: 'llm_overloaded',
  retry_after: retryAfter,
});

async function storedSession(page: Page, bot: BootstrapResult): Promise<{ session_id: string; visitor_token: string }> {
  const raw = await page.evaluate<string | null>(`localStorage.getItem('ap-widget:${bot.keys.public_key}')`);
  expect(raw).toBeTruthy();
  return JSON.parse(raw!) as { session_id: string; visitor_token: string };
}

interface TranscriptMessage {
  id: string;
  author: string;
  text: string;
  event?: Record<string, unknown>;
  attachment?: { url: string; content_type: string };
}

async function operatorTranscript(bot: BootstrapResult, sid: string): Promise<TranscriptMessage[]> {
  const res = await http(`/v1/api/operator/threads/${sid}?limit=100`, { key: bot.keys.secret_key });
  expect(res.status).toBe(200);
  return res.body.messages as TranscriptMessage[];
}

/**
 * Evaluates an expression in the page with `root` bound to the widget's shadow root. The test files are typed without
 * the DOM library, so what runs in the browser is written as source text.
 */
const inWidget = <T>(page: Page, expression: string): Promise<T> =>
  page.evaluate<T>(
    `(() => { const root = document.querySelector('agent-platform-widget').shadowRoot; return ${expression}; })()`,
  );

/** The computed style of an element of the widget's shadow tree. */
const styleOf = (page: Page, selector: string, props: string[]) =>
  inWidget<Record<string, string>>(
    page,
    `(() => { const s = getComputedStyle(root.querySelector(${JSON.stringify(selector)}));
       return Object.fromEntries(${JSON.stringify(props)}.map((n) => [n, s.getPropertyValue(n)])); })()`,
  );

/** What has focus inside the widget. */
const focused = (page: Page) =>
  inWidget<{ label: string | null; className: string } | null>(
    page,
    `root.activeElement && { label: root.activeElement.getAttribute('aria-label'), className: root.activeElement.className }`,
  );

describe('the widget on an integrator’s page', () => {
  it('streams an answer, hands over to a person, takes a rating, an image and a contact, and survives a reload', async () => {
    const bot = await newBot({ botName: 'Acme helper', workspaceName: 'Acme' });
    await allowShop(bot);
    // Knowledge with many FACT lines makes the fake model's answer long (it repeats them): many fragments.
    const facts = Array.from({ length: 40 }, (_, i) => `FACT: Acme shop opening hours note ${i + 1}: open from nine.`);
    const written = await http('/v1/api/knowledge', {
      key: bot.keys.secret_key,
      body: { title: 'Opening hours', text: `Acme shop opening hours.\n${facts.join('\n')}` },
    });
    expect(written.status).toBe(202);

    const { context, page, errors } = await openShop(bot);
    // What the widget tells the bot about the page: never the address's query string (here it holds the key).
    const pageContexts: string[] = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === '/v1/widget/chat/stream')
        pageContexts.push(JSON.parse(req.postData() ?? '{}').page_context);
    });
    try {
      const launcher = page.getByRole('button', { name: 'Chat with Acme helper' });
      expect(await launcher.getAttribute('aria-expanded')).toBe('false');
      expect(await launcher.getAttribute('aria-controls')).toBe('ap-panel');
      await shot(page, '01-launcher');

      // The page's `* { color: red !important; font-size: 40px }` and `button { … }` do not reach inside.
      expect(await styleOf(page, '.launcher', ['background-color', 'padding-top', 'border-top-style'])).toEqual({
        'background-color': 'rgb(79, 70, 229)',
        'padding-top': '0px',
        'border-top-style': 'none',
      });

      await launcher.click();
      const dialog = page.getByRole('dialog', { name: 'Acme helper' });
      await dialog.waitFor();
      expect(await launcher.getAttribute('aria-expanded')).toBe('true');
      // Focus goes to the message box.
      expect((await focused(page))?.label).toBe('Message');
      expect(await styleOf(page, '.title', ['color', 'font-size', 'margin-top'])).toEqual({
        color: 'rgb(255, 255, 255)',
        'font-size': '16px',
        'margin-top': '0px',
      });
      expect((await styleOf(page, '.input', ['background-color']))['background-color']).toBe('rgb(255, 255, 255)');

      // A streamed answer: the bot's bubble grows while frames arrive, before the end frame brings the rating. The
      // model is paced as a real one is (the instructions carry the fake's pace marker: first piece after 100 ms, the
      // last at 1.5 s), so the platform's flushes (every 100 ms) bring it in several frames.
      await testDb().query(`UPDATE bots SET instructions = '[[fake:pace-100-1500-6]]' WHERE id = $1`, [bot.bot_id]);
      await inWidget(
        page,
        `(() => {
          window.seen = [];
          new MutationObserver(() => {
            const bot = [...root.querySelectorAll('.msg-bot')].at(-1);
            const bubble = bot && bot.querySelector('.bubble');
            if (bubble) window.seen.push({ len: bubble.textContent.length, ended: !!bot.querySelector('.rating') });
          }).observe(root, { subtree: true, childList: true, characterData: true });
        })()`,
      );
      await send(page, 'What are the Acme shop opening hours?');
      await page.locator('.msg-bot .bubble').waitFor();
      await shot(page, '02a-streaming');
      const helpful = page.getByRole('button', { name: 'Helpful', exact: true });
      await helpful.waitFor();
      const answer = await page.locator('.msg-bot .bubble').last().textContent();
      expect(answer).toContain('Fake answer: What are the Acme shop opening hours?');
      expect(answer).toContain('FACT: Acme shop opening hours note');
      expect(pageContexts).toHaveLength(1);
      expect(pageContexts[0]).toMatch(/^Page: /);
      expect(pageContexts[0].endsWith(`\nAddress: ${shopOrigin}/`)).toBe(true);
      const seen = await page.evaluate<{ len: number; ended: boolean }[]>('window.seen');
      const finalLength = answer!.length;
      const partial = seen.filter((s) => !s.ended && s.len > 0 && s.len < finalLength);
      expect(partial.length).toBeGreaterThan(0);
      expect(await messageBox(page).inputValue()).toBe('');
      await shot(page, '02b-streamed-answer');

      // Rating: aria-pressed, and a rating event in the operator's transcript referring to the answer.
      const { session_id: sid } = await storedSession(page, bot);
      await helpful.click();
      expect(await helpful.getAttribute('aria-pressed')).toBe('true');
      expect(await page.getByRole('button', { name: 'Not helpful' }).getAttribute('aria-pressed')).toBe('false');
      const rated = await waitUntil('the rating event', async () =>
        (await operatorTranscript(bot, sid)).find((m) => m.author === 'event' && m.event?.kind === 'rating'),
      );
      const botAnswer = (await operatorTranscript(bot, sid)).filter((m) => m.author === 'bot').at(-1)!;
      expect(rated.event).toEqual({ kind: 'rating', rating: 'up', ref: botAnswer.id });
      await shot(page, '03-rated');

      // Reloaded, the widget shows the conversation so far (localStorage + GET /v1/widget/messages).
      await page.reload();
      await launcher.click();
      await page.locator('.msg-visitor', { hasText: 'What are the Acme shop opening hours?' }).waitFor();
      await page.locator('.msg-bot', { hasText: 'FACT: Acme shop opening hours note 1:' }).waitFor();
      expect(await page.locator('.msg-bot').count()).toBe(1);
      expect(await page.locator('.msg-visitor').count()).toBe(1);
      expect((await storedSession(page, bot)).session_id).toBe(sid);
      await shot(page, '04-after-reload');

      // A person: waiting, then an operator reads and types (the indicator shows), then replies.
      await page.getByRole('button', { name: 'Talk to a person' }).click();
      await dialog.getByText('Waiting for a person…').waitFor();
      // Said in the conversation too, not only in the header.
      await log(page)
        .getByText('You asked for a person. Someone from the team will reply here', { exact: false })
        .waitFor();
      expect(await page.getByRole('button', { name: 'Talk to a person' }).count()).toBe(0);
      await shot(page, '05-waiting');

      const operator = (p: string, body?: unknown) =>
        http(`/v1/api/operator/threads/${sid}${p}`, { key: bot.keys.secret_key, method: 'POST', body });
      // An operator opens the conversation (operator_here), then types (operator_typing).
      await operatorTranscript(bot, sid);
      await dialog.getByText('Someone from the team is reading').waitFor();
      expect((await operator('/typing')).status).toBeLessThan(300);
      await dialog.getByText('Someone from the team is typing…').waitFor();
      await shot(page, '06-operator-typing');

      expect((await operator('/reply', { text: 'Hi, this is Ana from Acme. Happy to help!' })).status).toBeLessThan(
        300,
      );
      await log(page).getByText('Hi, this is Ana from Acme. Happy to help!').waitFor();
      await dialog.getByText('You are chatting with a person').waitFor();
      await page.getByText('Someone from the team is typing…').waitFor({ state: 'detached' });
      expect(await page.locator('.msg-operator .author').textContent()).toBe('From the team');

      // The visitor types: operators see it (POST /v1/widget/typing while a person handles the conversation).
      const typingCall = page.waitForRequest((r) => r.url().includes('/v1/widget/typing') && r.method() === 'POST');
      await messageBox(page).pressSequentially('Thanks', { delay: 20 });
      await typingCall;
      const threads = await http('/v1/api/operator/threads', { key: bot.keys.secret_key });
      expect(threads.body.threads.find((t: { session_id: string }) => t.session_id === sid)).toMatchObject({
        visitor_typing: true,
      });
      await messageBox(page).press('Enter');
      await waitUntil('the visitor message forwarded', async () =>
        (await operatorTranscript(bot, sid)).find((m) => m.author === 'visitor' && m.text === 'Thanks'),
      );
      await shot(page, '07-operator-replied');

      // An image: a message of the conversation the operator sees; its address serves the PNG.
      const png = makePng(64, 40);
      await page.locator('input[type=file]').setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: png });
      const thumb = page.locator('.msg-visitor img');
      await thumb.waitFor();
      expect(await thumb.getAttribute('alt')).toBeTruthy();
      await waitUntil('the thumbnail loaded', () =>
        inWidget<boolean>(page, `root.querySelector('.msg-visitor img').naturalWidth === 64`),
      );
      const withImage = await waitUntil('the image in the transcript', async () =>
        (await operatorTranscript(bot, sid)).find((m) => m.attachment?.url),
      );
      const media = await fetch(new URL(withImage.attachment!.url, stackInfo().apiUrl));
      expect(media.status).toBe(200);
      expect(media.headers.get('content-type')).toBe('image/png');
      expect((await pixels(Buffer.from(await media.arrayBuffer()))).equals(await pixels(png))).toBe(true);
      expect(await thumb.getAttribute('src')).toBe(new URL(withImage.attachment!.url, stackInfo().apiUrl).href);

      // Too large an image is refused before it is sent, with a notice.
      await page.locator('input[type=file]').setInputFiles({
        name: 'huge.png',
        mimeType: 'image/png',
        buffer: Buffer.alloc(5 * 1024 * 1024 + 1),
      });
      await log(page).getByText('That image is too large', { exact: false }).waitFor();
      await shot(page, '08-image');

      // A contact: an event of the conversation for the team; the visitor gets a thank-you.
      await page.getByRole('button', { name: 'Leave your contact' }).click();
      await page.getByLabel('Name').fill('Ana Visitor');
      await page.getByLabel('E-mail or phone (required)').fill('not a contact');
      await page.getByRole('button', { name: 'Send contact' }).click();
      await page.getByText('Enter an e-mail address or a phone number.').waitFor();
      await page.getByLabel('E-mail or phone (required)').fill('ana@example.com');
      await page.getByLabel('Note').fill('Call me after 5');
      await shot(page, '09-contact-form');
      await page.getByRole('button', { name: 'Send contact' }).click();
      await log(page).getByText('Thank you! We have your contact', { exact: false }).waitFor();
      const contact = await waitUntil('the contact event', async () =>
        (await operatorTranscript(bot, sid)).find((m) => m.author === 'event' && m.event?.kind === 'contact'),
      );
      expect(contact.event).toMatchObject({ kind: 'contact', name: 'Ana Visitor', contact: 'ana@example.com' });
      await shot(page, '10-contact-left');

      // The operator resolves: the visitor is told, and asked how it went (1–5, a comment); the team sees the answer.
      expect((await operator('/resolve')).status).toBe(200);
      await log(page).getByText('The team marked this conversation as resolved.').waitFor();
      // Back with the assistant: the header says so.
      await dialog.getByText('We usually answer right away').waitFor();
      await page.getByRole('radio', { name: '4 of 5: Good' }).click();
      expect(await page.getByRole('radio', { name: '4 of 5: Good' }).getAttribute('aria-checked')).toBe('true');
      await page.getByLabel('Anything to add? (optional)').fill('Ana was quick');
      await shot(page, '10b-satisfaction');
      await page.getByRole('button', { name: 'Send feedback' }).click();
      await log(page).getByText('Thank you for telling us how it went.').waitFor();
      const satisfaction = await waitUntil('the satisfaction event', async () =>
        (await operatorTranscript(bot, sid)).find((m) => m.author === 'event' && m.event?.kind === 'satisfaction'),
      );
      expect(satisfaction.text).toBe('Rated the help 4/5 (good): Ana was quick');

      // Keyboard: Escape closes and focus returns to the launcher.
      await messageBox(page).focus();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      expect(await launcher.getAttribute('aria-expanded')).toBe('false');
      expect((await focused(page))?.className).toBe('launcher');

      // A phone: the panel takes the whole screen.
      await page.setViewportSize({ width: 390, height: 844 });
      await launcher.click();
      await dialog.waitFor();
      expect(await dialog.boundingBox()).toEqual({ x: 0, y: 0, width: 390, height: 844 });
      await shot(page, '11-phone');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it('shows service messages and failures as notices apart from the bot’s replies, with nothing to rate', async () => {
    const full = await newBot({ monthlyConversationQuota: 0, botName: 'Quota bot' });
    await allowShop(full);
    const { context, page } = await openShop(full, { open: true });
    try {
      await send(page, 'Hello?');
      const notice = log(page).locator('.notice');
      await notice.waitFor();
      expect(await notice.getAttribute('role')).toMatch(/^(status|alert)$/);
      expect((await notice.textContent())!.length).toBeGreaterThan(10);
      expect(await page.locator('.msg-bot').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Helpful', exact: true }).count()).toBe(0);
      await shot(page, '12-quota-notice');
    } finally {
      await context.close();
    }

    const bot = await newBot({ botName: 'Failing bot' });
    await allowShop(bot);
    const second = await openShop(bot, { open: true });
    try {
      const p = second.page;
      // The network fails: the typed text comes back into the message box, and Retry sends it.
      await p.route('**/v1/widget/chat/stream**', (route) => route.abort('internetdisconnected'));
      await send(p, 'Do you ship to Norway?');
      await log(p).getByText('cannot be reached', { exact: false }).waitFor();
      expect(await messageBox(p).inputValue()).toBe('Do you ship to Norway?');
      expect(await p.locator('.msg-visitor').count()).toBe(0);
      await shot(p, '13-network-failure');
      await p.unroute('**/v1/widget/chat/stream**');
      // The service is briefly away (the API's 503 service_unavailable, as while its database restarts, with the
      // headers the API sends a shop's page): the notice says when to try again, not "something went wrong"; the
      // text comes back into the message box, and Retry is offered again.
      await p.route('**/v1/widget/chat/stream**', (route) =>
        route.fulfill({
          status: 503,
          contentType: 'application/json',
          headers: {
            'Access-Control-Allow-Origin': shopOrigin,
            'Access-Control-Expose-Headers': 'Retry-After',
            'Retry-After': '2',
          },
          body: JSON.stringify({
            error: 'Service temporarily unavailable, retry shortly',
            code: 'service_unavailable',
          }),
        }),
      );
      await log(p).getByRole('button', { name: 'Retry' }).click();
      await log(p).getByText('The chat is briefly unavailable — try again in 2 s.').waitFor();
      expect(await log(p).getByText('cannot be reached', { exact: false }).count()).toBe(0);
      expect(await messageBox(p).inputValue()).toBe('Do you ship to Norway?');
      expect(await p.locator('.msg-visitor').count()).toBe(0);
      await shot(p, '13b-service-unavailable');
      await p.unroute('**/v1/widget/chat/stream**');
      // The stream was accepted but the turn could not be sent (Temporal out of reach): an llm_overloaded frame, and
      // an end frame that names no visitor message — nothing was stored, so the text comes back as above.
      const sessionId = (await storedSession(p, bot)).session_id;
      await serveStream(p, [
        overloaded(2),
        { done: true, session_id: sessionId, handoff: false, quota_exceeded: false },
      ]);
      await log(p).getByRole('button', { name: 'Retry' }).click();
      await log(p).getByText('The chat is briefly unavailable — try again in 2 s.').waitFor();
      expect(await messageBox(p).inputValue()).toBe('Do you ship to Norway?');
      expect(await p.locator('.msg-visitor').count()).toBe(0);
      expect(await log(p).getByRole('button', { name: 'Retry' }).count()).toBe(1);
      await p.unroute('**/v1/widget/chat/stream**');
      // The retry's answer is paced (first piece after 100 ms, the last at 1.5 s): the failure's notice goes as soon
      // as the answer starts, not when it ends.
      const { rows } = await testDb().query(`SELECT instructions FROM bots WHERE id = $1`, [bot.bot_id]);
      await testDb().query(`UPDATE bots SET instructions = '[[fake:pace-100-1500-6]]' WHERE id = $1`, [bot.bot_id]);
      await log(p).getByRole('button', { name: 'Retry' }).click();
      await p.locator('.msg-bot .bubble').waitFor();
      expect(await p.locator('.msg-bot .rating').count()).toBe(0);
      expect(await log(p).getByText('briefly unavailable', { exact: false }).count()).toBe(0);
      await log(p).getByText('Fake answer: Do you ship to Norway?').waitFor();
      expect(await messageBox(p).inputValue()).toBe('');
      expect(await log(p).getByText('cannot be reached', { exact: false }).count()).toBe(0);
      await testDb().query(`UPDATE bots SET instructions = $2 WHERE id = $1`, [bot.bot_id, rows[0].instructions]);

      // The service stopped waiting for a turn that goes on (an error frame, then an end frame with answer_pending):
      // the message stays sent, and the visitor is told the answer will come — not to try again, which would send
      // it twice.
      await serveStream(p, [
        overloaded(10),
        {
          done: true,
          session_id: sessionId,
          handoff: false,
          quota_exceeded: false,
          visitor_message_id: 'msg_still_answering',
          message_id: 'msg_the_late_answer',
          answer_pending: true,
        },
      ]);
      await send(p, 'Is the blue one in stock?');
      await log(p).getByText('The answer is taking longer than usual. It will appear here when it is ready.').waitFor();
      expect(await messageBox(p).inputValue()).toBe('');
      expect(await log(p).getByText('Is the blue one in stock?').count()).toBe(1);
      expect(await log(p).getByRole('button', { name: 'Retry' }).count()).toBe(0);
      expect(await log(p).getByText('try again', { exact: false }).count()).toBe(0);
      await shot(p, '13c-answer-pending');
      await p.unroute('**/v1/widget/chat/stream**');
      // The answer comes through the poll: it shows, and the notice that said it would goes.
      await pollBrings(p, { id: 'msg_the_late_answer', author: 'bot', text: 'Yes, in every size.' });
      await log(p).getByText('Yes, in every size.').waitFor();
      await log(p).getByText('The answer is taking longer than usual', { exact: false }).waitFor({ state: 'detached' });
      // It is the answer the end frame named: offered for rating, as a streamed one is.
      expect(await p.locator('.msg-bot').filter({ hasText: 'Yes, in every size.' }).locator('.rating').count()).toBe(1);
      await p.unroute('**/v1/widget/messages**');

      // The connection breaks off during an answer (no end frame, so no id for it): what streamed goes, the message
      // stays sent, the visitor is told the answer will come, and the first of the agent's replies the poll brings
      // is that answer, offered for rating.
      await serveStream(p, [{ delta: 'Our shop is' }]);
      await send(p, 'Where is your shop?');
      await log(p).getByText('The connection broke off during the answer.', { exact: false }).waitFor();
      expect(await log(p).getByText('Our shop is').count()).toBe(0);
      expect(await log(p).getByText('Where is your shop?').count()).toBe(1);
      await p.unroute('**/v1/widget/chat/stream**');
      await pollBrings(p, { id: 'msg_after_the_break', author: 'bot', text: 'On the high street.' });
      await log(p).getByText('On the high street.').waitFor();
      await log(p).getByText('The connection broke off', { exact: false }).waitFor({ state: 'detached' });
      expect(await p.locator('.msg-bot').filter({ hasText: 'On the high street.' }).locator('.rating').count()).toBe(1);
      await shot(p, '13d-answer-after-a-break');
      await p.unroute('**/v1/widget/messages**');

      // The model's key is refused: an error frame, shown as an alert apart from the replies, with nothing to rate.
      // (Last: the marker stays in the conversation's history, which every later turn sends to the model.)
      await send(p, 'Anyone there? [[fake:fail-401]]');
      const alert = log(p).getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toContain('The assistant is unavailable right now');
      expect(await p.locator('.msg-bot').count()).toBe(3); // the three answers before
      expect(await p.locator('.msg-bot .rating').count()).toBe(3);
      expect(await alert.locator('button').count()).toBe(0);
      await shot(p, '14-llm-failure');
    } finally {
      await second.context.close();
    }
  }, 120_000);

  it("draws the bot's Markdown (bold, a list, links with their real host) and never HTML; the visitor's own text stays as typed", async () => {
    const bot = await newBot({ botName: 'Markdown bot' });
    await allowShop(bot);
    // The fake model answers with the visitor's message itself: the answer is exactly this Markdown.
    await testDb().query(`UPDATE bots SET instructions = '[[fake:echo]]' WHERE id = $1`, [bot.bot_id]);
    const { context, page, errors } = await openShop(bot, { open: true });
    try {
      const markdown =
        'We open **Monday to Friday**:\n\n- from *nine*\n- see [our hours](https://shop.example.com/hours)\n' +
        '- pay at [bank.example.com](https://evil.example/pay)\n\n<img src=x onerror="window.hacked=1">';
      await send(page, markdown);
      const answer = page.locator('.msg-bot .bubble').last();
      await page.getByRole('button', { name: 'Helpful', exact: true }).waitFor();
      expect(await answer.locator('strong').textContent()).toBe('Monday to Friday');
      expect(await answer.locator('em').textContent()).toBe('nine');
      // A link shows the host it really goes to, most of all when its text names another one.
      expect(await answer.locator('li').allTextContents()).toEqual([
        'from nine',
        'see our hours (shop.example.com)',
        'pay at bank.example.com (evil.example)',
      ]);
      const link = answer.getByRole('link', { name: 'our hours (shop.example.com)' });
      expect(await link.getAttribute('href')).toBe('https://shop.example.com/hours');
      expect(await link.getAttribute('rel')).toContain('noopener');
      const lying = answer.getByRole('link', { name: 'bank.example.com (evil.example)' });
      expect(await lying.getAttribute('href')).toBe('https://evil.example/pay');
      // The tag is text, shown as written; nothing ran.
      expect(await answer.locator('img').count()).toBe(0);
      expect(await answer.textContent()).toContain('<img src=x onerror="window.hacked=1">');
      expect(await answer.textContent()).not.toContain('**');
      expect(await page.evaluate('window.hacked')).toBeUndefined();
      // What the visitor typed is shown as typed.
      expect(await page.locator('.msg-visitor .bubble').last().textContent()).toContain('**Monday to Friday**');
      await shot(page, '15-markdown-answer');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('obeys the page (open, close, identify), keeps Shift+Enter a new line, and says when messages come too fast', async () => {
    const bot = await newBot({ botName: 'Busy bot' });
    await allowShop(bot);
    const { context, page } = await openShop(bot);
    try {
      const dialog = page.getByRole('dialog', { name: 'Busy bot' });
      await page.evaluate('window.AgentPlatformWidget.open()');
      await dialog.waitFor();
      await page.evaluate('window.AgentPlatformWidget.close()');
      await dialog.waitFor({ state: 'hidden' });
      await page.evaluate('window.AgentPlatformWidget.open()');
      await dialog.waitFor();

      // identify(): every later chat request carries the user's token.
      await page.evaluate(`window.AgentPlatformWidget.identify({ user_token: 'customer-42' })`);
      await messageBox(page).fill('First line');
      await messageBox(page).press('Shift+Enter');
      await messageBox(page).pressSequentially('second line');
      expect(await messageBox(page).inputValue()).toBe('First line\nsecond line');
      const chat = page.waitForRequest((r) => r.url().includes('/v1/widget/chat/stream'));
      await messageBox(page).press('Enter');
      expect((await chat).postDataJSON()).toMatchObject({
        message: 'First line\nsecond line',
        user_token: 'customer-42',
      });
      await log(page).getByText('Fake answer: First line', { exact: false }).waitFor();

      // The dialogue window (60 a minute per public key and address) used up: a 429 the visitor is told about, with
      // the wait, and the text stays in the box. (Not across a minute's boundary: the windows are fixed minutes.)
      await inOneRateWindow(15_000);
      // From the browser's own address (page.request), which the window counts.
      for (let i = 0; i < 60; i++) {
        const res = await page.request.post(`${stackInfo().apiUrl}/v1/widget/session?key=${bot.keys.public_key}`);
        if (res.status() === 429) break;
      }
      const refused = page.waitForResponse((r) => r.status() === 429);
      await send(page, 'Are you still there?');
      const retryAfter = (await refused).headers()['retry-after'];
      expect(Number(retryAfter)).toBeGreaterThan(0);
      await log(page).getByText(`You're sending messages too fast — try again in ${retryAfter} s.`).waitFor();
      expect(await messageBox(page).inputValue()).toBe('Are you still there?');
      await shot(page, '16-rate-limited');
    } finally {
      await context.close();
    }
  });

  it("wears the owner's look: colour, corner, greeting, avatar, and the team's name on a person's reply", async () => {
    const bot = await newBot({ botName: 'Teal helper' });
    await allowShop(bot);
    const look = await http(`/v1/dashboard/bots/${bot.bot_id}`, {
      method: 'PATCH',
      headers: await ownerSession(bot),
      body: {
        widget_look: {
          color: '#0f766e',
          position: 'left',
          greeting: 'Welcome to Acme! Ask about orders, sizes or returns.',
          team_name: 'Acme support',
          avatar_url: 'https://avatars.example.test/acme.png',
        },
      },
    });
    expect(look.status).toBe(200);
    const { context, page } = await openShop(bot, { open: true });
    try {
      await log(page).getByText('Welcome to Acme! Ask about orders, sizes or returns.').waitFor();
      const launcher = page.getByRole('button', { name: 'Chat with Teal helper' });
      const box = (await launcher.boundingBox())!;
      expect(box.x).toBeLessThan(100);
      // The launcher eases into its colour once the configuration is read.
      await waitUntil('the launcher in teal', async () => {
        const style = await styleOf(page, '.launcher', ['background-color', 'color']);
        return style['background-color'] === 'rgb(15, 118, 110)' && style.color === 'rgb(255, 255, 255)';
      });
      expect(await inWidget<string>(page, `root.querySelector('.header-avatar').getAttribute('src')`)).toBe(
        'https://avatars.example.test/acme.png',
      );
      await page.getByRole('button', { name: 'Talk to a person' }).click();
      await page.getByRole('dialog').getByText('Waiting for a person…').waitFor();
      const sid = (await storedSession(page, bot)).session_id;
      const reply = await http(`/v1/api/operator/threads/${sid}/reply`, {
        key: bot.keys.secret_key,
        body: { text: 'Hello, Ana here.' },
      });
      expect(reply.status).toBe(200);
      await log(page).getByText('Hello, Ana here.').waitFor();
      expect(await page.locator('.msg-operator .author').textContent()).toBe('From Acme support');
      await shot(page, '18-look');
    } finally {
      await context.close();
    }
  });

  it('with nobody of the team online, a visitor asking for a person is told so and offered the contact form', async () => {
    const bot = await newBot({ botName: 'Night shift' });
    // Allowed without anyone signing in: the team has not used the dashboard.
    await testDb().query(`UPDATE bots SET allowed_origins = $2 WHERE id = $1`, [bot.bot_id, [shopOrigin]]);
    const { context, page } = await openShop(bot, { open: true });
    try {
      await page.getByRole('button', { name: 'Talk to a person' }).click();
      await log(page)
        .getByText('Nobody from the team is online right now. Leave your contact', { exact: false })
        .waitFor();
      await page.getByLabel('E-mail or phone (required)').waitFor();
      await shot(page, '17-team-offline');
      await page.getByLabel('E-mail or phone (required)').fill('night@example.com');
      await page.getByRole('button', { name: 'Send contact' }).click();
      await log(page).getByText('Thank you! We have your contact', { exact: false }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('on a page of an origin the bot does not allow, says it cannot work instead of hanging', async () => {
    const bot = await newBot({ botName: 'Elsewhere bot' });
    await allowShop(bot, ['https://the-real-shop.example']);
    const { context, page } = await openShop(bot, { open: true });
    try {
      const alert = page.getByRole('alert');
      await alert.waitFor({ timeout: 10_000 });
      expect(await alert.textContent()).toContain('The chat is not available on this page right now.');
      expect(await messageBox(page).isDisabled()).toBe(true);
      await shot(page, '15-origin-refused');
    } finally {
      await context.close();
    }
  });
});
