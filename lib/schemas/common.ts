import { z } from 'zod';
import { LIMITS } from '../limits';

export const ErrorBody = z
  .object({
    error: z.string().describe('Human-readable text; may change at any time. Branch on `code`.'),
    code: z.string().describe('Machine-readable error code: branch on it, not on the message.'),
  })
  .meta({ id: 'Error', description: 'Every error response has this shape; some codes add fields.' });

export const HealthResponse = z.object({ status: z.string() }).meta({ id: 'Health' });

export const ReadyResponse = z
  .object({
    status: z.string(),
    checks: z.record(z.string(), z.string()),
  })
  .meta({ id: 'Ready' });

/** `/readyz` when a dependency does not answer: the error body with each dependency's state. */
export const NotReadyResponse = ErrorBody.extend({ checks: z.record(z.string(), z.string()) }).meta({ id: 'NotReady' });

/** A deleted resource: what a delete answers when it has nothing else to say. */
export const Deleted = z.object({ status: z.literal('deleted'), id: z.string() }).meta({ id: 'Deleted' });

const { min, max, default: defaultLimit } = LIMITS.pageSize;

/** Spec, Pagination: `limit` 1–200, default 50, larger values are cut to 200 (not refused); `cursor` opaque. */
export const PageQuery = z.object({
  limit: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(min, `must be at least ${min}`)
    .optional()
    .transform((v) => Math.min(v ?? defaultLimit, max))
    .describe(`Page size, ${min} to ${max} (default ${defaultLimit}); larger values are cut to ${max}.`),
  cursor: z.string().max(512).optional().describe('`next_cursor` of the previous page; omit for the first page.'),
});

/** A bot named in a dashboard path. */
export const BotParams = z.object({ id: z.string().min(1).max(64).describe('Bot id') });
