/**
 * The kinds of the builder's `incidents` tool (docs/decisions/066-builder-incidents-tool.md, whose table this file
 * follows): the shape every incident shares, the details of each kind, and their order. Each kind is found by its own
 * module beside this one, from the agent's row (`agent.ts`) and one statement of its own at most, read side by side.
 */

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

/** What an incident's judge knows of the agent: its row, read first (`agent.ts`). */
export interface AgentFacts {
  name: string;
  model: string | null;
  webhook_url: string | null;
  knowledge_version: number;
  created_at: Date;
  sources: number;
  balance: number;
  balance_changed_at: Date;
  refused_runs: number;
}

/** Failed webhook deliveries and AI refusals older than this are history, not a current problem. */
export const RECENT_DAYS = 7;

/** Order of incidents of one severity: the causes that stop everything before those of one channel or one page. */
export const KIND_ORDER: IncidentKind[] = [
  'out_of_credits',
  'llm_unavailable',
  'trigger_paused',
  'webhook_failing',
  'approval_waiting',
  'scan_failed',
  'knowledge_empty',
  'trigger_failing',
];

export const ms = (d: Date | null | undefined): number | null => (d ? d.getTime() : null);

export const quote = (s: string) => `"${s}"`;
export const lastError = (e: string | null) => (e ? ` The last error was: ${e}.` : '');
