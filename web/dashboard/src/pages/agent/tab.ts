import type { Bot } from '../../api/agents';

/** What every tab of an agent's page is given (agent.tsx draws the tabs; each tab file imports only this). */
export interface TabProps {
  bot: Bot;
  /** The agent as the API now has it, after a change made in a tab. */
  onChange: (bot: Bot) => void;
  admin: boolean;
}
