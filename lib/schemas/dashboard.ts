import { z } from 'zod';
import { ChatRequest } from './conversation';
import { PageQuery } from './common';
import { LIMITS } from '../limits';
import { WEEKDAYS, isTimeZone } from '../bots/hours';

const LocalTime = z
  .string()
  .regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/, 'must be a local time as HH:MM (00:00 to 24:00)');

export const BusinessHours = z
  .object({
    time_zone: z
      .string()
      .max(64)
      .refine(isTimeZone, 'must be an IANA time zone such as Europe/Tallinn')
      .describe('IANA time zone the hours are in, e.g. `Europe/Tallinn`'),
    open: z
      .array(
        z
          .object({
            days: z
              .array(z.enum(WEEKDAYS))
              .min(1)
              .max(7)
              .transform((days) => [...new Set(days)]),
            from: LocalTime,
            to: LocalTime,
          })
          .refine((w) => w.from < w.to, { message: '`from` must be before `to`', path: ['to'] }),
      )
      .min(1)
      .max(21)
      .describe('Opening windows: days (`mon`…`sun`) and local times `from`–`to`'),
  })
  .meta({
    id: 'BusinessHours',
    description:
      'When the team answers handed-over conversations; outside them a handoff tells the visitor when someone is back and asks for a contact',
  });

const WhenUnanswered = z
  .enum(['offer', 'hand_over'])
  .describe(
    'With handoff on, what the agent does when it cannot answer from its knowledge: `offer` a person (the answer has `handoff_offered`), or `hand_over` at once',
  );

export { BotParams } from './common';

const WidgetLookView = z
  .object({
    color: z.string().describe('Accent colour, `#rrggbb`'),
    greeting: z.string().nullable().describe("First words in an empty chat; null: the widget's own"),
    position: z.enum(['right', 'left']).describe('Bottom corner of the launcher'),
    team_name: z.string().nullable().describe('Who a person\'s reply is from ("From Acme support"); null: "the team"'),
    avatar_url: z.string().nullable().describe("An https image beside the agent's name"),
  })
  .meta({ id: 'WidgetLook' });

export const BotView = z
  .object({
    id: z.string(),
    name: z.string(),
    instructions: z.string(),
    model: z.string().nullable(),
    handoff_enabled: z.boolean(),
    when_unanswered: WhenUnanswered,
    business_hours: BusinessHours.nullable(),
    handoff_webhook_url: z.string().nullable(),
    allowed_origins: z.array(z.string()).describe('Origins whose pages may use the widget'),
    public_key: z.string(),
    handoff_webhook_secret_fingerprint: z.string(),
    visitor_identity_secret_fingerprint: z.string(),
    secret_key_fingerprint: z.string().nullable(),
    builder_key_fingerprint: z.string().nullable().describe("The bot's own builder key (workspace keys are not shown)"),
    widget_look: WidgetLookView,
    created_at: z.number().int(),
  })
  .meta({ id: 'DashboardBot' });

export const WidgetSites = z
  .object({
    sites: z
      .array(
        z.object({
          origin: z.string(),
          allowed: z.boolean().describe("Whether the bot's allowed sites include it now"),
          last_allowed_at: z
            .number()
            .int()
            .nullable()
            .describe('Unix ms of the last request from it the widget served'),
          last_refused_at: z.number().int().nullable().describe('Unix ms of the last request from it refused'),
        }),
      )
      .describe('Page origins the widget was seen on, the most recent first (at most 50; noted at most once a minute)'),
  })
  .meta({ id: 'DashboardWidgetSites' });

export const BotSummary = z
  .object({
    id: z.string(),
    name: z.string(),
    created_at: z.number().int(),
    knowledge_sources: z.number().int(),
    open_requests: z.number().int().describe('Conversations waiting for or handled by a person'),
  })
  .meta({ id: 'DashboardBotSummary' });
export const BotList = z.object({ bots: z.array(BotSummary) }).meta({ id: 'DashboardBotList' });

export const BotCreate = z
  .object({
    name: z.string({ error: 'is required' }).trim().min(1, 'must not be empty').max(200),
    instructions: z.string().max(20_000).optional(),
  })
  .meta({ id: 'DashboardBotCreate' });
export const BotCreated = z
  .object({
    bot: BotView,
    keys: z
      .object({
        secret_key: z.string(),
        public_key: z.string(),
        builder_key: z.string(),
        handoff_webhook_secret: z.string(),
        visitor_identity_secret: z.string(),
      })
      .describe('Shown in full in this answer only'),
  })
  .meta({ id: 'DashboardBotCreated' });

/**
 * One origin a widget may be embedded from: `scheme://host[:port]` exactly as browsers send it in `Origin` (lower-case
 * host, no default port, no path). Written otherwise, it is normalized; anything with a path, query or credentials is
 * refused, since a browser never sends one.
 */
export const WidgetOrigin = z
  .string()
  .trim()
  .max(LIMITS.widget.originChars)
  .transform((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: `not an origin (scheme://host[:port]): ${value}` });
      return z.NEVER;
    }
    const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
    if (!/^https?:$/.test(url.protocol) || !bare) {
      ctx.addIssue({
        code: 'custom',
        message: `an origin is scheme://host[:port] with http or https, nothing after: ${value}`,
      });
      return z.NEVER;
    }
    return url.origin;
  });

export const BotPatch = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    instructions: z.string().max(20_000).optional(),
    model: z
      .string()
      .max(200)
      .nullable()
      .optional()
      .describe("One of the models the workspace's plan allows (`GET /v1/dashboard/models`); null: the default"),
    handoff_enabled: z.boolean().optional(),
    when_unanswered: WhenUnanswered.optional(),
    business_hours: BusinessHours.nullable().optional().describe('null: always open'),
    handoff_webhook_url: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .nullable()
      .optional(),
    allowed_origins: z
      .array(WidgetOrigin)
      .max(LIMITS.widget.allowedOrigins)
      .transform((origins) => [...new Set(origins)])
      .optional()
      .describe(
        'Origins (`https://shop.example.com`, `http://localhost:3000`) whose pages may use the widget; replaces the list',
      ),
    widget_look: z
      .object({
        color: z
          .string()
          .regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour as #rrggbb')
          .transform((c) => c.toLowerCase())
          .nullable()
          .optional(),
        greeting: z
          .string()
          .trim()
          .max(LIMITS.widget.greetingChars, `must be at most ${LIMITS.widget.greetingChars} characters`)
          .transform((g) => g || null)
          .nullable()
          .optional(),
        position: z.enum(['right', 'left']).nullable().optional(),
        team_name: z
          .string()
          .trim()
          .max(LIMITS.widget.teamNameChars, `must be at most ${LIMITS.widget.teamNameChars} characters`)
          .transform((n) => n || null)
          .nullable()
          .optional(),
        avatar_url: z
          .url({ protocol: /^https$/, error: 'must be an https address' })
          .max(2000)
          .nullable()
          .optional(),
      })
      .strict()
      .optional()
      .describe("The widget's look; the fields given replace those set, null puts one back to its default"),
  })
  .meta({ id: 'DashboardBotPatch' });

export const IssuedKey = z.object({ key: z.string(), fingerprint: z.string() }).meta({ id: 'IssuedKey' });

export const RunView = z
  .object({
    run_id: z.string(),
    status: z.string().describe('`running`, `done`, `failed` or `skipped`'),
    trigger_kind: z.string(),
    trigger_id: z.string().nullable(),
    session_id: z.string().nullable(),
    input: z.string(),
    answer: z.string().nullable(),
    error_code: z.string().nullable(),
    error: z.string().nullable(),
    model: z.string().nullable(),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    credits: z.number().int(),
    started_at: z.number().int(),
    finished_at: z.number().int().nullable(),
    workflow_url: z.string().nullable().describe('This run in the Temporal UI; null when none is configured'),
  })
  .meta({ id: 'Run' });

export const RunList = z.object({ runs: z.array(RunView), next_cursor: z.string() }).meta({ id: 'RunList' });

export const StateView = z
  .object({ document: z.record(z.string(), z.unknown()), version: z.number().int() })
  .meta({ id: 'AgentState' });
export const StatePut = z
  .object({
    document: z.record(z.string(), z.unknown()),
    version: z.number().int().min(0).describe('The version you read; the write fails with 409 if it changed since'),
  })
  .meta({ id: 'AgentStatePut' });

export const NotificationView = z
  .object({
    id: z.string(),
    kind: z
      .string()
      .describe(
        'trigger_paused, approval_requested, contact_left, handoff_requested, delivery_failed; new kinds may come',
      ),
    title: z.string(),
    body: z.string(),
    bot_id: z.string().nullable(),
    data: z.record(z.string(), z.unknown()),
    created_at: z.number().int(),
    read_at: z.number().int().nullable(),
  })
  .meta({ id: 'Notification' });
export const NotificationList = z
  .object({
    notifications: z.array(NotificationView),
    unread: z.number().int(),
    waiting_requests: z
      .number()
      .int()
      .describe('Visitors of the workspace waiting for a person that nobody has answered yet (the inbox badge)'),
  })
  .meta({ id: 'NotificationList' });
export const NotificationsRead = z
  .object({ ids: z.array(z.string().max(100)).max(200).optional().describe('Omitted: all of them') })
  .meta({ id: 'NotificationsRead' });

/** The dashboard's test chat: a visitor message (the signed-in user is confirmed as the bot's admin). */
export const TestChatRequest = ChatRequest.pick({ session_id: true, message: true }).meta({ id: 'TestChatRequest' });

export { PageQuery };

export const ModelChoices = z
  .object({
    default_model: z.string().describe("The platform's default model (an agent whose model is null uses it)"),
    plan: z.string(),
    models: z
      .array(z.object({ name: z.string(), weight: z.number().describe('Credit weight; the default model is 1') }))
      .describe("The models the workspace's plan allows, cheapest first"),
  })
  .meta({ id: 'ModelChoices' });
