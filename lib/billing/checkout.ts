import { withTransaction } from '../db';
import { errors } from '../errors';
import type { BillingDeps } from './deps';
import { isPlanId, planOf } from './plans';

/**
 * Which plans the dashboard can sell this workspace (a payment provider is configured with their prices; none
 * without one), and whether it pays for its plan already (then its plan is changed by the operators).
 */
export async function checkoutOptions(
  { db, payments }: BillingDeps,
  workspaceId: string,
): Promise<{ checkout: readonly string[]; paid: boolean }> {
  const res = await db.query<{ paid: boolean }>(
    `SELECT payment_subscription_id IS NOT NULL AS paid FROM workspaces WHERE id = $1`,
    [workspaceId],
  );
  const paid = res.rows[0]?.paid ?? false;
  return { checkout: payments && !paid ? payments.plans : [], paid };
}

/**
 * Opens the provider's checkout for a plan; the owner pays there and comes back to `returnUrl`. The plan changes
 * when the provider's webhook says it is paid (`handlePaymentEvent`), not here.
 */
export async function startCheckout(
  { db, payments }: BillingDeps,
  session: { workspaceId: string; email: string },
  planId: string,
  returnUrl: string,
): Promise<{ url: string }> {
  if (!payments) {
    throw errors.conflict('Plans cannot be bought here: no payment provider is configured; ask the operators');
  }
  if (!isPlanId(planId) || !payments.plans.includes(planId)) {
    throw errors.badRequest(`plan: one of ${payments.plans.join(', ')}`);
  }
  const current = await db.query<{ plan: string; payment_subscription_id: string | null }>(
    `SELECT plan, payment_subscription_id FROM workspaces WHERE id = $1`,
    [session.workspaceId],
  );
  if (current.rows[0]?.plan === planId) throw errors.conflict('The workspace is on this plan already');
  // A second checkout would start a second subscription beside the first: a paid plan is changed by the operators.
  if (current.rows[0]?.payment_subscription_id) {
    throw errors.conflict('The workspace pays for its plan already: ask the operators to change it');
  }
  const { url } = await payments.startCheckout({
    workspaceId: session.workspaceId,
    planId,
    email: session.email,
    successUrl: `${returnUrl}?checkout=done`,
    cancelUrl: `${returnUrl}?checkout=cancelled`,
  });
  return { url };
}

/**
 * A payment provider's webhook (signature checked by the provider's reader): a paid checkout puts the workspace on
 * its plan, an ended subscription takes it back to Free. Each event is handled once, in one transaction with its
 * effect: a resent event changes nothing.
 */
export async function handlePaymentEvent(
  { db, payments }: BillingDeps,
  rawBody: Buffer,
  headers: Record<string, string | string[] | undefined>,
) {
  if (!payments) throw errors.notFound('No payment provider is configured');
  const event = payments.readEvent(rawBody, headers);
  await withTransaction(db, async (tx) => {
    const workspaceId =
      event.kind === 'plan_paid'
        ? event.workspaceId
        : event.kind === 'subscription_ended'
          ? ((
              await tx.query<{ id: string }>(`SELECT id FROM workspaces WHERE payment_subscription_id = $1`, [
                event.subscriptionId,
              ])
            ).rows[0]?.id ?? null)
          : null;
    const fresh = await tx.query(
      `INSERT INTO payment_events (provider, event_id, kind, workspace_id)
       SELECT $1, $2, $3, (SELECT id FROM workspaces WHERE id = $4)
       ON CONFLICT DO NOTHING`,
      [payments.name, event.id, event.kind, workspaceId],
    );
    if (!fresh.rowCount || !workspaceId) return;
    if (event.kind === 'plan_paid' && isPlanId(event.planId)) {
      const plan = planOf(event.planId);
      await tx.query(
        `UPDATE workspaces SET plan = $2, monthly_conversation_quota = $3, payment_subscription_id = $4 WHERE id = $1`,
        [workspaceId, plan.id, plan.monthly_conversations, event.subscriptionId],
      );
    } else if (event.kind === 'subscription_ended') {
      const free = planOf('free');
      await tx.query(
        `UPDATE workspaces SET plan = $2, monthly_conversation_quota = $3, payment_subscription_id = NULL
          WHERE id = $1`,
        [workspaceId, free.id, free.monthly_conversations],
      );
    }
  });
  return { received: true as const };
}
