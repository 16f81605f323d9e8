import { bindTo } from '../bind-deps';
import type { CheckDeps } from './deps';
import { createQuestion, deleteQuestion, listQuestions, updateQuestion } from './questions';
import { getRun, listRuns, startRun } from './runs';

export type { CheckDeps } from './deps';
export type { CheckQuestion } from './questions';
export type { CheckResult, CheckRun } from './runs';

/**
 * The owner's check of an agent (issue 41, item 7; docs/decisions/155-owner-check.md): test questions, each with the
 * knowledge source that should answer it, and runs of the check — one workflow per run, `knowledge-check/{bot}/{run}`,
 * that puts every question through the chat turn's retrieval (activities/knowledge-check.ts). One run at a time per
 * agent; runs are kept with their results, so the score's trend shows. Each operation lives in its own module
 * (`questions.ts`, `runs.ts`) as a function of the shared deps (`deps.ts`); here they are given the deps.
 */
export function createCheckService(deps: CheckDeps) {
  const bound = bindTo(deps);
  return {
    listQuestions: bound(listQuestions),
    createQuestion: bound(createQuestion),
    updateQuestion: bound(updateQuestion),
    deleteQuestion: bound(deleteQuestion),
    startRun: bound(startRun),
    listRuns: bound(listRuns),
    getRun: bound(getRun),
  };
}

export type CheckService = ReturnType<typeof createCheckService>;
