import { z } from 'zod';
import { LIMITS } from '../limits';
import { Attachment, Message, SessionId } from './conversation';

export const ThreadParams = z.object({ sid: SessionId });

/** A conversation's last message (events aside); an image is its `attachment` (the text is its caption, often empty). */
const LastMessage = z
  .object({ author: z.string(), text: z.string(), at: z.number().int(), attachment: Attachment.optional() })
  .nullable();

/** What an operator writes: a reply to the visitor, or a note for the team. */
const OperatorText = z
  .string({ error: 'is required' })
  .trim()
  .min(1, 'must not be empty')
  .max(LIMITS.messageChars, `must be at most ${LIMITS.messageChars} characters`);

const EscalationReason = z
  .enum(['requested', 'unanswered', 'operator'])
  .nullable()
  .describe(
    'Why it was last handed over: the visitor or integrator asked (or took the person the agent offered when it could not answer: `unanswered`), the agent could not answer, or a person took it over; null before this was recorded',
  );

const AfterHoursOfThread = z
  .object({ back_at: z.number().int().nullable().describe('Unix ms when the team is next in') })
  .nullable()
  .describe(
    "Handed over outside the agent's business hours (the visitor was told when the team is back and asked for a contact); null otherwise",
  );

export const ThreadSummary = z
  .object({
    session_id: z.string(),
    status: z.string().describe('`waiting` or `operator`'),
    visitor_user: z.string().nullable(),
    visitor_typing: z
      .boolean()
      .describe('The visitor is typing (`POST /v1/api/typing`); goes off about 6 seconds after the last signal.'),
    escalated_at: z.number().int().describe('Unix ms when the conversation was handed over'),
    escalation_reason: EscalationReason,
    after_hours: AfterHoursOfThread,
    last_message_at: z.number().int(),
    last_message: LastMessage,
  })
  .meta({ id: 'ThreadSummary' });

export const ThreadList = z
  .object({ threads: z.array(ThreadSummary), next_cursor: z.string() })
  .meta({ id: 'ThreadList' });

export const Teammate = z
  .object({ id: z.string(), name: z.string().describe('Their name, else their e-mail') })
  .meta({ id: 'Teammate', description: 'A person of the workspace' });

export const InboxThread = ThreadSummary.extend({
  assignee: Teammate.nullable().describe('Who handles it; null: nobody yet (a reply from the dashboard takes it)'),
  bot_id: z.string(),
  bot_name: z.string(),
  visitor_name: z.string().nullable().describe('The name (else the contact) the visitor left in a contact form'),
  status: z.string().describe('`bot`, `waiting` or `operator`'),
  escalated_at: z.number().int().nullable().describe('Unix ms when last handed over; null if never'),
}).meta({ id: 'InboxThread' });
export const InboxList = z.object({ threads: z.array(InboxThread), next_cursor: z.string() }).meta({ id: 'InboxList' });

export const Transcript = z
  .object({
    session_id: z.string(),
    status: z.string(),
    visitor_user: z.string().nullable(),
    visitor_typing: z.boolean().describe('The visitor is typing; goes off about 6 seconds after the last signal.'),
    escalation_reason: EscalationReason,
    after_hours: AfterHoursOfThread,
    briefing: z
      .object({
        text: z.string(),
        at: z.number().int().describe('Unix ms'),
        source: z
          .enum(['model', 'extractive'])
          .describe(
            'Who wrote it: `model` — the platform’s model summarised the conversation (show it as written by AI: what visitors wrote may have steered it); `extractive` — the visitor’s own words quoted',
          ),
      })
      .nullable()
      .describe(
        'A short summary of the conversation written when it was last handed to the team (the model’s, or extractive without one or without credits); null before any hand-over',
      ),
    messages: z.array(Message),
    next_cursor: z.string(),
    resume_cursor: z
      .string()
      .describe(
        'Where to continue to see what is new: after the last message of this page, also on the last page (whose `next_cursor` is empty).',
      ),
  })
  .meta({ id: 'Transcript' });

export const InboxTranscript = Transcript.extend({
  messages: z.array(
    Message.extend({
      author_name: z
        .string()
        .optional()
        .describe('A reply written in the dashboard: the first name of who wrote it, as the visitor saw it'),
    }),
  ),
  assignee: Teammate.nullable(),
  replying: Teammate.nullable().describe(
    'Another person of the team typing a reply to this visitor now (the last ~6 s); never the one reading',
  ),
}).meta({ id: 'InboxTranscript' });

export const OperatorAttachmentResponse = z
  .object({ message: Message, status: z.string().describe('`operator`: a person handles the conversation') })
  .meta({ id: 'OperatorAttachmentResult' });

export const AssignRequest = z
  .object({
    user_id: z.string().min(1).max(64).nullable().describe('A person of the workspace, or null for nobody'),
  })
  .meta({ id: 'AssignRequest' });
export const AssignResponse = z.object({ assignee: Teammate.nullable() }).meta({ id: 'AssignResult' });

export const VisitorPanel = z
  .object({
    user: z
      .string()
      .nullable()
      .describe("The site's own id for the visitor (`user_token`, or a confirmation's `user`)"),
    user_confirmed: z
      .boolean()
      .describe('`user` was named by a valid visitor confirmation (`user_auth`), not only typed as `user_token`'),
    name: z.string().nullable().describe('From the latest contact the visitor left'),
    contact: z.string().nullable(),
    note: z.string().nullable(),
    first_seen_at: z.number().int(),
    satisfaction: z
      .object({ score: z.number().int(), comment: z.string().nullable(), at: z.number().int() })
      .nullable(),
    earlier: z
      .array(
        z.object({
          session_id: z.string(),
          status: z.string(),
          started_at: z.number().int(),
          last_message_at: z.number().int(),
          last_message: LastMessage,
          linked_by: z
            .enum(['user', 'contact'])
            .describe('The same user (`user_token` or confirmed), else the same contact'),
          confirmed: z
            .boolean()
            .describe('The site confirmed the same user in both conversations (`user_auth`); otherwise only a claim'),
        }),
      )
      .describe(
        "Other conversations with this agent that may be the same visitor's (same user or contact): confirmed ones first, then newest first, 10 at most",
      ),
  })
  .meta({ id: 'VisitorPanel' });

export const SavedReplyView = z
  .object({ id: z.string(), title: z.string(), text: z.string() })
  .meta({ id: 'SavedReply' });
export const SavedReplyList = z.object({ replies: z.array(SavedReplyView) }).meta({ id: 'SavedReplyList' });
export const SavedReplyCreate = z
  .object({
    title: z
      .string({ error: 'is required' })
      .trim()
      .min(1, 'must not be empty')
      .max(LIMITS.inbox.savedReplyTitleChars, `must be at most ${LIMITS.inbox.savedReplyTitleChars} characters`),
    text: OperatorText,
  })
  .meta({ id: 'SavedReplyCreate' });
export const SavedReplyParams = z.object({ reply: z.string().min(1).max(100) });

export const NoteRequest = z.object({ text: OperatorText }).meta({ id: 'NoteRequest' });

export const NoteResponse = z
  .object({
    id: z.string(),
    author: z.literal('event'),
    text: z.string(),
    at: z.number().int(),
    event: z.object({ kind: z.literal('note'), text: z.string(), by: z.string().optional() }),
  })
  .meta({ id: 'NoteResponse' });

export const ReplyRequest = z.object({ text: OperatorText }).meta({ id: 'OperatorReply' });
export const ReplyResponse = z
  .object({ id: z.string(), at: z.number().int(), status: z.string() })
  .meta({ id: 'OperatorReplyResult' });
export const ResolveResponse = z
  .object({ status: z.string(), resolved: z.boolean().describe('false when there was no open request') })
  .meta({ id: 'ResolveResult' });
