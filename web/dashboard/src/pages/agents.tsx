import { Loading, Page } from '../ui';

export function AgentsPage() {
  return (
    <Page title="Agents">
      <Loading />
    </Page>
  );
}
