import { z } from 'zod';
import { rotateKey } from '../../lib/bots';
import { decodeCursor, encodeCursor } from '../../lib/cursor';
import { errors } from '../../lib/errors';
import { signVisitorConfirmation } from '../../lib/identity';
import { readState, writeState } from '../../lib/state';
import { workflowUiUrl } from '../../lib/temporal';
import type { AppDeps } from '../app';
import type { AppContext } from '../context';
import type { RouteDef } from '../route';
import { PageQuery } from '../schemas/common';
import { ChatResponse, MAX_MESSAGE_CHARS, SessionId } from '../schemas/conversation';
import { answerChat, conversationDeps } from './conversation';
import { BotParams, BotPatch, BotView, IssuedKey, NotificationList, RunList, StatePut, StateView } from '../schemas/dashboard';

/** The bot named in the path, if it belongs to the signed-in user's workspace; 404 otherwise (never 403: no leaks). */
export async function dashboardBot(ctx: AppContext, deps: AppDeps): Promise<{ id: string; workspace_id: string }> {
  const { id } = ctx.state.input.params as { id: string };
  const res = await deps.db.query<{ id: string; workspace_id: string }>(`SELECT id, workspace_id FROM bots WHERE id = $1 AND workspace_id = $2`, [
    id,
    ctx.state.session!.workspaceId,
  ]);
  if (!res.rows[0]) throw errors.notFound('No such bot in your workspace');
  return res.rows[0];
}

const TestChatRequest = z
  .object({ session_id: SessionId.optional(), message: z.string().trim().min(1, 'must not be empty').max(MAX_MESSAGE_CHARS) })
  .meta({ id: 'TestChatRequest' });

const BOT_COLUMNS = `id, name, instructions, model, handoff_enabled, handoff_webhook_url, public_key,
  webhook_secret_fingerprint AS handoff_webhook_secret_fingerprint, identity_secret_fingerprint AS visitor_identity_secret_fingerprint`;

/** `/v1/dashboard/*`: the dashboard's own API (not a stable contract; spec, "Dashboard calls named as public"). */
export function dashboardRoutes(deps: AppDeps): RouteDef[] {
  const common = { tag: 'Dashboard', session: true, unstable: true, params: BotParams };
  const errs = ['unauthorized', 'not_found', 'bad_request', 'service_unavailable'] as const;
  return [
    {
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}',
      operationId: 'dashboardGetBot',
      summary: 'Bot data, including the public key `pk_` and the fingerprints of its secrets.',
      responses: { 200: { description: 'Bot', schema: BotView } },
      errors: [...errs],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        ctx.body = (await deps.db.query(`SELECT ${BOT_COLUMNS} FROM bots WHERE id = $1`, [bot.id])).rows[0];
      },
    },
    {
      ...common,
      method: 'patch',
      path: '/v1/dashboard/bots/{id}',
      operationId: 'dashboardPatchBot',
      summary: 'Changes the agent configuration: name, instructions, model, handoff and its webhook address.',
      body: BotPatch,
      responses: { 200: { description: 'Bot', schema: BotView } },
      errors: [...errs],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        const patch = ctx.state.input.body as Record<string, unknown>;
        const columns = Object.keys(patch).filter((k) => ['name', 'instructions', 'model', 'handoff_enabled', 'handoff_webhook_url'].includes(k));
        if (columns.length) {
          await deps.db.query(
            `UPDATE bots SET ${columns.map((c, i) => `${c} = $${i + 2}`).join(', ')}, updated_at = now() WHERE id = $1`,
            [bot.id, ...columns.map((c) => patch[c])],
          );
        }
        ctx.body = (await deps.db.query(`SELECT ${BOT_COLUMNS} FROM bots WHERE id = $1`, [bot.id])).rows[0];
      },
    },
    {
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/secret',
      operationId: 'dashboardIssueSecret',
      summary: 'Issues a new secret key `sk_`; the previous one stops working at once. Shown only in this response.',
      responses: { 200: { description: 'New key', schema: IssuedKey } },
      errors: [...errs],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        ctx.body = await rotateKey(deps.db, deps.secrets, bot.id, 'secret');
      },
    },
    {
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/identity-secret',
      operationId: 'dashboardIssueIdentitySecret',
      summary: 'Issues a new visitor identity secret `idsec_`; earlier confirmations stop working at once.',
      responses: { 200: { description: 'New secret', schema: IssuedKey } },
      errors: [...errs],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        ctx.body = await rotateKey(deps.db, deps.secrets, bot.id, 'identity');
      },
    },
    {
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/runs',
      operationId: 'dashboardListRuns',
      summary: 'The run log, newest first, each with a link to its workflow in the Temporal UI.',
      query: PageQuery,
      responses: { 200: { description: 'Runs', schema: RunList } },
      errors: [...errs],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        const { limit, cursor } = ctx.state.input.query as { limit: number; cursor?: string };
        const after = cursor ? decodeCursor<{ t: string; i: string }>(cursor, ['t', 'i']) : undefined;
        const res = await deps.db.query(
          `SELECT id, status, skipped_reason, trigger_kind, trigger_id, session_id, workflow_id, input, answer, error_code, error, model,
                  prompt_tokens, completion_tokens, credits, started_at, finished_at,
                  (extract(epoch FROM started_at) * 1000)::bigint AS started_ms, (extract(epoch FROM finished_at) * 1000)::bigint AS finished_ms,
                  started_at::text AS started_key
             FROM runs WHERE bot_id = $1 AND ($2::timestamptz IS NULL OR (started_at, id) < ($2::timestamptz, $3::text))
            ORDER BY started_at DESC, id DESC LIMIT $4`,
          [bot.id, after?.t ?? null, after?.i ?? null, limit + 1],
        );
        const page = res.rows.slice(0, limit);
        ctx.body = {
          runs: page.map((r) => ({
            run_id: r.id,
            status: r.skipped_reason ? 'skipped' : r.status,
            trigger_kind: r.trigger_kind,
            trigger_id: r.trigger_id,
            session_id: r.session_id,
            input: r.input,
            answer: r.answer,
            error_code: r.error_code ?? r.skipped_reason ?? null,
            error: r.error,
            model: r.model,
            prompt_tokens: r.prompt_tokens,
            completion_tokens: r.completion_tokens,
            credits: r.credits,
            started_at: Number(r.started_ms),
            finished_at: r.finished_ms === null ? null : Number(r.finished_ms),
            workflow_url: workflowUiUrl(deps.temporal, r.workflow_id),
          })),
          next_cursor: res.rows.length > limit ? encodeCursor({ t: page.at(-1)!.started_key, i: page.at(-1)!.id }) : '',
        };
      },
    },
    {
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/state',
      operationId: 'dashboardGetState',
      summary: "The agent's state document and its version.",
      responses: { 200: { description: 'State', schema: StateView } },
      errors: [...errs],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        ctx.body = await readState(deps.db, bot.id);
      },
    },
    {
      ...common,
      method: 'put',
      path: '/v1/dashboard/bots/{id}/state',
      operationId: 'dashboardPutState',
      summary: 'Replaces the state document if `version` is still current (409 `version_conflict` otherwise); at most 64 KiB.',
      body: StatePut,
      responses: { 200: { description: 'State', schema: StateView } },
      errors: [...errs, 'version_conflict', 'payload_too_large'],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        const { document, version } = ctx.state.input.body as { document: Record<string, unknown>; version: number };
        ctx.body = await writeState(deps.db, bot.id, document, version);
      },
    },
    {
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/test-chat',
      operationId: 'dashboardTestChat',
      summary: "The dashboard's test chat: a chat turn in which the signed-in user is confirmed as the bot's administrator.",
      description:
        'Spec, Visitor identity rule 6. The turn carries a visitor confirmation signed with the bot\'s identity secret for `dashboard:<user id>` with role `admin`, so admin-only actions are available; the answer is the ChatResponse of `POST /v1/api/chat`.',
      body: TestChatRequest,
      responses: { 200: { description: 'Answer', schema: ChatResponse } },
      errors: [...errs, 'llm_unavailable', 'llm_overloaded'],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        const sealed = await deps.db.query<{ identity_secret_sealed: string }>(`SELECT identity_secret_sealed FROM bots WHERE id = $1`, [bot.id]);
        const body = ctx.state.input.body as { session_id?: string; message: string };
        const userAuth = signVisitorConfirmation(
          { user: `dashboard:${ctx.state.session!.userId}`, role: 'admin', bot: bot.id, exp: Math.floor(Date.now() / 1000) + 300 },
          deps.secrets.open(sealed.rows[0].identity_secret_sealed),
        );
        ctx.body = await answerChat(conversationDeps(deps), bot.id, { ...body, user_auth: userAuth });
      },
    },
    {
      method: 'get',
      path: '/v1/dashboard/notifications',
      operationId: 'dashboardNotifications',
      tag: 'Dashboard',
      session: true,
      unstable: true,
      summary: "The workspace's notifications, newest first (paused triggers, approvals waiting).",
      responses: { 200: { description: 'Notifications', schema: NotificationList } },
      errors: ['unauthorized', 'service_unavailable'],
      handler: async (ctx) => {
        const res = await deps.db.query(
          `SELECT id, kind, title, body, bot_id, data, (extract(epoch FROM created_at) * 1000)::bigint AS created_ms
             FROM notifications WHERE workspace_id = $1 ORDER BY created_at DESC LIMIT 100`,
          [ctx.state.session!.workspaceId],
        );
        ctx.body = { notifications: res.rows.map(({ created_ms, ...n }) => ({ ...n, created_at: Number(created_ms) })) };
      },
    },
  ];
}
