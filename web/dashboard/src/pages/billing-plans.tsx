import type { Failure } from '../api/client';
import { type Plan, billingApi } from '../api/billing';
import { usePlace } from '../router';
import { useSession } from '../session';
import { Button } from '../ui/buttons';
import { formatNumber } from '../ui/format';
import { Panel } from '../ui/page';
import { Loaded, useAction } from '../ui/resource';
import { Badge, ErrorBox, Notice } from '../ui/status';

type PlansResource = {
  resource: Parameters<
    typeof Loaded<{ plans: Plan[]; current: string; checkout?: string[]; paid?: boolean }>
  >[0]['resource'];
  retry: () => void;
};

/**
 * The plans, and — when a payment provider is connected — a "Choose" button on each plan that can be bought: it opens
 * the provider's checkout in this tab; the plan changes once the provider says it is paid (its webhook), and the
 * person comes back to `/billing?checkout=done` (or `=cancelled`).
 */
export function PlansPanel(props: {
  plans: PlansResource;
  currentFromUsage?: string;
  priceOf: (plan: Plan) => string;
}) {
  const session = useSession();
  const checkout = useAction();

  async function choose(plan: Plan) {
    const res = await checkout.run(() => billingApi.checkout(plan.id), plan.id);
    if (res.ok) location.assign(res.value.url);
  }

  return (
    <Panel title="Plans" id="plans" description="What each plan includes every calendar month.">
      <Loaded resource={props.plans.resource} retry={props.plans.retry} label="Loading plans…">
        {(p) => (
          <>
            {checkout.failure && <ErrorBox failure={checkout.failure as Failure} title="The checkout did not open." />}
            <ul class="plan-list">
              {p.plans.map((plan) => {
                const current = plan.id === (p.current || props.currentFromUsage);
                const buyable = !current && session.admin && (p.checkout ?? []).includes(plan.id);
                return (
                  <li
                    key={plan.id}
                    class={`plan${current ? ' plan-current' : ''}`}
                    aria-current={current ? 'true' : undefined}
                  >
                    <div class="plan-head">
                      <h3>{plan.name}</h3>
                      {current && <Badge tone="info">Your plan</Badge>}
                    </div>
                    <p class="plan-price">{props.priceOf(plan)}</p>
                    <ul class="plan-facts">
                      <li>{formatNumber(plan.monthly_conversations)} conversations a month</li>
                      <li>{formatNumber(plan.monthly_credits)} credits a month</li>
                    </ul>
                    {buyable && (
                      <Button
                        variant="primary"
                        small
                        busy={checkout.busy === plan.id}
                        busyLabel="Opening the checkout…"
                        disabled={Boolean(checkout.busy)}
                        onClick={() => void choose(plan)}
                      >
                        Choose {plan.name}
                      </Button>
                    )}
                  </li>
                );
              })}
            </ul>
          </>
        )}
      </Loaded>
    </Panel>
  );
}

/** Back from the provider's checkout: what happened, in a line (the plan itself shows once the payment is confirmed). */
export function CheckoutOutcome() {
  const outcome = usePlace().search.get('checkout');
  if (outcome === 'done')
    return (
      <div class="checkout-outcome">
        <Notice tone="success">
          Thank you: the payment went through. Your plan changes as soon as the payment provider confirms it — usually
          within a minute; reload this page to see it.
        </Notice>
      </div>
    );
  if (outcome === 'cancelled')
    return (
      <div class="checkout-outcome">
        <Notice tone="info">The checkout was cancelled: nothing was charged.</Notice>
      </div>
    );
  return null;
}
