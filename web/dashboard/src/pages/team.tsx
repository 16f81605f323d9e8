import { Loading, Page } from '../ui';

/** Placeholder until the Team page lands (its owner replaces this file). */
export function TeamPage() {
  return (
    <Page title="Team">
      <Loading />
    </Page>
  );
}
