import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { BootstrapResult } from '../../lib/accounts/service';
import { http, newBot, ownerSession, waitUntil } from '../support/helpers';
import { type Opened, type ShopPage, launchChromium, openPage, signIn, startShopPage } from '../support/browser';
import { closedUntilTomorrow } from '../support/hours';

/**
 * An agent that knows its limits, and business hours (issue 21.2, 21.3), as people see them, in Debian's headless
 * Chromium against the test stack. In the widget: an answer that offers a person has a "Talk to a person" button under
 * it that hands over; outside the hours a hand-over opens the contact form at once and the header says the team is
 * away and when it is back, in the visitor's zone. In the dashboard: the agent's settings choose what it does when it
 * cannot answer and edit the hours (a refusal said in plain words); the inbox says why a conversation came and that
 * it came after hours. Screenshots go to test-artifacts/{widget,dashboard}/limits-*.png.
 */
const WIDGET_ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'widget');
const DASHBOARD_ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');

const GIVES_UP = '[[fake:tool-call:cannot_answer]]';
let browser: Browser;
let shop: ShopPage;

beforeAll(async () => {
  mkdirSync(WIDGET_ARTIFACTS, { recursive: true });
  mkdirSync(DASHBOARD_ARTIFACTS, { recursive: true });
  browser = await launchChromium();
  shop = await startShopPage();
});

afterAll(async () => {
  await browser?.close();
  await shop?.close();
});

async function settings(bot: BootstrapResult, body: Record<string, unknown>): Promise<void> {
  const res = await http(`/v1/dashboard/bots/${bot.bot_id}`, {
    method: 'PATCH',
    body,
    headers: await ownerSession(bot),
  });
  expect([res.status, res.text]).toEqual([200, expect.any(String)]);
}

/** A bot whose widget works on the shop's page, with these settings. */
async function shopBot(name: string, body: Record<string, unknown> = {}): Promise<BootstrapResult> {
  const bot = await newBot({ botName: name, workspaceName: `${name} shop` });
  await settings(bot, { allowed_origins: [shop.origin], ...body });
  return bot;
}

async function inboxThreads(bot: BootstrapResult) {
  const res = await http(`/v1/dashboard/inbox?bot_id=${bot.bot_id}&status=all`, { headers: await ownerSession(bot) });
  expect(res.status).toBe(200);
  return res.body.threads as {
    session_id: string;
    status: string;
    escalation_reason: string | null;
    after_hours: { back_at: number | null } | null;
  }[];
}

/** The shop's page with the widget open, in a browser of this zone and locale. */
async function openWidget(bot: BootstrapResult, timezoneId = 'UTC'): Promise<Opened> {
  const opened = await openPage(browser, `${shop.origin}/?key=${encodeURIComponent(bot.keys.public_key)}&open=1`, {
    viewport: { width: 1000, height: 820 },
    timezoneId,
    locale: 'en-GB',
  });
  await opened.page.getByRole('dialog').waitFor();
  return opened;
}

const log = (page: Page) => page.getByRole('log', { name: 'Conversation' });
const header = (page: Page) => page.getByRole('dialog').locator('.subtitle');

async function send(page: Page, text: string): Promise<void> {
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
}

async function storedSession(page: Page, bot: BootstrapResult): Promise<string> {
  const raw = await page.evaluate<string | null>(`localStorage.getItem('ap-widget:${bot.keys.public_key}')`);
  return (JSON.parse(raw!) as { session_id: string }).session_id;
}

const widgetShot = (page: Page, name: string) => page.screenshot({ path: path.join(WIDGET_ARTIFACTS, `${name}.png`) });
/** The window as it is (the dashboard's top bar is fixed: a full-page picture would draw it over the middle). */
const dashboardShot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(DASHBOARD_ARTIFACTS, `${name}.png`) });

describe('the widget when the agent cannot answer, and outside business hours', () => {
  it('an answer that offers a person has a button under it that hands the conversation over', async () => {
    const bot = await shopBot('Limits helper');
    const { context, page, errors } = await openWidget(bot);
    try {
      await send(page, `${GIVES_UP} What is the CEO's shoe size?`);
      const answer = page.locator('.msg-bot').last();
      const offer = answer.getByRole('button', { name: 'Talk to a person' });
      await offer.waitFor();
      expect(await answer.locator('.bubble').textContent()).toContain(
        "I can't answer that from what I know. Would you like to talk to a person from the team?",
      );
      // The offer is the only one in the conversation; the header still says the assistant answers.
      expect(await log(page).getByRole('button', { name: 'Talk to a person' }).count()).toBe(1);
      expect(await header(page).textContent()).toBe('We usually answer right away');
      await widgetShot(page, 'limits-01-offer');

      await offer.click();
      await header(page).getByText('Waiting for a person…').waitFor();
      await log(page)
        .getByText('You asked for a person. Someone from the team will reply here', { exact: false })
        .waitFor();
      // Used: the button is gone, and so is the bar's (the conversation is with the team now).
      expect(await page.getByRole('button', { name: 'Talk to a person' }).count()).toBe(0);
      const sid = await storedSession(page, bot);
      const thread = await waitUntil('the conversation in the inbox', async () =>
        (await inboxThreads(bot)).find((t) => t.session_id === sid),
      );
      expect(thread).toMatchObject({ status: 'waiting', after_hours: null });
      await widgetShot(page, 'limits-02-offer-taken');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('after hours, taking the offer opens the contact form and says when the team is back in the visitor’s time', async () => {
    const closed = closedUntilTomorrow();
    const bot = await shopBot('Night helper', { business_hours: closed.hours });
    // The visitor is in Tokyo (UTC+9, no daylight saving): the team's 09:00 UTC is 18:00 there.
    const { context, page, errors } = await openWidget(bot, 'Asia/Tokyo');
    const tokyoDay = (ms: number) => new Date(ms + 9 * 3_600_000).getUTCDate();
    const when = `${tokyoDay(Date.now()) === tokyoDay(closed.backAt) ? 'today' : 'tomorrow'} at 18:00`;
    try {
      await send(page, `${GIVES_UP} Can I return a gift without the receipt?`);
      const offer = page.locator('.msg-bot').last().getByRole('button', { name: 'Talk to a person' });
      await offer.click();

      // The contact form at once, asking for an e-mail or phone; the header does not pretend someone is coming.
      const form = page.getByRole('form', { name: 'Leave your contact' });
      await form.waitFor();
      expect(await form.locator('.contact-prompt').textContent()).toBe(
        `The team is away — back ${when}. Leave your e-mail or phone number and we'll get back to you.`,
      );
      expect(await header(page).textContent()).toBe(`Team away — back ${when}`);
      expect(await page.getByText('Waiting for a person…').count()).toBe(0);
      expect(await page.getByText('Someone from the team will reply here', { exact: false }).count()).toBe(0);
      // The API's own words come with the poll, once.
      await log(page).getByText(closed.words, { exact: false }).waitFor();
      expect(await page.getByRole('button', { name: 'Talk to a person' }).count()).toBe(0);
      await widgetShot(page, 'limits-03-after-hours-form');

      await page.getByLabel('E-mail or phone (required)').fill('gift@example.com');
      await page.getByRole('button', { name: 'Send contact' }).click();
      await log(page).getByText('Thank you! We have your contact', { exact: false }).waitFor();
      // Still away until the team is back: the header keeps saying so after the form closed.
      expect(await header(page).textContent()).toBe(`Team away — back ${when}`);
      await widgetShot(page, 'limits-04-after-hours-contact-left');

      const sid = await storedSession(page, bot);
      const thread = (await inboxThreads(bot)).find((t) => t.session_id === sid);
      expect(thread).toMatchObject({ status: 'waiting', after_hours: { back_at: closed.backAt } });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('after hours, an agent that hands over at once: the answer, the contact form, the away line', async () => {
    const closed = closedUntilTomorrow();
    const bot = await shopBot('Hand-over helper', { business_hours: closed.hours, when_unanswered: 'hand_over' });
    const { context, page, errors } = await openWidget(bot, 'UTC');
    try {
      await send(page, `${GIVES_UP} Can you refund order 1234?`);
      const form = page.getByRole('form', { name: 'Leave your contact' });
      await form.waitFor();
      expect(await header(page).textContent()).toBe('Team away — back tomorrow at 09:00');
      await log(page).getByText("I've asked a person from the team to help", { exact: false }).waitFor();
      // No offer: it was handed over already.
      expect(await log(page).getByRole('button', { name: 'Talk to a person' }).count()).toBe(0);
      // Once the poll has read the conversation, the away words are on the screen once, not twice.
      const sid = await storedSession(page, bot);
      await page.waitForResponse((r) => r.url().includes('/v1/widget/messages') && r.status() === 200);
      await page.waitForTimeout(500);
      expect(await log(page).getByText('Our team is away until', { exact: false }).count()).toBe(1);
      await widgetShot(page, 'limits-05-hand-over-after-hours');
      // Contact left, the whole conversation from its top: the agent's words, the away words, once each.
      await page.getByLabel('E-mail or phone (required)').fill('+372 5555 1234');
      await page.getByRole('button', { name: 'Send contact' }).click();
      await log(page).getByText('Thank you! We have your contact', { exact: false }).waitFor();
      await page.evaluate(
        `document.querySelector('agent-platform-widget').shadowRoot.querySelector('.log').scrollTop = 0`,
      );
      await widgetShot(page, 'limits-06-hand-over-after-hours-top');
      const thread = (await inboxThreads(bot)).find((t) => t.session_id === sid);
      expect(thread).toMatchObject({ escalation_reason: 'unanswered', after_hours: { back_at: closed.backAt } });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('after a reload the header still says the team is away, not that a person is coming', async () => {
    const closed = closedUntilTomorrow();
    const bot = await shopBot('Reload helper', { business_hours: closed.hours, when_unanswered: 'hand_over' });
    const { context, page, errors } = await openWidget(bot, 'UTC');
    try {
      await send(page, `${GIVES_UP} Where is my parcel?`);
      await page.getByRole('form', { name: 'Leave your contact' }).waitFor();
      expect(await header(page).textContent()).toBe('Team away — back tomorrow at 09:00');

      // Reloaded: the conversation comes back from the poll, which says the team is away (after_hours).
      await page.reload();
      await page.getByRole('dialog').waitFor();
      await log(page).getByText('Our team is away until', { exact: false }).waitFor();
      await header(page).getByText('Team away — back tomorrow at 09:00').waitFor();
      expect(await header(page).textContent()).toBe('Team away — back tomorrow at 09:00');
      expect(await page.getByText('Waiting for a person…').count()).toBe(0);
      await widgetShot(page, 'limits-07-after-hours-reloaded');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});

const signedIn = (bot: BootstrapResult, address: string, timezoneId = 'UTC') =>
  signIn(browser, bot, address, { viewport: { width: 1280, height: 1000 }, timezoneId, locale: 'en-GB' });

describe('the dashboard', () => {
  it('agent settings: what the agent does when it cannot answer, and business hours; a refusal in plain words', async () => {
    const bot = await newBot({ botName: 'Hours helper' });
    // The owner's browser is in Tallinn: the zone field starts there.
    const { context, page, errors } = await signedIn(bot, `/agents/${bot.bot_id}/settings`, 'Europe/Tallinn');
    const botNow = async () =>
      (await http(`/v1/dashboard/bots/${bot.bot_id}`, { headers: await ownerSession(bot) })).body;
    const windowNo = (n: number) => page.getByRole('group', { name: `Opening hours ${n}` });
    const save = page.getByRole('button', { name: 'Save changes' });
    try {
      const offer = page.getByRole('radio', { name: /^Offer a person/ });
      await offer.waitFor();
      expect(await offer.isChecked()).toBe(true);
      expect(await page.getByRole('radio', { name: 'Always open' }).isChecked()).toBe(true);
      expect(await page.getByLabel('Time zone').count()).toBe(0);

      // With handoff off the choice is off, and says why.
      const handoff = page.getByRole('checkbox', { name: /Visitors can ask for a human/ });
      await handoff.uncheck();
      expect(await offer.isDisabled()).toBe(true);
      await page.getByText('Off while visitors cannot ask for a human', { exact: false }).waitFor();
      await handoff.check();
      expect(await offer.isDisabled()).toBe(false);

      await page.getByRole('radio', { name: /^Hand over at once/ }).check();
      await page.getByRole('radio', { name: 'Set hours' }).check();
      expect(await page.getByLabel('Time zone').inputValue()).toBe('Europe/Tallinn');
      // The first opening: weekdays, nine to five; Friday off, 08:30 to 16:00.
      for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']) {
        expect(await windowNo(1).getByRole('checkbox', { name: day }).isChecked()).toBe(true);
      }
      expect(await windowNo(1).getByRole('checkbox', { name: 'Saturday' }).isChecked()).toBe(false);
      await windowNo(1).getByRole('checkbox', { name: 'Friday' }).uncheck();
      await windowNo(1).getByLabel('From').fill('08:30');
      await windowNo(1).getByLabel('To').fill('16:00');
      // A second: Saturday, until midnight.
      await page.getByRole('button', { name: 'Add opening hours' }).click();
      expect(await windowNo(2).getByRole('checkbox', { name: 'Saturday' }).isChecked()).toBe(true);
      await windowNo(2).getByLabel('From').fill('10:00');
      await windowNo(2).getByLabel('To').fill('00:00');
      await page.getByRole('group', { name: /^When the agent cannot answer/ }).scrollIntoViewIfNeeded();
      await page.evaluate('window.scrollBy(0, 300)');
      await dashboardShot(page, 'limits-10-settings-hours');
      await save.click();
      await page.getByText('Saved.', { exact: true }).waitFor();
      const saved = await botNow();
      expect(saved.when_unanswered).toBe('hand_over');
      expect(saved.business_hours).toEqual({
        time_zone: 'Europe/Tallinn',
        open: [
          { days: ['mon', 'tue', 'wed', 'thu'], from: '08:30', to: '16:00' },
          { days: ['sat'], from: '10:00', to: '24:00' },
        ],
      });

      // Reloaded, the page shows what was saved.
      await page.reload();
      await page.getByRole('radio', { name: /^Hand over at once/ }).waitFor();
      expect(await page.getByRole('radio', { name: /^Hand over at once/ }).isChecked()).toBe(true);
      expect(await page.getByRole('radio', { name: 'Set hours' }).isChecked()).toBe(true);
      expect(await page.getByLabel('Time zone').inputValue()).toBe('Europe/Tallinn');
      expect(await windowNo(1).getByRole('checkbox', { name: 'Friday' }).isChecked()).toBe(false);
      expect(await windowNo(1).getByRole('checkbox', { name: 'Thursday' }).isChecked()).toBe(true);
      expect(await windowNo(1).getByLabel('From').inputValue()).toBe('08:30');
      expect(await windowNo(1).getByLabel('To').inputValue()).toBe('16:00');
      expect(await windowNo(2).getByLabel('To').inputValue()).toBe('00:00');
      expect(await save.isDisabled()).toBe(true);

      // Refused by the API: said in plain words, the opening it names marked.
      await windowNo(1).getByLabel('From').fill('17:00');
      await windowNo(1).getByLabel('To').fill('09:00');
      await save.click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toBe(
        'Not saved.Opening hours 1: the closing time must be after the opening time.',
      );
      expect(await windowNo(1).getAttribute('class')).toContain('hours-window-invalid');
      await save.scrollIntoViewIfNeeded();
      await dashboardShot(page, 'limits-11-settings-refused');
      await windowNo(1).getByLabel('From').fill('09:00');
      await windowNo(1).getByLabel('To').fill('17:00');
      await page.getByLabel('Time zone').fill('Mars/Olympus');
      await save.click();
      await alert.getByText('Time zone: must be an IANA time zone such as Europe/Tallinn.').waitFor();
      expect(await page.getByLabel('Time zone').getAttribute('aria-invalid')).toBe('true');
      expect((await botNow()).business_hours.time_zone).toBe('Europe/Tallinn');

      // Back to always open: one opening removed first (its button names it), then the hours off.
      await page.getByLabel('Time zone').fill('Europe/Tallinn');
      await page.getByRole('button', { name: 'Remove opening hours 2' }).click();
      expect(await windowNo(2).count()).toBe(0);
      await page.getByRole('radio', { name: 'Always open' }).check();
      await save.click();
      await page.getByText('Saved.', { exact: true }).waitFor();
      expect((await botNow()).business_hours).toBeNull();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('the inbox says when the agent could not answer and when a conversation came in after hours', async () => {
    const closed = closedUntilTomorrow();
    const bot = await newBot({ botName: 'Inbox helper' });
    await settings(bot, { business_hours: closed.hours, when_unanswered: 'hand_over' });
    const unanswered = randomUUID();
    const gaveUp = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: unanswered, message: `${GIVES_UP} Where is parcel 77?` },
    });
    expect(gaveUp.body).toMatchObject({ handoff: true, after_hours: { back_at: closed.backAt } });
    // Another, within the hours, asked for in words: neither badge.
    await settings(bot, { business_hours: null });
    const asked = randomUUID();
    const requested = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: asked, message: 'Hello', escalate: true },
    });
    expect(requested.body.handoff).toBe(true);

    const { context, page, errors } = await signedIn(bot, `/inbox?bot=${bot.bot_id}&session=${unanswered}`);
    try {
      const rows = page.getByTestId('thread');
      await rows.nth(1).waitFor();
      const row = (sid: string) => page.locator(`[data-key="${bot.bot_id}/${sid}"]`);
      await row(unanswered).getByTestId('badge-unanswered').waitFor();
      expect(await row(unanswered).getByTestId('badge-unanswered').textContent()).toBe('Agent couldn’t answer');
      const listed = row(unanswered).getByTestId('badge-after-hours');
      // The list keeps when the team is back for screen readers and the badge's title.
      expect(await listed.textContent()).toMatch(/^Came in after hours, team back \w{3} 09:00$/);
      expect(await listed.getAttribute('title')).toContain('The visitor was told the team is back');
      expect(await row(asked).getByTestId('badge-unanswered').count()).toBe(0);
      expect(await row(asked).getByTestId('badge-after-hours').count()).toBe(0);

      // The open thread's header says both, with when the team is back written out.
      const title = page.locator('.thread-subtitle');
      await title.getByTestId('badge-unanswered').waitFor();
      expect(await title.getByTestId('badge-after-hours').textContent()).toMatch(
        /^Came in after hours team back \w{3} 09:00$/,
      );
      await dashboardShot(page, 'limits-12-inbox-badges');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
  it('the open conversation shows its briefing, and why it came also when it is not in the list', async () => {
    const closed = closedUntilTomorrow();
    const bot = await newBot({ botName: 'Briefing helper' });
    await settings(bot, { business_hours: closed.hours, when_unanswered: 'hand_over' });
    const sid = randomUUID();
    await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: sid, message: 'Do you ship to Norway?' },
    });
    const gaveUp = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: sid, message: `${GIVES_UP} My parcel 42 never arrived` },
    });
    expect(gaveUp.body.handoff).toBe(true);
    const transcript = await http(`/v1/dashboard/bots/${bot.bot_id}/threads/${sid}`, {
      headers: await ownerSession(bot),
    });
    const briefing = transcript.body.briefing as { text: string; at: number };
    // Several lines: the page keeps them.
    expect(briefing.text.split('\n').length).toBeGreaterThan(1);

    // "Mine": nothing is assigned to the owner, so the list does not hold the conversation the address opens.
    const { context, page, errors } = await signedIn(bot, `/inbox?status=mine&bot=${bot.bot_id}&session=${sid}`);
    try {
      await page.getByText('Nothing is assigned to you').waitFor();
      const box = page.getByTestId('briefing');
      await box.waitFor();
      // The model answered the briefing with a tool call (the visitor's marker): it quotes the conversation, and says so.
      expect(await box.locator('summary').textContent()).toBe(
        'BriefingQuoted from the conversationwritten when handed to the team, just now',
      );
      expect(await box.getAttribute('open')).not.toBeNull();
      const shown = await page.getByTestId('briefing-text').innerText();
      expect(shown.split('\n')).toEqual(briefing.text.split('\n').map((line) => line.replace(/\s+/g, ' ').trim()));
      // The header says why it came, from the transcript itself.
      const title = page.locator('.thread-subtitle');
      await title.getByTestId('badge-unanswered').waitFor();
      expect(await title.getByTestId('badge-after-hours').textContent()).toMatch(
        /^Came in after hours team back \w{3} 09:00$/,
      );
      await dashboardShot(page, 'limits-13-inbox-briefing');
      // Folded away on a click, and open again on another.
      await box.locator('summary').click();
      expect(await page.getByTestId('briefing-text').isVisible()).toBe(false);
      await box.locator('summary').click();
      expect(await page.getByTestId('briefing-text').isVisible()).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
