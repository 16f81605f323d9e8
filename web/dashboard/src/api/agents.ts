import type {
  BotKeysView,
  BotSummary as BotSummaryView,
  BotView,
  KnowledgeListQuery,
  KnowledgeSearchPassage,
  KnowledgeSourceSummary,
  PassagesReadView,
  ModelChoicesView,
  WidgetLookView,
  ScanRun,
  WidgetSiteView,
} from '../../../shared/contract';
import type { StreamFrame } from '../../../shared/sse';
import { call, query, seg, stream } from './client';

/** Agents (bots) and their keys, knowledge, scans, test chat: `/v1/dashboard/bots…`. */

export type BotSummary = BotSummaryView;

export type Bot = BotView;

export type WidgetLook = WidgetLookView;

export type WidgetSite = WidgetSiteView;

export type BotKeys = BotKeysView;

export type BotPatch = Partial<
  Pick<
    Bot,
    | 'name'
    | 'instructions'
    | 'model'
    | 'handoff_enabled'
    | 'handoff_webhook_url'
    | 'allowed_origins'
    | 'when_unanswered'
    | 'business_hours'
  >
> & { widget_look?: Partial<WidgetLook> };

export type KeyKind = 'secret' | 'identity' | 'webhook' | 'builder';

const REISSUE_PATH: Record<KeyKind, string> = {
  secret: 'secret',
  identity: 'identity-secret',
  webhook: 'webhook-secret',
  builder: 'builder-key',
};

export type Source = KnowledgeSourceSummary;

/** The knowledge list's order (newest first unless asked). */
export type SourceOrder = NonNullable<KnowledgeListQuery['order']>;

/** A kind of source the list can be narrowed to. */
export type SourceKind = NonNullable<KnowledgeListQuery['kind']>;

/** A passage a question retrieves, or one an answer read. */
export type FoundPassage = KnowledgeSearchPassage;

export type PassagesRead = PassagesReadView;

/** The server's own type (web/shared/contract.ts). */
export type Scan = ScanRun;

const bot = (id: string) => `/v1/dashboard/bots/${seg(id)}`;

export type ModelChoices = ModelChoicesView;

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

  knowledge: (
    id: string,
    page: { cursor?: string; limit?: number; q?: string; order?: SourceOrder; kind?: SourceKind } = {},
  ) => call<{ sources: Source[]; next_cursor: string }>('GET', `${bot(id)}/knowledge${query({ limit: 20, ...page })}`),
  addKnowledge: (id: string, body: { title?: string; text: string; source_id?: string }) =>
    call<{ status: 'indexed'; source_id: string }>('POST', `${bot(id)}/knowledge`, body),
  source: (id: string, sourceId: string, opts: { passages?: boolean } = {}) =>
    call<Source & { text: string; passages?: { text: string; heading_path: string[]; page: number | null }[] }>(
      'GET',
      `${bot(id)}/knowledge/${seg(sourceId)}${opts.passages ? '?passages=true' : ''}`,
    ),
  /** What a question retrieves: the ranked passages a turn asking it alone gives the model. */
  searchKnowledge: (id: string, query: string, limit?: number) =>
    call<{ passages: FoundPassage[] }>('POST', `${bot(id)}/knowledge/search`, { query, limit }),
  /** The passages each answer of a conversation read, newest first. */
  passagesRead: (id: string, sessionId: string) =>
    call<PassagesRead>('GET', `${bot(id)}/threads/${seg(sessionId)}/passages`),
  removeKnowledge: (id: string, sourceId: string) =>
    call<{ status: 'deleted'; source_id: string }>('DELETE', `${bot(id)}/knowledge/${seg(sourceId)}`),

  cancelScan: (id: string) => call<{ status: 'cancelling' }>('POST', `${bot(id)}/scans/cancel`),
  scans: (id: string) => call<{ running?: boolean; scans: Scan[] }>('GET', `${bot(id)}/scans`),
  widgetSites: (id: string) => call<{ sites: WidgetSite[] }>('GET', `${bot(id)}/widget-sites`),
  startScan: (
    id: string,
    body: { url: string; max_pages?: number; refresh_days?: number; include?: string[]; exclude?: string[] },
  ) => call<{ status: 'scanning'; url: string; max_pages: number }>('POST', `${bot(id)}/scans`, body),
};
