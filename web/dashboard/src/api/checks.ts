import type {
  CheckQuestionListView,
  CheckQuestionView,
  CheckRunDetailView,
  CheckRunListView,
  CheckRunView,
} from '../../../shared/contract';
import { call, query, seg } from './client';

/**
 * The owner's check of an agent (docs/decisions/155-owner-check.md): test questions, each with the source that should
 * answer it, and runs of the check. Everyone of the workspace reads; owners and admins write and run (others: 403).
 */

export type {
  CheckPassageView as CheckPassage,
  CheckQuestionView as CheckQuestion,
  CheckResultView as CheckResult,
  CheckRunDetailView as CheckRunDetail,
  CheckRunView as CheckRun,
} from '../../../shared/contract';

const checks = (botId: string) => `/v1/dashboard/bots/${seg(botId)}/checks`;

export interface QuestionInput {
  question: string;
  expected_source_id: string;
  note?: string;
}

export const checksApi = {
  questions: (botId: string) => call<CheckQuestionListView>('GET', `${checks(botId)}/questions`),
  /** 400 when the source does not exist or the agent keeps the most questions; 409 for a question it has. */
  addQuestion: (botId: string, body: QuestionInput) =>
    call<CheckQuestionView>('POST', `${checks(botId)}/questions`, body),
  /** `note: null` removes the note. */
  editQuestion: (botId: string, id: string, body: Partial<Omit<QuestionInput, 'note'>> & { note?: string | null }) =>
    call<CheckQuestionView>('PATCH', `${checks(botId)}/questions/${seg(id)}`, body),
  deleteQuestion: (botId: string, id: string) =>
    call<{ status: 'deleted'; id: string }>('DELETE', `${checks(botId)}/questions/${seg(id)}`),
  /** 409 `conflict` while a check of the agent runs. */
  start: (botId: string) => call<CheckRunView>('POST', `${checks(botId)}/runs`),
  runs: (botId: string, limit = 30) => call<CheckRunListView>('GET', `${checks(botId)}/runs${query({ limit })}`),
  run: (botId: string, runId: string) => call<CheckRunDetailView>('GET', `${checks(botId)}/runs/${seg(runId)}`),
};
