import type { z } from 'zod';
import { errors, type ErrorCode } from '../../lib/errors';
import { LIMITS } from '../../lib/limits';
import { deleteSource, getSource, listSources, upsertSource } from '../../lib/knowledge/store';
import type { AppDeps } from '../app';
import type { AppContext } from '../context';
import type { RouteDef } from '../route';
import {
  KnowledgeDeleted,
  KnowledgeIndexed,
  KnowledgeList,
  KnowledgeSource,
  KnowledgeWriteRequest,
  PageQuery,
  SourceIdParams,
} from '../schemas/knowledge';
import { AUTH_ERRORS } from './conversation';

type WriteBody = z.infer<typeof KnowledgeWriteRequest>;

/**
 * Spec, Endpoints → Knowledge base and Admin helpers. `deps.embed` exists when EMBEDDING_MODEL is configured;
 * without it retrieval is full-text only.
 */
export function knowledgeRoutes(deps: AppDeps): RouteDef[] {
  const botOf = (ctx: AppContext) => ctx.state.principal!.botId!;

  // One handler for both write paths: the admin alias is "technically identical" (spec, Admin helpers).
  const write = async (ctx: AppContext) => {
    const body = ctx.state.input.body as WriteBody;
    const { sourceId } = await upsertSource(
      deps.db,
      { botId: botOf(ctx), sourceId: body.source_id, title: body.title, text: body.text, origin: 'api' },
      { embed: deps.embed },
    );
    ctx.status = 202;
    ctx.body = { status: 'indexed', source_id: sourceId };
  };

  const writeDef: Pick<
    RouteDef,
    'method' | 'tag' | 'keys' | 'body' | 'bodyLimit' | 'idempotent' | 'responses' | 'handler'
  > = {
    method: 'post',
    tag: 'Knowledge base',
    keys: ['secret'],
    body: KnowledgeWriteRequest,
    bodyLimit: LIMITS.knowledgeBodyBytes,
    idempotent: true,
    responses: {
      202: { description: 'Indexed: searchable at once; the bot’s answer cache is reset.', schema: KnowledgeIndexed },
    },
    handler: write,
  };
  const writeErrors: ErrorCode[] = [
    'bad_request',
    ...AUTH_ERRORS,
    'idempotency_key_reused',
    'idempotency_in_progress',
    'payload_too_large',
  ];

  return [
    {
      ...writeDef,
      path: '/v1/api/knowledge',
      operationId: 'writeKnowledge',
      summary: 'Adds a knowledge source, or replaces the one with the same `source_id`.',
      description:
        'Body up to 5 MiB. Without `source_id` every write creates a new source and returns its generated id. ' +
        'The source is split into fragments and indexed before the response.',
      rateGroup: 'dialogue',
      errors: [...writeErrors, 'rate_limited', 'internal_error'],
    },
    {
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
      handler: async (ctx) => {
        const q = ctx.state.input.query as z.infer<typeof PageQuery>;
        ctx.body = await listSources(deps.db, botOf(ctx), { limit: q.limit, cursor: q.cursor });
      },
    },
    {
      method: 'get',
      path: '/v1/api/knowledge/{id}',
      operationId: 'getKnowledge',
      tag: 'Knowledge base',
      summary: 'One knowledge source in full, with its text.',
      keys: ['secret'],
      rateGroup: 'reads',
      params: SourceIdParams,
      responses: { 200: { description: 'The source', schema: KnowledgeSource } },
      errors: ['bad_request', ...AUTH_ERRORS, 'not_found', 'rate_limited', 'internal_error'],
      handler: async (ctx) => {
        const { id } = ctx.state.input.params as z.infer<typeof SourceIdParams>;
        const source = await getSource(deps.db, botOf(ctx), id);
        if (!source) throw errors.notFound('No knowledge source with this id');
        ctx.body = source;
      },
    },
    {
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
      handler: async (ctx) => {
        const { id } = ctx.state.input.params as z.infer<typeof SourceIdParams>;
        if (!(await deleteSource(deps.db, botOf(ctx), id))) throw errors.notFound('No knowledge source with this id');
        ctx.body = { status: 'deleted', source_id: id };
      },
    },
    {
      ...writeDef,
      path: '/v1/admin/sources',
      operationId: 'adminWriteSource',
      tag: 'Admin helpers',
      summary: 'Same as `POST /v1/api/knowledge`, kept for old integrations; never rate limited.',
      errors: [...writeErrors, 'internal_error'],
    },
  ];
}
