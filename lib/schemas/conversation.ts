import { z } from 'zod';
import { NOT_BLANK } from '../text';
import { LIMITS } from '../limits';

// Limits from the contract's Limits table (lib/limits.ts): validation and the OpenAPI document both read them.
const MAX_MESSAGE_CHARS = LIMITS.messageChars;
const MAX_SESSION_ID_CHARS = LIMITS.sessionIdChars;

export const SessionId = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_SESSION_ID_CHARS, `must be at most ${MAX_SESSION_ID_CHARS} characters`)
  .describe('Conversation id: unpredictable and unique within one bot (a random UUID is recommended).');

export const ChatRequest = z
  .object({
    session_id: SessionId.optional(),
    message: z
      .string({ error: 'is required' })
      .regex(NOT_BLANK, 'must not be empty')
      .trim()
      .min(1, 'must not be empty')
      .max(MAX_MESSAGE_CHARS, `must be at most ${MAX_MESSAGE_CHARS} characters`),
    user_token: z
      .string()
      .max(LIMITS.userTokenChars)
      .optional()
      .describe("The integrator's own user id; never verified, grants no rights."),
    user_auth: z
      .string()
      .max(LIMITS.userAuthChars)
      .optional()
      .describe('Visitor identity confirmation `v1.<data>.<signature>`.'),
    page_context: z.string().max(LIMITS.pageContextChars).optional().describe('Context of the page the visitor is on.'),
    escalate: z.boolean().optional().describe('`true` puts the conversation straight into the operator queue.'),
  })
  .meta({ id: 'ChatRequest' });

export const AnswerSource = z
  .object({
    ref: z.number().int().describe('The number the answer cites it by, as `[ref]` in its text.'),
    source_id: z.string(),
    title: z.string(),
    url: z.string().optional().describe("The page's address, for a source a site scan read."),
    page: z.number().int().optional().describe('The page of the passage it was cited for, for a paged file (a PDF).'),
    heading: z
      .string()
      .optional()
      .describe('The headings that passage sits under in its document, outermost first, joined by ` › `.'),
  })
  .meta({ id: 'AnswerSource', description: 'A knowledge source an answer used.' });

const Sources = z
  .array(AnswerSource)
  .optional()
  .describe(
    'The knowledge sources the answer used: those it cites as `[n]`, or all it was given when it cites none. Absent when it used none.',
  );

const AfterHours = z
  .object({
    back_at: z
      .number()
      .int()
      .nullable()
      .describe('Unix ms when the team is next in; null when no opening is set ahead'),
  })
  .optional()
  .describe(
    "Present when the conversation was handed over outside the agent's business hours: the answer says when the team is back and asks for a contact.",
  );

const HandoffOffered = z
  .literal(true)
  .optional()
  .describe(
    'Present and true when the agent could not answer from its knowledge and offers a person: a client may offer a button that calls `/handoff`.',
  );

export const ChatResponse = z
  .object({
    answer: z
      .string()
      .describe('The reply; empty when a human handles the conversation (do not show an empty answer).'),
    session_id: z.string(),
    handoff: z.literal(true).optional().describe('Present and true only when a human handles the conversation.'),
    quota_exceeded: z
      .literal(true)
      .optional()
      .describe('Present and true only when the monthly conversation limit is used up.'),
    notice: z.literal('outage').optional().describe('Present when `answer` is a service message, not a bot reply.'),
    sources: Sources,
    handoff_offered: HandoffOffered,
    after_hours: AfterHours,
  })
  .meta({ id: 'ChatResponse' });

export const Attachment = z
  .object({
    id: z.string(),
    url: z.string().describe('`GET /media/{id}`: the file itself; no key needed (the id is unguessable).'),
    content_type: z.string().describe('`image/png`, `image/jpeg`, `image/gif` or `image/webp`'),
    size: z.number().int().describe('Bytes'),
    width: z.number().int().optional(),
    height: z.number().int().optional(),
  })
  .meta({ id: 'Attachment', description: 'An image a visitor attached (the widget).' });

export const Message = z
  .object({
    id: z.string(),
    author: z.string().describe('`visitor`, `bot`, `operator`, or `event` (transcripts only).'),
    text: z.string(),
    at: z.number().int().describe('Unix milliseconds'),
    attachment: Attachment.optional().describe('Present when the message holds an image.'),
    sources: Sources,
    event: z
      .object({
        kind: z.string(),
        name: z.string().optional(),
        contact: z.string().optional(),
        note: z.string().optional(),
        rating: z.enum(['up', 'down']).optional(),
        ref: z.string().optional(),
        text: z.string().optional().describe("`note`: the team's internal note (transcripts only)"),
        by: z.string().optional().describe('`note`: who wrote it'),
        score: z.number().int().min(1).max(5).optional().describe('`satisfaction`: 1–5, after a person resolved it'),
        comment: z.string().optional().describe("`satisfaction`: the visitor's words, when they left some"),
      })
      .optional()
      .describe(
        'Present when `author` is `event`: `contact`, `rating`, `note`, `satisfaction`, or a kind added later (show its `text`).',
      ),
  })
  .meta({ id: 'Message' });

export const PollQuery = z.object({
  session_id: SessionId,
  cursor: z.string().max(512).optional().describe('`next_cursor` of the previous poll; omit on the first poll.'),
});

export const PollResponse = z
  .object({
    messages: z.array(Message),
    status: z.string().describe('`bot`, `waiting` or `operator`.'),
    operator_typing: z.boolean(),
    operator_here: z.boolean().optional(),
    next_cursor: z.string(),
  })
  .meta({ id: 'PollResponse' });

export const TypingRequest = z.object({ session_id: SessionId }).meta({ id: 'TypingRequest' });
export const OkResponse = z.object({ status: z.literal('ok') }).meta({ id: 'Ok' });

export const HandoffRequest = z.object({ session_id: SessionId }).meta({ id: 'HandoffRequest' });
export const HandoffResponse = z
  .object({
    status: z.string().describe('`waiting` (or `operator` when a person already replied)'),
    quota_exceeded: z
      .literal(true)
      .optional()
      .describe('Present and true only when a new conversation could not start: the monthly quota is used up.'),
    after_hours: AfterHours,
  })
  .meta({ id: 'HandoffResponse' });

const VisitorToken = z
  .string()
  .min(1)
  .max(LIMITS.userTokenChars)
  .describe('The visitor, as identified by user_token or by a confirmed `user`.');

/** `user_token`, `session_id` or both: declared as two alternatives, so the contract says what the server refuses. */
export const EraseRequest = z
  .union([
    z.object({ user_token: VisitorToken, session_id: SessionId.optional() }),
    z.object({ user_token: VisitorToken.optional(), session_id: SessionId }),
  ])
  .meta({ id: 'EraseRequest', description: 'Give `user_token`, `session_id`, or both.' });
export const EraseResponse = z
  .object({ status: z.literal('erased'), conversations: z.number().int() })
  .meta({ id: 'EraseResponse' });

export const StreamFrame = z
  .object({
    delta: z.string().optional(),
    notice: z.literal('outage').optional(),
    error: z.string().optional(),
    code: z.string().optional(),
    retry_after: z.number().int().optional(),
    done: z.literal(true).optional(),
    session_id: z.string().optional(),
    handoff: z.boolean().optional(),
    quota_exceeded: z.boolean().optional(),
    sources: Sources,
    handoff_offered: HandoffOffered,
    after_hours: AfterHours,
  })
  .meta({
    id: 'StreamFrame',
    description:
      'Each SSE line is `data: <json>`. Fragment: `delta` (sometimes `notice`). Error: `error` (sometimes `code`, `retry_after`). End: `done`, `session_id`, `handoff`, `quota_exceeded` (sometimes `notice`, `sources`, `handoff_offered`), always last.',
  });
