import { z } from 'zod';
import { ApiError, errors } from '../../lib/errors';
import { newId } from '../../lib/ids';
import { approvalDecisionSignal } from '../../workflows/messages';
import type { AppDeps } from '../app';
import type { RouteDef } from '../route';
import { BotParams } from '../schemas/dashboard';
import { dashboardBot } from './dashboard';

const ActionCreate = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64').describe('The tool name the model sees'),
    description: z.string().trim().min(1).max(1000).describe('What the action does, for the model'),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
    url: z.url({ protocol: /^https?$/ }).max(2000).describe('Called through the SSRF-safe client; private addresses are refused'),
    parameters: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }).describe('JSON Schema of the arguments'),
    admin_only: z.boolean().default(false).describe('Only for a visitor confirmed as admin (identity confirmation role `admin`) and the owner'),
    requires_approval: z.boolean().default(false).describe("Each call waits for the owner's approval in the dashboard"),
  })
  .meta({ id: 'ActionCreate' });

const ActionView = ActionCreate.extend({ id: z.string() }).meta({ id: 'Action' });
const ApprovalParams = z.object({ id: z.string().min(1).max(64), aid: z.string().min(1).max(64) });
const ActionParams = z.object({ id: z.string().min(1).max(64), action: z.string().min(1).max(64) });
const ApprovalView = z
  .object({ id: z.string(), run_id: z.string(), action: z.string(), arguments: z.unknown(), status: z.string(), created_at: z.number().int() })
  .meta({ id: 'Approval' });

/** Agent actions: HTTP tools a run may call, and the owner's approvals of those that need one (dashboard only). */
export function actionRoutes(deps: AppDeps): RouteDef[] {
  const common = { tag: 'Actions', session: true, unstable: true } as const;
  const errs = ['unauthorized', 'not_found', 'bad_request', 'service_unavailable'] as const;
  return [
    {
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/actions',
      operationId: 'createAction',
      summary: 'Adds an action (an HTTP tool the agent may call).',
      params: BotParams,
      body: ActionCreate,
      responses: { 201: { description: 'Created', schema: ActionView } },
      errors: [...errs, 'conflict'],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        const a = ctx.state.input.body as z.infer<typeof ActionCreate>;
        const id = newId('key').replace(/^key_/, 'act_');
        const res = await deps.db.query(
          `INSERT INTO bot_actions (id, bot_id, name, description, method, url, parameters, admin_only, requires_approval)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (bot_id, name) DO NOTHING
           RETURNING id, name, description, method, url, parameters, admin_only, requires_approval`,
          [id, bot.id, a.name, a.description, a.method, a.url, JSON.stringify(a.parameters), a.admin_only, a.requires_approval],
        );
        if (!res.rows[0]) throw errors.conflict(`An action named "${a.name}" exists already`);
        ctx.status = 201;
        ctx.body = res.rows[0];
      },
    },
    {
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/actions',
      operationId: 'listActions',
      summary: "The bot's actions.",
      params: BotParams,
      responses: { 200: { description: 'Actions', schema: z.object({ actions: z.array(ActionView) }) } },
      errors: [...errs],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        const res = await deps.db.query(
          `SELECT id, name, description, method, url, parameters, admin_only, requires_approval FROM bot_actions WHERE bot_id = $1 ORDER BY name`,
          [bot.id],
        );
        ctx.body = { actions: res.rows };
      },
    },
    {
      ...common,
      method: 'delete',
      path: '/v1/dashboard/bots/{id}/actions/{action}',
      operationId: 'deleteAction',
      summary: 'Removes an action.',
      params: ActionParams,
      responses: { 200: { description: 'Deleted' } },
      errors: [...errs],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        const { action } = ctx.state.input.params as { action: string };
        const res = await deps.db.query(`DELETE FROM bot_actions WHERE bot_id = $1 AND id = $2`, [bot.id, action]);
        if (!res.rowCount) throw errors.notFound('No such action');
        ctx.body = { status: 'deleted', id: action };
      },
    },
    {
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/approvals',
      operationId: 'listApprovals',
      summary: 'Action calls waiting for approval (and recent decisions), newest first.',
      params: BotParams,
      responses: { 200: { description: 'Approvals', schema: z.object({ approvals: z.array(ApprovalView) }) } },
      errors: [...errs],
      handler: async (ctx) => {
        const bot = await dashboardBot(ctx, deps);
        const res = await deps.db.query(
          `SELECT p.id, p.run_id, a.name AS action, p.arguments, p.status, (extract(epoch FROM p.created_at) * 1000)::bigint AS created_ms
             FROM action_approvals p JOIN bot_actions a ON a.id = p.action_id
            WHERE p.bot_id = $1 ORDER BY p.created_at DESC LIMIT 100`,
          [bot.id],
        );
        ctx.body = { approvals: res.rows.map(({ created_ms, ...r }) => ({ ...r, created_at: Number(created_ms) })) };
      },
    },
    ...(['approve', 'reject'] as const).map(
      (verb): RouteDef => ({
        ...common,
        method: 'post',
        path: `/v1/dashboard/bots/{id}/approvals/{aid}/${verb}`,
        operationId: `${verb}Action`,
        summary:
          verb === 'approve'
            ? 'Approves a waiting action call: the run carries it out and goes on. Only a signed-in user can, never a builder key.'
            : 'Rejects a waiting action call: the run goes on without it.',
        params: ApprovalParams,
        responses: { 200: { description: 'Decided', schema: z.object({ id: z.string(), status: z.string() }) } },
        errors: [...errs, 'conflict'],
        handler: async (ctx) => {
          const bot = await dashboardBot(ctx, deps);
          const { aid } = ctx.state.input.params as { aid: string };
          const res = await deps.db.query<{ workflow_id: string }>(
            `UPDATE action_approvals SET status = $3, decided_by = $4, decided_at = now()
              WHERE id = $1 AND bot_id = $2 AND (status = 'pending' OR status = $3) RETURNING workflow_id`,
            [aid, bot.id, verb === 'approve' ? 'approved' : 'rejected', ctx.state.session!.userId],
          );
          if (!res.rows[0]) {
            const exists = await deps.db.query(`SELECT status FROM action_approvals WHERE id = $1 AND bot_id = $2`, [aid, bot.id]);
            if (!exists.rows[0]) throw errors.notFound('No such approval');
            throw new ApiError('conflict', `This approval was already ${exists.rows[0].status}`);
          }
          // The decision is recorded first, then delivered; repeating the same decision delivers it again (idempotent).
          await deps.temporal.client.workflow.getHandle(res.rows[0].workflow_id).signal(approvalDecisionSignal, { approvalId: aid, approved: verb === 'approve' });
          ctx.body = { id: aid, status: verb === 'approve' ? 'approved' : 'rejected' };
        },
      }),
    ),
  ];
}
