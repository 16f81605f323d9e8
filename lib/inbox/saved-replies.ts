import type { z } from 'zod';
import type { SavedReplyView as SavedReplyViewSchema } from '../schemas/operator';
import type { Db } from '../db';
import { ApiError, errors } from '../errors';
import { newId } from '../ids';
import { LIMITS } from '../limits';

/** The schema's type (lib/schemas/operator.ts): what the route declares is what this returns. */
export type SavedReply = z.infer<typeof SavedReplyViewSchema>;

/**
 * The team's saved replies: texts an operator inserts into a reply instead of typing them again, shared by everyone
 * of the workspace, titles unique (case aside), at most `LIMITS.inbox.savedReplies` of them.
 */
export function createSavedReplyService(deps: { db: Db }) {
  return {
    async list(workspaceId: string): Promise<SavedReply[]> {
      const res = await deps.db.query<SavedReply>(
        `SELECT id, title, text FROM saved_replies WHERE workspace_id = $1 ORDER BY lower(title), id`,
        [workspaceId],
      );
      return res.rows;
    },

    /** 409 `conflict` for a title the workspace already has; 429-free: the cap is a 400 naming it. */
    async create(workspaceId: string, input: { title: string; text: string }): Promise<SavedReply> {
      const id = newId('svr');
      const res = await deps.db.query<SavedReply & { full: boolean }>(
        `INSERT INTO saved_replies (id, workspace_id, title, text)
         SELECT $1, $2, $3, $4
          WHERE (SELECT count(*) FROM saved_replies WHERE workspace_id = $2) < $5
         ON CONFLICT (workspace_id, lower(title)) DO NOTHING
         RETURNING id, title, text`,
        [id, workspaceId, input.title, input.text, LIMITS.inbox.savedReplies],
      );
      if (res.rows[0]) return res.rows[0];
      const taken = await deps.db.query(
        `SELECT 1 FROM saved_replies WHERE workspace_id = $1 AND lower(title) = lower($2)`,
        [workspaceId, input.title],
      );
      if (taken.rowCount) throw errors.conflict(`A saved reply is already called "${input.title}"`);
      throw new ApiError(
        'bad_request',
        `A workspace keeps at most ${LIMITS.inbox.savedReplies} saved replies; delete one first`,
      );
    },

    async remove(workspaceId: string, id: string): Promise<void> {
      const res = await deps.db.query(`DELETE FROM saved_replies WHERE workspace_id = $1 AND id = $2`, [
        workspaceId,
        id,
      ]);
      if (!res.rowCount) throw errors.notFound('No such saved reply');
    },
  };
}

export type SavedReplyService = ReturnType<typeof createSavedReplyService>;
