import type { Queryable } from '../db';
import { ApiError } from '../errors';
import { LIMITS } from '../limits';

const STATE_MAX_BYTES = LIMITS.agentStateBytes;

export interface AgentState {
  document: Record<string, unknown>;
  version: number;
}

export async function readState(db: Queryable, botId: string): Promise<AgentState> {
  const res = await db.query<AgentState>(`SELECT document, version FROM agent_state WHERE bot_id = $1`, [botId]);
  return res.rows[0] ?? { document: {}, version: 0 };
}

/**
 * Optimistic concurrency: the write names the version it read and succeeds only if nobody wrote since, so two
 * runs (or a run and the owner) cannot silently overwrite each other. Returns the new version.
 */
export async function writeState(
  db: Queryable,
  botId: string,
  document: Record<string, unknown>,
  expectedVersion: number,
): Promise<AgentState> {
  const size = Buffer.byteLength(JSON.stringify(document));
  if (size > STATE_MAX_BYTES)
    throw new ApiError('payload_too_large', `Agent state is limited to ${STATE_MAX_BYTES} bytes of JSON (got ${size})`);
  const res = await db.query<AgentState>(
    `INSERT INTO agent_state (bot_id, document, version) SELECT $1, $2, 1 WHERE $3 = 0
     ON CONFLICT (bot_id) DO UPDATE SET document = EXCLUDED.document, version = agent_state.version + 1, updated_at = now()
       WHERE agent_state.version = $3
     RETURNING document, version`,
    [botId, JSON.stringify(document), expectedVersion],
  );
  if (!res.rows[0]) {
    const current = await readState(db, botId);
    throw new ApiError(
      'version_conflict',
      `The state changed since version ${expectedVersion} (now ${current.version}); read it again and retry`,
      {
        current_version: current.version,
      },
    );
  }
  return res.rows[0];
}
