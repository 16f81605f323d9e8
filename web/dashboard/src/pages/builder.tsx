import { Loading, Page } from '../ui';

export function BuilderPage() {
  return (
    <Page title="Builder">
      <Loading />
    </Page>
  );
}
