import type { AppDeps } from '../deps';
import { ALL_ROLES, type RouteDef, route, DASHBOARD_ROUTE, SESSION_ERRORS } from '../route';
import { BotParams } from '../../lib/schemas/common';
import {
  CheckQuestion,
  CheckQuestionCreate,
  CheckQuestionDeleted,
  CheckQuestionList,
  CheckQuestionParams,
  CheckQuestionPatch,
  CheckRun,
  CheckRunDetail,
  CheckRunList,
  CheckRunListQuery,
  CheckRunParams,
} from '../../lib/schemas/checks';
import { sessionBot } from '../session';

/**
 * The owner's check of an agent in the dashboard (issue 41, item 7; docs/decisions/155-owner-check.md): test questions
 * written by owners and admins, read by the whole team; runs started by owners and admins, read by the whole team.
 */
export function checkRoutes(deps: AppDeps): RouteDef[] {
  const { checks } = deps.services;
  const common = DASHBOARD_ROUTE;
  const errs = SESSION_ERRORS;
  return [
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/checks/questions',
      operationId: 'dashboardCheckQuestions',
      roles: ALL_ROLES,
      summary: 'The agent’s test questions, each with the knowledge source that should answer it.',
      params: BotParams,
      responses: { 200: { description: 'Questions, oldest first', schema: CheckQuestionList } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await checks.listQuestions(bot.id);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/checks/questions',
      operationId: 'dashboardCreateCheckQuestion',
      summary: 'Adds a test question with the knowledge source that should answer it.',
      description:
        'The source must exist (400). 409 `conflict` when the agent has the same question already (case and ' +
        'spacing aside); 400 when it keeps the most test questions it may.',
      params: BotParams,
      body: CheckQuestionCreate,
      responses: { 201: { description: 'Added', schema: CheckQuestion } },
      errors: [...errs, 'conflict', 'payload_too_large'],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await checks.createQuestion(bot.id, body);
      },
    }),
    route({
      ...common,
      method: 'patch',
      path: '/v1/dashboard/bots/{id}/checks/questions/{question}',
      operationId: 'dashboardUpdateCheckQuestion',
      summary: 'Changes a test question’s wording, expected source or note.',
      description: 'A new expected source must exist (400). Past runs keep the question as they checked it.',
      params: CheckQuestionParams,
      body: CheckQuestionPatch,
      responses: { 200: { description: 'Changed', schema: CheckQuestion } },
      errors: [...errs, 'conflict', 'payload_too_large'],
      handler: async (ctx, { params, body }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await checks.updateQuestion(bot.id, params.question, body);
      },
    }),
    route({
      ...common,
      method: 'delete',
      path: '/v1/dashboard/bots/{id}/checks/questions/{question}',
      operationId: 'dashboardDeleteCheckQuestion',
      summary: 'Deletes a test question (past runs keep their result for it).',
      params: CheckQuestionParams,
      responses: { 200: { description: 'Deleted', schema: CheckQuestionDeleted } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await checks.deleteQuestion(bot.id, params.question);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/bots/{id}/checks/runs',
      operationId: 'dashboardStartCheck',
      summary: 'Runs the check: every test question through the chat’s retrieval, in the background.',
      description:
        'One workflow, `knowledge-check/{bot}/{run}`, checks whether each question’s expected source is among the ' +
        'first five passages a chat turn would get. Its progress and then its score are in the runs below. ' +
        '409 `conflict` while a check of the agent runs; 400 when it has no test question.',
      params: BotParams,
      responses: { 202: { description: 'Started', schema: CheckRun } },
      errors: [...errs, 'conflict'],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await checks.startRun({ botId: bot.id, workspaceId: bot.workspace_id });
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/checks/runs',
      operationId: 'dashboardCheckRuns',
      roles: ALL_ROLES,
      summary: 'Past runs of the check, newest first, with their progress or score: the trend.',
      params: BotParams,
      query: CheckRunListQuery,
      responses: { 200: { description: 'Runs', schema: CheckRunList } },
      errors: [...errs],
      handler: async (ctx, { params, query }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await checks.listRuns(bot.id, query.limit);
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/bots/{id}/checks/runs/{run}',
      operationId: 'dashboardCheckRun',
      roles: ALL_ROLES,
      summary: 'One run of the check: each question’s result, with the passages it found.',
      params: CheckRunParams,
      responses: { 200: { description: 'The run', schema: CheckRunDetail } },
      errors: [...errs],
      handler: async (ctx, { params }) => {
        const bot = await sessionBot(deps, ctx, params.id);
        return await checks.getRun(bot.id, params.run);
      },
    }),
  ];
}
