import { z } from 'zod';

export const ErrorBody = z
  .object({
    error: z.string().describe('Human-readable text; may change at any time. Branch on `code`.'),
    code: z.string().describe('Machine-readable error code (see the spec, Errors).'),
  })
  .meta({ id: 'Error', description: 'Every error response has this shape; some codes add fields.' });

export const HealthResponse = z.object({ status: z.string() }).meta({ id: 'Health' });

export const ReadyResponse = z
  .object({
    status: z.string(),
    checks: z.record(z.string(), z.string()),
  })
  .meta({ id: 'Ready' });

/** Spec, Pagination: `limit` 1–200, default 50, larger values cut to 200; `cursor` opaque. */
export const PageQuery = z.object({
  limit: z.coerce
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .default(50)
    .transform((n) => Math.min(n, 200))
    .describe('Page size, 1 to 200 (default 50); larger values are cut to 200.'),
  cursor: z.string().max(512).optional().describe('`next_cursor` of the previous page.'),
});
