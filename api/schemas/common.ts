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
