import { Loading, Page } from '../ui';

/** Placeholder until the Inbox page lands (its owner replaces this file). */
export function InboxPage() {
  return (
    <Page title="Inbox">
      <Loading />
    </Page>
  );
}
