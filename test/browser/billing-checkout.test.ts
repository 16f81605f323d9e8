import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { type OwnPlatform, newBot, startOwnPlatform } from '../support/helpers';
import { launchChromium } from '../support/browser';
import { type FakeStripe, startFakeStripe } from '../support/fake-stripe';

/**
 * Buying a plan in the dashboard (web/dashboard/src/pages/billing-plans.tsx) against a platform of the test's own
 * configured with Stripe (a fake speaking its API and hosting a checkout page on loopback): "Choose Pro" goes to the
 * provider's page, paying comes back to the billing page, and the plan is Pro once the provider's webhook arrived.
 * Screenshots go to test-artifacts/dashboard/billing-NN-*.png.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');

let browser: Browser;
let stripe: FakeStripe;
let own: OwnPlatform;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
  stripe = await startFakeStripe();
  own = await startOwnPlatform('stripe-browser', {
    STRIPE_SECRET_KEY: stripe.secretKey,
    STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    STRIPE_PRICES: 'starter:price_starter,pro:price_pro',
    STRIPE_API_BASE: stripe.url,
  });
  stripe.webhookUrl = `${own.baseUrl}/v1/billing/webhooks/stripe`;
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await own?.stop();
  await stripe?.close();
});

describe('buying a plan', () => {
  it('goes to the provider’s checkout and comes back on the new plan', async () => {
    const bot = await newBot();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${own.baseUrl}/billing`);
    await page.getByLabel('E-mail').fill(bot.email);
    await page.getByLabel('Password', { exact: true }).fill(bot.password);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.getByRole('button', { name: 'Choose Pro' }).waitFor();
    // Business has no price configured: nothing to press; the current plan neither.
    expect(await page.getByRole('button', { name: 'Choose Business' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Choose Free' }).count()).toBe(0);
    expect(await page.getByText('No payment provider is connected').count()).toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'billing-01-choose.png'), fullPage: true });

    await page.getByRole('button', { name: 'Choose Pro' }).click();
    await page.waitForURL(`${stripe.url}/pay/**`);
    await page.getByRole('heading', { name: 'Pay for pro' }).waitFor();
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL(`${own.baseUrl}/billing?checkout=done`);
    await page.getByText('Thank you: the payment went through.').waitFor();
    await page.getByTestId('plan-name').getByText('Pro', { exact: true }).waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, 'billing-02-paid.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  });
});
