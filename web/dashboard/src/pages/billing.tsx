import { Loading, Page } from '../ui';

/** Placeholder until the Billing page lands (its owner replaces this file). */
export function BillingPage() {
  return (
    <Page title="Billing">
      <Loading />
    </Page>
  );
}
