import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The workflow sandbox fence (STYLE.md 4): workflow files import only @temporalio/workflow, each other, and *types*
 * from activities. A Node built-in, a client library or an activity value would break determinism or the bundle.
 */
const DIR = path.join(__dirname, '..', '..', 'workflows');
const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));

function imports(source: string): { spec: string; typeOnly: boolean }[] {
  return [...source.matchAll(/^import\s+(type\s+)?[^'"]*?from\s+'([^']+)';/gms)].map((m) => ({
    spec: m[2],
    typeOnly: Boolean(m[1]),
  }));
}

describe('workflow files', () => {
  it('exist', () => expect(files.length).toBeGreaterThanOrEqual(7));

  it.each(files)('%s imports nothing the workflow sandbox must not see', (file) => {
    const found = imports(readFileSync(path.join(DIR, file), 'utf8'));
    for (const { spec, typeOnly } of found) {
      const allowed =
        spec === '@temporalio/workflow' ||
        (spec.startsWith('./') && !spec.includes('..')) ||
        (typeOnly && spec.startsWith('../activities/'));
      expect([file, spec, allowed]).toEqual([file, spec, true]);
    }
  });

  it('the fence notices a forbidden import', () => {
    const bad = imports(
      "import { Pool } from 'pg';\nimport { createHash } from 'node:crypto';\nimport { x } from '../activities/agent-run';",
    );
    expect(bad.map((i) => i.spec)).toEqual(['pg', 'node:crypto', '../activities/agent-run']);
    expect(bad.every((i) => !i.typeOnly)).toBe(true);
  });
});

describe('activity files', () => {
  const ACT = path.join(__dirname, '..', '..', 'activities');
  // STYLE.md 3: activities get their clients injected; only worker/ builds real ones.
  it.each(readdirSync(ACT).filter((f) => f.endsWith('.ts')))('%s builds no client and reads no environment', (file) => {
    const source = readFileSync(path.join(ACT, file), 'utf8');
    expect(source).not.toMatch(/process\.env|new Pool\(|new OpenAI\(|new pg\.Pool|createDb\(/);
  });
});
