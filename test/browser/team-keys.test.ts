import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { http, newBot, testDb, uniqueClientAddress } from '../support/helpers';
import { launchChromium, signIn } from '../support/browser';
import { addMember, sessionOf } from '../support/members';

/**
 * Keys that outlive their holder, on the team page (issue 40, item 7; web/dashboard/src/pages/team-seen-keys.tsx):
 * after the owner removes one admin and makes another an operator, "Keys to rotate" lists the keys each was shown that
 * still work, and "Rotate them all" replaces them in one action, the new values shown once. A workspace whose owner has
 * not confirmed the address offers no agent to create. Screenshots go to test-artifacts/dashboard/keys-NN-*.png.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');

let browser: Browser;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

/** An admin who creates an agent named `agent` (and so is shown its keys). */
async function adminWithAgent(bot: Awaited<ReturnType<typeof newBot>>, agent: string) {
  const person = await addMember(bot, 'admin');
  const created = await http('/v1/dashboard/bots', { headers: await sessionOf(person), body: { name: agent } });
  expect(created.status).toBe(201);
  return { person, secret: created.body.keys.secret_key as string };
}

describe('the team page after an admin leaves', () => {
  it('lists the keys they saw and rotates them all in one action', async () => {
    const bot = await newBot();
    await testDb().query(`UPDATE users SET name = 'Ana Owner' WHERE id = $1`, [bot.user_id]);
    const leaving = await adminWithAgent(bot, 'Support agent');
    const demoted = await adminWithAgent(bot, 'Sales agent');

    const { page, errors } = await signIn(browser, { email: bot.email, password: bot.password }, '/team', {
      viewport: { width: 1280, height: 900 },
    });
    const panel = page.getByRole('region', { name: 'Keys to rotate' });
    await panel.getByText('No key that still works was shown to anyone who left.').waitFor();

    // The owner makes one an operator, and removes the other.
    await page.getByLabel(`Role of ${demoted.person.email}`).selectOption('operator');
    await panel.getByTestId('seen-person').filter({ hasText: demoted.person.email }).waitFor();
    await page.getByRole('button', { name: `Remove ${leaving.person.email}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Keys they were shown that still work are listed to rotate').waitFor();
    await dialog.getByRole('button', { name: `Remove ${leaving.person.email}` }).click();
    const removedPerson = panel.getByTestId('seen-person').filter({ hasText: leaving.person.email });
    await removedPerson.waitFor();
    await removedPerson.getByText('Removed').waitFor();
    expect(await removedPerson.getByTestId('seen-key').allTextContents()).toEqual([
      expect.stringMatching(/^Secret key of Support agent sk_…\w{4} · shown /),
      expect.stringMatching(/^Visitor identity secret of Support agent idsec_…\w{4} · shown /),
      expect.stringMatching(/^Handoff webhook secret of Support agent whsec_…\w{4} · shown /),
    ]);
    const demotedPerson = panel.getByTestId('seen-person').filter({ hasText: demoted.person.email });
    await demotedPerson.getByText('Now an operator').waitFor();
    // Fingerprints only: the keys themselves are nowhere on the page.
    expect(await page.content()).not.toContain(leaving.secret);
    // The page brought the panel into view after the removal, its title clear of the top bar.
    await page.screenshot({ path: path.join(ARTIFACTS, 'keys-01-to-rotate.png') });

    // One action: the six keys are replaced, the old ones stop, the new values are shown once.
    await panel.getByRole('button', { name: 'Rotate them all (6 keys)' }).click();
    const fresh = panel.getByRole('region', { name: 'New keys' });
    await fresh.waitFor();
    const newSecrets = await fresh.getByTestId('rotated-secret').allTextContents();
    expect(newSecrets).toHaveLength(2);
    await panel.getByText('No key that still works was shown to anyone who left.').waitFor();
    await page.locator('#seen-keys').evaluate((el) => el.scrollIntoView());
    await page.screenshot({ path: path.join(ARTIFACTS, 'keys-02-rotated.png') });
    for (const old of [leaving.secret, demoted.secret]) {
      expect((await http('/v1/api/knowledge', { key: old })).status).toBe(401);
    }
    for (const key of newSecrets) expect((await http('/v1/api/knowledge', { key })).status).toBe(200);
    await fresh.getByRole('button', { name: 'I have copied them' }).click();
    await fresh.waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
  });
});

describe('a sign-up before its address is confirmed', () => {
  it('offers no agent to create, and says why', async () => {
    const email = `owner+${Date.now().toString(36)}@example.com`;
    const password = 'correct horse battery';
    const signed = await http('/v1/auth/signup', {
      body: { email, password, workspace_name: 'Acme' },
      headers: { 'X-Forwarded-For': uniqueClientAddress() },
    });
    expect(signed.status).toBe(201);
    const { page, errors } = await signIn(browser, { email, password }, '/agents', {
      viewport: { width: 1280, height: 800 },
    });
    await page.getByTestId('agents-wait-for-confirmation').waitFor();
    expect(await page.getByRole('button', { name: 'New agent' }).count()).toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'keys-03-agents-before-confirmation.png') });
    expect(errors).toEqual([]);
  });
});
