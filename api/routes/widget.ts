import { openEventStream } from '../event-stream';
import type { StreamFrame } from '../../lib/conversations/service';
import type { ErrorCode } from '../../lib/errors';
import { LIMITS } from '../../lib/limits';
import { ChatResponse, HandoffResponse, OkResponse, PollQuery } from '../../lib/schemas/conversation';
import {
  WidgetAttachmentResponse,
  WidgetChatRequest,
  WidgetChatResponse,
  WidgetConfig,
  WidgetContact,
  WidgetPollResponse,
  WidgetRating,
  WidgetSatisfaction,
  WidgetSession,
  WidgetSessionBody,
  WidgetSessionQuery,
  WidgetStreamFrame,
} from '../../lib/schemas/widget';
import type { AppContext } from '../context';
import type { AppDeps } from '../deps';
import { type RouteDef, SENT_BY_HANDLER, reply, route } from '../route';
import { keyBot, publicBaseUrl } from '../session';
import { type WidgetScript, createWidgetScript } from '../widget-script';

const VISITOR_HEADER = {
  name: 'X-Visitor-Token',
  description: 'The `visitor_token` of `POST /v1/widget/session`: the session is this browser’s.',
  required: true,
};

const KEY_ERRORS = [
  'missing_key',
  'invalid_key',
  'wrong_key_type',
  'origin_not_allowed',
  'rate_limited',
  'service_unavailable',
  'internal_error',
] as const satisfies readonly ErrorCode[];

/** What every route of the widget's own API has in common: a public key, the widget's CORS, no promise of stability. */
const WIDGET_ROUTE = { tag: 'Widget', widget: true, keys: ['public' as const], unstable: true };

/** The bot of the key, once the request has shown the session's visitor token. */
function visitorBotOf(widget: AppDeps['services']['widget']) {
  return (ctx: AppContext, sessionId: string): string => {
    const { botId } = keyBot(ctx);
    widget.assertVisitor(botId, sessionId, ctx.get('X-Visitor-Token') || undefined);
    return botId;
  };
}

/**
 * `/v1/widget/*` (docs/widget.md): the visitor's browser, on the bot's public key, from the bot's allowed origins. The
 * same conversation service as `/v1/api/*`; what is the widget's own is the visitor's session (a token proves it is
 * this browser's) and the message ids it needs to rate answers.
 */
export function widgetRoutes(deps: AppDeps, script: WidgetScript = createWidgetScript()): RouteDef[] {
  return [...widgetChatRoutes(deps, script), ...widgetVisitorRoutes(deps), ...widgetFeedbackRoutes(deps)];
}

/** The script, the configuration, a session, and a visitor message answered. */
function widgetChatRoutes(deps: AppDeps, script: WidgetScript): RouteDef[] {
  const { conversations, widget } = deps.services;
  const common = WIDGET_ROUTE;
  const visitorBot = visitorBotOf(widget);

  return [
    route({
      method: 'get',
      path: '/widget.js',
      operationId: 'widgetScript',
      tag: 'Widget',
      unstable: true,
      summary:
        'The widget: `<script src="{base}/widget.js" data-key="pk_…" async></script>` on any page (docs/widget.md).',
      responses: {
        200: { description: 'The script', contentType: 'text/javascript' },
        503: { description: 'Not built: run `bash scripts/setup.sh`', contentType: 'text/javascript' },
      },
      handler: async (ctx) => {
        await script.serve(ctx);
        return SENT_BY_HANDLER;
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/widget/config',
      operationId: 'widgetConfig',
      summary: "What the widget shows before the first message: the bot's name, whether a person can be asked for.",
      rateGroup: 'widgetReads',
      responses: { 200: { description: 'Widget configuration', schema: WidgetConfig } },
      errors: [...KEY_ERRORS],
      handler: async (ctx) => {
        ctx.set('Cache-Control', 'no-cache');
        return await widget.config(keyBot(ctx).botId);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/widget/session',
      operationId: 'widgetSession',
      summary: 'Starts a visitor session: its id and the token that makes it this browser’s. Nothing is stored yet.',
      rateGroup: 'widgetDialogue',
      responses: { 201: { description: 'New session', schema: WidgetSession } },
      errors: [...KEY_ERRORS],
      handler: async (ctx) => {
        return widget.newSession(keyBot(ctx).botId);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/widget/chat',
      operationId: 'widgetChat',
      summary: 'A visitor message; the answer in one JSON body (the public ChatResponse plus message ids).',
      rateGroup: 'widgetDialogue',
      headers: [VISITOR_HEADER],
      body: WidgetChatRequest,
      responses: { 200: { description: 'Answer', schema: WidgetChatResponse } },
      errors: [...KEY_ERRORS, 'bad_request', 'not_found', 'payload_too_large', 'llm_unavailable', 'llm_overloaded'],
      handler: async (ctx, { body }) => {
        const botId = visitorBot(ctx, body.session_id);
        const turn = await conversations.converse(botId, body);
        return {
          ...turn.reply,
          ...(turn.visitorMessageId ? { visitor_message_id: turn.visitorMessageId } : {}),
          ...(turn.answerMessageId ? { message_id: turn.answerMessageId } : {}),
        };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/widget/chat/stream',
      operationId: 'widgetChatStream',
      summary:
        "A visitor message; the answer as Server-Sent Events (the public stream's frames; the end frame adds message ids).",
      rateGroup: 'widgetDialogue',
      headers: [VISITOR_HEADER],
      body: WidgetChatRequest,
      responses: {
        200: { description: 'Event stream', schema: WidgetStreamFrame, contentType: 'text/event-stream' },
      },
      errors: [...KEY_ERRORS, 'bad_request', 'not_found', 'payload_too_large'],
      handler: async (ctx, { body }) => {
        const botId = visitorBot(ctx, body.session_id);
        const chat = await conversations.openStream(botId, body);
        const stream = openEventStream(ctx);
        let failed = false;
        const write = (frame: StreamFrame) => {
          if ('error' in frame) failed = true;
          if (!('done' in frame)) return stream.write(frame);
          // The end frame says which messages the turn wrote: the answer only if the bot gave one.
          const answered = !failed && !frame.handoff && !frame.quota_exceeded;
          // After an error frame whose turn goes on: the answer comes through the poll, so the visitor is told to
          // wait, not to resend; its id is known already, so the widget can offer to rate it when it comes.
          const pending = failed && chat.answerPending === true;
          stream.write({
            ...frame,
            ...(chat.visitorMessageId && !frame.quota_exceeded ? { visitor_message_id: chat.visitorMessageId } : {}),
            ...((answered || pending) && chat.answerMessageId ? { message_id: chat.answerMessageId } : {}),
            ...(pending ? { answer_pending: true } : {}),
          });
        };
        void chat.run(write, ctx.state.log).finally(() => stream.end());
        return SENT_BY_HANDLER;
      },
    }),
  ];
}

/** What the visitor reads and sends besides a message: new messages, handoff, typing, images. */
function widgetVisitorRoutes(deps: AppDeps): RouteDef[] {
  const { conversations, widget } = deps.services;
  const common = WIDGET_ROUTE;
  const visitorBot = visitorBotOf(widget);

  return [
    route({
      ...common,
      method: 'get',
      path: '/v1/widget/messages',
      operationId: 'widgetMessages',
      summary: 'New messages for the visitor (the public poll response; a message with an image has `attachment`).',
      rateGroup: 'widgetReads',
      headers: [VISITOR_HEADER],
      query: PollQuery,
      responses: { 200: { description: 'Poll response', schema: WidgetPollResponse } },
      errors: [...KEY_ERRORS, 'bad_request', 'not_found'],
      handler: async (ctx, { query }) => {
        const botId = visitorBot(ctx, query.session_id);
        ctx.set('Cache-Control', 'no-store');
        return await conversations.poll(botId, query.session_id, query.cursor, publicBaseUrl(deps), {
          forWidget: true,
        });
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/widget/handoff',
      operationId: 'widgetHandoff',
      summary: 'The visitor asks for a person: the conversation enters the operator queue (`waiting`).',
      rateGroup: 'widgetDialogue',
      headers: [VISITOR_HEADER],
      body: WidgetSessionBody,
      responses: { 200: { description: 'Handed over', schema: HandoffResponse } },
      errors: [...KEY_ERRORS, 'bad_request', 'not_found', 'payload_too_large'],
      handler: async (ctx, { body }) => {
        const botId = visitorBot(ctx, body.session_id);
        return await conversations.handoff(botId, body.session_id);
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/widget/typing',
      operationId: 'widgetTyping',
      summary: 'The visitor is typing: shown to operators for about 6 seconds.',
      rateGroup: 'widgetReads',
      headers: [VISITOR_HEADER],
      body: WidgetSessionBody,
      responses: { 200: { description: 'Signal recorded', schema: OkResponse } },
      errors: [...KEY_ERRORS, 'bad_request', 'not_found', 'payload_too_large'],
      handler: async (ctx, { body }) => {
        await conversations.visitorTyping(visitorBot(ctx, body.session_id), body.session_id);
        return { status: 'ok' };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/widget/attachments',
      operationId: 'widgetAttach',
      summary: 'The visitor attaches an image (the body is its bytes): a message of the conversation holding it.',
      description:
        'PNG, JPEG, GIF or WebP, recognised from the bytes (the declared type and name do not count), up to 5 MiB and ' +
        `${LIMITS.media.maxSidePixels} pixels on a side (${LIMITS.media.maxPixels / 1_000_000} megapixels; 400 past it, ` +
        'and for an image whose size cannot be read). PNG, JPEG and WebP are stored upright and without their metadata ' +
        '(EXIF, such as where a photo was taken): `size` is the stored size. ' +
        `Quotas: ${LIMITS.media.imagesPerConversation} images a conversation and ${LIMITS.media.workspaceBytesStored / 1024 / 1024} MiB kept per workspace ` +
        `(413 \`payload_too_large\`), ${LIMITS.media.botBytesPerDay / 1024 / 1024} MiB a day per agent (429 \`rate_limited\` with \`Retry-After\`). ` +
        'The bot does not answer an image; a person handling the conversation sees it.',
      rateGroup: 'widgetUploads',
      headers: [VISITOR_HEADER],
      query: WidgetSessionQuery,
      rawBody: true,
      bodyLimit: LIMITS.widget.attachmentBytes,
      responses: {
        201: { description: 'Stored', schema: WidgetAttachmentResponse },
        200: { description: 'Monthly conversation quota used up: nothing stored', schema: ChatResponse },
      },
      errors: [...KEY_ERRORS, 'bad_request', 'not_found', 'payload_too_large', 'unsupported_media_type'],
      handler: async (ctx, { query }) => {
        const botId = visitorBot(ctx, query.session_id);
        const result = await conversations.attach(botId, query.session_id, ctx.state.rawBody ?? Buffer.alloc(0), {
          mediaBaseUrl: publicBaseUrl(deps),
        });
        if (result.kind === 'quota_exceeded') return result.reply;
        return reply(201, { message: result.message });
      },
    }),
  ];
}

/** What the visitor says of the help: ratings, contact, satisfaction. */
function widgetFeedbackRoutes(deps: AppDeps): RouteDef[] {
  const { conversations, widget } = deps.services;
  const common = WIDGET_ROUTE;
  const visitorBot = visitorBotOf(widget);

  return [
    route({
      ...common,
      method: 'post',
      path: '/v1/widget/rating',
      operationId: 'widgetRate',
      summary: 'The visitor rates an answer of the bot (`up` or `down`); rating it again replaces the rating.',
      description: 'A `rating` event in the operator transcript; never shown to the visitor.',
      rateGroup: 'widgetDialogue',
      headers: [VISITOR_HEADER],
      body: WidgetRating,
      responses: { 200: { description: 'Recorded', schema: OkResponse } },
      errors: [...KEY_ERRORS, 'bad_request', 'not_found', 'payload_too_large'],
      handler: async (ctx, { body }) => {
        await conversations.rate(visitorBot(ctx, body.session_id), body.session_id, body.ref, body.rating);
        return { status: 'ok' };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/widget/satisfaction',
      operationId: 'widgetSatisfaction',
      summary: 'After a person resolved the conversation, the visitor says how it went: `score` 1–5 and a `comment`.',
      description:
        'Asked by the widget while the poll has `satisfaction_asked`. One answer per resolution (answering again replaces it): kept on the conversation and a `satisfaction` event in the operator transcript; never shown to the visitor. 409 `conflict` before any resolution.',
      rateGroup: 'widgetDialogue',
      headers: [VISITOR_HEADER],
      body: WidgetSatisfaction,
      responses: { 200: { description: 'Recorded', schema: OkResponse } },
      errors: [...KEY_ERRORS, 'bad_request', 'not_found', 'conflict', 'payload_too_large'],
      handler: async (ctx, { body }) => {
        const { session_id, ...answer } = body;
        await conversations.rateSatisfaction(visitorBot(ctx, session_id), session_id, answer);
        return { status: 'ok' };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/widget/contact',
      operationId: 'widgetContact',
      summary: 'The visitor leaves a way to reach them (`contact`, optional `name` and `note`).',
      description:
        'A `contact` event in the operator transcript and a dashboard notification; never shown to the visitor. Accepted before any message and when the monthly quota is used up.',
      rateGroup: 'widgetDialogue',
      headers: [VISITOR_HEADER],
      body: WidgetContact,
      responses: { 200: { description: 'Recorded', schema: OkResponse } },
      errors: [...KEY_ERRORS, 'bad_request', 'not_found', 'payload_too_large'],
      handler: async (ctx, { body }) => {
        const { session_id, ...contact } = body;
        await conversations.leaveContact(visitorBot(ctx, session_id), session_id, contact);
        return { status: 'ok' };
      },
    }),
  ];
}
