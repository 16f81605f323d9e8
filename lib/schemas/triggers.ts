import { z } from 'zod';
import { LIMITS } from '../limits';

export const TriggerParams = z.object({ id: z.string().min(1).max(64), tid: z.string().min(1).max(64) });
export const HookParams = z.object({ tid: z.string().min(1).max(64) });

const Schedule = z
  .object({
    cron: z.string().min(1).max(200).optional().describe('Cron expression (5 fields, UTC), e.g. `0 9 * * 1-5`'),
    every_seconds: z
      .number()
      .int()
      .min(1)
      .max(31 * 86_400)
      .optional()
      .describe('Fixed interval in seconds'),
  })
  .refine((s) => (s.cron ? 1 : 0) + (s.every_seconds ? 1 : 0) === 1, {
    message: 'give exactly one of cron and every_seconds',
  });

const Poll = z.object({
  url: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .describe('Fetched through the SSRF-safe client; private addresses are refused'),
  every_seconds: z
    .number()
    .int()
    .min(1)
    .max(31 * 86_400),
});

export const TriggerCreate = z
  .object({
    kind: z.enum(['webhook', 'schedule', 'poll', 'manual']),
    name: z.string().trim().min(1).max(200).optional(),
    task: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(LIMITS.triggerTaskChars)
      .describe('The run task text: what the agent should do on each wake-up'),
    mode: z
      .enum(['ack', 'wait'])
      .default('ack')
      .describe('`ack`: answer 202 at once; `wait`: answer with the run result'),
    enabled: z.boolean().default(true),
    schedule: Schedule.optional(),
    poll: Poll.optional(),
  })
  .superRefine((t, ctx) => {
    if (t.kind === 'schedule' && !t.schedule)
      ctx.addIssue({ code: 'custom', path: ['schedule'], message: 'is required for a schedule trigger' });
    if (t.kind === 'poll' && !t.poll)
      ctx.addIssue({ code: 'custom', path: ['poll'], message: 'is required for a poll trigger' });
  })
  .meta({ id: 'TriggerCreate' });

export const TriggerPatch = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    task: z.string().trim().min(1).max(LIMITS.triggerTaskChars).optional(),
    mode: z.enum(['ack', 'wait']).optional(),
    schedule: Schedule.optional(),
    poll: Poll.optional(),
  })
  .meta({ id: 'TriggerPatch' });

export const TriggerView = z
  .object({
    id: z.string(),
    bot_id: z.string(),
    kind: z.string(),
    name: z.string(),
    task: z.string(),
    mode: z.string(),
    enabled: z.boolean(),
    disabled_reason: z
      .string()
      .nullable()
      .describe('`owner` (turned off) or `failures` (paused after 5 failed runs in a row)'),
    consecutive_failures: z.number().int(),
    hook_url: z.string().nullable(),
    secret_fingerprint: z.string().nullable(),
    schedule: z.object({ cron: z.string().nullable(), every_seconds: z.number().nullable() }).nullable(),
    poll: z.object({ url: z.string(), every_seconds: z.number().nullable() }).nullable(),
    created_at: z.number().int(),
  })
  .meta({ id: 'Trigger' });

export const TriggerCreated = TriggerView.extend({
  secret: z.string().optional().describe('Webhook triggers: the signing secret, shown only in this response'),
}).meta({ id: 'TriggerCreated' });

export const TriggerList = z.object({ triggers: z.array(TriggerView) }).meta({ id: 'TriggerList' });

export const ManualRun = z
  .object({ body: z.string().max(LIMITS.hookBodyBytes).optional().describe('Text handed to the run as the signal') })
  .meta({ id: 'ManualRun' });

export const HookAccepted = z
  .object({ status: z.literal('accepted'), run_id: z.string() })
  .meta({ id: 'HookAccepted' });
export const HookDone = z
  .object({ run_id: z.string(), status: z.literal('done'), answer: z.string() })
  .meta({ id: 'HookDone' });
