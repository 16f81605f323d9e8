import { type AgentFacts, type Incident, ms } from './kinds';

/** `knowledge_empty`: no knowledge source; since the agent's creation if it never had one. From the agent's row. */
export function knowledgeEmpty(bot: AgentFacts, scansRunning: number): Incident[] {
  if (bot.sources !== 0) return [];
  return [
    {
      kind: 'knowledge_empty',
      severity: 'warning',
      problem:
        `The knowledge base of ${bot.name} is empty, so it answers without any of your information.` +
        (scansRunning ? ' A site scan is under way and may fill it.' : ''),
      fix: "Send me the text to add (prices, opening hours, answers to common questions), or your site's address to scan.",
      builder_can_fix: true,
      // Never written: empty since it was created; emptied later: the moment is not recorded.
      since: Number(bot.knowledge_version) === 0 ? ms(bot.created_at) : null,
      details: { knowledge_sources: 0, scans_running: scansRunning },
    },
  ];
}
