import { type ErrorCode, errors } from '../../lib/errors';
import { LIMITS } from '../../lib/limits';
import type { AppDeps } from '../deps';
import { ALL_ROLES, AUTH_ERRORS, type RouteDef, SENT_BY_HANDLER, route, DASHBOARD_ROUTE } from '../route';
import { BotParams } from '../../lib/schemas/common';
import { SessionId } from '../../lib/schemas/conversation';
import {
  DashboardKnowledgeQuery,
  KnowledgeDeleted,
  KnowledgeFileAccepted,
  KnowledgeFileFields,
  KnowledgeIndexed,
  KnowledgeList,
  KnowledgeSearchRequest,
  KnowledgeSearchResult,
  KnowledgeSource,
  KnowledgeWriteRequest,
  PageQuery,
  PassagesRead,
  SourceId,
  SourceIdParams,
  SourceQuery,
} from '../../lib/schemas/knowledge';
import type { AppContext } from '../context';
import type { MultipartOptions } from '../middleware/multipart';
import { keyBot, sessionBot } from '../session';

const MULTIPART: MultipartOptions = {
  file: 'file',
  maxFileBytes: LIMITS.knowledgeFiles.bytes,
  fields: ['source_id', 'title'],
  maxFieldBytes: 16 * 1024,
};
const FILE_BODY_LIMIT = LIMITS.knowledgeFiles.bytes + LIMITS.knowledgeFiles.envelopeBytes;
const UPLOAD_DESCRIPTION =
  `A \`multipart/form-data\` body with the file in the field \`file\` (at most ${LIMITS.knowledgeFiles.bytes / 1024 / 1024} MiB; ` +
  `PDF up to ${LIMITS.knowledgeFiles.maxPages} pages): PDF, Word (.docx), Markdown, HTML, CSV or plain text, judged by ` +
  'its content, not its name (anything else is 415 `unsupported_media_type`, saying what it is). Answered at once with ' +
  '202 `reading`: the file is read in the background and split into passages on its structure (headings, ' +
  'paragraphs, lists, table rows), each with its heading path and page. Follow `GET /v1/api/knowledge/{source_id}` ' +
  'to `status` `indexed` (with `fragments`), or `failed` with a `reason` (an encrypted PDF, a scanned one with no ' +
  'text, a damaged file, too many pages). The same `source_id`, or else the same file name, replaces that source; ' +
  'its previous passages stay searchable until the new ones are indexed.';

/** Sends a file source's original as a download: never shown inline (an HTML file must not run on our origin). */
function sendFile(
  ctx: AppContext,
  file: { name: string; contentType: string; size: number; sha256: Buffer; body: Buffer },
): typeof SENT_BY_HANDLER {
  const ascii = file.name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  ctx.set('Content-Disposition', `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(file.name)}`);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
  ctx.set('Cache-Control', 'private, no-cache');
  ctx.etag = `"${file.sha256.toString('base64url').slice(0, 27)}"`;
  ctx.type = file.contentType;
  ctx.body = file.body;
  return SENT_BY_HANDLER;
}

const DashboardSourceParams = BotParams.extend({ source_id: SourceId });
const ThreadParams = BotParams.extend({ sid: SessionId });

/**
 * Spec, Endpoints → Knowledge base and Admin helpers. The admin alias is "technically identical" to the knowledge
 * write (same handler), but never rate limited.
 */
export function knowledgeRoutes(deps: AppDeps): RouteDef[] {
  return [...knowledgeSearchAndFileRoutes(deps), ...knowledgeApiRoutes(deps), ...knowledgeDashboardRoutes(deps)];
}

/** What the knowledge routes share: the write operation, the dashboard's and the upload's common parts. */
function knowledgeShapes(deps: AppDeps) {
  const { knowledge } = deps.services;

  const write = {
    method: 'post',
    tag: 'Knowledge base',
    keys: ['secret'],
    body: KnowledgeWriteRequest,
    bodyLimit: LIMITS.knowledgeBodyBytes,
    idempotent: true,
    responses: {
      202: { description: 'Indexed: searchable at once; the bot’s answer cache is reset.', schema: KnowledgeIndexed },
    },
    handler: async (ctx, { body }) => {
      return await knowledge.write(keyBot(ctx).botId, body);
    },
  } satisfies Partial<RouteDef<typeof KnowledgeWriteRequest>>;
  const dashboard = { ...DASHBOARD_ROUTE, params: BotParams } as const;
  const dashboardErrors = ['unauthorized', 'forbidden', 'bad_request', 'not_found', 'service_unavailable'] as const;
  const writeErrors: ErrorCode[] = [
    'bad_request',
    ...AUTH_ERRORS,
    'idempotency_key_reused',
    'idempotency_in_progress',
    'payload_too_large',
  ];

  const upload = {
    method: 'post',
    body: KnowledgeFileFields,
    bodyLimit: FILE_BODY_LIMIT,
    multipart: MULTIPART,
    responses: { 202: { description: 'Accepted: being read', schema: KnowledgeFileAccepted } },
  } as const;
  const uploaded = (ctx: AppContext) => {
    const file = ctx.state.upload;
    if (!file) throw errors.badRequest('file: is required (a multipart field named `file`)');
    return file;
  };

  const search = {
    method: 'post',
    body: KnowledgeSearchRequest,
    summary: 'What a question retrieves: the ranked passages a chat turn asking it alone gives the model.',
    description:
      `Best first, at most \`limit\` (${LIMITS.knowledgeSearch.min}–${LIMITS.knowledgeSearch.max}, default ` +
      `${LIMITS.knowledgeSearch.default}: what a turn reads), each with its source, heading path, page and score. ` +
      'The retrieval is the chat turn’s own (full text, fused with embeddings when they are on); `score` ranks within ' +
      'one answer and its scale may change. A follow-up in a conversation is searched with its context ' +
      '(docs/decisions/152-questions-in-context.md): this searches the question as given. Reads nothing but the bot’s ' +
      'own knowledge and writes nothing.',
    responses: { 200: { description: 'The passages, best first', schema: KnowledgeSearchResult } },
  } as const;

  return { write, dashboard, dashboardErrors, writeErrors, upload, uploaded, search };
}

/** Searching the knowledge, the passages a conversation read, and uploaded files. */
function knowledgeSearchAndFileRoutes(deps: AppDeps): RouteDef[] {
  const { knowledge, runs } = deps.services;
  const { dashboard, dashboardErrors, writeErrors, upload, uploaded, search } = knowledgeShapes(deps);
  return [
    route({
      ...search,
      path: '/v1/api/knowledge/search',
      operationId: 'searchKnowledge',
      tag: 'Knowledge base',
      keys: ['secret'],
      rateGroup: 'reads',
      errors: ['bad_request', ...AUTH_ERRORS, 'rate_limited', 'internal_error'],
      handler: async (ctx, { body }) => {
        return await knowledge.search(keyBot(ctx).botId, body);
      },
    }),
    route({
      ...dashboard,
      ...search,
      path: '/v1/dashboard/bots/{id}/knowledge/search',
      operationId: 'dashboardSearchKnowledge',
      summary: 'The Knowledge tab’s “Test a question”: as `POST /v1/api/knowledge/search`.',
      roles: ALL_ROLES,
      errors: [...dashboardErrors],
      handler: async (ctx, { params, body }) => {
        return await knowledge.search((await sessionBot(deps, ctx, params.id)).id, body);
      },
    }),
    route({
      ...dashboard,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/threads/{sid}/passages',
      operationId: 'dashboardPassagesRead',
      summary: 'The passages each answer of a conversation read, newest first (the test chat shows them).',
      description:
        'For each of the agent’s answers: the visitor’s message, what the knowledge was searched with when the ' +
        'message did not stand alone, and the passages the model was given, as they were then.',
      roles: ALL_ROLES,
      params: ThreadParams,
      responses: { 200: { description: 'The answers and their passages', schema: PassagesRead } },
      errors: [...dashboardErrors],
      handler: async (ctx, { params }) => {
        ctx.set('Cache-Control', 'no-store');
        return await runs.passagesRead((await sessionBot(deps, ctx, params.id)).id, params.sid);
      },
    }),
    route({
      ...upload,
      path: '/v1/api/knowledge/files',
      operationId: 'uploadKnowledgeFile',
      tag: 'Knowledge base',
      summary: 'Uploads a file (PDF, Word, Markdown, HTML, CSV, text) into the knowledge base; read in the background.',
      description: UPLOAD_DESCRIPTION,
      keys: ['secret'],
      rateGroup: 'dialogue',
      idempotent: true,
      errors: [...writeErrors, 'unsupported_media_type', 'rate_limited', 'internal_error'],
      handler: async (ctx, { body }) => {
        const file = uploaded(ctx);
        return await knowledge.uploadFile(keyBot(ctx), { ...file, ...body });
      },
    }),
    route({
      method: 'get',
      path: '/v1/api/knowledge/{id}/file',
      operationId: 'downloadKnowledgeFile',
      tag: 'Knowledge base',
      summary: 'The original of an uploaded file, as uploaded (a download).',
      keys: ['secret'],
      rateGroup: 'reads',
      params: SourceIdParams,
      responses: { 200: { description: 'The file', contentType: 'application/octet-stream' } },
      errors: ['bad_request', ...AUTH_ERRORS, 'not_found', 'rate_limited', 'internal_error'],
      handler: async (ctx, { params }) => {
        return sendFile(ctx, await knowledge.download(keyBot(ctx).botId, params.id));
      },
    }),
  ];
}

/** The knowledge API: write, list, read and delete a source. */
function knowledgeApiRoutes(deps: AppDeps): RouteDef[] {
  const { knowledge } = deps.services;
  const { write, dashboard, dashboardErrors, writeErrors } = knowledgeShapes(deps);
  return [
    route({
      ...write,
      path: '/v1/api/knowledge',
      operationId: 'writeKnowledge',
      summary: 'Adds a knowledge source, or replaces the one with the same `source_id`.',
      description:
        'Body up to 5 MiB. Without `source_id` every write creates a new source and returns its generated id. ' +
        'The source is split into fragments and indexed before the response.',
      rateGroup: 'dialogue',
      errors: [...writeErrors, 'rate_limited', 'internal_error'],
    }),
    route({
      method: 'get',
      path: '/v1/api/knowledge',
      operationId: 'listKnowledge',
      tag: 'Knowledge base',
      summary: 'Lists the knowledge sources, oldest first, a page at a time.',
      keys: ['secret'],
      rateGroup: 'reads',
      query: PageQuery,
      responses: { 200: { description: 'One page of sources', schema: KnowledgeList } },
      errors: ['bad_request', ...AUTH_ERRORS, 'rate_limited', 'internal_error'],
      handler: async (ctx, { query }) => {
        return await knowledge.list(keyBot(ctx).botId, query);
      },
    }),
    route({
      method: 'get',
      path: '/v1/api/knowledge/{id}',
      operationId: 'getKnowledge',
      tag: 'Knowledge base',
      summary: 'One knowledge source in full, with its text (and its passages when asked).',
      description:
        'An uploaded file is `reading` until its passages are indexed, then `indexed`, or `failed` with a `reason`; ' +
        '`file` describes the original.',
      keys: ['secret'],
      rateGroup: 'reads',
      params: SourceIdParams,
      query: SourceQuery,
      responses: { 200: { description: 'The source', schema: KnowledgeSource } },
      errors: ['bad_request', ...AUTH_ERRORS, 'not_found', 'rate_limited', 'internal_error'],
      handler: async (ctx, { params, query }) => {
        return await knowledge.get(keyBot(ctx).botId, params.id, query);
      },
    }),
    route({
      method: 'delete',
      path: '/v1/api/knowledge/{id}',
      operationId: 'deleteKnowledge',
      tag: 'Knowledge base',
      summary: 'Deletes a knowledge source and its fragments; the bot’s answer cache is reset.',
      keys: ['secret'],
      rateGroup: 'dialogue',
      params: SourceIdParams,
      responses: { 200: { description: 'Deleted', schema: KnowledgeDeleted } },
      errors: ['bad_request', ...AUTH_ERRORS, 'not_found', 'rate_limited', 'internal_error'],
      handler: async (ctx, { params }) => {
        return await knowledge.remove(keyBot(ctx).botId, params.id);
      },
    }),
    // The dashboard's knowledge page: the same functions for the signed-in people of the bot's workspace.
    route({
      ...dashboard,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/knowledge',
      operationId: 'dashboardListKnowledge',
      summary:
        "The bot's knowledge sources, newest first unless asked, a page at a time; searchable by title, id or text, by kind.",
      roles: ALL_ROLES,
      query: DashboardKnowledgeQuery,
      responses: { 200: { description: 'One page of sources', schema: KnowledgeList } },
      errors: [...dashboardErrors],
      handler: async (ctx, { params, query }) => {
        return await knowledge.list((await sessionBot(deps, ctx, params.id)).id, query);
      },
    }),
  ];
}

/** The dashboard's knowledge page: the same operations for the signed-in people of the bot's workspace. */
function knowledgeDashboardRoutes(deps: AppDeps): RouteDef[] {
  const { knowledge } = deps.services;
  const { write, dashboard, dashboardErrors, writeErrors, upload, uploaded } = knowledgeShapes(deps);
  return [
    route({
      ...dashboard,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/knowledge',
      operationId: 'dashboardWriteKnowledge',
      summary: 'Adds a knowledge source (a text), or replaces the one with the same `source_id`.',
      body: KnowledgeWriteRequest,
      bodyLimit: LIMITS.knowledgeBodyBytes,
      responses: { 202: { description: 'Indexed', schema: KnowledgeIndexed } },
      errors: [...dashboardErrors, 'payload_too_large'],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await knowledge.write(bot.id, body);
      },
    }),
    route({
      ...dashboard,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/knowledge/{source_id}',
      operationId: 'dashboardGetKnowledge',
      summary: 'One knowledge source in full, with its text (and its passages when asked).',
      roles: ALL_ROLES,
      params: DashboardSourceParams,
      query: SourceQuery,
      responses: { 200: { description: 'The source', schema: KnowledgeSource } },
      errors: [...dashboardErrors],
      handler: async (ctx, { params, query }) => {
        return await knowledge.get((await sessionBot(deps, ctx, params.id)).id, params.source_id, query);
      },
    }),
    route({
      ...dashboard,
      ...upload,
      path: '/v1/dashboard/bots/{id}/knowledge/files',
      operationId: 'dashboardUploadKnowledgeFile',
      summary: 'Uploads a file into the knowledge base; read in the background (as `POST /v1/api/knowledge/files`).',
      description: UPLOAD_DESCRIPTION,
      errors: [...dashboardErrors, 'payload_too_large', 'unsupported_media_type'],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        const file = uploaded(ctx);
        return await knowledge.uploadFile({ botId: bot.id, workspaceId: bot.workspace_id }, { ...file, ...body });
      },
    }),
    route({
      ...dashboard,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/knowledge/{source_id}/file',
      operationId: 'dashboardDownloadKnowledgeFile',
      summary: 'The original of an uploaded file, as uploaded (a download).',
      roles: ALL_ROLES,
      params: DashboardSourceParams,
      responses: { 200: { description: 'The file', contentType: 'application/octet-stream' } },
      errors: [...dashboardErrors],
      handler: async (ctx, { params }) => {
        return sendFile(ctx, await knowledge.download((await sessionBot(deps, ctx, params.id)).id, params.source_id));
      },
    }),
    route({
      ...dashboard,
      method: 'delete',
      path: '/v1/dashboard/bots/{id}/knowledge/{source_id}',
      operationId: 'dashboardDeleteKnowledge',
      summary: 'Deletes a knowledge source and its fragments.',
      params: DashboardSourceParams,
      responses: { 200: { description: 'Deleted', schema: KnowledgeDeleted } },
      errors: [...dashboardErrors],
      handler: async (ctx, { params }) => {
        return await knowledge.remove((await sessionBot(deps, ctx, params.id)).id, params.source_id);
      },
    }),
    route({
      ...write,
      path: '/v1/admin/sources',
      operationId: 'adminWriteSource',
      tag: 'Admin helpers',
      summary: 'Same as `POST /v1/api/knowledge`, kept for old integrations; never rate limited.',
      errors: [...writeErrors, 'internal_error'],
    }),
  ];
}
