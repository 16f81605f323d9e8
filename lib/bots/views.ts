import type { z } from 'zod';
import type { BotView as BotViewSchema } from '../schemas/dashboard';

/** What the dashboard shows of a bot: its settings, the public key and the fingerprints of its secrets. */
export const BOT_COLUMNS = `id, name, instructions, model, handoff_enabled, when_unanswered, business_hours, handoff_webhook_url, allowed_origins, public_key,
  webhook_secret_fingerprint AS handoff_webhook_secret_fingerprint, identity_secret_fingerprint AS visitor_identity_secret_fingerprint,
  (SELECT k.fingerprint FROM api_keys k WHERE k.bot_id = bots.id AND k.kind = 'secret' AND k.revoked_at IS NULL
    ORDER BY k.created_at DESC LIMIT 1) AS secret_key_fingerprint,
  (SELECT k.fingerprint FROM api_keys k WHERE k.bot_id = bots.id AND k.kind = 'builder' AND k.revoked_at IS NULL
    ORDER BY k.created_at DESC LIMIT 1) AS builder_key_fingerprint,
  widget_look, (extract(epoch FROM created_at) * 1000)::bigint AS created_at`;

/** How the widget looks (docs/widget.md, "Its look"); what the owner did not set has its default. */
export interface WidgetLook {
  /** The accent colour, `#rrggbb`: the launcher, the header, the visitor's bubbles, buttons. */
  color: string;
  /** The first words a visitor reads in an empty chat; null: the widget's own. */
  greeting: string | null;
  /** Which bottom corner the launcher sits in. */
  position: 'right' | 'left';
  /** Who a person's reply is from ("From Acme support"); null: "the team". */
  team_name: string | null;
  /** An https image shown beside the agent's name. */
  avatar_url: string | null;
}

const DEFAULT_WIDGET_LOOK: WidgetLook = {
  color: '#4f46e5',
  greeting: null,
  position: 'right',
  team_name: null,
  avatar_url: null,
};

export const widgetLookOf = (stored: Partial<WidgetLook> | null | undefined): WidgetLook => ({
  ...DEFAULT_WIDGET_LOOK,
  ...Object.fromEntries(Object.entries(stored ?? {}).filter(([, v]) => v !== null && v !== undefined)),
});

/** The schema's type (lib/schemas/dashboard.ts): what the route declares is what this returns. */
export type BotView = z.infer<typeof BotViewSchema>;

/** A bot in the dashboard's list. */
export interface BotSummary {
  id: string;
  name: string;
  created_at: number;
  knowledge_sources: number;
  open_requests: number;
}

export const viewOf = (row: BotView): BotView => ({
  ...row,
  widget_look: widgetLookOf(row.widget_look),
  created_at: Number(row.created_at),
});
