import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { http, newBot, testDb } from '../support/helpers';
import { launchChromium, signIn } from '../support/browser';
import { addMember } from '../support/members';

/**
 * Two people of a team in the inbox at once (web/dashboard/src/pages/inbox/assignee.tsx), in two browser profiles:
 * while one types a reply the other sees "… is replying", one takes the conversation ("Assign to me") and the list
 * and the "Mine" filter say so in both. Screenshots go to test-artifacts/dashboard/team-NN-*.png.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');

let browser: Browser;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

const signedIn = (email: string, password: string, address: string) =>
  signIn(browser, { email, password }, address, { viewport: { width: 1280, height: 820 } });

/** Waits (through the page's polls) until the element with this test id holds `text`. */
const shown = (page: Page, testId: string, text: string) =>
  page.getByTestId(testId).filter({ hasText: text }).first().waitFor({ timeout: 15_000 });

describe('the inbox with two people of the team', () => {
  it('shows who is replying to the other, and who took the conversation, in the thread, the list and Mine', async () => {
    const bot = await newBot();
    await testDb().query(`UPDATE users SET name = 'Ana Owner' WHERE workspace_id = $1`, [bot.workspace_id]);
    const bo = await addMember(bot, 'operator');
    await testDb().query(`UPDATE users SET name = 'Bo Operator' WHERE id = $1`, [bo.userId]);
    const chat = await http('/v1/api/chat', { key: bot.keys.secret_key, body: { message: 'I need a human please' } });
    expect(chat.body.handoff).toBe(true);
    const address = `/inbox?bot=${bot.bot_id}&session=${chat.body.session_id}`;

    const ana = await signedIn(bot.email, bot.password, address);
    const boPage = await signedIn(bo.email, bo.password, address);
    for (const p of [ana.page, boPage.page]) {
      await shown(p, 'assignee', 'Unassigned');
    }

    // Bo types a reply: Ana sees it within a poll, Bo does not see himself.
    await boPage.page.getByRole('textbox', { name: /^Reply to / }).pressSequentially('Let me check your order');
    await shown(ana.page, 'team-replying', 'Bo Operator is replying…');
    expect(await boPage.page.getByTestId('team-replying').textContent()).toBe('');
    await ana.page.screenshot({ path: path.join(ARTIFACTS, 'team-01-someone-replying.png') });

    // Ana takes it instead.
    await ana.page.getByRole('button', { name: 'Assign to me' }).click();
    await shown(ana.page, 'assignee', 'Assigned to you');
    await ana.page.getByRole('button', { name: 'Unassign' }).waitFor();
    await shown(ana.page, 'thread-assignee', 'You');
    await shown(boPage.page, 'assignee', 'Assigned to Ana Owner');
    await shown(boPage.page, 'thread-assignee', 'Ana Owner');
    await ana.page.screenshot({ path: path.join(ARTIFACTS, 'team-02-assigned.png') });

    // "Mine": Ana's list has it, Bo's is empty and says so.
    await ana.page.getByRole('radio', { name: 'Mine' }).check();
    await ana.page.getByRole('heading', { name: /Assigned to you/ }).waitFor();
    await ana.page.getByTestId('thread').first().waitFor();
    expect(await ana.page.getByTestId('thread').count()).toBe(1);
    await boPage.page.getByRole('radio', { name: 'Mine' }).check();
    await boPage.page.getByText('Nothing is assigned to you').waitFor();
    expect(new URL(boPage.page.url()).searchParams.get('status')).toBe('mine');
    await boPage.page.screenshot({ path: path.join(ARTIFACTS, 'team-03-mine-empty.png') });

    expect([...ana.errors, ...boPage.errors]).toEqual([]);
  });
});
