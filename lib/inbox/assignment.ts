import type { Db } from '../db';
import { errors } from '../errors';

/** A person of the team as the inbox names them: their name, else their e-mail. */
export interface Teammate {
  id: string;
  name: string;
}

/** Who handles a conversation and who of the team is writing to it now, as one operator sees it. */
export interface ThreadPresence {
  assignee: Teammate | null;
  /** Another person of the team typing a reply (the typing signal of the last ~6 s); never the viewer. */
  replying: Teammate | null;
}

const NAME_OF = (alias: string) => `COALESCE(NULLIF(btrim(${alias}.name), ''), ${alias}.email)`;

/**
 * Assignment and "who is replying" for the dashboard's inbox (docs/decisions/096-assignment.md):
 * a handed-over conversation is assigned to one person of the workspace, by anyone of it, or taken by the first
 * person who replies from the dashboard; the person typing is kept with the typing signal, so that two operators do
 * not answer the same visitor twice. The operator API (integrators' own tools) names nobody and assigns nothing.
 */
export function createAssignmentService(deps: { db: Db }) {
  return {
    /**
     * Assigns the conversation to `userId` (a person of the workspace) or to nobody (null); 400 naming the field
     * for someone who is not of the workspace.
     */
    async assign(
      workspaceId: string,
      botId: string,
      sessionId: string,
      userId: string | null,
    ): Promise<Teammate | null> {
      const res = await deps.db.query<{ found: boolean; id: string | null; name: string | null }>(
        `WITH person AS (SELECT u.id, ${NAME_OF('u')} AS name FROM users u WHERE u.id = $3 AND u.workspace_id = $1),
              changed AS (
                UPDATE conversations SET assignee_user_id = (SELECT id FROM person)
                 WHERE session_id = $2 AND workspace_id = $1 AND bot_id = $4 AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM person))
                RETURNING 1)
         SELECT EXISTS (SELECT 1 FROM changed) AS found, (SELECT id FROM person) AS id, (SELECT name FROM person) AS name`,
        [workspaceId, sessionId, userId, botId],
      );
      const row = res.rows[0];
      if (userId !== null && !row.id) throw errors.badRequest('user_id: nobody of this workspace has this id');
      if (!row.found) throw errors.notFound('No conversation with this session_id');
      return row.id ? { id: row.id, name: row.name ?? '' } : null;
    },

    /** A reply from the dashboard takes a conversation nobody was assigned. */
    async takeIfUnassigned(sessionId: string, userId: string): Promise<void> {
      await deps.db.query(
        `UPDATE conversations SET assignee_user_id = $2 WHERE session_id = $1 AND assignee_user_id IS NULL`,
        [sessionId, userId],
      );
    },

    async presence(sessionId: string, viewerId: string): Promise<ThreadPresence> {
      const res = await deps.db.query<{
        a_id: string | null;
        a_name: string | null;
        r_id: string | null;
        r_name: string | null;
      }>(
        `SELECT a.id AS a_id, ${NAME_OF('a')} AS a_name, t.id AS r_id, ${NAME_OF('t')} AS r_name
           FROM conversations c
           LEFT JOIN users a ON a.id = c.assignee_user_id
           LEFT JOIN users t ON t.id = c.operator_typing_by AND c.operator_typing_until > now() AND t.id <> $2
          WHERE c.session_id = $1`,
        [sessionId, viewerId],
      );
      const row = res.rows[0];
      return {
        assignee: row?.a_id ? { id: row.a_id, name: row.a_name ?? '' } : null,
        replying: row?.r_id ? { id: row.r_id, name: row.r_name ?? '' } : null,
      };
    },
  };
}

export type AssignmentService = ReturnType<typeof createAssignmentService>;
