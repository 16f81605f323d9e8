import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bootstrapWorkspace } from '../lib/accounts/service';
import { createBillingService } from '../lib/billing/service';
import { loadBot, startConversation } from '../lib/conversations/sessions';
import { createDb } from '../lib/db';
import { migrate } from '../lib/migrate';
import { createSecretBox } from '../lib/secret-box';
import { startEmbeddedPostgres } from '../stack/postgres';
import { freePort } from '../stack/processes';
import { benchOptions, summarize } from './measure';

const HELP = `Usage: npm run bench -- new-conversation [--month 0,10000,100000] [--starts 200]

What a new conversation's statement costs (lib/conversations/turn.ts, startConversation: the monthly quota's check
and the insert) as a workspace's month fills. For each --month, that many conversations started earlier this month,
then --starts new ones, one at a time, timed: first with nothing tallied (every check counts the month's rows, as
each did before the tally), then after the maintenance schedule's tally (lib/billing/service.ts, tallyConversations:
the check adds the minutes since). The Business plan's quota is 100 000 a month. Starts its own embedded Postgres.
Results: bench/results/new-conversation.json.`;

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const months = arg('--month', '0,10000,100000').split(',').map(Number);
  const starts = Number(arg('--starts', '200'));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agent-platform-bench-conv-'));
  const pg = await startEmbeddedPostgres({ dataDir, port: await freePort(), database: 'bench', quiet: true });
  const db = createDb(pg.url, { max: 2, applicationName: 'bench-new-conversation' });
  const results: Record<string, unknown>[] = [];
  try {
    await migrate(pg.url);
    // The bench bot's signing secrets are sealed with a throwaway key: nothing ever opens them.
    const made = await bootstrapWorkspace(db, createSecretBox(randomBytes(32).toString('hex')), {
      workspaceName: 'bench-new-conversation',
      monthlyConversationQuota: 10_000_000,
    });
    const bot = await loadBot(db, made.bot_id);
    const billing = createBillingService({ db });
    const timed = async () => {
      const ms: number[] = [];
      for (let i = 0; i < starts; i++) {
        const started = performance.now();
        const conversation = await startConversation(db, bot, randomUUID(), { checkQuota: true });
        ms.push(performance.now() - started);
        if (!conversation) throw new Error('the quota refused a conversation');
      }
      return summarize(ms);
    };
    for (const month of months) {
      await db.query(`DELETE FROM conversations WHERE workspace_id = $1`, [bot.workspace_id]);
      await db.query(`DELETE FROM conversation_tallies WHERE workspace_id = $1`, [bot.workspace_id]);
      // Earlier this month: spread over the time since the month began, up to two minutes ago.
      await db.query(
        `INSERT INTO conversations (session_id, bot_id, workspace_id, created_at)
         SELECT gen_random_uuid(), $1, $2,
                date_trunc('month', now()) + (now() - interval '2 minutes' - date_trunc('month', now())) * (i::float8 / $3)
           FROM generate_series(1, $3) i`,
        [bot.id, bot.workspace_id, month],
      );
      await db.query(`VACUUM ANALYZE conversations`);
      const untallied = await timed();
      await billing.tallyConversations();
      const tallied = await timed();
      const row = { month_conversations: month, untallied_ms: untallied, tallied_ms: tallied };
      console.log(JSON.stringify(row));
      results.push(row);
    }
  } finally {
    await db.end();
    await pg.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  writeFileSync(
    path.join(__dirname, 'results', 'new-conversation.json'),
    JSON.stringify({ benchmark: 'new-conversation', at: new Date().toISOString(), starts, results }, null, 2),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
