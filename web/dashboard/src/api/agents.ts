import type { ScanRun } from '../../../shared/contract';
import type { StreamFrame } from '../../../shared/sse';
import { call, query, seg, stream } from './client';

/** Agents (bots) and their keys, knowledge, scans, test chat: `/v1/dashboard/bots…`. */

export interface BotSummary {
  id: string;
  name: string;
  created_at: number;
  knowledge_sources?: number;
  open_requests?: number;
}

export interface Bot {
  id: string;
  name: string;
  instructions: string;
  model: string | null;
  handoff_enabled: boolean;
  handoff_webhook_url: string | null;
  allowed_origins: string[];
  public_key: string;
  handoff_webhook_secret_fingerprint: string;
  visitor_identity_secret_fingerprint: string;
  secret_key_fingerprint?: string;
  builder_key_fingerprint?: string | null;
  /** How the widget looks on the site (absent from older APIs). */
  widget_look?: WidgetLook;
  created_at?: number;
}

export interface WidgetLook {
  color: string;
  greeting: string | null;
  position: 'right' | 'left';
  team_name: string | null;
  avatar_url: string | null;
}

/** A page origin the widget was seen on: served (`last_allowed_at`) or refused (`last_refused_at`). */
export interface WidgetSite {
  origin: string;
  /** Whether the agent's allowed sites include it now. */
  allowed: boolean;
  last_allowed_at: number | null;
  last_refused_at: number | null;
}

export interface BotKeys {
  secret_key: string;
  public_key: string;
  builder_key: string;
  handoff_webhook_secret: string;
  visitor_identity_secret: string;
}

export type BotPatch = Partial<
  Pick<Bot, 'name' | 'instructions' | 'model' | 'handoff_enabled' | 'handoff_webhook_url' | 'allowed_origins'>
> & { widget_look?: Partial<WidgetLook> };

export type KeyKind = 'secret' | 'identity' | 'webhook' | 'builder';

const REISSUE_PATH: Record<KeyKind, string> = {
  secret: 'secret',
  identity: 'identity-secret',
  webhook: 'webhook-secret',
  builder: 'builder-key',
};

export interface Source {
  source_id: string;
  title: string;
  fragments: number;
  origin: 'api' | 'scan';
  url: string | null;
  created_at: number;
  updated_at: number;
}

/** The server's own type (web/shared/contract.ts). */
export type Scan = ScanRun;

const bot = (id: string) => `/v1/dashboard/bots/${seg(id)}`;

/** The models the workspace's plan allows (weight: credits relative to the default model) and the default. */
export interface ModelChoices {
  default_model: string;
  plan: string;
  models: { name: string; weight: number }[];
}

export const agents = {
  list: () => call<{ bots: BotSummary[] }>('GET', '/v1/dashboard/bots'),
  create: (body: { name: string; instructions?: string }) =>
    call<{ bot: Bot; keys: BotKeys }>('POST', '/v1/dashboard/bots', body),
  get: (id: string) => call<Bot>('GET', bot(id)),
  models: () => call<ModelChoices>('GET', '/v1/dashboard/models'),
  update: (id: string, patch: BotPatch) => call<Bot>('PATCH', bot(id), patch),
  remove: (id: string) => call<{ status: 'deleted' }>('DELETE', bot(id)),
  reissue: (id: string, kind: KeyKind) =>
    call<{ key: string; fingerprint: string }>('POST', `${bot(id)}/${REISSUE_PATH[kind]}`),
  /** The test chat streamed: each frame as it comes (`delta` pieces, an error frame, the end frame last). */
  testChatStream: (
    id: string,
    message: string,
    session_id: string | undefined,
    onFrame: (frame: StreamFrame) => void,
  ) => stream(`${bot(id)}/test-chat/stream`, { message, session_id }, onFrame),

  knowledge: (id: string, cursor?: string, limit = 20) =>
    call<{ sources: Source[]; next_cursor: string }>('GET', `${bot(id)}/knowledge${query({ limit, cursor })}`),
  addKnowledge: (id: string, body: { title?: string; text: string; source_id?: string }) =>
    call<{ status: 'indexed'; source_id: string }>('POST', `${bot(id)}/knowledge`, body),
  source: (id: string, sourceId: string) =>
    call<Source & { text: string }>('GET', `${bot(id)}/knowledge/${seg(sourceId)}`),
  removeKnowledge: (id: string, sourceId: string) =>
    call<{ status: 'deleted'; source_id: string }>('DELETE', `${bot(id)}/knowledge/${seg(sourceId)}`),

  cancelScan: (id: string) => call<{ status: 'cancelling' }>('POST', `${bot(id)}/scans/cancel`),
  scans: (id: string) => call<{ running?: boolean; scans: Scan[] }>('GET', `${bot(id)}/scans`),
  widgetSites: (id: string) => call<{ sites: WidgetSite[] }>('GET', `${bot(id)}/widget-sites`),
  startScan: (id: string, body: { url: string; max_pages?: number; refresh_days?: number }) =>
    call<{ status: 'scanning'; url: string; max_pages: number }>('POST', `${bot(id)}/scans`, body),
};
