import { z } from 'zod';

/** The builder's answer to one message, over HTTP (`X-Bot-Key: ck_…`) and in the dashboard's builder panel. */
export const BuilderReply = z
  .object({
    reply: z.string().describe('The text to show: results of earlier turns the caller missed first'),
    awaiting_confirmation: z.string().optional().describe('What a `yes` would apply'),
    busy: z.boolean().optional().describe('The previous message is still being worked on; nothing changed'),
  })
  .meta({ id: 'BuilderReply' });
