import { Loading, Page } from '../ui';

/** Placeholder until the Notifications page lands (its owner replaces this file). */
export function NotificationsPage() {
  return (
    <Page title="Notifications">
      <Loading />
    </Page>
  );
}
