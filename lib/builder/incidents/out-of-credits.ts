import { type AgentFacts, type Incident, ms } from './kinds';

/** `out_of_credits`: the workspace's balance is 0 or less; since its last ledger change. From the agent's row. */
export function outOfCredits(bot: AgentFacts): Incident[] {
  if (bot.balance > 0) return [];
  return [
    {
      kind: 'out_of_credits',
      severity: 'blocking',
      problem:
        `Your workspace has run out of credits (balance ${bot.balance}), so ${bot.name} cannot answer anyone: ` +
        `chat messages get a "service unavailable" reply and triggers do not run.` +
        (bot.refused_runs ? ` ${bot.refused_runs} run(s) of this agent were refused so far.` : ''),
      fix: 'Add credits in the dashboard (billing). I cannot buy credits with a builder key, so this one is yours to do.',
      builder_can_fix: false,
      since: ms(bot.balance_changed_at),
      details: { balance: bot.balance, refused_runs: bot.refused_runs },
    },
  ];
}
