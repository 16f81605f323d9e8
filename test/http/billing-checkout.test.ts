/**
 * Paying for a plan (docs/decisions/092-paying-for-a-plan.md): without a payment provider the dashboard says plans are
 * recorded by the operators; with Stripe (a fake speaking its API on loopback) the owner opens a checkout, and the
 * plan changes when Stripe's signed webhook says it is paid — once per event, never on a bad or stale signature — and
 * goes back to Free when the subscription ends.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type OwnPlatform, http, newBot, ownerSession, startOwnPlatform, testDb } from '../support/helpers';
import { type FakeStripe, startFakeStripe, stripeSignature } from '../support/fake-stripe';
import { addMember, sessionOf } from '../support/members';

const planOf = async (workspaceId: string) =>
  (
    await testDb().query<{ plan: string; monthly_conversation_quota: number; payment_subscription_id: string | null }>(
      `SELECT plan, monthly_conversation_quota, payment_subscription_id FROM workspaces WHERE id = $1`,
      [workspaceId],
    )
  ).rows[0];

describe('paying for a plan', () => {
  it('without a payment provider: nothing to buy, checkout 409, the webhook 404', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    expect((await http('/v1/billing/plans', { headers: owner })).body.checkout).toEqual([]);
    const checkout = await http('/v1/billing/checkout', { headers: owner, body: { plan: 'pro' } });
    expect(checkout.status).toBe(409);
    expect(checkout.body.error).toMatch(/no payment provider/);
    expect((await http('/v1/billing/webhooks/stripe', { body: { id: 'evt_1' } })).status).toBe(404);
  });

  describe('with Stripe', () => {
    let stripe: FakeStripe;
    let own: OwnPlatform;
    beforeAll(async () => {
      stripe = await startFakeStripe();
      own = await startOwnPlatform('stripe', {
        STRIPE_SECRET_KEY: stripe.secretKey,
        STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
        STRIPE_PRICES: 'starter:price_starter,pro:price_pro',
        STRIPE_API_BASE: stripe.url,
      });
    }, 60_000);
    afterAll(async () => {
      await own?.stop();
      await stripe?.close();
    });

    it('opens a checkout, and the paid event (once) sets the plan; an ended subscription sets Free', async () => {
      const bot = await newBot();
      const owner = await ownerSession(bot);
      const call = (path: string, init: Parameters<typeof http>[1] = {}) =>
        http(path, { ...init, baseUrl: own.baseUrl });
      expect((await call('/v1/billing/plans', { headers: owner })).body).toMatchObject({
        checkout: ['starter', 'pro'],
        paid: false,
      });

      const opened = await call('/v1/billing/checkout', { headers: owner, body: { plan: 'pro' } });
      expect(opened.status).toBe(200);
      const session = stripe.sessions.at(-1)!;
      expect(opened.body).toEqual({ url: `${stripe.url}/pay/${session.id}` });
      expect(session.fields).toMatchObject({
        mode: 'subscription',
        'line_items[0][price]': 'price_pro',
        client_reference_id: bot.workspace_id,
        customer_email: bot.email,
        success_url: `${own.baseUrl}/billing?checkout=done`,
        cancel_url: `${own.baseUrl}/billing?checkout=cancelled`,
      });
      // Not paid yet: the plan is unchanged.
      expect((await planOf(bot.workspace_id)).plan).toBe('free');

      const webhook = `${own.baseUrl}/v1/billing/webhooks/stripe`;
      const paid = await stripe.pay(session.id, webhook);
      expect(paid).toMatchObject({ status: 200, body: { received: true } });
      const after = await planOf(bot.workspace_id);
      expect(after).toMatchObject({ plan: 'pro', monthly_conversation_quota: 25_000 });
      expect(after.payment_subscription_id).toMatch(/^sub_/);
      expect((await call('/v1/billing/plans', { headers: owner })).body.current).toBe('pro');

      // Stripe resends an event until it is acknowledged: the same event changes nothing the second time.
      await testDb().query(`UPDATE workspaces SET plan = 'starter' WHERE id = $1`, [bot.workspace_id]);
      const resent = stripe.sessions.at(-1)!;
      expect(resent.id).toBe(session.id);
      const again = await stripe.send(webhook, {
        id: paid.eventId,
        type: 'checkout.session.completed',
        object: {
          client_reference_id: bot.workspace_id,
          metadata: { plan: 'pro' },
          payment_status: 'paid',
          subscription: after.payment_subscription_id,
        },
      });
      expect(again.status).toBe(200);
      expect((await planOf(bot.workspace_id)).plan).toBe('starter');
      await testDb().query(`UPDATE workspaces SET plan = 'pro' WHERE id = $1`, [bot.workspace_id]);

      // The current plan is not bought twice, and a paying workspace is not sold a second subscription.
      expect((await call('/v1/billing/checkout', { headers: owner, body: { plan: 'pro' } })).status).toBe(409);
      const second = await call('/v1/billing/checkout', { headers: owner, body: { plan: 'starter' } });
      expect(second.status).toBe(409);
      expect(second.body.error).toMatch(/pays for its plan already/);
      expect((await call('/v1/billing/plans', { headers: owner })).body).toMatchObject({ checkout: [], paid: true });

      // The subscription ends: back to Free.
      const ended = await stripe.send(webhook, {
        id: `evt_end_${bot.workspace_id}`,
        type: 'customer.subscription.deleted',
        object: { id: after.payment_subscription_id, object: 'subscription' },
      });
      expect(ended.status).toBe(200);
      expect(await planOf(bot.workspace_id)).toMatchObject({
        plan: 'free',
        monthly_conversation_quota: 1_000,
        payment_subscription_id: null,
      });
    });

    it('refuses forged, stale and unsigned events, plans it cannot sell, and operators', async () => {
      const bot = await newBot();
      const owner = await ownerSession(bot);
      const webhook = `${own.baseUrl}/v1/billing/webhooks/stripe`;
      const forged = {
        id: `evt_forged_${bot.workspace_id}`,
        type: 'checkout.session.completed',
        object: { client_reference_id: bot.workspace_id, metadata: { plan: 'pro' }, payment_status: 'paid' },
      };
      const payload = JSON.stringify({ id: forged.id });
      const wrongSecret = await stripe.send(webhook, forged, { signature: stripeSignature(payload, 'whsec_other') });
      expect(wrongSecret.status).toBe(400);
      const stale = await stripe.send(webhook, forged, { at: Math.floor(Date.now() / 1000) - 3600 });
      expect(stale.status).toBe(400);
      expect(stale.body).toMatchObject({ code: 'bad_request', error: expect.stringMatching(/too old/) });
      const unsigned = await fetch(webhook, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(unsigned.status).toBe(400);
      expect((await planOf(bot.workspace_id)).plan).toBe('free');

      const call = (path: string, init: Parameters<typeof http>[1] = {}) =>
        http(path, { ...init, baseUrl: own.baseUrl });
      const business = await call('/v1/billing/checkout', { headers: owner, body: { plan: 'business' } });
      expect(business.status).toBe(400);
      expect(business.body.error).toMatch(/starter, pro/);
      expect((await call('/v1/billing/checkout', { headers: owner, body: {} })).status).toBe(400);
      const operator = await sessionOf(await addMember(bot, 'operator'), own.baseUrl);
      expect((await call('/v1/billing/checkout', { headers: operator, body: { plan: 'pro' } })).status).toBe(403);
    });
  });
});
