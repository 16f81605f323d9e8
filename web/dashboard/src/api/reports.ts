import type {
  GapAnswered,
  GapList,
  ResolutionQuery,
  ResolutionReport,
  SourceUsefulnessList,
} from '../../../shared/contract';
import { call, query, seg } from './client';

/**
 * The owner's reports (owners and admins; an operator gets 403): what an agent is missing — the questions it could not
 * answer, grouped, with "add an answer" — how useful each of its sources is, and what the AI resolved over a period.
 */

export type {
  GapGroup,
  GapList,
  ResolutionCounts,
  ResolutionDay,
  ResolutionQuery,
  ResolutionReport,
  SourceUsefulness,
} from '../../../shared/contract';

const bot = (id: string) => `/v1/dashboard/bots/${seg(id)}`;

export const reportsApi = {
  gaps: (botId: string, days: number) => call<GapList>('GET', `${bot(botId)}/gaps${query({ days })}`),
  /** Writes the answer as a knowledge source; 409 `conflict` when the questions were answered meanwhile. */
  answerGap: (botId: string, body: { run_ids: string[]; title?: string; text: string }) =>
    call<GapAnswered>('POST', `${bot(botId)}/gaps/answer`, body),
  sourceUsefulness: (botId: string, days: number) =>
    call<SourceUsefulnessList>('GET', `${bot(botId)}/source-usefulness${query({ days })}`),
  resolution: (q: ResolutionQuery) =>
    call<ResolutionReport>(
      'GET',
      `/v1/dashboard/reports/resolution${query({ from: q.from, to: q.to, time_zone: q.time_zone, bot_id: q.bot_id })}`,
    ),
};
