import type { Db } from '../db';
import type { SafeFetch } from '../http/safe-fetch';
import { readState, writeState } from '../bots/state';
import type { AgentRunInput, ToolSpec } from '../../workflows/contracts/agent-run';

/**
 * The tools a run offers the model, and what calling one does: the bot's actions (HTTP calls through the
 * SSRF-safe client) and, in the owner's runs, the agent state. Used by the agentRun workflow's activities.
 */

const STATE_TOOLS: ToolSpec[] = [
  {
    name: 'read_state',
    description:
      "Reads the agent's state document (JSON) and its version. Use it to remember things between runs, e.g. processed markers.",
    parameters: { type: 'object', properties: {} },
    kind: 'state_read',
    requiresApproval: false,
  },
  {
    name: 'write_state',
    description:
      'Replaces the state document. Pass the version you read; if it changed meanwhile the write fails and you must read again.',
    parameters: {
      type: 'object',
      properties: { document: { type: 'object' }, version: { type: 'integer' } },
      required: ['document', 'version'],
    },
    kind: 'state_write',
    requiresApproval: false,
  },
];

/** Tool results given back to the model are cut to this many characters. */
const TOOL_RESULT_CHARS = 8_000;
/** An action's HTTP call; the approval workflow's local activity allows 30 s around it. */
const ACTION_TIMEOUT_MS = 15_000;
const ACTION_RESPONSE_BYTES = 256 * 1024;

/**
 * The tools a run may use (contract, agent actions): admin-only actions only for a confirmed admin visitor or the
 * owner's own runs; the state only in the owner's runs.
 */
export async function toolsFor(db: Db, input: AgentRunInput): Promise<ToolSpec[]> {
  const admin = input.ownerContext === true || input.role === 'admin';
  const res = await db.query<{
    id: string;
    name: string;
    description: string;
    parameters: Record<string, unknown>;
    requires_approval: boolean;
  }>(
    `SELECT id, name, description, parameters, requires_approval FROM bot_actions WHERE bot_id = $1 AND (NOT admin_only OR $2) ORDER BY name`,
    [input.botId, admin],
  );
  const actions: ToolSpec[] = res.rows.map((a) => ({
    name: a.name,
    description: a.description,
    parameters: a.parameters,
    kind: 'action',
    actionId: a.id,
    requiresApproval: a.requires_approval,
  }));
  return input.ownerContext ? [...actions, ...STATE_TOOLS] : actions;
}

/**
 * Runs one tool call: an HTTP action through the SSRF-safe client, or a read or write of the agent state. The
 * result (or the failure, in words) goes back to the model; only storage trouble throws.
 */
export async function executeTool(
  deps: { db: Db; fetch: SafeFetch },
  input: { botId: string; tool: ToolSpec; arguments: string },
): Promise<string> {
  let args: Record<string, unknown>;
  try {
    args = input.arguments ? (JSON.parse(input.arguments) as Record<string, unknown>) : {};
  } catch {
    return 'error: the arguments were not valid JSON';
  }
  if (input.tool.kind === 'state_read') return JSON.stringify(await readState(deps.db, input.botId));
  if (input.tool.kind === 'state_write') {
    try {
      const written = await writeState(
        deps.db,
        input.botId,
        (args.document ?? {}) as Record<string, unknown>,
        Number(args.version ?? 0),
      );
      return JSON.stringify({ ok: true, version: written.version });
    } catch (err) {
      return `error: ${(err as Error).message}`;
    }
  }
  const action = await deps.db.query<{ method: string; url: string }>(
    `SELECT method, url FROM bot_actions WHERE id = $1 AND bot_id = $2`,
    [input.tool.actionId, input.botId],
  );
  const a = action.rows[0];
  if (!a) return 'error: this action no longer exists';
  try {
    const url = new URL(a.url);
    const inQuery = a.method === 'GET' || a.method === 'DELETE';
    if (inQuery) for (const [k, v] of Object.entries(args)) url.searchParams.set(k, String(v));
    const res = await deps.fetch(url.toString(), {
      method: a.method,
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'AgentPlatform-Actions/1' },
      ...(inQuery ? {} : { body: JSON.stringify(args) }),
      timeoutMs: ACTION_TIMEOUT_MS,
      maxBytes: ACTION_RESPONSE_BYTES,
    });
    return `HTTP ${res.status}\n${res.body.toString('utf8').slice(0, TOOL_RESULT_CHARS)}`;
  } catch (err) {
    return `error: ${(err as { code?: string }).code ?? 'failed'}: ${(err as Error).message}`;
  }
}

/**
 * Records an action call waiting for the owner and its notification, in one statement: a retry after a crash writes
 * whichever is missing, never one without the other. Idempotent on the approval's id.
 */
export async function requestApproval(
  db: Db,
  input: { approvalId: string; runId: string; botId: string; tool: ToolSpec; arguments: string; workflowId: string },
): Promise<void> {
  const args = input.arguments || '{}';
  await db.query(
    `WITH a AS (INSERT INTO action_approvals (id, run_id, bot_id, action_id, arguments, workflow_id)
                VALUES ($1, $2, $3, $4, $5::text::jsonb, $6) ON CONFLICT (id) DO NOTHING)
     INSERT INTO notifications (id, workspace_id, bot_id, kind, title, body, data)
     SELECT 'ntf_' || $1::text, b.workspace_id, b.id, 'approval_requested', b.name || ' asks to run "' || $7::text || '"',
            'The action waits for your approval. Arguments: ' || left($5::text, 500),
            jsonb_build_object('approval_id', $1::text, 'run_id', $2::text, 'action', $7::text)
       FROM bots b WHERE b.id = $3
     ON CONFLICT (id) DO NOTHING`,
    [input.approvalId, input.runId, input.botId, input.tool.actionId, args, input.workflowId, input.tool.name],
  );
}

/** After an approved action ran for a chat turn: its outcome joins the conversation as a bot message. */
export async function postActionOutcome(
  db: Db,
  input: { sessionId: string; botId: string; messageId: string; text: string },
): Promise<void> {
  await db.query(
    `INSERT INTO messages (id, session_id, bot_id, author, text, at) VALUES ($1, $2, $3, 'bot', $4, $5) ON CONFLICT (id) DO NOTHING`,
    [input.messageId, input.sessionId, input.botId, input.text, Date.now()],
  );
}
