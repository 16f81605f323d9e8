import type { AppDeps } from '../deps';
import { ALL_ROLES, type RouteDef, SENT_BY_HANDLER, route, DASHBOARD_ROUTE, SESSION_ERRORS } from '../route';
import { ChatResponse, OkResponse, StreamFrame } from '../../lib/schemas/conversation';
import { StatusResponse } from '../../lib/schemas/auth';
import {
  BotCreate,
  BotCreated,
  BotList,
  NotificationsRead,
  BotParams,
  BotPatch,
  BotView,
  IssuedKey,
  ModelChoices,
  NotificationList,
  PageQuery,
  RunList,
  StatePut,
  StateView,
  TestChatRequest,
  WidgetSites,
} from '../../lib/schemas/dashboard';
import { sessionBot, sessionUser } from '../session';
import { openEventStream } from '../event-stream';

/** `/v1/dashboard/*`: the dashboard's own API (not a stable contract; contract, "Dashboard calls named as public"). */
export function dashboardRoutes(deps: AppDeps): RouteDef[] {
  return [...botSettingsRoutes(deps), ...testChatRoutes(deps), ...botListRoutes(deps)];
}

/** An agent's settings, keys, widget sites, runs and stored state. */
function botSettingsRoutes(deps: AppDeps): RouteDef[] {
  const { bots, runs, widget } = deps.services;
  const common = { ...DASHBOARD_ROUTE, params: BotParams };
  const errs = SESSION_ERRORS;
  return [
    route({
      tag: 'Dashboard',
      session: true,
      unstable: true,
      roles: ALL_ROLES,
      method: 'get',
      path: '/v1/dashboard/models',
      operationId: 'dashboardModels',
      summary: "The models the workspace's plan allows for its agents, with their credit weights, and the default.",
      responses: { 200: { description: 'Models', schema: ModelChoices } },
      errors: ['unauthorized', 'service_unavailable'],
      handler: async (ctx) => {
        return await bots.modelChoices(sessionUser(ctx).workspaceId);
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}',
      operationId: 'dashboardGetBot',
      roles: ALL_ROLES,
      summary: 'Bot data, including the public key `pk_` and the fingerprints of its secrets.',
      responses: { 200: { description: 'Bot', schema: BotView } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await bots.get(bot.id);
      },
    }),
    route({
      ...common,
      method: 'patch',
      path: '/v1/dashboard/bots/{id}',
      operationId: 'dashboardPatchBot',
      summary: 'Changes the agent configuration: name, instructions, model, handoff and its webhook address.',
      description:
        "The model must be one the workspace's plan allows (`GET /v1/dashboard/models`): 400 `bad_request` naming them (`allowed_models`) otherwise.",
      body: BotPatch,
      responses: { 200: { description: 'Bot', schema: BotView } },
      errors: [...errs],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await bots.update(bot.id, body);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/secret',
      operationId: 'dashboardIssueSecret',
      summary: 'Issues a new secret key `sk_`; the previous one stops working at once. Shown only in this response.',
      responses: { 200: { description: 'New key', schema: IssuedKey } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await bots.rotateKey(bot.id, 'secret', sessionUser(ctx).userId);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/identity-secret',
      operationId: 'dashboardIssueIdentitySecret',
      summary: 'Issues a new visitor identity secret `idsec_`; earlier confirmations stop working at once.',
      responses: { 200: { description: 'New secret', schema: IssuedKey } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await bots.rotateKey(bot.id, 'identity', sessionUser(ctx).userId);
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/widget-sites',
      operationId: 'dashboardWidgetSites',
      roles: ALL_ROLES,
      summary: 'Where the widget runs and where it was refused: the page origins it was seen on.',
      description:
        'A refused origin the bot does not allow is what a visitor saw as "not available on this page": add it to `allowed_origins` to let the widget run there.',
      responses: { 200: { description: 'Sites', schema: WidgetSites } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return { sites: await widget.sightings.list(bot.id) };
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/runs',
      operationId: 'dashboardListRuns',
      summary: 'The run log, newest first, each with a link to its workflow in the Temporal UI.',
      query: PageQuery,
      responses: { 200: { description: 'Runs', schema: RunList } },
      errors: [...errs],
      handler: async (ctx, { params, query }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await runs.list(bot.id, query);
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/state',
      operationId: 'dashboardGetState',
      summary: "The agent's state document and its version.",
      responses: { 200: { description: 'State', schema: StateView } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await bots.readState(bot.id);
      },
    }),
    route({
      ...common,
      method: 'put',
      path: '/v1/dashboard/bots/{id}/state',
      operationId: 'dashboardPutState',
      summary:
        'Replaces the state document if `version` is still current (409 `version_conflict` otherwise); at most 64 KiB.',
      body: StatePut,
      responses: { 200: { description: 'State', schema: StateView } },
      errors: [...errs, 'version_conflict', 'payload_too_large'],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await bots.writeState(bot.id, body.document, body.version);
      },
    }),
  ];
}

/** The test chat: the signed-in user talks to the agent as its administrator. */
function testChatRoutes(deps: AppDeps): RouteDef[] {
  const { conversations } = deps.services;
  const common = { ...DASHBOARD_ROUTE, params: BotParams };
  const errs = SESSION_ERRORS;
  return [
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/test-chat',
      operationId: 'dashboardTestChat',
      summary:
        "The dashboard's test chat: a chat turn in which the signed-in user is confirmed as the bot's administrator.",
      description:
        "Spec, Visitor identity rule 6. The turn carries a visitor confirmation signed with the bot's identity secret for `dashboard:<user id>` with role `admin`, so admin-only actions are available; the answer is the ChatResponse of `POST /v1/api/chat`.",
      body: TestChatRequest,
      responses: { 200: { description: 'Answer', schema: ChatResponse } },
      errors: [...errs, 'llm_unavailable', 'llm_overloaded'],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await conversations.testChat(bot.id, sessionUser(ctx).userId, body);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/test-chat/stream',
      operationId: 'dashboardTestChatStream',
      summary:
        'The test chat streamed: as `POST /v1/api/chat/stream`, with the signed-in user as the bot’s administrator.',
      description:
        'Errors found before the stream starts are JSON; then `text/event-stream` frames: `delta`, error frames, and the end frame last.',
      body: TestChatRequest,
      responses: {
        200: {
          description: 'Event stream of StreamFrame objects',
          schema: StreamFrame,
          contentType: 'text/event-stream',
        },
      },
      errors: [...errs],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        const chat = await conversations.testChatStream(bot.id, sessionUser(ctx).userId, body);
        const stream = openEventStream(ctx);
        void chat.run((frame) => stream.write(frame), ctx.state.log).finally(() => stream.end());
        return SENT_BY_HANDLER;
      },
    }),
  ];
}

/** The notifications, and the agent list: create, delete, rotate a secret. */
function botListRoutes(deps: AppDeps): RouteDef[] {
  const { bots, notifications } = deps.services;
  const common = { ...DASHBOARD_ROUTE, params: BotParams };
  const errs = SESSION_ERRORS;
  return [
    route({
      method: 'get',
      path: '/v1/dashboard/notifications',
      operationId: 'dashboardNotifications',
      tag: 'Dashboard',
      session: true,
      roles: ALL_ROLES,
      unstable: true,
      summary:
        "The workspace's notifications, newest first (paused triggers, approvals waiting, visitors asking for a person), and the waiting requests' count.",
      responses: { 200: { description: 'Notifications', schema: NotificationList } },
      errors: ['unauthorized', 'service_unavailable'],
      handler: async (ctx) => {
        ctx.set('Cache-Control', 'no-store');
        return await notifications.list(sessionUser(ctx).workspaceId);
      },
    }),
    route({
      method: 'post',
      path: '/v1/dashboard/notifications/read',
      operationId: 'dashboardNotificationsRead',
      tag: 'Dashboard',
      session: true,
      roles: ALL_ROLES,
      unstable: true,
      summary: 'Marks notifications read (`ids`), or all of them (no `ids`).',
      body: NotificationsRead,
      responses: { 200: { description: 'Marked', schema: OkResponse } },
      errors: ['unauthorized', 'bad_request', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        await notifications.markRead(sessionUser(ctx).workspaceId, body.ids);
        return { status: 'ok' };
      },
    }),
    route({
      method: 'get',
      path: '/v1/dashboard/bots',
      operationId: 'dashboardListBots',
      tag: 'Dashboard',
      session: true,
      roles: ALL_ROLES,
      unstable: true,
      summary: "The workspace's bots with their knowledge sources and open requests.",
      responses: { 200: { description: 'Bots', schema: BotList } },
      errors: ['unauthorized', 'service_unavailable'],
      handler: async (ctx) => {
        return { bots: await bots.list(sessionUser(ctx).workspaceId) };
      },
    }),
    route({
      method: 'post',
      path: '/v1/dashboard/bots',
      operationId: 'dashboardCreateBot',
      tag: 'Dashboard',
      session: true,
      unstable: true,
      summary: 'Creates a bot; its keys are shown in full in this answer only.',
      description:
        "403 `forbidden` while the workspace's owner has not confirmed their e-mail address: a workspace made by sign-up " +
        'gets agents and keys once its address is proved.',
      body: BotCreate,
      responses: { 201: { description: 'Created', schema: BotCreated } },
      errors: ['unauthorized', 'forbidden', 'bad_request', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        return await bots.create(sessionUser(ctx).workspaceId, body, sessionUser(ctx).userId);
      },
    }),
    route({
      ...common,
      method: 'delete',
      path: '/v1/dashboard/bots/{id}',
      operationId: 'dashboardDeleteBot',
      summary:
        'Deletes a bot with its keys (they stop at once), conversations, knowledge, triggers and their Schedules, runs and files.',
      responses: { 200: { description: 'Deleted', schema: StatusResponse } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        await bots.remove(bot.id);
        return { status: 'deleted' };
      },
    }),
    ...(['webhook-secret', 'builder-key'] as const).map((what) =>
      route({
        ...common,
        method: 'post',
        path: `/v1/dashboard/bots/{id}/${what}`,
        operationId: what === 'webhook-secret' ? 'dashboardIssueWebhookSecret' : 'dashboardIssueBuilderKey',
        summary:
          what === 'webhook-secret'
            ? 'Issues a new handoff webhook secret `whsec_`; deliveries are signed with it from now on. Shown only here.'
            : 'Issues a new builder key `ck_`; every earlier builder key of the workspace stops at once (Authentication rule 5). Shown only here.',
        responses: { 200: { description: 'New secret', schema: IssuedKey } },
        errors: [...errs],
        handler: async (ctx, { params }) => {
          const bot = await sessionBot(deps, ctx, params.id);
          return await bots.rotateKey(
            bot.id,
            what === 'webhook-secret' ? 'webhook' : 'builder',
            sessionUser(ctx).userId,
          );
        },
      }),
    ),
  ];
}
