import type { Queryable } from '../db';
import type { Mailer } from '../mailer';

/**
 * Notifications: what the platform tells a workspace's people (a trigger paused after failed runs, an action
 * waiting for approval, a webhook delivery given up). Shown in the dashboard; e-mailed to the owner when asked and
 * SMTP is configured.
 */

export interface NotificationInput {
  /** Deterministic where the caller may retry (an activity), so a retry inserts nothing twice. */
  id: string;
  workspaceId: string;
  botId: string | null;
  kind: 'trigger_paused' | 'approval_requested' | 'contact_left' | 'handoff_requested' | 'delivery_failed';
  title: string;
  body: string;
  data: Record<string, unknown>;
}

/** Records a notification. Idempotent on the id: a retried caller writes it once. */
export async function notify(db: Queryable, n: NotificationInput): Promise<void> {
  await db.query(
    `INSERT INTO notifications (id, workspace_id, bot_id, kind, title, body, data) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (id) DO NOTHING`,
    [n.id, n.workspaceId, n.botId, n.kind, n.title, n.body, JSON.stringify(n.data)],
  );
}

/**
 * Records a notification about an agent unless one of its kind about that agent is still unread: that one is then
 * brought up to date (`update` is given its data) and moved to the top instead. A webhook receiver down for an hour
 * makes one notification and one e-mail, not one per event. Serialized per agent and kind (a transaction-scoped
 * advisory lock), so call it inside the caller's transaction. Returns the id when a notification was recorded (the
 * caller e-mails it), null when an unread one was updated.
 */
export async function notifyUnlessUnread(
  tx: Queryable,
  n: NotificationInput & { botId: string },
  update: (unread: Record<string, unknown>) => Pick<NotificationInput, 'title' | 'body' | 'data'>,
): Promise<string | null> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`notify:${n.kind}:${n.botId}`]);
  const unread = await tx.query<{ id: string; data: Record<string, unknown> }>(
    `SELECT id, data FROM notifications
      WHERE workspace_id = $1 AND bot_id = $2 AND kind = $3 AND read_at IS NULL
      ORDER BY created_at DESC LIMIT 1`,
    [n.workspaceId, n.botId, n.kind],
  );
  const row = unread.rows[0];
  if (!row) {
    await notify(tx, n);
    return n.id;
  }
  const next = update(row.data);
  await tx.query(`UPDATE notifications SET title = $2, body = $3, data = $4, created_at = now() WHERE id = $1`, [
    row.id,
    next.title,
    next.body,
    JSON.stringify(next.data),
  ]);
  return null;
}

/**
 * E-mails a recorded notification to its workspace's owner, once: a notification already e-mailed is skipped. A
 * failure to send throws (the caller decides how often to try); the notification stays in the dashboard either way.
 */
export async function emailNotification(db: Queryable, mailer: Mailer, notificationId: string): Promise<boolean> {
  const res = await db.query<{ title: string; body: string; email: string | null }>(
    `SELECT n.title, n.body,
            (SELECT u.email FROM users u WHERE u.workspace_id = n.workspace_id AND u.role = 'owner' LIMIT 1) AS email
       FROM notifications n WHERE n.id = $1 AND n.emailed_at IS NULL`,
    [notificationId],
  );
  const row = res.rows[0];
  if (!row?.email) return false;
  await mailer.send(row.email, row.title, row.body);
  await db.query(`UPDATE notifications SET emailed_at = now() WHERE id = $1`, [notificationId]);
  return true;
}

/** The workspace's notifications, newest first. */
async function listNotifications(db: Queryable, workspaceId: string) {
  const res = await db.query<{
    id: string;
    kind: string;
    title: string;
    body: string;
    bot_id: string | null;
    data: Record<string, unknown>;
    created_ms: number;
    read_ms: number | null;
  }>(
    `SELECT id, kind, title, body, bot_id, data, (extract(epoch FROM created_at) * 1000)::bigint AS created_ms,
            (extract(epoch FROM read_at) * 1000)::bigint AS read_ms
       FROM notifications WHERE workspace_id = $1 ORDER BY created_at DESC LIMIT 100`,
    [workspaceId],
  );
  return res.rows.map(({ created_ms, read_ms, ...n }) => ({
    ...n,
    created_at: Number(created_ms),
    read_at: read_ms === null ? null : Number(read_ms),
  }));
}

export function createNotificationService(deps: { db: Queryable }) {
  return {
    /**
     * The newest 100, how many of the workspace's notifications nobody has marked read, and how many visitors are
     * waiting for a person right now (nobody has answered them yet): the dashboard's badges and title count.
     */
    async list(workspaceId: string) {
      const [notifications, counts] = await Promise.all([
        listNotifications(deps.db, workspaceId),
        deps.db.query<{ unread: number; waiting: number }>(
          `SELECT (SELECT count(*)::int FROM notifications WHERE workspace_id = $1 AND read_at IS NULL) AS unread,
                  (SELECT count(*)::int FROM conversations WHERE workspace_id = $1 AND status = 'waiting') AS waiting`,
          [workspaceId],
        ),
      ]);
      return { notifications, unread: counts.rows[0].unread, waiting_requests: counts.rows[0].waiting };
    },

    /** Marks notifications read (all of the workspace's when no ids are given); read state is the workspace's. */
    async markRead(workspaceId: string, ids?: string[]): Promise<void> {
      await deps.db.query(
        `UPDATE notifications SET read_at = now()
          WHERE workspace_id = $1 AND read_at IS NULL AND ($2::text[] IS NULL OR id = ANY($2))`,
        [workspaceId, ids ?? null],
      );
    },
  };
}

export type NotificationService = ReturnType<typeof createNotificationService>;
