/**
 * The wire contract the front ends read: the types of what the server sends, inferred from the server's own zod
 * schemas (lib/schemas, which the API validates with and publishes as /v1/openapi.json). Type-only imports: nothing
 * of the server is bundled, and a change to a response's shape fails the pages' type check (`npm run lint`) instead
 * of showing up on a screen.
 */
import type { z } from 'zod';
import type * as conversation from '../../lib/schemas/conversation';
import type * as operator from '../../lib/schemas/operator';
import type * as scan from '../../lib/schemas/scan';
import type * as team from '../../lib/schemas/team';
import type * as widget from '../../lib/schemas/widget';

export type Attachment = z.infer<typeof conversation.Attachment>;
export type Message = z.infer<typeof conversation.Message>;
export type MessageEvent = NonNullable<Message['event']>;
/** A conversation in the inbox's list. */
export type InboxThread = z.infer<typeof operator.InboxThread>;
export type Transcript = z.infer<typeof operator.Transcript>;
/** A transcript as the inbox reads it: with who handles it and who of the team is writing to it now. */
export type InboxTranscript = z.infer<typeof operator.InboxTranscript>;
export type Teammate = z.infer<typeof operator.Teammate>;
export type VisitorPanel = z.infer<typeof operator.VisitorPanel>;
export type TeamMember = z.infer<typeof team.Member>;
export type Invitation = z.infer<typeof team.Invitation>;
export type BuilderKey = z.infer<typeof team.BuilderKey>;

/** The widget's poll: the spec's, with the operator's first name on a dashboard reply and the satisfaction question. */
export type WidgetPoll = z.infer<typeof widget.WidgetPollResponse>;
export type WidgetMessage = WidgetPoll['messages'][number];

/** A site scan with its progress, and why it found nothing (`error_code`, worded by the dashboard). */
export type ScanRun = z.infer<typeof scan.ScanRunSchema>;
