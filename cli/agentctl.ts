import { parseArgs } from 'node:util';
import type { RotatableKind } from '../lib/bots/service';
import { type Config, ConfigError, parseConfig } from '../lib/config';
import { type Db, createDb } from '../lib/db';
import { ApiError, isUnavailableError } from '../lib/errors';
import { migrate } from '../lib/migrate';
import { withRuntimeEnv } from '../lib/runtime-env';
import { createSecretBox } from '../lib/secret-box';
import { type Services, createServices } from '../lib/services';
import { NamespaceMissingError, type Temporal, createTemporal, pingTemporal } from '../lib/temporal';

const HELP = `agentctl — administer the Agent Platform

Usage:
  npx agentctl bootstrap [--json] [--workspace NAME] [--email EMAIL] [--bot NAME]
      Creates a workspace, an owner user with a password, and one bot; prints the bot id and every key and secret
      ONCE (sk_ secret key, pk_ public key, ck_ builder key, whsec_ webhook secret, idsec_ visitor identity secret).
  npx agentctl keys rotate --bot BOT_ID --kind secret|identity|builder|webhook [--json]
      Issues a new key of that kind; the previous one stops working at once.
  npx agentctl credits grant --workspace WORKSPACE_ID --amount N [--reason TEXT]
      Adds N credits to a workspace (a ledger row); prints the new balance.
  npx agentctl billing plan --workspace WORKSPACE_ID --plan free|starter|pro|business [--json]
      Puts a workspace on a plan: its monthly conversation quota becomes the plan's at once; the plan's included
      credits are granted at the start of every month. (Without a payment provider, and for a plan paid through
      one, this is where a plan is changed.)
  npx agentctl billing topup --workspace WORKSPACE_ID (--conversations N | --credits N) [--note TEXT] [--json]
      Records a top-up: N more conversations this month (a used-up quota opens again at once), or N credits.
  npx agentctl billing usage --workspace WORKSPACE_ID [--json]
      This month's conversations against the quota, credits, and top-ups.
  npx agentctl migrate
      Applies pending database migrations.
  npx agentctl status [--json]
      Checks that the database and Temporal answer (exit 0 when both do, 1 otherwise).

Connection: DATABASE_URL and SECRET_ENCRYPTION_KEY (and TEMPORAL_*, as for the API) from the environment, or else
from .data/runtime.env, which \`npm start\` writes for the stack it started.`;

const RequiredEnv = ['DATABASE_URL', 'SECRET_ENCRYPTION_KEY'] as const;

let databaseUrlSource = 'the environment';

function env(names: readonly string[]): Record<string, string> {
  const merged = withRuntimeEnv(process.env);
  if (!process.env.DATABASE_URL && merged.DATABASE_URL) databaseUrlSource = '.data/runtime.env, written by npm start';
  const missing = names.filter((n) => !merged[n]);
  if (missing.length) {
    throw new ConfigError(missing.map((n) => `${n}: is required (start the platform with npm start, or set it)`));
  }
  return merged as Record<string, string>;
}

/** The command line's options; which apply depends on the command. */
function options(argv: string[], command: string | undefined) {
  return parseArgs({
    args: argv.slice(command === 'keys' || command === 'credits' || command === 'billing' ? 2 : 1),
    options: {
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      workspace: { type: 'string' },
      email: { type: 'string' },
      bot: { type: 'string' },
      kind: { type: 'string' },
      amount: { type: 'string' },
      reason: { type: 'string' },
      plan: { type: 'string' },
      conversations: { type: 'string' },
      credits: { type: 'string' },
      note: { type: 'string' },
    },
    allowPositionals: false,
  }).values;
}

type Options = ReturnType<typeof options>;

async function main(argv: string[]): Promise<number> {
  const [command, sub] = argv;
  const values = options(argv, command);
  if (!command || values.help || ['help', '--help', '-h'].includes(command)) {
    console.log(HELP);
    return command ? 0 : 2;
  }

  if (command === 'migrate') {
    const e = env(['DATABASE_URL']);
    const applied = await migrate(e.DATABASE_URL);
    console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date.');
    return 0;
  }

  // The same configuration, Temporal connection and services as the API: agentctl acts through the same code paths.
  const config = parseConfig(env(RequiredEnv));
  const db = createDb(config.DATABASE_URL, { max: 2, applicationName: 'agentctl' });
  const temporal = await createTemporal(config, { lazy: true });
  const services = createServices({ config, db, temporal, secrets: createSecretBox(config.SECRET_ENCRYPTION_KEY) });
  try {
    if (command === 'status') return await status(config, db, temporal, values);
    if (command === 'bootstrap') return await bootstrap(services, values);
    if (command === 'keys' && sub === 'rotate') return await rotateKey(services, values);
    if (command === 'credits' && sub === 'grant') return await grantCredits(services, values);
    if (command === 'billing' && ['plan', 'topup', 'usage'].includes(sub ?? ''))
      return await billing(services, values, sub);
    throw new UsageError(`Unknown command: ${argv.join(' ')}`);
  } finally {
    await Promise.allSettled([db.end(), temporal.connection.close()]);
  }
}

/** `status`: whether the database and Temporal answer (0 when both do). */
async function status(config: Config, db: Db, temporal: Temporal, values: Options): Promise<number> {
  const check = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (err: Error) =>
        err instanceof NamespaceMissingError
          ? `namespace missing: ${err.message}`
          : `unavailable: ${err.message.split('\n')[0]}`,
    );
  const [database, temporalStatus] = await Promise.all([check(db.query('SELECT 1')), check(pingTemporal(temporal))]);
  const report = {
    database,
    temporal: temporalStatus,
    temporal_address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
  };
  console.log(
    values.json
      ? JSON.stringify(report)
      : Object.entries(report)
          .map(([k, v]) => `${k.padEnd(17)} ${v}`)
          .join('\n'),
  );
  return database === 'ok' && temporalStatus === 'ok' ? 0 : 1;
}

/** `bootstrap`: a workspace, its owner and one bot, every key shown once. */
async function bootstrap(services: Services, values: Options): Promise<number> {
  const r = await services.accounts.bootstrap({
    workspaceName: values.workspace,
    email: values.email,
    botName: values.bot,
  });
  if (values.json) {
    console.log(JSON.stringify(r, null, 2));
  } else {
    console.log(`Workspace  ${r.workspace_id}
Owner      ${r.email}   password: ${r.password}
Bot        ${r.bot_id}

Keys — shown once, store them now:
  secret key (X-Bot-Key for /v1/api/*, /v1/admin/*)   ${r.keys.secret_key}
  public key (widget)                                 ${r.keys.public_key}
  builder key (MCP)                                   ${r.keys.builder_key}
  handoff webhook secret                              ${r.keys.handoff_webhook_secret}
  visitor identity secret                             ${r.keys.visitor_identity_secret}`);
  }
  return 0;
}

/** `keys rotate`: a new key of one kind for a bot. */
async function rotateKey(services: Services, values: Options): Promise<number> {
  const kinds: RotatableKind[] = ['secret', 'identity', 'builder', 'webhook'];
  if (!values.bot) throw new UsageError('--bot BOT_ID is required');
  if (!kinds.includes(values.kind as RotatableKind)) throw new UsageError(`--kind must be one of ${kinds.join(', ')}`);
  const r = await services.bots.rotateKey(values.bot, values.kind as RotatableKind);
  console.log(
    values.json
      ? JSON.stringify({ bot_id: values.bot, kind: values.kind, ...r })
      : `New ${values.kind} key (shown once): ${r.key}`,
  );
  return 0;
}

/** `credits grant`: credits added to a workspace's balance. */
async function grantCredits(services: Services, values: Options): Promise<number> {
  const amount = Number(values.amount);
  if (!values.workspace) throw new UsageError('--workspace WORKSPACE_ID is required');
  if (!Number.isInteger(amount) || amount <= 0 || amount > 1_000_000_000)
    throw new UsageError('--amount must be a positive whole number');
  const balance = await services.credits.grant(values.workspace, amount, values.reason ?? 'granted with agentctl');
  console.log(
    values.json
      ? JSON.stringify({ workspace_id: values.workspace, granted: amount, balance })
      : `Granted ${amount} credits; balance ${balance}.`,
  );
  return 0;
}

/** `billing plan|topup|usage`: a workspace's plan, a top-up, or this month's usage. */
async function billing(services: Services, values: Options, sub: string | undefined): Promise<number> {
  if (!values.workspace) throw new UsageError('--workspace WORKSPACE_ID is required');
  if (sub === 'plan') {
    if (!values.plan) throw new UsageError('--plan is required');
    const plan = await services.billing.setPlan(values.workspace, values.plan);
    console.log(
      values.json
        ? JSON.stringify({ workspace_id: values.workspace, plan })
        : `${values.workspace} is on the ${plan.name} plan: ${plan.monthly_conversations} conversations and ${plan.monthly_credits} included credits a month.`,
    );
    return 0;
  }
  let usage;
  if (sub === 'topup') {
    const given = (['conversations', 'credits'] as const).filter((k) => values[k] !== undefined);
    if (given.length !== 1) throw new UsageError('give exactly one of --conversations N or --credits N');
    const kind = given[0];
    const amount = Number(values[kind]);
    if (!Number.isInteger(amount) || amount <= 0 || amount > 1_000_000_000)
      throw new UsageError(`--${kind} must be a positive whole number`);
    usage = await services.billing.topUp(values.workspace, { kind, amount, note: values.note });
  } else {
    usage = await services.billing.usage(values.workspace, 1);
  }
  const { plan, conversations, credits } = usage;
  console.log(
    values.json
      ? JSON.stringify({ workspace_id: values.workspace, ...usage, daily: undefined })
      : `${sub === 'topup' ? 'Recorded. ' : ''}Plan ${plan.name}; conversations this month ${conversations.used} of ${conversations.quota}` +
          ` (${conversations.topped_up} topped up); credits ${credits.balance} (${credits.used_this_period} used this month).`,
  );
  return 0;
}

class UsageError extends Error {}

main(process.argv.slice(2))
  .then((code) => process.exit(code))
  .catch((err) => {
    if (err instanceof UsageError) console.error(`${err.message}\n\n${HELP}`);
    else if (err instanceof ConfigError || err instanceof ApiError) console.error(err.message);
    else if (isUnavailableError(err)) {
      console.error(
        `agentctl: cannot reach the database at DATABASE_URL (from ${databaseUrlSource}): ${(err as Error).message}. Is the platform running (npm start)?`,
      );
    } else if ((err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
      console.error(`${(err as Error).message}\n\n${HELP}`);
    else console.error(`agentctl: ${err instanceof Error ? err.message : err}`);
    process.exit(err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1);
  });
