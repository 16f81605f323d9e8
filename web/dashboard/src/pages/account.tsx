import { Loading, Page } from '../ui';

export function AccountPage() {
  return (
    <Page title="Account">
      <Loading />
    </Page>
  );
}
