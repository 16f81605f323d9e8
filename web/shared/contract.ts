/**
 * The wire contract the front ends read: the types of what the server sends, inferred from the server's own zod
 * schemas (lib/schemas, which the API validates with and publishes as /v1/openapi.json), and the limits it enforces
 * (lib/limits.ts). The schemas are imported for their types only: nothing of the server is bundled but the limits (a
 * module of plain numbers that imports nothing), and a change to a response's shape or a limit fails the pages' type
 * check (`npm run lint`) or moves with it, instead of showing up on a screen.
 */
import type { z } from 'zod';
import type * as actions from '../../lib/schemas/actions';
import type * as billing from '../../lib/schemas/billing';
import type * as builder from '../../lib/schemas/builder';
import type * as checks from '../../lib/schemas/checks';
import type * as conversation from '../../lib/schemas/conversation';
import type * as auth from '../../lib/schemas/auth';
import type * as dashboard from '../../lib/schemas/dashboard';
import type * as deliveries from '../../lib/schemas/deliveries';
import type * as knowledge from '../../lib/schemas/knowledge';
import type * as operator from '../../lib/schemas/operator';
import type * as pairing from '../../lib/schemas/pairing';
import type * as reports from '../../lib/schemas/reports';
import type * as scan from '../../lib/schemas/scan';
import type * as team from '../../lib/schemas/team';
import type * as triggers from '../../lib/schemas/triggers';
import type * as widget from '../../lib/schemas/widget';

/** Every limit the API enforces (message lengths, page sizes, upload sizes, names…): a field's bound is the API's. */
export { LIMITS } from '../../lib/limits';

export type Attachment = z.infer<typeof conversation.Attachment>;
/** A knowledge source an answer used: `ref` is the number its text cites it by (`[ref]`); `url` for a scanned page. */
export type AnswerSource = z.infer<typeof conversation.AnswerSource>;
export type Message = z.infer<typeof conversation.Message>;
export type MessageEvent = NonNullable<Message['event']>;
/** `POST /handoff`: the conversation's status, and `after_hours` when the team is away. */
export type HandoffResponse = z.infer<typeof conversation.HandoffResponse>;
/** A conversation in the inbox's list. */
export type InboxThread = z.infer<typeof operator.InboxThread>;
export type Transcript = z.infer<typeof operator.Transcript>;
/** A transcript as the inbox reads it: with who handles it and who of the team is writing to it now. */
export type InboxTranscript = z.infer<typeof operator.InboxTranscript>;
/** A message as the inbox reads it: a dashboard reply names its writer (`author_name`). */
export type InboxMessage = InboxTranscript['messages'][number];
export type Teammate = z.infer<typeof operator.Teammate>;
export type VisitorPanel = z.infer<typeof operator.VisitorPanel>;
export type TeamMember = z.infer<typeof team.Member>;
export type Invitation = z.infer<typeof team.Invitation>;
export type BuilderKey = z.infer<typeof team.BuilderKey>;
/** A key in force that someone who left the team (or is an operator now) was shown; its rotation's new value. */
export type SeenKey = z.infer<typeof team.SeenKey>;
export type RotatedKey = z.infer<typeof team.RotatedKey>;
/** An invitation made: its link, and whether it was e-mailed. */
export type InviteResult = z.infer<typeof team.InviteResponse>;
/** A member whose role changed, and a member removed, with what that took with it (the keys they issued or saw). */
export type MemberChanged = z.infer<typeof team.MemberChanged>;
export type MemberRemoved = z.infer<typeof team.MemberRemoved>;

/** The builder's answer to one message (the dashboard's builder panel): what a `yes` would apply, or busy. */
export type BuilderReply = z.infer<typeof builder.BuilderReply>;
/** A builder client's pairing, as the owner's approval page reads it. */
export type PairingView = z.infer<typeof pairing.PairingView>;

/** The widget's poll: the contract's, with the operator's first name on a dashboard reply and the satisfaction question. */
export type WidgetPoll = z.infer<typeof widget.WidgetPollResponse>;
export type WidgetMessage = WidgetPoll['messages'][number];
/** The widget's configuration (`GET /v1/widget/config`): the bot's name, its look, the team, images, polling. */
export type WidgetConfig = z.infer<typeof widget.WidgetConfig>;
export type WidgetSession = z.infer<typeof widget.WidgetSession>;

/** A site scan with its progress, and why it found nothing (`error_code`, worded by the dashboard). */
export type ScanRun = z.infer<typeof scan.ScanRunSchema>;

/** An agent as the dashboard shows and edits it. */
export type BotView = z.infer<typeof dashboard.BotView>;
export type BotSummary = z.infer<typeof dashboard.BotSummary>;
export type RunView = z.infer<typeof dashboard.RunView>;
export type NotificationView = z.infer<typeof dashboard.NotificationView>;
/** A webhook delivery given up, on the agent's page, and what sending it again answers. */
export type FailedDeliveryView = z.infer<typeof deliveries.FailedDelivery>;
export type DeliverySentAgainView = z.infer<typeof deliveries.DeliverySentAgain>;
export type TriggerView = z.infer<typeof triggers.TriggerView>;
/** A new trigger as the dashboard sends it (defaults left to the API). */
export type TriggerCreate = z.input<typeof triggers.TriggerCreate>;
export type ApprovalView = z.infer<typeof actions.ApprovalView>;
export type PlanView = z.infer<typeof billing.PlanView>;
export type UsageView = z.infer<typeof billing.UsageView>;
export type LedgerEntry = z.infer<typeof billing.LedgerList>['entries'][number];
export type WidgetLookView = BotView['widget_look'];
export type WidgetSiteView = z.infer<typeof dashboard.WidgetSites>['sites'][number];
export type BotKeysView = z.infer<typeof dashboard.BotCreated>['keys'];
export type ModelChoicesView = z.infer<typeof dashboard.ModelChoices>;
export type KnowledgeSourceSummary = z.infer<typeof knowledge.KnowledgeSourceSummary>;
/** An uploaded file accepted (202): being read. */
export type KnowledgeFileAcceptedView = z.infer<typeof knowledge.KnowledgeFileAccepted>;
/** The dashboard's knowledge list: `q` (title, id or text), `kind` and `order`, as the page sends them. */
export type KnowledgeListQuery = z.input<typeof knowledge.DashboardKnowledgeQuery>;
/** A passage a question retrieves (`…/knowledge/search`), as a run read it too: source, heading path, page, score. */
export type KnowledgeSearchPassage = z.infer<typeof knowledge.KnowledgeSearchPassage>;
/** What each answer of a conversation read (`…/threads/{sid}/passages`). */
export type PassagesReadView = z.infer<typeof knowledge.PassagesRead>;
export type ActionView = z.infer<typeof actions.ActionList>['actions'][number];
export type SavedReplyView = z.infer<typeof operator.SavedReplyView>;
/** The signed-in person and their workspace (`GET /v1/auth/me`). */
export type SignedInView = z.infer<typeof auth.MeResponse>;
export type User = SignedInView['user'];
export type Workspace = SignedInView['workspace'];
/** Owners and admins manage agents, keys, the team, billing and the builder; operators work the inbox. */
export type Role = User['role'];
/** The role an invitation gives, and the one the owner can change a member to (never the owner's). */
export type InvitedRole = z.infer<typeof team.Invitation>['role'];
/** An invitation as its link's page shows it (`POST /v1/auth/invitation`). */
export type InvitationPreview = z.infer<typeof auth.InvitationView>;
/** A confirmed e-mail address (`POST /v1/auth/verify-email`): what the confirmation granted. */
export type EmailVerifiedView = z.infer<typeof auth.EmailVerified>;

/** Questions the agent could not answer, grouped (`GET …/bots/{id}/gaps`), and what adding an answer wrote. */
export type GapList = z.infer<typeof reports.GapList>;
export type GapGroup = GapList['groups'][number];
export type GapAnswered = z.infer<typeof reports.GapAnswered>;
/** Every knowledge source with the answers of the period that named it and their ratings. */
export type SourceUsefulnessList = z.infer<typeof reports.SourceUsefulnessList>;
export type SourceUsefulness = SourceUsefulnessList['sources'][number];
/** What the AI resolved: the conversations of a period by outcome, per day, with ratings and satisfaction. */
export type ResolutionReport = z.infer<typeof reports.ResolutionReport>;
export type ResolutionCounts = ResolutionReport['totals'];
export type ResolutionDay = ResolutionReport['days'][number];
/** The period and agent of the resolution report, as the page asks for them. */
export type ResolutionQuery = z.input<typeof reports.ResolutionQuery>;

/** The owner's check of an agent: test questions, runs with their progress or score, and one run's results. */
export type CheckQuestionView = z.infer<typeof checks.CheckQuestion>;
export type CheckQuestionListView = z.infer<typeof checks.CheckQuestionList>;
export type CheckRunView = z.infer<typeof checks.CheckRun>;
export type CheckRunListView = z.infer<typeof checks.CheckRunList>;
export type CheckRunDetailView = z.infer<typeof checks.CheckRunDetail>;
export type CheckResultView = CheckRunDetailView['results'][number];
export type CheckPassageView = CheckResultView['passages'][number];
