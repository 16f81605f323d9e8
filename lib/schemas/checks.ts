import { z } from 'zod';
import { LIMITS } from '../limits';
import { NOT_BLANK } from '../text';
import { BotParams } from './common';
import { SourceId } from './knowledge';

/** The owner's check of an agent (lib/checks; docs/decisions/155-owner-check.md): test questions and runs of the check. */

const { questionChars, noteChars, rankedPassages, runList } = LIMITS.checks;

const QuestionText = z
  .string({ error: 'is required' })
  .trim()
  .min(1, 'must not be empty')
  .max(questionChars, `must be at most ${questionChars} characters`)
  .regex(NOT_BLANK, 'must not be empty')
  .describe(`The question as a visitor would ask it, up to ${questionChars} characters.`);

const Note = z
  .string()
  .trim()
  .max(noteChars, `must be at most ${noteChars} characters`)
  .describe(`A note for the team (why this question matters), up to ${noteChars} characters.`);

export const CheckQuestionCreate = z
  .object({
    question: QuestionText,
    expected_source_id: SourceId.describe('The knowledge source that should answer it; it must exist.'),
    note: Note.optional(),
  })
  .meta({ id: 'CheckQuestionCreate' });

export const CheckQuestionPatch = z
  .object({
    question: QuestionText.optional(),
    expected_source_id: SourceId.optional().describe('Another source that should answer it; it must exist.'),
    note: Note.nullable().optional().describe('`null` or an empty text removes the note.'),
  })
  .refine((p) => Object.values(p).some((v) => v !== undefined), { message: 'nothing to change' })
  .meta({ id: 'CheckQuestionPatch' });

export const CheckQuestionParams = BotParams.extend({
  question: z.string().min(1).max(64).describe('Test question id'),
});

export const CheckRunParams = BotParams.extend({
  run: z.string().min(1).max(64).describe('Run id'),
});

export const CheckQuestion = z
  .object({
    id: z.string(),
    question: z.string(),
    expected_source_id: z.string(),
    expected_source_title: z
      .string()
      .nullable()
      .describe('The expected source’s title now; `null` when the source no longer exists'),
    note: z.string().nullable(),
    created_at: z.number().int().describe('Unix ms'),
    updated_at: z.number().int().describe('Unix ms'),
  })
  .meta({
    id: 'CheckQuestion',
    description: 'A test question of the owner’s check, with the source that should answer it',
  });

export const CheckQuestionList = z
  .object({
    questions: z.array(CheckQuestion).describe('Oldest first'),
    limits: z
      .object({
        questions: z.number().int().describe('Test questions an agent keeps at most'),
        question_chars: z.number().int(),
        note_chars: z.number().int(),
      })
      .describe('The limits of test questions, for forms'),
  })
  .meta({ id: 'CheckQuestionList' });

export const CheckQuestionDeleted = z
  .object({ status: z.literal('deleted'), id: z.string() })
  .meta({ id: 'CheckQuestionDeleted' });

export const CheckRunListQuery = z.object({
  limit: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(runList.min, `must be at least ${runList.min}`)
    .max(runList.max, `must be at most ${runList.max}`)
    .default(runList.default)
    .describe(`Runs to return, newest first, ${runList.min} to ${runList.max} (default ${runList.default}).`),
});

export const CheckRun = z
  .object({
    id: z.string(),
    status: z.enum(['running', 'done', 'failed']),
    total: z.number().int().describe('Questions in the run'),
    checked: z.number().int().describe('Questions checked so far: the progress while it runs'),
    found: z.number().int().describe(`Questions whose expected source was among the first ${rankedPassages} passages`),
    missing: z.number().int().describe('Questions whose expected source no longer existed'),
    score: z.number().nullable().describe('`found / total` once done; `null` until then and for a failed run'),
    error: z.string().nullable(),
    started_at: z.number().int().describe('Unix ms'),
    finished_at: z.number().int().nullable().describe('Unix ms; `null` while running'),
    workflow_id: z.string().describe('The run’s workflow in Temporal'),
  })
  .meta({ id: 'CheckRun', description: 'One run of the owner’s check: its progress, then its score' });

export const CheckRunList = z
  .object({
    running: z.boolean().describe('Whether a run is under way (a start now is 409)'),
    runs: z.array(CheckRun).describe('Newest first: the trend of the score'),
  })
  .meta({ id: 'CheckRunList' });

const CheckPassage = z.object({
  source_id: z.string(),
  title: z.string(),
  url: z.string().optional(),
  heading_path: z.array(z.string()).optional(),
  page: z.number().int().optional(),
  excerpt: z.string().describe('The start of the passage’s text'),
});

export const CheckResult = z.object({
  question_id: z.string().describe('The test question (it may have been edited or deleted since)'),
  question: z.string().describe('The question as it was checked'),
  expected_source_id: z.string(),
  expected_source_title: z.string().nullable().describe('The expected source’s title now; `null` when it is gone'),
  outcome: z
    .enum(['pending', 'found', 'not_found', 'source_missing'])
    .describe(
      `\`found\`: among the first ${rankedPassages} passages, at \`rank\`; \`not_found\`: not among them; ` +
        '`source_missing`: the source no longer existed; `pending`: not checked yet',
    ),
  rank: z.number().int().nullable().describe(`1 to ${rankedPassages} when found`),
  passages: z.array(CheckPassage).describe('The passages a chat turn would get for the question, in order'),
});

export const CheckRunDetail = CheckRun.extend({
  results: z.array(CheckResult).describe('One per question, in the order of the questions'),
}).meta({ id: 'CheckRunDetail' });
