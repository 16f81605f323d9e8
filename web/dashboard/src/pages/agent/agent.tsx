import type { ComponentChildren } from 'preact';
import { agents } from '../../api/agents';
import { Link } from '../../router';
import { useSession } from '../../session';
import { Page } from '../../ui/page';
import { useResource } from '../../ui/resource';
import { ErrorBox, Loading } from '../../ui/status';
import { ActionsTab } from './actions';
import { ChatTab } from './chat';
import { CheckTab } from './check';
import { InsightsTab } from './insights';
import { KeysTab } from './keys';
import { KnowledgeTab } from './knowledge';
import { SettingsTab } from './settings';
import { TriggersTab } from './triggers';
import type { TabProps } from './tab';
import { WidgetTab } from './widget';

/** What each tab of an agent draws; `admin` tabs are not shown to operators. */
const TABS: { id: string; label: string; admin?: boolean; draw: (p: TabProps) => ComponentChildren }[] = [
  { id: 'settings', label: 'Settings', draw: (p) => <SettingsTab {...p} /> },
  { id: 'knowledge', label: 'Knowledge', draw: (p) => <KnowledgeTab {...p} /> },
  { id: 'check', label: 'Check', draw: (p) => <CheckTab {...p} /> },
  { id: 'insights', label: 'Insights', admin: true, draw: (p) => <InsightsTab {...p} /> },
  { id: 'widget', label: 'Widget', draw: (p) => <WidgetTab {...p} /> },
  { id: 'keys', label: 'Keys', admin: true, draw: (p) => <KeysTab {...p} /> },
  { id: 'triggers', label: 'Triggers & runs', admin: true, draw: (p) => <TriggersTab {...p} /> },
  { id: 'actions', label: 'Actions & approvals', admin: true, draw: (p) => <ActionsTab {...p} /> },
  { id: 'chat', label: 'Test chat', admin: true, draw: (p) => <ChatTab {...p} /> },
];

/** `/agents/{id}/{tab}`: one agent, its parts in tabs (each tab an address of its own). */
export function AgentPage(props: { botId: string; tab?: string }) {
  const session = useSession();
  const bot = useResource(() => agents.get(props.botId), [props.botId]);
  const tabs = TABS.filter((t) => !t.admin || session.admin);
  const tab = tabs.find((t) => t.id === (props.tab ?? 'settings'));
  const back = <Link href="/agents">← All agents</Link>;

  if (bot.state === 'loading') {
    return (
      <Page title="Agent" back={back}>
        <Loading label="Loading the agent…" />
      </Page>
    );
  }
  if (bot.state === 'error' && !bot.data) {
    const gone = bot.failure.status === 404;
    return (
      <Page title={gone ? 'Agent not found' : 'Agent'} back={back}>
        {gone ? (
          <p>This agent does not exist or was deleted.</p>
        ) : (
          <ErrorBox failure={bot.failure} onRetry={bot.retry} />
        )}
      </Page>
    );
  }
  const current = bot.data!;
  const title = tab ? `${current.name} · ${tab.label}` : current.name;
  return (
    <Page title={title} heading={current.name} back={back} wide>
      <nav aria-label="Agent sections">
        <ul class="tabs">
          {tabs.map((t) => (
            <li key={t.id}>
              <Link
                class="tab"
                href={`/agents/${current.id}/${t.id}`}
                aria-current={t.id === tab?.id ? 'page' : undefined}
              >
                {t.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {tab ? (
        <div class="tab-panel" key={tab.id}>
          {tab.draw({ bot: current, admin: session.admin, onChange: (next) => bot.set(() => next) })}
        </div>
      ) : (
        <p>There is no such section of an agent.</p>
      )}
    </Page>
  );
}
