import { randomUUID } from 'node:crypto';
import type { Db } from '../db';
import { errors } from '../errors';
import { LIMITS } from '../limits';
import { IMAGE_TYPES } from '../media/image';
import type { SecretBox } from '../secret-box';
import { type WidgetLook, widgetLookOf } from '../bots/service';
import { createWidgetSightings } from './sightings';
import { visitorToken, visitorTokenMatches } from './visitor-token';

/** What the widget needs to draw itself before the visitor writes anything (`GET /v1/widget/config`). */
export interface WidgetConfig {
  bot: { name: string };
  handoff_enabled: boolean;
  /** How the widget looks on the integrator's site (colour, greeting, side, the team's name, avatar). */
  look: WidgetLook;
  /** Whether a person is there to answer, and how long they usually take (docs/decisions/100-team-presence.md). */
  team: { online: boolean; typical_reply_seconds: number | null };
  attachments: { max_bytes: number; types: readonly string[] };
  poll_interval_ms: number;
}

/**
 * The widget's own part (docs/widget.md): its configuration and its visitors' sessions. Everything a visitor does in a
 * conversation goes through the conversation service, as from `/v1/api/*`.
 */
/** Someone who used the dashboard this recently counts as there to answer. */
const ONLINE_WINDOW_SECONDS = 120;
/** The typical reply is the median over this many days, once there are at least `TYPICAL_REPLY_MIN` replies. */
const TYPICAL_REPLY_DAYS = 30;
const TYPICAL_REPLY_MIN = 3;
/** A bot's typical reply is read again after this long (it moves slowly; the config is read on every page load). */
const TYPICAL_REPLY_CACHE_MS = 5 * 60_000;

export function createWidgetService(deps: { db: Db; secrets: SecretBox; onError?: (err: unknown) => void }) {
  const typicalReplies = new Map<string, { at: number; seconds: number | null }>();

  /** The median time from a handoff to a person's first reply, over the last 30 days; null with too few replies. */
  async function typicalReplySeconds(botId: string): Promise<number | null> {
    const cached = typicalReplies.get(botId);
    if (cached && Date.now() - cached.at < TYPICAL_REPLY_CACHE_MS) return cached.seconds;
    const res = await deps.db.query<{ median: number | null; n: number }>(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY r.wait) AS median, count(r.wait)::int AS n
         FROM (SELECT (SELECT min(m.at) FROM messages m
                        WHERE m.session_id = c.session_id AND m.author = 'operator'
                          AND m.at >= extract(epoch FROM c.escalated_at) * 1000) / 1000.0
                      - extract(epoch FROM c.escalated_at) AS wait
                 FROM conversations c
                WHERE c.bot_id = $1 AND c.escalated_at > now() - make_interval(days => $2)) r`,
      [botId, TYPICAL_REPLY_DAYS],
    );
    const { median, n } = res.rows[0];
    const seconds = n >= TYPICAL_REPLY_MIN && median !== null ? Math.max(1, Math.round(Number(median))) : null;
    if (typicalReplies.size > 10_000) typicalReplies.clear();
    typicalReplies.set(botId, { at: Date.now(), seconds });
    return seconds;
  }

  return {
    /** Where the widget runs and where it was refused (the dashboard's "installed on" and "blocked on"). */
    sightings: createWidgetSightings(deps),

    async config(botId: string): Promise<WidgetConfig> {
      const res = await deps.db.query<{
        name: string;
        handoff_enabled: boolean;
        online: boolean;
        widget_look: Partial<WidgetLook>;
      }>(
        `SELECT b.name, b.handoff_enabled, b.widget_look,
                EXISTS (SELECT 1 FROM users u
                         WHERE u.workspace_id = b.workspace_id
                           AND u.last_active_at > now() - make_interval(secs => $2)) AS online
           FROM bots b WHERE b.id = $1`,
        [botId, ONLINE_WINDOW_SECONDS],
      );
      const bot = res.rows[0];
      if (!bot) throw errors.notFound('No such bot');
      return {
        bot: { name: bot.name },
        handoff_enabled: bot.handoff_enabled,
        look: widgetLookOf(bot.widget_look),
        team: {
          online: bot.online,
          typical_reply_seconds: bot.handoff_enabled ? await typicalReplySeconds(botId) : null,
        },
        attachments: { max_bytes: LIMITS.widget.attachmentBytes, types: IMAGE_TYPES },
        poll_interval_ms: LIMITS.widget.pollIntervalMs,
      };
    },

    /** A new visitor session: a random id and the token that proves it is this browser's. Nothing is stored yet. */
    newSession(botId: string): { session_id: string; visitor_token: string } {
      const sessionId = randomUUID();
      return { session_id: sessionId, visitor_token: visitorToken(deps.secrets, botId, sessionId) };
    },

    /**
     * Every call about a session shows its token; without the right one the session reads as one that does not exist
     * (404, as for another bot's session: nothing tells a guesser that it exists).
     */
    assertVisitor(botId: string, sessionId: string, token: string | undefined): void {
      if (!visitorTokenMatches(deps.secrets, botId, sessionId, token)) {
        throw errors.notFound('No conversation with this session_id for this visitor (send its X-Visitor-Token)');
      }
    },
  };
}

export type WidgetService = ReturnType<typeof createWidgetService>;
