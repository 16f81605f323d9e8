import type { ActivityDeps } from '../activities';
import type { Config } from '../lib/config';
import type { Db } from '../lib/db';
import { createSafeFetch } from '../lib/http/safe-fetch';
import { retrievePassages } from '../lib/knowledge/retrieve';
import { createOpenAiLlm } from '../lib/llm';
import { createMailer } from '../lib/mailer';
import type { Temporal } from '../lib/temporal';
import { createSecretBox } from '../lib/secret-box';
import { createDeltaPublisher } from '../lib/streams';

/** Passages given to the model per turn. */
const PASSAGES_PER_TURN = 5;

/** The one place real clients are built for activities (STYLE.md: activities get their deps injected). */
export function buildActivityDeps(config: Config, db: Db, temporal: Temporal): ActivityDeps {
  const llm = config.OPENAI_API_KEY
    ? createOpenAiLlm({ apiKey: config.OPENAI_API_KEY, baseURL: config.OPENAI_BASE_URL, model: config.LLM_MODEL })
    : null;
  return {
    db,
    llm,
    defaultModel: config.LLM_MODEL,
    retrieve: (botId, query) => retrievePassages(db, botId, query, { limit: PASSAGES_PER_TURN }),
    deltas: createDeltaPublisher(db),
    fetch: createSafeFetch({ allowLoopback: config.SSRF_ALLOW_LOOPBACK, userAgent: 'AgentPlatform/1.0 (+webhooks; crawler)' }),
    secrets: createSecretBox(config.SECRET_ENCRYPTION_KEY),
    temporalClient: temporal.client,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    mailer: createMailer(config.SMTP_URL, config.SMTP_FROM),
  };
}
