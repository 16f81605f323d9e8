import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { AppContext } from '../context';
import type { AppDeps } from '../deps';
import { idempotencyKeyOf } from '../middleware/idempotency';
import { ALL_ROLES, type RouteDef, route } from '../route';
import { BotParams, PageQuery } from '../../lib/schemas/common';
import { OkResponse, SessionId } from '../../lib/schemas/conversation';
import {
  AssignRequest,
  AssignResponse,
  InboxList,
  InboxTranscript,
  OperatorAttachmentResponse,
  NoteRequest,
  NoteResponse,
  ReplyRequest,
  ReplyResponse,
  ResolveResponse,
  SavedReplyCreate,
  SavedReplyList,
  SavedReplyParams,
  SavedReplyView,
  VisitorPanel,
} from '../../lib/schemas/operator';
import { publicBaseUrl, sessionBot, sessionUser } from '../session';
import { LIMITS } from '../../lib/limits';

const InboxQuery = PageQuery.extend({
  status: z
    .enum(['open', 'all'])
    .default('open')
    .describe('`open`: handed to a person (waiting or with an operator); `all`: every conversation'),
  bot_id: z.string().min(1).max(64).optional().describe('Only this bot’s conversations'),
  assignee: z
    .enum(['me', 'nobody'])
    .optional()
    .describe('`me`: only those assigned to the signed-in person; `nobody`: only unassigned ones'),
});
const ThreadParams = BotParams.extend({ sid: SessionId });

/** The dashboard's key for one reply (a text or an image), the same for every try of it (web/dashboard, inbox). */
const REPLY_KEY_HEADER = {
  name: 'Idempotency-Key',
  description:
    'Optional. The same key with the same content is the same reply: sent again after a failure it is stored once, and the answer names the same message.',
};

/**
 * The scope of a reply's message id when the dashboard names it with an Idempotency-Key: a reply whose answer was
 * lost (a failure after Temporal applied it) and is sent again gets the same message id, which the conversation
 * applies once. Its content is part of it, so an edited draft or another image is a new reply.
 */
function replyScopeOf(ctx: AppContext, userId: string, content: string | Buffer): string | undefined {
  const key = idempotencyKeyOf(ctx);
  if (!key) return undefined;
  return createHash('sha256').update(`dashboard\n${userId}\n${key}\n`).update(content).digest('base64url');
}

/**
 * The operator inbox of the dashboard: the operator API's functions (lib/conversations/service.ts) for the signed-in
 * people of a workspace — every role, operators included — across its bots.
 */
export function inboxRoutes(deps: AppDeps): RouteDef[] {
  return [...inboxListRoutes(deps), ...threadRoutes(deps)];
}

/** Saved replies, the inbox list and a transcript. */
function inboxListRoutes(deps: AppDeps): RouteDef[] {
  const { assignment, conversations, savedReplies } = deps.services;
  const common = { tag: 'Inbox', session: true, roles: ALL_ROLES, unstable: true } as const;
  const errs = ['unauthorized', 'forbidden', 'bad_request', 'not_found', 'service_unavailable'] as const;
  const bot = async (ctx: Parameters<typeof sessionBot>[1], id: string) => (await sessionBot(deps, ctx, id)).id;
  return [
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/saved-replies',
      operationId: 'savedReplies',
      summary: "The team's saved replies, by title: texts an operator inserts into a reply.",
      responses: { 200: { description: 'Saved replies', schema: SavedReplyList } },
      errors: ['unauthorized', 'service_unavailable'],
      handler: async (ctx) => {
        return { replies: await savedReplies.list(sessionUser(ctx).workspaceId) };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/saved-replies',
      operationId: 'savedReplyCreate',
      summary: 'Saves a reply for the team under a title (unique in the workspace; 100 at most).',
      body: SavedReplyCreate,
      responses: { 201: { description: 'Saved', schema: SavedReplyView } },
      errors: ['unauthorized', 'forbidden', 'bad_request', 'conflict', 'payload_too_large', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        return await savedReplies.create(sessionUser(ctx).workspaceId, body);
      },
    }),
    route({
      ...common,
      method: 'delete',
      path: '/v1/dashboard/saved-replies/{reply}',
      operationId: 'savedReplyDelete',
      summary: 'Deletes a saved reply of the team.',
      params: SavedReplyParams,
      responses: { 200: { description: 'Deleted', schema: OkResponse } },
      errors: ['unauthorized', 'forbidden', 'not_found', 'service_unavailable'],
      handler: async (ctx, { params }) => {
        await savedReplies.remove(sessionUser(ctx).workspaceId, params.reply);
        return { status: 'ok' };
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/inbox',
      operationId: 'inbox',
      summary: 'Conversations of the workspace’s bots: open requests (default) or all, with the bot’s name.',
      query: InboxQuery,
      responses: { 200: { description: 'One page', schema: InboxList } },
      errors: [...errs],
      handler: async (ctx, { query }) => {
        ctx.set('Cache-Control', 'no-store');
        const user = sessionUser(ctx);
        return await conversations.inbox(
          user.workspaceId,
          {
            status: query.status,
            botId: query.bot_id,
            ...(query.assignee ? { assignedTo: query.assignee === 'me' ? user.userId : null } : {}),
            limit: query.limit,
            cursor: query.cursor,
          },
          publicBaseUrl(deps),
        );
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/threads/{sid}',
      operationId: 'inboxTranscript',
      summary: 'A conversation’s transcript with its events and images; opening it tells the visitor someone reads.',
      description: 'With who handles the conversation and who of the team is writing to it now.',
      params: ThreadParams,
      query: PageQuery,
      responses: { 200: { description: 'One page of the transcript', schema: InboxTranscript } },
      errors: [...errs],
      handler: async (ctx, { params, query }) => {
        ctx.set('Cache-Control', 'no-store');
        const transcript = await conversations.transcript(
          await bot(ctx, params.id),
          params.sid,
          query,
          publicBaseUrl(deps),
          { authorNames: true },
        );
        return { ...transcript, ...(await assignment.presence(params.sid, sessionUser(ctx).userId)) };
      },
    }),
  ];
}

/** What the team does in a conversation: images, assignment, the visitor panel, notes, replies, typing, resolve. */
function threadRoutes(deps: AppDeps): RouteDef[] {
  const { assignment, conversations } = deps.services;
  const common = { tag: 'Inbox', session: true, roles: ALL_ROLES, unstable: true } as const;
  const errs = ['unauthorized', 'forbidden', 'bad_request', 'not_found', 'service_unavailable'] as const;
  const bot = async (ctx: Parameters<typeof sessionBot>[1], id: string) => (await sessionBot(deps, ctx, id)).id;
  return [
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/threads/{sid}/attachments',
      operationId: 'inboxAttach',
      summary: 'Sends the visitor an image (the body is its bytes), as a reply from the signed-in person.',
      description:
        'The same images as a visitor may send: PNG, JPEG, GIF or WebP recognised from the bytes, up to ' +
        `${LIMITS.widget.attachmentBytes / 1024 / 1024} MiB, with the same quotas. The conversation becomes \`operator\`; ` +
        'an unassigned one is assigned to the sender.',
      params: ThreadParams,
      rawBody: true,
      bodyLimit: LIMITS.widget.attachmentBytes,
      responses: { 201: { description: 'Sent', schema: OperatorAttachmentResponse } },
      headers: [REPLY_KEY_HEADER],
      errors: [...errs, 'payload_too_large', 'unsupported_media_type', 'rate_limited'],
      handler: async (ctx, { params }) => {
        const userId = sessionUser(ctx).userId;
        const bytes = ctx.state.rawBody ?? Buffer.alloc(0);
        const sent = await conversations.operatorAttach(await bot(ctx, params.id), params.sid, bytes, {
          mediaBaseUrl: publicBaseUrl(deps),
          userId,
          replyScope: replyScopeOf(ctx, userId, bytes),
        });
        await assignment.takeIfUnassigned(params.sid, userId);
        return sent;
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/threads/{sid}/assign',
      operationId: 'inboxAssign',
      summary: 'Assigns the conversation to a person of the workspace, or to nobody.',
      description: 'Anyone of the team may assign; the inbox can list what is assigned to the signed-in person.',
      params: ThreadParams,
      body: AssignRequest,
      responses: { 200: { description: 'Assigned', schema: AssignResponse } },
      errors: [...errs],
      handler: async (ctx, { params, body }) => {
        const user = sessionUser(ctx);
        return {
          assignee: await assignment.assign(user.workspaceId, await bot(ctx, params.id), params.sid, body.user_id),
        };
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/threads/{sid}/visitor',
      operationId: 'inboxVisitor',
      summary: 'Who the visitor is (identity, the contact they left, satisfaction) and their other conversations.',
      params: ThreadParams,
      responses: { 200: { description: 'The visitor panel', schema: VisitorPanel } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        ctx.set('Cache-Control', 'no-store');
        return await conversations.visitorPanel(await bot(ctx, params.id), params.sid, publicBaseUrl(deps));
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/threads/{sid}/notes',
      operationId: 'inboxNote',
      summary:
        'An internal note of the team on the conversation: in the transcript as a `note` event, never shown to the visitor.',
      description: 'Changes no status and sends no webhook; signed with the writer’s name.',
      params: ThreadParams,
      body: NoteRequest,
      responses: { 201: { description: 'The note, as the transcript shows it', schema: NoteResponse } },
      errors: [...errs, 'payload_too_large'],
      handler: async (ctx, { params, body }) => {
        return await conversations.addNote(await bot(ctx, params.id), params.sid, body.text, sessionUser(ctx).userId);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/threads/{sid}/reply',
      operationId: 'inboxReply',
      summary: 'Replies to the visitor as an operator; the conversation is then handled by a person (`operator`).',
      params: ThreadParams,
      body: ReplyRequest,
      responses: { 200: { description: 'Reply stored', schema: ReplyResponse } },
      headers: [REPLY_KEY_HEADER],
      errors: [...errs, 'payload_too_large'],
      handler: async (ctx, { params, body }) => {
        const userId = sessionUser(ctx).userId;
        const sent = await conversations.operatorReplyFrom(
          await bot(ctx, params.id),
          params.sid,
          body.text,
          userId,
          replyScopeOf(ctx, userId, body.text),
        );
        // Whoever answers first handles it, unless someone was assigned (docs/decisions/096-assignment.md).
        await assignment.takeIfUnassigned(params.sid, userId);
        return sent;
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/threads/{sid}/typing',
      operationId: 'inboxTyping',
      summary: 'Shows the visitor that an operator is typing, and the team who (about 6 seconds).',
      params: ThreadParams,
      responses: { 200: { description: 'Signal recorded', schema: OkResponse } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        await conversations.operatorTyping(await bot(ctx, params.id), params.sid, sessionUser(ctx).userId);
        return { status: 'ok' };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/threads/{sid}/resolve',
      operationId: 'inboxResolve',
      summary: 'Closes the request: the bot answers again and `resolved` is sent.',
      params: ThreadParams,
      responses: { 200: { description: 'Resolved', schema: ResolveResponse } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        return await conversations.resolve(await bot(ctx, params.id), params.sid);
      },
    }),
  ];
}
