import type { AppDeps } from '../deps';
import { type RouteDef, route, DASHBOARD_ROUTE, SESSION_ERRORS } from '../route';
import { BotParams } from '../../lib/schemas/common';
import {
  GapAnswer,
  GapAnswered,
  GapList,
  ReportDays,
  ResolutionQuery,
  ResolutionReport,
  SourceUsefulnessList,
} from '../../lib/schemas/reports';
import { sessionBot, sessionUser } from '../session';

/**
 * The owner's reports in the dashboard (issue 21; docs/decisions/063-what-is-missing.md, 064-resolution-report.md):
 * read by everyone of the workspace but operators (the inbox only), the answers written by owners and admins.
 */
export function reportRoutes(deps: AppDeps): RouteDef[] {
  const { reports } = deps.services;
  const common = DASHBOARD_ROUTE;
  const errs = SESSION_ERRORS;
  return [
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/gaps',
      operationId: 'dashboardKnowledgeGaps',
      summary: 'What is missing: questions the agent could not answer, grouped by similarity, most asked first.',
      params: BotParams,
      query: ReportDays,
      responses: { 200: { description: 'Groups', schema: GapList } },
      errors: [...errs],
      handler: async (ctx, { params, query }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return { days: query.days, groups: await reports.gaps(bot.id, query.days) };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/gaps/answer',
      operationId: 'dashboardAnswerGap',
      summary: 'Adds an answer: writes a knowledge source and marks the questions it answers.',
      description: '409 when none of the questions is open any more (nothing is written).',
      params: BotParams,
      body: GapAnswer,
      responses: { 201: { description: 'Written', schema: GapAnswered } },
      errors: [...errs, 'conflict', 'payload_too_large'],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await reports.answerGap(bot.id, body);
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/source-usefulness',
      operationId: 'dashboardSourceUsefulness',
      summary: 'Each knowledge source with how often answers used it and how visitors rated them.',
      params: BotParams,
      query: ReportDays,
      responses: { 200: { description: 'Sources', schema: SourceUsefulnessList } },
      errors: [...errs],
      handler: async (ctx, { params, query }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return { days: query.days, sources: await reports.usefulness(bot.id, query.days) };
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/reports/resolution',
      operationId: 'dashboardResolutionReport',
      summary: 'What the AI resolved: conversations of a period by outcome, per day, with ratings and satisfaction.',
      query: ResolutionQuery,
      responses: { 200: { description: 'Report', schema: ResolutionReport } },
      errors: [...errs],
      handler: async (ctx, { query }) => {
        const { workspaceId } = sessionUser(ctx);
        if (query.bot_id) await sessionBot(deps, ctx, query.bot_id); // 404 for another workspace's agent
        return await reports.resolution({
          workspaceId,
          botId: query.bot_id,
          from: query.from,
          to: query.to,
          timeZone: query.time_zone,
        });
      },
    }),
  ];
}
