import { z } from 'zod';
import { isTimeZone } from '../bots/hours';

/** The owner's reports (lib/reports): what is missing, how useful each source is, what the AI resolved. */

export const ReportDays = z.object({
  days: z.coerce
    .number()
    .int()
    .min(1)
    .max(365)
    .default(30)
    .describe('The period: this many days back from now (default 30)'),
});

const Question = z.object({
  run_id: z.string(),
  text: z.string(),
  at: z.number().int().describe('Unix ms'),
  session_id: z.string().nullable(),
});

export const GapList = z
  .object({
    days: z.number().int(),
    groups: z.array(
      z.object({
        question: z.string().describe('The question as visitors most often asked it'),
        count: z.number().int(),
        examples: z.array(Question).describe('Up to five different wordings, newest first'),
        last_asked_at: z.number().int(),
        run_ids: z.array(z.string()).describe('Every question of the group, for `POST …/gaps/answer`'),
      }),
    ),
  })
  .meta({
    id: 'GapList',
    description: 'Questions the agent could not answer from its knowledge, grouped by similarity, most asked first',
  });

export const GapAnswer = z
  .object({
    run_ids: z.array(z.string().max(64)).min(1).max(500).describe('The questions this answer answers'),
    title: z.string().trim().max(200).optional(),
    text: z.string().trim().min(1).max(100_000).describe('The answer: written as a knowledge source'),
  })
  .meta({ id: 'GapAnswer' });

export const GapAnswered = z
  .object({
    source_id: z.string().describe('The knowledge source written'),
    answered: z.number().int().describe('How many of the questions it marked as answered'),
  })
  .meta({ id: 'GapAnswered' });

export const SourceUsefulnessList = z
  .object({
    days: z.number().int(),
    sources: z.array(
      z.object({
        source_id: z.string(),
        title: z.string(),
        url: z.string().nullable(),
        origin: z.string(),
        used: z.number().int().describe('Answers that named it among their sources'),
        rated_up: z.number().int(),
        rated_down: z.number().int(),
        last_used_at: z.number().int().nullable(),
      }),
    ),
  })
  .meta({ id: 'SourceUsefulnessList', description: 'Every knowledge source, most used first' });

const LocalDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD')
  .refine((d) => {
    // Date.parse rolls 2026-02-30 over into March: a real date reads back the same.
    const t = Date.parse(`${d}T00:00:00Z`);
    return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === d;
  }, 'must be a real date');

export const ResolutionQuery = z
  .object({
    from: LocalDate.optional().describe('First day, `YYYY-MM-DD` (default: 29 days before `to`)'),
    to: LocalDate.optional().describe('Last day, inclusive (default: today in `time_zone`)'),
    time_zone: z
      .string()
      .max(64)
      .refine(isTimeZone, 'must be an IANA time zone such as Europe/Tallinn')
      .default('UTC')
      .describe('Days are counted in this zone (default UTC)'),
    bot_id: z.string().max(64).optional().describe('One agent; default: all of the workspace'),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: '`from` must not be after `to`', path: ['from'] });

const Counts = {
  conversations: z.number().int(),
  resolved_by_agent: z.number().int().describe('The agent answered, never said it could not, no answer rated down'),
  not_resolved_by_agent: z
    .number()
    .int()
    .describe('No person involved, but the agent could not answer or was rated down'),
  handed_over: z.number().int().describe('A person was involved'),
  resolved_by_person: z.number().int().describe('Of those handed over: resolved by a person'),
  no_answer: z.number().int().describe('Neither the agent nor a person answered'),
};

export const ResolutionReport = z
  .object({
    from: z.string(),
    to: z.string(),
    time_zone: z.string(),
    totals: z.object(Counts),
    days: z.array(z.object({ date: z.string(), ...Counts })),
    ratings: z.object({ up: z.number().int(), down: z.number().int() }),
    satisfaction: z.object({
      answers: z.number().int(),
      average: z.number().nullable(),
      scores: z.array(z.number().int()).length(5).describe('How many answered 1, 2, 3, 4, 5'),
      comments: z.array(
        z.object({ session_id: z.string(), score: z.number().int(), comment: z.string(), at: z.number().int() }),
      ),
    }),
  })
  .meta({
    id: 'ResolutionReport',
    description: 'Conversations started in the period by what happened in them, with ratings and satisfaction',
  });
