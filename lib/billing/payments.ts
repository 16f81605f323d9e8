import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError, errors } from '../errors';

/**
 * A payment provider behind the dashboard's "Choose plan" (docs/decisions/092-paying-for-a-plan.md): it opens a
 * hosted checkout for a plan and, once paid, tells the platform through a signed webhook. The platform records the
 * plan itself (lib/billing/plan-changes.ts `setPlan`), as the operators' `agentctl billing plan` does. Stripe is the one
 * implemented; another provider implements these two functions.
 */
export interface PaymentProvider {
  readonly name: string;
  /** Plans that can be bought (a price is configured for them). */
  readonly plans: readonly string[];
  startCheckout(input: CheckoutInput): Promise<{ id: string; url: string }>;
  /** Verifies a webhook's signature and reads it; a bad or stale signature is a 400. */
  readEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): PaymentEvent;
}

export interface CheckoutInput {
  workspaceId: string;
  planId: string;
  email: string;
  successUrl: string;
  cancelUrl: string;
}

export type PaymentEvent =
  | { id: string; kind: 'plan_paid'; workspaceId: string; planId: string; subscriptionId: string | null }
  | { id: string; kind: 'subscription_ended'; subscriptionId: string }
  | { id: string; kind: 'ignored'; type: string };

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** Plan id → Stripe price id. */
  prices: Record<string, string>;
  apiBase: string;
  /** How old a webhook's signed timestamp may be (Stripe's own libraries use five minutes). */
  toleranceSeconds?: number;
  fetch?: typeof fetch;
}

/** `starter:price_123,pro:price_456` → { starter: 'price_123', pro: 'price_456' }. */
export function parsePrices(spec: string): Record<string, string> {
  const prices: Record<string, string> = {};
  for (const entry of spec
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [plan, price] = entry.split(':').map((p) => p.trim());
    if (!plan || !price) throw new Error(`STRIPE_PRICES: "${entry}" is not plan:price_id`);
    prices[plan] = price;
  }
  return prices;
}

/**
 * Stripe Checkout in subscription mode: the session carries the workspace (`client_reference_id`) and the plan
 * (`metadata[plan]`); `checkout.session.completed` puts the workspace on the plan, `customer.subscription.deleted`
 * takes it back to Free. The API's address is the operator's configuration, not a user's, so it is called with the
 * platform's fetch, as the model is (lib/http/model-fetch.ts), not through the SSRF-safe client.
 */
export function createStripeProvider(settings: StripeSettings): PaymentProvider {
  const doFetch = settings.fetch ?? fetch;
  const tolerance = settings.toleranceSeconds ?? 300;
  return {
    name: 'stripe',
    plans: Object.keys(settings.prices),

    async startCheckout(input) {
      const price = settings.prices[input.planId];
      if (!price) throw errors.badRequest(`plan: ${input.planId} cannot be bought here`);
      const form = new URLSearchParams({
        mode: 'subscription',
        'line_items[0][price]': price,
        'line_items[0][quantity]': '1',
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
        client_reference_id: input.workspaceId,
        customer_email: input.email,
        'metadata[workspace_id]': input.workspaceId,
        'metadata[plan]': input.planId,
        'subscription_data[metadata][workspace_id]': input.workspaceId,
        'subscription_data[metadata][plan]': input.planId,
      });
      let res: Response;
      try {
        res = await doFetch(`${settings.apiBase.replace(/\/$/, '')}/v1/checkout/sessions`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${settings.secretKey}`,
            'Content-Type': 'application/x-www-form-urlencoded',
          },
          body: form.toString(),
          signal: AbortSignal.timeout(15_000),
        });
      } catch {
        throw new ApiError('service_unavailable', 'The payment provider cannot be reached; try again in a moment');
      }
      const body = (await res.json().catch(() => ({}))) as { id?: string; url?: string; error?: { message?: string } };
      if (!res.ok || !body.id || !body.url) {
        // The provider's words stay in our logs (they may name our configuration); the owner is told to retry.
        throw new ApiError('service_unavailable', 'The payment provider refused to open a checkout; try again later');
      }
      return { id: body.id, url: body.url };
    },

    readEvent(rawBody, headers) {
      const header = headers['stripe-signature'];
      const signature = Array.isArray(header) ? header[0] : header;
      if (!signature) throw errors.badRequest('Stripe-Signature header is missing');
      const parts = signature.split(',').map((p) => p.trim().split('='));
      const timestamp = Number(parts.find(([k]) => k === 't')?.[1]);
      const candidates = parts.filter(([k]) => k === 'v1').map(([, v]) => v ?? '');
      if (!Number.isFinite(timestamp) || candidates.length === 0)
        throw errors.badRequest('Stripe-Signature is malformed');
      if (Math.abs(Date.now() / 1000 - timestamp) > tolerance)
        throw errors.badRequest('Stripe-Signature is too old (or from the future)');
      const expected = createHmac('sha256', settings.webhookSecret).update(`${timestamp}.`).update(rawBody).digest();
      const valid = candidates.some((hex) => {
        const given = Buffer.from(hex, 'hex');
        return given.length === expected.length && timingSafeEqual(given, expected);
      });
      if (!valid) throw errors.badRequest('Stripe-Signature does not match');

      let event: { id?: string; type?: string; data?: { object?: Record<string, unknown> } };
      try {
        event = JSON.parse(rawBody.toString('utf8')) as typeof event;
      } catch {
        throw errors.badRequest('The event is not JSON');
      }
      const object = event.data?.object ?? {};
      const metadata = (object.metadata ?? {}) as Record<string, string>;
      if (!event.id || !event.type) throw errors.badRequest('The event has no id or type');
      if (event.type === 'checkout.session.completed' && object.payment_status !== 'unpaid') {
        const workspaceId = (object.client_reference_id as string | undefined) ?? metadata.workspace_id;
        const planId = metadata.plan;
        if (!workspaceId || !planId) return { id: event.id, kind: 'ignored', type: event.type };
        const subscription = typeof object.subscription === 'string' ? object.subscription : null;
        return { id: event.id, kind: 'plan_paid', workspaceId, planId, subscriptionId: subscription };
      }
      if (event.type === 'customer.subscription.deleted' && typeof object.id === 'string') {
        return { id: event.id, kind: 'subscription_ended', subscriptionId: object.id };
      }
      return { id: event.id, kind: 'ignored', type: event.type };
    },
  };
}
