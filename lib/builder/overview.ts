import { creditBalanceSql } from '../credits/service';
import type { Queryable } from '../db';
import { errors } from '../errors';
import { LIMITS } from '../limits';
import { approvalWorkflowId } from '../../workflows/contracts/action-approval';

/**
 * The data of the builder's two read-only tools (spec, Builder over MCP: `agents` and `incidents`). Everything is
 * read from Postgres in a fixed number of statements, whatever the number of agents, triggers or runs: one for
 * `agents`, two round trips for `incidents` (the agent first, so another workspace's agent learns nothing, then the
 * five signal reads side by side). The payload shapes are decided in docs/decisions/065-builder-agents-tool.md and 066-builder-incidents-tool.md.
 */

/** One agent of the workspace as the `agents` tool lists it. */
export interface AgentOverview {
  id: string;
  name: string;
  /** Knowledge sources, whatever wrote them (the API, the builder, a site scan). */
  knowledge_sources: number;
  /** Where the agent can be woken: its chat (every agent has one: API and widget) and its triggers (not deleted). */
  channels: { chat: true; triggers: number; total: number };
  /** True on the agent the presenting builder key was issued for; false on the others and for workspace keys. */
  issued_for_this_key: boolean;
}

export type IncidentSeverity = 'blocking' | 'warning';

/** Why the AI service refused an agent's requests, read from the failed run's recorded error (lib/llm.ts). */
export type LlmFailureReason = 'key_or_funds' | 'model_not_found' | 'request_rejected' | 'other';

interface IncidentOf<K extends string, D> {
  /** Stable code; new kinds may be added, so a client shows an unknown kind by its `problem` and `fix`. */
  kind: K;
  /** `blocking`: the agent, or one of its channels, does not work now. `warning`: it works, worse than it should. */
  severity: IncidentSeverity;
  /** What is wrong, in the owner's words. */
  problem: string;
  /** What to do about it; says so when the builder can do it when asked. */
  fix: string;
  /** True when asking the builder is enough to fix it; false when the owner (or the platform's operator) must act. */
  builder_can_fix: boolean;
  /** Unix ms when the problem started, when known. */
  since: number | null;
  details: D;
}

export type Incident =
  | IncidentOf<'out_of_credits', { balance: number; refused_runs: number }>
  | IncidentOf<
      'llm_unavailable',
      {
        reason: LlmFailureReason;
        /** The agent's own model setting; null means the platform's default model. */
        model: string | null;
        failed_runs: number;
        last_run_id: string;
        last_error: string | null;
      }
    >
  | IncidentOf<'trigger_paused' | 'trigger_failing', TriggerIncidentDetails>
  | IncidentOf<
      'webhook_failing',
      {
        url: string;
        failed_deliveries: number;
        last_delivery_id: string;
        last_event: string;
        last_error: string | null;
      }
    >
  | IncidentOf<'scan_failed', { scan_id: string; url: string; error: string | null; stopped: boolean }>
  | IncidentOf<'knowledge_empty', { knowledge_sources: 0; scans_running: number }>
  | IncidentOf<'approval_waiting', { approvals: number; approval_ids: string[]; actions: string[] }>;

export type IncidentKind = Incident['kind'];

export interface TriggerIncidentDetails {
  trigger_id: string;
  trigger_name: string;
  trigger_kind: 'webhook' | 'schedule' | 'poll' | 'manual';
  /** Failed runs in a row. */
  failures: number;
  /** Failed runs in a row that pause the trigger. */
  pause_after: number;
  last_run_id: string | null;
  last_error: string | null;
}

/** Failed webhook deliveries and AI refusals older than this are history, not a current problem. */
const RECENT_DAYS = 7;
/** Only the latest scan of each address within this window counts: an address not scanned for a month is let go. */
const SCAN_DAYS = 30;
/**
 * A scan row still `scanning` but not updated for this long was left by a scan that stopped (terminated, timed out):
 * a live crawl updates its row after every page, and an attempt is bounded to an hour (workflows/site-scan.ts).
 */
const SCAN_STALE_HOURS = 2;
/** A chat turn's approval expires after this long (workflows/action-approval.ts, APPROVAL_EXPIRES). */
const APPROVAL_EXPIRES_DAYS = 7;
/** Ids listed in one incident's details; the count says how many there are. */
const MAX_IDS = 10;

/** Order of incidents of one severity: the causes that stop everything before those of one channel or one page. */
const KIND_ORDER: IncidentKind[] = [
  'out_of_credits',
  'llm_unavailable',
  'trigger_paused',
  'webhook_failing',
  'approval_waiting',
  'scan_failed',
  'knowledge_empty',
  'trigger_failing',
];

const ms = (d: Date | null | undefined): number | null => (d ? d.getTime() : null);

/** The reason of an `llm_unavailable` run from the message lib/llm.ts (`classifyLlmError`) records with it. */
export function llmFailureReason(error: string | null): LlmFailureReason {
  if (!error) return 'other';
  if (/refused the key|no funds/i.test(error)) return 'key_or_funds';
  if (/model does not exist/i.test(error)) return 'model_not_found';
  if (/rejected the request/i.test(error)) return 'request_rejected';
  return 'other';
}

const quote = (s: string) => `"${s}"`;
const lastError = (e: string | null) => (e ? ` The last error was: ${e}.` : '');

export function createBuilderOverview(deps: { db: Queryable }) {
  const { db } = deps;

  async function agents(workspaceId: string, markedBotId: string | null): Promise<AgentOverview[]> {
    const res = await db.query<{ id: string; name: string; sources: number; triggers: number }>(
      `SELECT b.id, b.name,
              (SELECT count(*) FROM knowledge_sources k WHERE k.bot_id = b.id)::int AS sources,
              (SELECT count(*) FROM triggers t WHERE t.bot_id = b.id AND t.deleted_at IS NULL)::int AS triggers
         FROM bots b WHERE b.workspace_id = $1`,
      [workspaceId],
    );
    // Sorted here, not in SQL: Postgres with a C locale neither folds case nor orders non-ASCII letters by language.
    const collator = new Intl.Collator(undefined, { sensitivity: 'base', numeric: true });
    return res.rows
      .sort((a, b) => collator.compare(a.name, b.name) || cmp(a.name, b.name) || cmp(a.id, b.id))
      .map((r) => ({
        id: r.id,
        name: r.name,
        knowledge_sources: r.sources,
        channels: { chat: true as const, triggers: r.triggers, total: r.triggers + 1 },
        issued_for_this_key: r.id === markedBotId,
      }));
  }

  async function incidents(workspaceId: string, agentId: string): Promise<Incident[]> {
    const botRes = await db.query<{
      name: string;
      model: string | null;
      webhook_url: string | null;
      knowledge_version: number;
      created_at: Date;
      sources: number;
      balance: number;
      balance_changed_at: Date;
      refused_runs: number;
    }>(
      `SELECT b.name, b.model, b.handoff_webhook_url AS webhook_url, b.knowledge_version, b.created_at,
              (SELECT count(*) FROM knowledge_sources k WHERE k.bot_id = b.id)::int AS sources,
              ${creditBalanceSql('w')} AS balance, changed.at AS balance_changed_at,
              -- runs of this agent refused for lack of credits since the balance last changed
              (SELECT count(*) FROM runs r
                WHERE r.bot_id = b.id AND r.status = 'failed' AND r.error_code = 'no_credits' AND r.started_at >= changed.at
              )::int AS refused_runs
         FROM bots b JOIN workspaces w ON w.id = b.workspace_id
         CROSS JOIN LATERAL (SELECT COALESCE(max(l.created_at), w.created_at) AS at
                               FROM credit_ledger l WHERE l.workspace_id = w.id) changed
        WHERE b.id = $1 AND b.workspace_id = $2`,
      [agentId, workspaceId],
    );
    const bot = botRes.rows[0];
    // The same answer as the services give for another workspace's agent: nothing tells it exists.
    if (!bot) throw errors.notFound('No such bot in your workspace');

    const [triggers, llm, deliveries, scans, approvals] = await Promise.all([
      // Paused after failed runs, or failing towards the pause; with the last failed run and when the streak began.
      db.query<{
        id: string;
        name: string;
        kind: TriggerIncidentDetails['trigger_kind'];
        enabled: boolean;
        failures: number;
        updated_at: Date;
        last_run_id: string | null;
        last_error: string | null;
        last_failed_at: Date | null;
        streak_started_at: Date | null;
      }>(
        `SELECT t.id, t.name, t.kind, t.enabled, t.consecutive_failures AS failures, t.updated_at,
                last.id AS last_run_id, last.error AS last_error, last.at AS last_failed_at, streak.at AS streak_started_at
           FROM triggers t
           LEFT JOIN LATERAL (
             SELECT r.id, r.error, COALESCE(r.finished_at, r.started_at) AS at FROM runs r
              WHERE r.bot_id = t.bot_id AND r.trigger_id = t.id AND r.status = 'failed'
              ORDER BY r.started_at DESC, r.id DESC LIMIT 1) last ON true
           LEFT JOIN LATERAL (
             SELECT min(s.started_at) AS at FROM (
               SELECT r.started_at FROM runs r
                WHERE r.bot_id = t.bot_id AND r.trigger_id = t.id AND r.status = 'failed'
                ORDER BY r.started_at DESC LIMIT GREATEST(t.consecutive_failures, 1)) s) streak ON true
          WHERE t.bot_id = $1 AND t.deleted_at IS NULL
            AND ((NOT t.enabled AND t.disabled_reason = 'failures') OR (t.enabled AND t.consecutive_failures > 0))
          ORDER BY t.created_at, t.id`,
        [agentId],
      ),
      // The AI service refusing the agent (key, funds, model) since its last answered run, within the window.
      db.query<{ failed: number; since: Date | null; last_run_id: string | null; last_error: string | null }>(
        `SELECT count(*)::int AS failed, min(r.started_at) AS since,
                (array_agg(r.id ORDER BY r.started_at DESC, r.id DESC))[1] AS last_run_id,
                (array_agg(r.error ORDER BY r.started_at DESC, r.id DESC))[1] AS last_error
           FROM runs r
          WHERE r.bot_id = $1 AND r.status = 'failed' AND r.error_code = 'llm_unavailable'
            AND r.started_at > now() - make_interval(days => $2)
            AND r.started_at > COALESCE((SELECT max(ok.started_at) FROM runs ok WHERE ok.bot_id = $1 AND ok.status = 'done'), '-infinity')`,
        [agentId, RECENT_DAYS],
      ),
      // Deliveries given up to the agent's current webhook address since the last one that arrived, within the window.
      db.query<{
        failed: number;
        since: Date | null;
        last_id: string | null;
        last_event: string | null;
        last_error: string | null;
      }>(
        `SELECT count(*)::int AS failed, min(d.created_at) AS since,
                (array_agg(d.id ORDER BY d.created_at DESC, d.id DESC))[1] AS last_id,
                (array_agg(d.event ORDER BY d.created_at DESC, d.id DESC))[1] AS last_event,
                (array_agg(d.last_error ORDER BY d.created_at DESC, d.id DESC))[1] AS last_error
           FROM webhook_deliveries d
          WHERE d.bot_id = $1 AND d.status = 'failed' AND d.url = $2
            AND d.created_at > now() - make_interval(days => $3)
            AND d.created_at > COALESCE((SELECT max(ok.created_at) FROM webhook_deliveries ok
                                          WHERE ok.bot_id = $1 AND ok.status = 'delivered'), '-infinity')`,
        [agentId, bot.webhook_url, RECENT_DAYS],
      ),
      // The latest scan of each address within the window; a stale `scanning` row is a scan that stopped.
      db.query<{
        id: string;
        url: string;
        status: 'scanning' | 'done' | 'failed';
        error: string | null;
        at: Date;
        stale: boolean;
      }>(
        `SELECT id, url, status, error, COALESCE(finished_at, updated_at) AS at,
                updated_at < now() - make_interval(hours => $3) AS stale
           FROM (SELECT DISTINCT ON (url) * FROM site_scans
                  WHERE bot_id = $1 AND started_at > now() - make_interval(days => $2)
                  ORDER BY url, started_at DESC, id) latest
          ORDER BY started_at, id`,
        [agentId, SCAN_DAYS, SCAN_STALE_HOURS],
      ),
      // Calls waiting for the owner: a trigger run's while the run still waits, a chat turn's until it expires.
      db.query<{ count: number; since: Date | null; ids: string[] | null; actions: string[] | null }>(
        `SELECT count(*)::int AS count, min(p.created_at) AS since,
                (array_agg(p.id ORDER BY p.created_at, p.id))[1:${MAX_IDS}] AS ids,
                array_agg(DISTINCT a.name ORDER BY a.name) FILTER (WHERE a.name IS NOT NULL) AS actions
           FROM action_approvals p
           LEFT JOIN bot_actions a ON a.id = p.action_id
           LEFT JOIN runs r ON r.id = p.run_id
          WHERE p.bot_id = $1 AND p.status = 'pending'
            AND (CASE WHEN starts_with(p.workflow_id, $2) THEN p.created_at > now() - make_interval(days => $3)
                      ELSE r.status = 'running' END)`,
        [agentId, approvalWorkflowId(''), APPROVAL_EXPIRES_DAYS],
      ),
    ]);

    const found: Incident[] = [];

    if (bot.balance <= 0) {
      found.push({
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
      });
    }

    const l = llm.rows[0];
    if (l && l.failed > 0 && l.last_run_id) {
      const reason = llmFailureReason(l.last_error);
      const model = bot.model ? `the model ${quote(bot.model)}` : "the platform's default model";
      const problems: Record<LlmFailureReason, string> = {
        key_or_funds: `The AI service refused the platform's key or its account has no funds left, so ${bot.name} cannot answer.`,
        model_not_found: `The AI service does not know ${model} that ${bot.name} is set to use, so it cannot answer.`,
        request_rejected: `The AI service rejected ${bot.name}'s requests, so it cannot answer.`,
        other: `The AI service is unavailable for ${bot.name}, so it cannot answer.`,
      };
      const fixes: Record<LlmFailureReason, string> = {
        key_or_funds:
          'Whoever runs this platform must renew its AI key or top up the AI account (retrying does not help). ' +
          'I cannot change that key.',
        model_not_found: 'Ask me to switch the agent to a model the AI service offers, or back to the default model.',
        request_rejected:
          "Check the error below; if the agent's model or instructions are the cause, ask me to change them.",
        other: 'Check the error below; whoever runs this platform may have to fix the AI settings.',
      };
      found.push({
        kind: 'llm_unavailable',
        severity: 'blocking',
        problem: `${problems[reason]} ${l.failed} run(s) failed this way since its last answer.${lastError(l.last_error)}`,
        fix: fixes[reason],
        builder_can_fix: reason === 'model_not_found' || reason === 'request_rejected',
        since: ms(l.since),
        details: {
          reason,
          model: bot.model,
          failed_runs: l.failed,
          last_run_id: l.last_run_id,
          last_error: l.last_error,
        },
      });
    }

    const pauseAfter = LIMITS.triggerPauseAfterFailures;
    for (const t of triggers.rows) {
      const details: TriggerIncidentDetails = {
        trigger_id: t.id,
        trigger_name: t.name,
        trigger_kind: t.kind,
        // The health workflow starts its count from zero when it pauses (workflows/trigger-health.ts): a paused
        // trigger's row says 0, and what paused it was the limit reached.
        failures: t.enabled ? t.failures : pauseAfter,
        pause_after: pauseAfter,
        last_run_id: t.last_run_id,
        last_error: t.last_error,
      };
      if (!t.enabled) {
        found.push({
          kind: 'trigger_paused',
          severity: 'blocking',
          problem:
            `The ${t.kind} trigger ${quote(t.name)} was paused after ${details.failures} failed runs in a row, so it no ` +
            `longer wakes ${bot.name}` +
            (t.kind === 'webhook' ? ' (calls to its address are turned away).' : '.') +
            lastError(t.last_error),
          fix:
            'Fix what made the runs fail (see the last error and the run log), then ask me to turn the trigger on ' +
            'again; turning it on starts the failure count from zero.',
          builder_can_fix: true,
          // The run that paused it was its last failed one: a paused trigger does not run.
          since: ms(t.last_failed_at ?? t.updated_at),
          details,
        });
      } else {
        found.push({
          kind: 'trigger_failing',
          severity: 'warning',
          problem:
            `The last ${t.failures} run(s) of the ${t.kind} trigger ${quote(t.name)} failed; after ${pauseAfter} ` +
            `failures in a row it will be paused.${lastError(t.last_error)}`,
          fix:
            "Look at the last error and the run log. If the trigger's task or settings are the cause, ask me to " +
            'change them; a successful run resets the count.',
          builder_can_fix: false,
          since: ms(t.streak_started_at),
          details,
        });
      }
    }

    const d = deliveries.rows[0];
    if (bot.webhook_url && d && d.failed > 0 && d.last_id) {
      found.push({
        kind: 'webhook_failing',
        severity: 'blocking',
        problem:
          `${d.failed} notification(s) to your webhook address ${bot.webhook_url} could not be delivered, so your ` +
          `team may not hear about conversations handed to a person.${lastError(d.last_error)}`,
        fix:
          'Make sure the address is reachable and answers signed POST requests with a 2xx status, or ask me to ' +
          'change the webhook address.',
        builder_can_fix: true,
        since: ms(d.since),
        details: {
          url: bot.webhook_url,
          failed_deliveries: d.failed,
          last_delivery_id: d.last_id,
          last_event: d.last_event ?? '',
          last_error: d.last_error,
        },
      });
    }

    const a = approvals.rows[0];
    if (a && a.count > 0) {
      const actions = a.actions ?? [];
      found.push({
        kind: 'approval_waiting',
        severity: 'warning',
        problem:
          `${a.count} action call(s) of ${bot.name} wait for your approval` +
          (actions.length ? ` (${actions.map(quote).join(', ')})` : '') +
          '; nothing happens until you decide.',
        fix: 'Approve or reject them in the dashboard (approvals). A builder key cannot approve actions, so I cannot do it for you.',
        builder_can_fix: false,
        since: ms(a.since),
        details: { approvals: a.count, approval_ids: a.ids ?? [], actions },
      });
    }

    let scansRunning = 0;
    for (const s of scans.rows) {
      const stopped = s.status === 'scanning' && s.stale;
      if (s.status === 'scanning' && !stopped) scansRunning++;
      if (s.status !== 'failed' && !stopped) continue;
      const error = s.error ?? (stopped ? 'The scan stopped without finishing' : null);
      found.push({
        kind: 'scan_failed',
        severity: 'warning',
        problem: `The scan of ${s.url} failed, so nothing from that address was added to the knowledge base.${lastError(error)}`,
        fix:
          'Check that the address opens from the internet and that its robots.txt does not block AgentPlatformBot, ' +
          'then ask me to scan it again.',
        builder_can_fix: true,
        since: ms(s.at),
        details: { scan_id: s.id, url: s.url, error, stopped },
      });
    }

    if (bot.sources === 0) {
      found.push({
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
      });
    }

    const rank = (i: Incident) => (i.severity === 'blocking' ? 0 : 1) * 100 + KIND_ORDER.indexOf(i.kind);
    // A stable sort: incidents of one kind keep the order of their query (triggers by creation, scans by start).
    return found.sort((x, y) => rank(x) - rank(y));
  }

  return { agents, incidents };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export type BuilderOverview = ReturnType<typeof createBuilderOverview>;
