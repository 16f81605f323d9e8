import { z } from 'zod';
import { LIMITS } from '../limits';

const { pairing: P } = LIMITS;

/** Control characters (line breaks, escapes) have no place in a name shown on the approval page. */
const hasControl = (s: string) => [...s].some((ch) => /[\u0000-\u001f\u007f-\u009f]/.test(ch));

export const PairStartRequest = z
  .object({
    device: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(P.deviceChars, `must be at most ${P.deviceChars} characters`)
      .refine((s) => !hasControl(s), 'must not contain control characters')
      .describe(`Name of the client, shown to the owner on the approval page (1 to ${P.deviceChars} characters).`),
  })
  .meta({ id: 'PairStartRequest' });

export const PairStartResponse = z
  .object({
    verify_url: z.string().describe('The dashboard page where the owner approves: `{dashboard_url}/connect?code=…`.'),
    code: z.string().describe('Show it to the user: they check it matches the one on the page (`ABCD-EFGH`).'),
    secret: z.string().describe('Keep it: only a poll with it collects the key. Never shown to the user.'),
    expires_in: z.number().int().describe('Seconds until the pairing expires unapproved.'),
    interval: z.number().int().describe('Seconds to wait between polls.'),
  })
  .meta({ id: 'PairStartResponse' });

export const PairPollQuery = z.object({
  code: z.string().min(1).max(32).describe('The `code` of the start answer.'),
  secret: z.string().min(1).max(200).describe('The `secret` of the start answer.'),
});

export const PairPollResponse = z
  .object({
    status: z
      .enum(['pending', 'ok', 'expired'])
      .describe(
        '`pending`: not approved yet, poll again; `ok`: here is the key (answered once); `expired`: unknown, already collected or too late — start again.',
      ),
    constructor_key: z.string().optional().describe('The builder key `ck_…`, with `ok` only.'),
    workspace: z
      .object({ id: z.string(), name: z.string() })
      .optional()
      .describe('With `ok`: the workspace the key belongs to, to show the client’s user where changes will land.'),
  })
  .meta({ id: 'PairPollResponse' });

export const PairingParams = z.object({ code: z.string().min(1).max(32).describe('The pairing code (`ABCD-EFGH`)') });

export const PairingView = z
  .object({
    code: z.string(),
    device: z.string(),
    status: z.enum(['pending', 'approved', 'collected']),
    expires_at: z.number().int().describe('Unix milliseconds'),
  })
  .meta({ id: 'PairingView' });
