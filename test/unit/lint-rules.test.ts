import { describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import path from 'node:path';

/**
 * The layer rules in eslint.config.mjs (`npm run lint`, run by CI) catch what they promise. Each probe breaks a fence
 * on purpose; it is linted from stdin under a path inside the fenced folder (the rules are by path), so no file is
 * ever written into the tree.
 */
const ROOT = path.join(__dirname, '..', '..');

interface LintMessage {
  ruleId: string | null;
  line: number;
  message: string;
}

function lint(filename: string, source: string): Promise<LintMessage[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [
        path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js'),
        '--format',
        'json',
        '--stdin',
        '--stdin-filename',
        filename,
      ],
      { cwd: ROOT, maxBuffer: 10 * 1024 * 1024 },
      (err, stdout) => {
        try {
          const [result] = JSON.parse(stdout) as { messages: LintMessage[] }[];
          const fatal = result.messages.find((m) => m.ruleId === null);
          if (fatal) reject(new Error(`eslint could not lint the probe: ${fatal.message}`));
          else resolve(result.messages);
        } catch {
          reject(err ?? new Error(`eslint printed no JSON: ${stdout.slice(0, 500)}`));
        }
      },
    );
    child.stdin!.end(source);
  });
}

// Each probe is a whole ESLint run with type information (it loads the project's TypeScript program): ~10 s on an idle
// machine, over 60 s once under the full suite's parallel load (a clean run, 2026-11-27). What is tested is which rules
// fire, not how fast.
jest.setTimeout(240_000);

const lines = (messages: LintMessage[]) => [...new Set(messages.map((m) => m.line))].sort((a, b) => a - b);

describe('lint rules (eslint.config.mjs)', () => {
  it('fence workflow files: no Node or client packages, no lib/, no activity values; activity types and siblings pass', async () => {
    const messages = await lint(
      'workflows/zz-lint-probe.ts',
      `import { Pool } from 'pg';
import { createAgentRunActivities } from '../activities/agent-run';
import type { AgentRunActivities } from '../activities/agent-run';
import { LIMITS } from '../lib/limits';
import { proxyActivities } from '@temporalio/workflow';
import { FAILURES } from './failures';
export const probe = [Pool, createAgentRunActivities, LIMITS, proxyActivities, FAILURES] as unknown as AgentRunActivities;
`,
    );
    // 1 pg, 2 an activity value, 4 lib/; the type import (3), the workflow SDK (5) and a sibling (6) pass.
    expect(lines(messages)).toEqual([1, 2, 4]);
    expect(messages.every((m) => m.ruleId === '@typescript-eslint/no-restricted-imports')).toBe(true);
  });

  it('fence workflow contracts: no workflow code, no Node or lib/; the SDK, other contracts and failures pass', async () => {
    const messages = await lint(
      'workflows/contracts/zz-lint-probe.ts',
      `import { conversationWorkflow } from '../conversation';
import { createHash } from 'node:crypto';
import { LIMITS } from '../../lib/limits';
import { defineSignal } from '@temporalio/workflow';
import type { AgentRunInput } from './agent-run';
import type { FailureInfo } from '../failures';
export const probe = [conversationWorkflow, createHash, LIMITS, defineSignal] as unknown as [AgentRunInput, FailureInfo];
`,
    );
    // 1 a workflow, 2 Node, 3 lib/; the SDK (4), a contract (5) and the failure types (6) pass.
    expect(lines(messages)).toEqual([1, 2, 3]);
    expect(messages.every((m) => m.ruleId === '@typescript-eslint/no-restricted-imports')).toBe(true);
  });

  it('keep activities off workflow code, workflow-starting services and the environment', async () => {
    const messages = await lint(
      'activities/zz-lint-probe.ts',
      `import { conversationWorkflow } from '../workflows/conversation';
import { FAILURES } from '../workflows/failures';
import { createScanService } from '../lib/scans/service';
import { notify } from '../lib/notifications/service';
export const probe = [conversationWorkflow, FAILURES, createScanService, notify, process.env.X];
`,
    );
    // 1 a workflow, 3 a service that starts workflows, 5 process.env; failures (2) and notifications (4) pass.
    expect(lines(messages)).toEqual([1, 3, 5]);
  });

  it('keep routes from importing routes and from reaching the database themselves', async () => {
    const messages = await lint(
      'api/routes/zz-lint-probe.ts',
      `import { conversationRoutes } from './conversation';
import type { AppDeps } from '../deps';
export function probe(deps: AppDeps) {
  return [conversationRoutes, deps.db, deps.services];
}
`,
    );
    expect(lines(messages)).toEqual([1, 4]);
    expect(messages.find((m) => m.line === 4)?.message).toContain('deps.services');
  });

  it('keep lib/ below api/', async () => {
    const messages = await lint(
      'lib/zz-lint-probe.ts',
      `import { createApp } from '../api/app';\nexport const probe = createApp;\n`,
    );
    expect(lines(messages)).toEqual([1]);
  });

  it('keep stack/ (dev tooling) out of runtime code: lib/ and the worker may not import it', async () => {
    const source = `import { startPlatform } from '../stack/platform';\nexport const probe = startPlatform;\n`;
    expect(lines(await lint('lib/zz-lint-probe.ts', source))).toEqual([1]);
    expect(lines(await lint('worker/zz-lint-probe.ts', source))).toEqual([1]);
  });
});
