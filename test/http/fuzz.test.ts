import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { http, newBot, ownerSession } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * Schemathesis against the running stack's `/v1/openapi.json`, for every public operation with valid keys: no 5xx for
 * any generated input, every response (errors included) conforms to its declared status, schema, content type and
 * headers — `{error, code}` with `X-Request-Id` — and schema-valid input is accepted. Operations are fuzzed in groups
 * that each get a bot of their own and a request rate under the group's limit (contract, Limits), so the budget of one
 * does not starve another; the groups run at once (about two minutes in all).
 *
 * Strings are generated as UTF-8 without NUL: the API refuses NUL and unpaired surrogates with 400 (docs/decisions/050-text-postgres-cannot-store.md).
 * The reads group does not check that every schema-valid request is accepted: a cursor is valid only when the API
 * made it, which no schema can say.
 */
const ST = path.join(__dirname, '..', '..', '.tools', 'venv', 'bin', 'st');

interface Group {
  name: string;
  operations: string[];
  /** Requests per minute the group stays under (its rate group's limit, with a margin). */
  rate?: string;
  excludeChecks?: string[];
}

const GROUPS: Group[] = [
  { name: 'chat', operations: ['chat'], rate: '55/m' },
  { name: 'stream', operations: ['chatStream'], rate: '55/m' },
  { name: 'handoff', operations: ['handoff'], rate: '55/m' },
  { name: 'knowledge writes', operations: ['writeKnowledge', 'deleteKnowledge'], rate: '55/m' },
  { name: 'erase', operations: ['eraseVisitor'], rate: '55/m' },
  {
    name: 'knowledge search',
    operations: ['searchKnowledge'],
    rate: '230/m',
    // `/v1/api/knowledge/search` is also `/v1/api/knowledge/{id}` of a source an integrator named `search` (its GET
    // and DELETE must reach it, as for `files`): the router's `Allow` rightly lists them beside POST.
    excludeChecks: ['allow_header_conformance'],
  },
  {
    name: 'reads and operator',
    operations: [
      'pollMessages',
      'listKnowledge',
      'getKnowledge',
      'visitorTyping',
      'listThreads',
      'threadTranscript',
      'operatorReply',
      'operatorTyping',
      'resolveThread',
    ],
    rate: '230/m',
    excludeChecks: ['positive_data_acceptance'],
  },
  {
    name: 'admin, hooks and service',
    operations: ['scrapeSite', 'adminWriteSource', 'triggerHook', 'healthz', 'readyz', 'openapi', 'getMedia'],
  },
];

/**
 * Real ids for path parameters some of the time, so generated requests reach more than the 404 branch (a hook's
 * signature still fails: it would need the body the fuzzer chooses).
 */
async function fixtures(): Promise<{ sid: string; tid: string; sourceId: string; configDir: string }> {
  const bot = await newBot();
  const sid = randomUUID();
  await http('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id: sid, message: 'hello' } });
  await http('/v1/api/handoff', { key: bot.keys.secret_key, body: { session_id: sid } });
  const sourceId = 'fuzz-source';
  await http('/v1/api/knowledge', { key: bot.keys.secret_key, body: { source_id: sourceId, text: 'A fact.' } });
  const trigger = await http(`/v1/dashboard/bots/${bot.bot_id}/triggers`, {
    body: { kind: 'webhook', task: 'fuzzed', mode: 'ack' },
    headers: await ownerSession(bot),
  });
  const configDir = mkdtempSync(path.join(os.tmpdir(), 'fuzz-'));
  writeFileSync(
    path.join(configDir, 'schemathesis.toml'),
    `[dictionaries.sessions]
values = [${JSON.stringify(sid)}]
[dictionaries.triggers]
values = [${JSON.stringify(trigger.body.id)}]
[dictionaries.sources]
values = [${JSON.stringify(sourceId)}]
[parameters]
"path.sid" = { dictionary = "sessions", probability = 0.5 }
"path.tid" = { dictionary = "triggers", probability = 0.5 }
"path.id" = { dictionary = "sources", probability = 0.5 }
"body.session_id" = { dictionary = "sessions", probability = 0.3 }
`,
  );
  return { sid, tid: trigger.body.id, sourceId, configDir };
}

function runGroup(group: Group, key: string, configDir: string): Promise<{ code: number; output: string }> {
  const args = [
    '--config-file',
    path.join(configDir, 'schemathesis.toml'),
    '--no-color',
    'run',
    `${stackInfo().apiUrl}/v1/openapi.json`,
    '--header',
    `X-Bot-Key: ${key}`,
    '--checks',
    'all',
    ...(group.excludeChecks ? ['--exclude-checks', group.excludeChecks.join(',')] : []),
    '--generation-allow-x00',
    'false',
    '--generation-codec',
    'utf-8',
    '--max-examples',
    '40',
    '--workers',
    '1',
    '--output-truncate',
    'true',
    // Nothing left behind in the checkout: no example database between runs.
    '--generation-database',
    'none',
    ...(group.rate ? ['--rate-limit', group.rate] : []),
    ...group.operations.flatMap((op) => ['--include-operation-id', op]),
  ];
  return new Promise((resolve) => {
    execFile(ST, args, { cwd: configDir, maxBuffer: 32 * 1024 * 1024, timeout: 6 * 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}\n${stderr}` }),
    );
  });
}

describe('schemathesis over the public contract', () => {
  it(
    'finds no 5xx, no undeclared status, schema or header, and accepts what the schema allows',
    async () => {
      expect(existsSync(ST)).toBe(true); // installed by `npm test` (scripts/setup.sh --test)
      const { configDir } = await fixtures();
      const keys = await Promise.all(GROUPS.map(async () => (await newBot()).keys.secret_key));
      const results = await Promise.all(GROUPS.map((g, i) => runGroup(g, keys[i], configDir)));
      const failed = results
        .map((r, i) => ({ ...r, group: GROUPS[i].name }))
        .filter((r) => r.code !== 0)
        .map((r) => `--- ${r.group} (exit ${r.code})\n${r.output.slice(-6000)}`);
      expect(failed.join('\n')).toBe('');
      for (const r of results) expect(r.output).toMatch(/No issues found|passed/);
    },
    8 * 60_000,
  );
});
