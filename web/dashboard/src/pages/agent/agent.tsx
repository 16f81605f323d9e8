import { Loading, Page } from '../../ui';

export function AgentPage(props: { botId: string; tab?: string }) {
  return (
    <Page title={`Agent ${props.botId}${props.tab ? ` · ${props.tab}` : ''}`}>
      <Loading />
    </Page>
  );
}
