import { randomUUID } from 'node:crypto';
import type { Db } from '../db';
import { errors } from '../errors';
import { LIMITS } from '../limits';
import { IMAGE_TYPES } from '../media/image';
import type { SecretBox } from '../secret-box';
import { createWidgetSightings } from './sightings';
import { visitorToken, visitorTokenMatches } from './visitor-token';

/** What the widget needs to draw itself before the visitor writes anything (`GET /v1/widget/config`). */
export interface WidgetConfig {
  bot: { name: string };
  handoff_enabled: boolean;
  attachments: { max_bytes: number; types: readonly string[] };
  poll_interval_ms: number;
}

/**
 * The widget's own part (docs/widget.md): its configuration and its visitors' sessions. Everything a visitor does in a
 * conversation goes through the conversation service, as from `/v1/api/*`.
 */
export function createWidgetService(deps: { db: Db; secrets: SecretBox; onError?: (err: unknown) => void }) {
  return {
    /** Where the widget runs and where it was refused (the dashboard's "installed on" and "blocked on"). */
    sightings: createWidgetSightings(deps),

    async config(botId: string): Promise<WidgetConfig> {
      const res = await deps.db.query<{ name: string; handoff_enabled: boolean }>(
        `SELECT name, handoff_enabled FROM bots WHERE id = $1`,
        [botId],
      );
      const bot = res.rows[0];
      if (!bot) throw errors.notFound('No such bot');
      return {
        bot: { name: bot.name },
        handoff_enabled: bot.handoff_enabled,
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
