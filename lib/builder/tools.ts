import { z } from 'zod';
import { ApiError } from '../errors';
import { LIMITS } from '../limits';
import { ActionCreate } from '../schemas/actions';
import { BotPatch } from '../schemas/dashboard';
import { KnowledgeWriteRequest } from '../schemas/knowledge';
import { ScrapeRequest } from '../schemas/scan';
import { GapAnswer, ReportDays } from '../schemas/reports';
import { TriggerCreate, TriggerPatch } from '../schemas/triggers';
import type { SecretBox } from '../secret-box';
import type { ActionService } from '../actions/service';
import type { BotService } from '../bots/service';
import type { KnowledgeService } from '../knowledge/service';
import type { RunService } from '../runs/service';
import type { ReportsService } from '../reports/service';
import { type ScanService, hostOf } from '../scans/service';
import type { TriggerService } from '../triggers/service';
import type { BuilderActOutcome, BuilderPrincipal } from '../../workflows/contracts/builder-thread';
import { asData, quoteText, quoteValue } from './untrusted';

/**
 * The builder's tools (contract, Builder over MCP): each is a service function — the same code path as the HTTP API —
 * with its arguments validated by the contract's own schemas. What a tool may do is decided here, not in the prompt:
 * - `read`: reads only; `now`: applied at once; `consent`: visible to customers at once, irreversible or landing in
 *   another system, so it is asked first and applied only after the owner's `yes` (behaviour 2).
 * - what the builder never does (rules 6 and 7: invitations, handovers, payments, the account, the team, deleting
 *   agents, reissuing their keys, answering customers, approving actions) has no tool at all, so the model is never
 *   offered it; issuing a builder key exists for a signed-in person only (rule 7: a key cannot issue another).
 */
export interface BuilderPorts {
  /** The services the tools are (the same code paths as the HTTP API). */
  services: {
    bots: BotService;
    knowledge: KnowledgeService;
    scans: ScanService;
    triggers: TriggerService;
    actions: ActionService;
    runs: RunService;
    reports: ReportsService;
  };
  /** The read-only views of the MCP tools `agents` and `incidents` (lib/builder/overview.ts). */
  overview: {
    agents(workspaceId: string, markedBotId: string | null): Promise<unknown>;
    incidents(workspaceId: string, agentId: string): Promise<unknown>;
  };
  secrets: SecretBox;
  /** Where incoming trigger webhooks are reached from outside. */
  publicBaseUrl: string;
  log: { warn(obj: object, msg: string): void };
}

type Effect = 'read' | 'now' | 'consent';

/**
 * What a read brings into the model's context: `trusted` text the workspace's people wrote (settings, names), or
 * `untrusted` text from visitors and other systems (run inputs from webhooks and polls, errors quoting their
 * answers). Untrusted text is handed to the model marked as data, and once a turn has read any, every change in
 * that turn is asked first — and in every later turn while the conversation's history holds a reply written after
 * it (workflows/builder-thread.ts; docs/decisions/109-builder-prompt-injection.md).
 */
type Reads = 'trusted' | 'untrusted';

interface ToolContext {
  workspaceId: string;
  principal: BuilderPrincipal;
  ports: BuilderPorts;
}

interface ToolResult {
  content: string;
  changed?: boolean;
  showOnce?: string[];
}

interface ToolSpec<S extends z.ZodType> {
  description: string;
  args: S;
  /**
   * Fixed, or decided by the arguments (a webhook trigger is made at once, a schedule is asked first) and what the
   * workspace already holds (a scan of a site the agent is not known to belong with is asked first).
   */
  effect: Effect | ((args: z.output<S>, ctx: ToolContext) => Effect | Promise<Effect>);
  /** A read tool's content comes from visitors or other systems (default: trusted). */
  reads?: Reads;
  /** Who may be offered the tool (default: anyone who may use the builder). */
  onlyFor?: BuilderPrincipal['kind'];
  /** The line in square brackets when the tool needs consent. */
  summary?: (args: z.output<S>, agentName: string) => string;
  run(ctx: ToolContext, args: z.output<S>): Promise<ToolResult>;
}

const AgentId = z.string().min(1).max(64).describe('The agent (bot) id, from list_agents');
const TriggerId = z.string().min(1).max(64).describe('The trigger id, from list_triggers');
const onAgent = <T extends z.ZodRawShape>(shape: T) => z.object({ agent_id: AgentId, ...shape });

function tool<S extends z.ZodType>(spec: ToolSpec<S>): ToolSpec<S> {
  return spec;
}

const json = (v: unknown) => JSON.stringify(v);

/** 404 unless the agent is in this workspace, like every surface. */
async function inWorkspace(ctx: ToolContext, botId: string): Promise<void> {
  await ctx.ports.services.bots.findInWorkspace(ctx.workspaceId, botId);
}

/** The agent's settings, if it is in this workspace. */
async function agent(ctx: ToolContext, botId: string) {
  await inWorkspace(ctx, botId);
  return ctx.ports.services.bots.get(botId);
}

const BUILDER_TOOLS = {
  list_agents: tool({
    description: 'Lists the agents of the workspace with their knowledge and channel counts.',
    args: z.object({}),
    effect: 'read',
    run: async (ctx) => ({
      content: json(await ctx.ports.overview.agents(ctx.workspaceId, markedBot(ctx.principal))),
    }),
  }),
  get_agent: tool({
    description:
      "Reads an agent's settings: name, instructions, model, handoff (what it does when it cannot answer, its business hours) and its webhook address.",
    args: onAgent({}),
    effect: 'read',
    run: async (ctx, a) => {
      const { public_key: _pk, ...settings } = await agent(ctx, a.agent_id);
      return { content: json(settings) };
    },
  }),
  update_agent: tool({
    description:
      "Changes an agent's name, instructions, model or whether conversations can be handed to a person. " +
      'Customers see these at once, so the owner is asked first.',
    args: onAgent({ changes: BotPatch.omit({ handoff_webhook_url: true }) }),
    effect: 'consent',
    summary: (a, name) => `change agent ${quoteValue(name)}: ${assignments(a.changes)}`,
    run: async (ctx, a) => {
      await inWorkspace(ctx, a.agent_id);
      const bot = await ctx.ports.services.bots.update(a.agent_id, a.changes);
      const { public_key: _pk, ...settings } = bot;
      return { content: `Updated. The agent now reads: ${json(settings)}`, changed: true };
    },
  }),
  set_handoff_webhook: tool({
    description:
      'Sets (or with null removes) the address that receives the handoff webhooks (escalated, visitor_message, resolved).',
    args: onAgent({ url: BotPatch.shape.handoff_webhook_url.unwrap() }),
    effect: 'consent',
    summary: (a, name) =>
      a.url
        ? `send agent ${quoteValue(name)}'s handoff webhooks to ${quoteValue(a.url)}`
        : `stop agent ${quoteValue(name)}'s handoff webhooks`,
    run: async (ctx, a) => {
      await inWorkspace(ctx, a.agent_id);
      const bot = await ctx.ports.services.bots.update(a.agent_id, { handoff_webhook_url: a.url ?? null });
      return { content: `Handoff webhook address is now ${bot.handoff_webhook_url ?? 'not set'}.`, changed: true };
    },
  }),
  add_knowledge: tool({
    description: "Adds a text to an agent's knowledge base (searchable at once). An identical text is not added twice.",
    args: onAgent(KnowledgeWriteRequest.pick({ title: true, text: true }).shape),
    effect: 'now',
    summary: (a, name) =>
      `add to agent ${quoteValue(name)}'s knowledge the text ${quoteText(a.text)}` +
      (a.title === undefined ? '' : `, titled ${quoteText(a.title)}`),
    run: async (ctx, a) => {
      await inWorkspace(ctx, a.agent_id);
      const existing = await ctx.ports.services.knowledge.findByText(a.agent_id, a.text);
      if (existing) return { content: `Not added: a source with exactly this text exists already (${existing}).` };
      const r = await ctx.ports.services.knowledge.write(a.agent_id, { title: a.title, text: a.text });
      return { content: `Added to the knowledge base as source ${r.source_id}.`, changed: true };
    },
  }),
  read_unanswered_questions: tool({
    description:
      'Questions visitors asked that an agent could not answer from its knowledge, grouped by similarity, most asked ' +
      'first (answer a group with answer_questions).',
    args: onAgent({ days: ReportDays.shape.days }),
    effect: 'read',
    // Visitors' own words.
    reads: 'untrusted',
    run: async (ctx, a) => {
      await inWorkspace(ctx, a.agent_id);
      const groups = await ctx.ports.services.reports.gaps(a.agent_id, a.days);
      return {
        content: json(
          groups.map((g) => ({
            question: g.question,
            asked: g.count,
            wordings: g.examples.map((e) => e.text),
            run_ids: g.run_ids,
          })),
        ),
      };
    },
  }),
  answer_questions: tool({
    description:
      'Answers a group of questions the agent could not answer: adds the answer to its knowledge (searchable at once) and takes the group off the list.',
    args: onAgent(GapAnswer.shape),
    effect: 'now',
    summary: (a, name) =>
      `answer ${a.run_ids.length} unanswered question(s) of agent ${quoteValue(name)}: add to its knowledge the text ` +
      quoteText(a.text) +
      (a.title ? `, titled ${quoteText(a.title)}` : ''),
    run: async (ctx, a) => {
      await inWorkspace(ctx, a.agent_id);
      const r = await ctx.ports.services.reports.answerGap(a.agent_id, {
        run_ids: a.run_ids,
        title: a.title,
        text: a.text,
      });
      return {
        content: `Added to the knowledge base as source ${r.source_id}; ${r.answered} question(s) answered.`,
        changed: true,
      };
    },
  }),
  start_site_scan: tool({
    description: 'Reads a website into the knowledge base (one scan per agent at a time), optionally re-reading it.',
    args: onAgent({ scan: ScrapeRequest }),
    // A site the agent already scanned, or one that embeds its widget, is read at once; any other address lands in
    // another system (and in the agent's answers, every week by default), so it is asked first.
    effect: async (a, ctx) => {
      const host = hostOf(a.scan.url);
      const known = await ctx.ports.services.scans.knownHosts(a.agent_id);
      return host && known.has(host) ? 'now' : 'consent';
    },
    summary: (a, name) =>
      `read ${quoteValue(a.scan.url)} into agent ${quoteValue(name)}'s knowledge (a site it has not scanned before)`,
    run: async (ctx, a) => {
      await inWorkspace(ctx, a.agent_id);
      const r = await ctx.ports.services.scans.start(
        { botId: a.agent_id, workspaceId: ctx.workspaceId },
        a.scan,
        ctx.ports.log,
      );
      return { content: `Scan started: ${json(r)}`, changed: true };
    },
  }),
  list_triggers: tool({
    description: "Lists an agent's triggers (webhook, schedule, poll, manual) with their state.",
    args: onAgent({}),
    effect: 'read',
    run: async (ctx, a) => {
      await inWorkspace(ctx, a.agent_id);
      return { content: json(await ctx.ports.services.triggers.list(a.agent_id, ctx.ports.publicBaseUrl)) };
    },
  }),
  create_trigger: tool({
    description:
      'Creates a trigger that wakes the agent: webhook (signed incoming calls), manual, schedule (cron or interval) ' +
      "or poll (watches an address). A webhook trigger's address and secret are shown to the owner once.",
    args: onAgent({ trigger: TriggerCreate }),
    // Webhook and manual triggers do nothing until someone calls them; schedules and polls start running (and
    // spending credits, or calling another system) on their own.
    effect: (a) => (a.trigger.kind === 'webhook' || a.trigger.kind === 'manual' ? 'now' : 'consent'),
    summary: (a, name) =>
      `create a ${a.trigger.kind} trigger for agent ${quoteValue(name)}` +
      (a.trigger.schedule?.cron ? ` (cron ${quoteValue(a.trigger.schedule.cron)})` : '') +
      (a.trigger.schedule?.every_seconds ? ` (every ${a.trigger.schedule.every_seconds} s)` : '') +
      (a.trigger.poll ? ` (polling ${quoteValue(a.trigger.poll.url)})` : '') +
      (a.trigger.name ? `, named ${quoteText(a.trigger.name)}` : '') +
      `, with the task ${quoteText(a.trigger.task)}`,
    run: async (ctx, a) => {
      const bot = await ctx.ports.services.bots.findInWorkspace(ctx.workspaceId, a.agent_id);
      const { secret, ...view } = await ctx.ports.services.triggers.create(bot, a.trigger, ctx.ports.publicBaseUrl);
      return {
        content: `Created trigger ${view.id}: ${json(view)}${secret ? ' Its secret is shown to the owner once, below your answer.' : ''}`,
        changed: true,
        ...(secret
          ? { showOnce: [ctx.ports.secrets.seal(`Secret of trigger ${view.id} (shown once): ${secret}`)] }
          : {}),
      };
    },
  }),
  update_trigger: tool({
    description: "Changes a trigger's name, task, mode, schedule or polled address.",
    args: onAgent({ trigger_id: TriggerId, changes: TriggerPatch }),
    effect: 'consent',
    summary: (a, name) =>
      `change trigger ${quoteValue(a.trigger_id)} of agent ${quoteValue(name)}: ${assignments(a.changes)}`,
    run: async (ctx, a) => {
      await inWorkspace(ctx, a.agent_id);
      const t = await ctx.ports.services.triggers.update(a.agent_id, a.trigger_id, a.changes, ctx.ports.publicBaseUrl);
      return { content: `Updated: ${json(t)}`, changed: true };
    },
  }),
  enable_trigger: tool({
    description: 'Turns a trigger on again (also one paused after failed runs): it starts waking the agent.',
    args: onAgent({ trigger_id: TriggerId }),
    effect: 'consent',
    summary: (a, name) => `turn on trigger ${quoteValue(a.trigger_id)} of agent ${quoteValue(name)}`,
    run: async (ctx, a) => {
      await inWorkspace(ctx, a.agent_id);
      const t = await ctx.ports.services.triggers.setEnabled(a.agent_id, a.trigger_id, true, ctx.ports.publicBaseUrl);
      return { content: `Trigger ${t.id} is on.`, changed: true };
    },
  }),
  disable_trigger: tool({
    description: 'Turns a trigger off: it stops waking the agent until turned on again.',
    args: onAgent({ trigger_id: TriggerId }),
    effect: 'now',
    summary: (a, name) => `turn off trigger ${quoteValue(a.trigger_id)} of agent ${quoteValue(name)}`,
    run: async (ctx, a) => {
      await inWorkspace(ctx, a.agent_id);
      const t = await ctx.ports.services.triggers.setEnabled(a.agent_id, a.trigger_id, false, ctx.ports.publicBaseUrl);
      return { content: `Trigger ${t.id} is off.`, changed: true };
    },
  }),
  add_http_action: tool({
    description: 'Gives the agent an HTTP action (a tool it may call on another system during conversations and runs).',
    args: onAgent({ action: ActionCreate }),
    effect: 'consent',
    summary: (a, name) =>
      `let agent ${quoteValue(name)} call ${a.action.method} ${quoteValue(a.action.url)} as action ` +
      quoteValue(a.action.name),
    run: async (ctx, a) => {
      await inWorkspace(ctx, a.agent_id);
      const action = await ctx.ports.services.actions.create(a.agent_id, a.action);
      return { content: `Action ${action.id} ("${action.name}") added.`, changed: true };
    },
  }),
  read_runs: tool({
    description: "Reads an agent's run log (every wake-up, newest first).",
    args: onAgent({ limit: z.number().int().min(1).max(50).default(10) }),
    effect: 'read',
    // Run inputs are webhook bodies, polled pages and visitors' messages.
    reads: 'untrusted',
    run: async (ctx, a) => {
      await inWorkspace(ctx, a.agent_id);
      return { content: json(await ctx.ports.services.runs.list(a.agent_id, { limit: a.limit })) };
    },
  }),
  read_incidents: tool({
    description: 'What is broken in an agent, with how to fix it.',
    args: onAgent({}),
    effect: 'read',
    // Failures quote what other systems answered.
    reads: 'untrusted',
    run: async (ctx, a) => ({ content: json(await ctx.ports.overview.incidents(ctx.workspaceId, a.agent_id)) }),
  }),
  issue_builder_key: tool({
    description:
      'Issues a new builder key for connecting a program (MCP client) to this workspace; earlier keys keep working.',
    args: z.object({}),
    effect: 'now',
    onlyFor: 'session',
    summary: () => 'issue a new builder key for this workspace',
    run: async (ctx) => {
      // Offered to a signed-in person only (onlyFor 'session'): they are the key's issuer.
      const issuer = ctx.principal.kind === 'session' ? ctx.principal.userId : null;
      const key = await ctx.ports.services.bots.issueBuilderKey(ctx.workspaceId, issuer);
      return {
        content: 'A new builder key was issued; it is shown to the owner once, below your answer.',
        changed: true,
        showOnce: [ctx.ports.secrets.seal(`New builder key (shown once): ${key}`)],
      };
    },
  }),
  revoke_builder_keys: tool({
    description: 'Revokes every builder key of the workspace (including the one in use): connected programs stop.',
    args: z.object({}),
    effect: 'consent',
    summary: () => 'revoke every builder key of this workspace (connected programs stop working at once)',
    run: async (ctx) => {
      const n = await ctx.ports.services.bots.revokeBuilderKeys(ctx.workspaceId);
      return { content: `Revoked ${n} builder key${n === 1 ? '' : 's'}.`, changed: true };
    },
  }),
} satisfies Record<string, ToolSpec<any>>;

export type BuilderToolName = keyof typeof BUILDER_TOOLS;

function markedBot(principal: BuilderPrincipal): string | null {
  return principal.kind === 'builder_key' ? principal.botId : null;
}

function offered(principal: BuilderPrincipal): [BuilderToolName, ToolSpec<any>][] {
  return (Object.entries(BUILDER_TOOLS) as [BuilderToolName, ToolSpec<any>][]).filter(
    ([, spec]) => !spec.onlyFor || spec.onlyFor === principal.kind,
  );
}

/** The tools the model is offered for this principal, in the OpenAI function-calling shape. */
export function builderToolDefinitions(principal: BuilderPrincipal) {
  return offered(principal).map(([name, spec]) => ({
    type: 'function' as const,
    function: {
      name,
      description: spec.description,
      parameters: z.toJSONSchema(spec.args, { io: 'input', unrepresentable: 'any', target: 'draft-7' }) as Record<
        string,
        unknown
      >,
    },
  }));
}

/**
 * Runs one tool call for the model: refuses a tool that is not offered to this principal, validates the arguments
 * with the contract's schema, and asks for consent instead of acting when the tool needs it and the owner has not
 * said yes to exactly this call. Refusals by the services (not found, conflicts, bad input) are results for the model,
 * not failures: the builder tells the owner.
 */
export async function runBuilderTool(
  ports: BuilderPorts,
  input: {
    workspaceId: string;
    principal: BuilderPrincipal;
    name: string;
    arguments: string;
    consented: boolean;
    /** Untrusted content is in the model's view (read in this turn, or in its history): a change is asked first. */
    tainted?: boolean;
  },
): Promise<BuilderActOutcome> {
  const spec = offered(input.principal).find(([name]) => name === input.name)?.[1];
  if (!spec) return { content: `Not available: there is no tool "${input.name}" for this connection.` };
  let raw: unknown;
  try {
    raw = input.arguments.trim() ? JSON.parse(input.arguments) : {};
  } catch {
    return { content: 'Not done: the arguments were not valid JSON.' };
  }
  const parsed = spec.args.safeParse(raw);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .slice(0, 5)
      .map((i: z.core.$ZodIssue) => `${i.path.join('.') || '(arguments)'}: ${i.message}`)
      .join('; ');
    return { content: `Not done: invalid arguments (${detail}).` };
  }
  const args = parsed.data;
  const ctx: ToolContext = { workspaceId: input.workspaceId, principal: input.principal, ports };
  try {
    let effect = typeof spec.effect === 'function' ? await spec.effect(args, ctx) : spec.effect;
    // Whatever a visitor or another system wrote may be steering this turn: it changes nothing on its own say.
    if (effect === 'now' && input.tainted) effect = 'consent';
    if (effect === 'consent' && !input.consented) {
      const name =
        'agent_id' in (args as object) ? (await agent(ctx, (args as { agent_id: string }).agent_id)).name : '';
      const summary = truncate(spec.summary?.(args, name) ?? input.name, LIMITS.builder.summaryChars);
      return {
        content: 'Needs consent.',
        // What the change would write is quoted in the line; after untrusted content, the line says whose it may be.
        needsConsent: { summary: input.tainted ? `${summary} ${UNTRUSTED_QUOTES}` : summary },
      };
    }
    const result = await spec.run(ctx, args);
    return spec.reads === 'untrusted'
      ? { ...result, content: asData(input.name, result.content), untrusted: true }
      : result;
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return { content: `Not done: ${err.message}` };
    throw err;
  }
}

/**
 * Said after the consent line of a change asked in a conversation that read what visitors or other systems wrote:
 * the quoted words may be theirs, repeated by the model, and are not the platform's.
 */
export const UNTRUSTED_QUOTES =
  "(quoted: data written after reading what visitors or other systems wrote, not the platform's words; check it)";

/** A change's fields and the values it would write, each value quoted: `name to "Desk"; instructions to "…"`. */
function assignments(changes: Record<string, unknown>): string {
  const set = Object.entries(changes).filter(([, v]) => v !== undefined);
  return set.length ? set.map(([k, v]) => `${k} to ${quoteValue(v)}`).join('; ') : 'nothing';
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}
