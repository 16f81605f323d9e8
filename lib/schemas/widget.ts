import { z } from 'zod';
import { LIMITS } from '../limits';
import { NOT_BLANK } from '../text';
import { ChatRequest, ChatResponse, Message, PollResponse, SessionId, StreamFrame } from './conversation';

/** The widget surface (`/v1/widget/*`, docs/widget.md): the conversation's shapes, bound to a visitor's session. */

export const WidgetConfig = z
  .object({
    bot: z.object({ name: z.string() }),
    handoff_enabled: z.boolean().describe('Whether the visitor may ask for a person.'),
    look: z
      .object({
        color: z.string(),
        greeting: z.string().nullable(),
        position: z.enum(['right', 'left']),
        team_name: z.string().nullable(),
        avatar_url: z.string().nullable(),
      })
      .describe("The widget's look, as the owner set it (DashboardBot.widget_look)"),
    team: z
      .object({
        online: z.boolean().describe('Someone of the team used the dashboard in the last 2 minutes'),
        typical_reply_seconds: z
          .number()
          .int()
          .nullable()
          .describe("Median time from a handoff to a person's first reply over 30 days; null with fewer than 3"),
      })
      .describe('Whether a person is there to answer a handoff, and how soon they usually do'),
    attachments: z.object({
      max_bytes: z.number().int(),
      types: z.array(z.string()).describe('Image types accepted (recognised from the bytes).'),
    }),
    poll_interval_ms: z.number().int().describe('How often to poll for new messages while the chat is open.'),
  })
  .meta({ id: 'WidgetConfig' });

export const WidgetSession = z
  .object({
    session_id: z.string(),
    visitor_token: z.string().describe('Send it in `X-Visitor-Token` with every call about this session.'),
  })
  .meta({ id: 'WidgetSession' });

export const WidgetChatRequest = ChatRequest.extend({ session_id: SessionId }).meta({ id: 'WidgetChatRequest' });

const MessageIds = {
  visitor_message_id: z.string().optional().describe("The visitor's message (absent when nothing was stored)."),
  message_id: z
    .string()
    .optional()
    .describe(
      "The bot's answer, when the bot answered (with `answer_pending`: the id its answer will have when it comes): what a rating refers to.",
    ),
};

export const WidgetChatResponse = ChatResponse.extend(MessageIds).meta({ id: 'WidgetChatResponse' });
export const WidgetStreamFrame = StreamFrame.extend({
  ...MessageIds,
  answer_pending: z
    .literal(true)
    .optional()
    .describe(
      'After an error frame: the turn goes on (or has answered) and its answer will come through `GET /v1/widget/messages`; wait for it rather than send the message again.',
    ),
}).meta({
  id: 'WidgetStreamFrame',
  description:
    'The frames of `POST /v1/api/chat/stream`; the end frame also carries the message ids, and `answer_pending` after an error frame whose turn goes on.',
});

export const WidgetSessionBody = z.object({ session_id: SessionId }).meta({ id: 'WidgetSessionRef' });
export const WidgetSessionQuery = z.object({ session_id: SessionId });

export const WidgetRating = z
  .object({
    session_id: SessionId,
    ref: z.string().min(1).max(100).describe("The id of the bot's answer rated (`message_id` of the chat answer)."),
    rating: z.enum(['up', 'down']),
  })
  .meta({ id: 'WidgetRating' });

export const WidgetContact = z
  .object({
    session_id: SessionId,
    contact: z
      .string({ error: 'is required' })
      .regex(NOT_BLANK, 'must not be empty')
      .trim()
      .max(LIMITS.widget.contactChars, `must be at most ${LIMITS.widget.contactChars} characters`)
      .describe('How to reach the visitor: an e-mail address, a phone number…'),
    name: z.string().trim().max(LIMITS.widget.contactNameChars).optional(),
    note: z.string().trim().max(LIMITS.widget.contactNoteChars).optional(),
  })
  .meta({ id: 'WidgetContact' });

export const WidgetPollResponse = PollResponse.extend({
  messages: z.array(
    Message.extend({
      author_name: z.string().optional().describe("An operator's reply from the dashboard: the person's first name"),
    }),
  ),
  satisfaction_asked: z
    .object({ resolved_at: z.number().int().describe('When a person resolved the conversation (Unix ms)') })
    .optional()
    .describe('Present while the widget should ask how the help went: resolved, not rated, nothing written since'),
  after_hours: z
    .object({ back_at: z.number().int().nullable().describe('When the team is next in (Unix ms)') })
    .optional()
    .describe('Present while the conversation waits for a team that is away (handed over outside business hours)'),
}).meta({ id: 'WidgetPollResponse' });

export const WidgetSatisfaction = z
  .object({
    session_id: SessionId,
    score: z.number().int().min(1).max(5).describe('1 (very bad) to 5 (very good)'),
    comment: z
      .string()
      .trim()
      .max(
        LIMITS.widget.satisfactionCommentChars,
        `must be at most ${LIMITS.widget.satisfactionCommentChars} characters`,
      )
      .optional(),
  })
  .meta({ id: 'WidgetSatisfaction' });

export const WidgetAttachmentResponse = z
  .object({ message: Message.describe("The visitor's message holding the image.") })
  .meta({ id: 'WidgetAttachmentResult' });
