import { describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stackInfo } from '../support/stack-info';

/**
 * The served contract is what integrators' tools read: code generators, mock servers and gateways refuse or
 * misread a document with errors. Redocly's recommended rules (redocly.yaml) lint the document the running API serves,
 * so every route added later is linted too, in every `npm test` and CI run.
 */
const ROOT = path.join(__dirname, '..', '..');
jest.setTimeout(120_000);

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

function redoclyLint(file: string): Promise<LintProblem[]> {
  return new Promise((resolve, reject) => {
    execFile(
      path.join(ROOT, 'node_modules', '.bin', 'redocly'),
      ['lint', file, '--format', 'json', '--config', path.join(ROOT, 'redocly.yaml')],
      {
        cwd: ROOT,
        maxBuffer: 20 * 1024 * 1024,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
      (err, stdout, stderr) => {
        try {
          resolve((JSON.parse(stdout) as { problems: LintProblem[] }).problems);
        } catch {
          reject(err ?? new Error(`redocly printed no JSON: ${stdout.slice(0, 500)} ${stderr.slice(0, 500)}`));
        }
      },
    );
  });
}

type Operation = { parameters?: unknown[]; requestBody?: unknown; security?: unknown[] };
type OpenApi = { paths: Record<string, Record<string, Operation>> };

/**
 * The warnings redocly.yaml cannot ignore by operation, each accepted for a reason:
 * - `operation-4xx-response` on an operation that takes no input at all (no parameter, no body, no credential): the
 *   liveness and readiness probes, the contract and its reference, the widget's script and the dashboard's fixed pages.
 *   No request to them can be a client's error, so a 4xx response would describe nothing the server does. An operation
 *   with any input is still held to the rule.
 */
function acceptedWarning(document: OpenApi, problem: LintProblem): boolean {
  if (problem.severity !== 'warn' || problem.ruleId !== 'operation-4xx-response') return false;
  const match = /^#\/paths\/([^/]+)\/(\w+)\/responses$/.exec(problem.location[0]?.pointer ?? '');
  if (!match) return false;
  const operation = document.paths[decodeURIComponent(match[1]).replace(/~1/g, '/').replace(/~0/g, '~')]?.[match[2]];
  return Boolean(operation) && !operation.parameters?.length && !operation.requestBody && !operation.security?.length;
}

describe('GET /v1/openapi.json under Redocly’s recommended rules', () => {
  it('has no error and no warning that is not ignored for a written reason', async () => {
    const res = await fetch(`${stackInfo().apiUrl}/v1/openapi.json`);
    expect(res.status).toBe(200);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
    try {
      const file = path.join(dir, 'openapi.json');
      writeFileSync(file, await res.text());
      const document = JSON.parse(await readFile(file, 'utf8')) as OpenApi;
      const problems = (await redoclyLint(file)).filter((p) => !acceptedWarning(document, p));
      const shown = problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
      expect(shown).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
