import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { type InProcessApi, startInProcessApi } from '../support/in-process-api';
import { agentctl, http } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/** Temporal answers but knows no namespace of this name: every chat would fail, so nothing may say ready. */
const MISSING = 'no-such-namespace';

describe('a Temporal namespace that does not exist', () => {
  let api: InProcessApi;

  beforeAll(async () => {
    api = await startInProcessApi({ TEMPORAL_NAMESPACE: MISSING });
  });

  afterAll(async () => api?.close());

  it('/readyz is 503 and says the namespace is missing; with the real namespace it is ready', async () => {
    const res = await http('/readyz', { baseUrl: api.url });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      code: 'service_unavailable',
      checks: { postgres: 'ok', temporal: 'namespace_missing' },
    });
    expect(res.body.error).toContain('namespace');
    expect((await http('/readyz')).body).toEqual({ status: 'ready', checks: { postgres: 'ok', temporal: 'ok' } });
  });

  it('agentctl status fails and names the command that creates it', async () => {
    const res = await agentctl(['status'], {
      DATABASE_URL: stackInfo().databaseUrl,
      SECRET_ENCRYPTION_KEY: stackInfo().secretEncryptionKey,
      TEMPORAL_ADDRESS: stackInfo().env.TEMPORAL_ADDRESS,
      TEMPORAL_NAMESPACE: MISSING,
    });
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/database\s+ok/);
    expect(res.stdout).toContain(`temporal operator namespace create --namespace ${MISSING}`);
  });

  it('the worker exits with one line saying how to create it, not a stack trace', async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', path.join(__dirname, '..', '..', 'worker', 'main.ts')],
        { env: { ...stackInfo().env, TEMPORAL_NAMESPACE: MISSING, LOG_LEVEL: 'silent' }, timeout: 60_000 },
        (_err, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    expect(result.code).toBe(78);
    const lines = result.stderr.split('\n').filter((l) => l.trim() && !l.includes('ExperimentalWarning'));
    expect(lines).toEqual([
      `worker: Temporal namespace "${MISSING}" does not exist; create it with ` +
        `\`temporal operator namespace create --namespace ${MISSING}\` (or set TEMPORAL_NAMESPACE)`,
    ]);
  }, 90_000);
});
