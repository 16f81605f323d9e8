import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../lib/config';
import { resendUnprocessedUpdate, temporalConnectionOptions, workflowUiUrl } from '../../lib/temporal';

const base = { DATABASE_URL: 'postgres://u:p@localhost:5432/db', SECRET_ENCRYPTION_KEY: 'ab'.repeat(32) };

/**
 * One connection factory for every process (API, worker, agentctl): TLS with the mTLS certificate pair and the API
 * key reach each of them. The worker once built its connection itself and dropped the pair.
 */
describe('Temporal connection options', () => {
  it('plain: the address and nothing else', () => {
    const options = temporalConnectionOptions(parseConfig({ ...base, TEMPORAL_ADDRESS: 'temporal.internal:7233' }));
    expect(options).toEqual({ address: 'temporal.internal:7233', tls: undefined });
  });

  it('TLS with the mTLS pair read from the configured files, and the API key', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-tls-'));
    writeFileSync(path.join(dir, 'client.pem'), 'CERTIFICATE');
    writeFileSync(path.join(dir, 'client.key'), 'PRIVATE KEY');
    const options = temporalConnectionOptions(
      parseConfig({
        ...base,
        TEMPORAL_ADDRESS: 'ns.tmprl.cloud:7233',
        TEMPORAL_TLS: 'true',
        TEMPORAL_TLS_CERT_PATH: path.join(dir, 'client.pem'),
        TEMPORAL_TLS_KEY_PATH: path.join(dir, 'client.key'),
        TEMPORAL_API_KEY: 'temporal-api-key',
      }),
    );
    expect(options.address).toBe('ns.tmprl.cloud:7233');
    expect(options.apiKey).toBe('temporal-api-key');
    expect(options.tls?.clientCertPair?.crt.toString()).toBe('CERTIFICATE');
    expect(options.tls?.clientCertPair?.key.toString()).toBe('PRIVATE KEY');
  });

  it('TLS without a pair is server-verified TLS only', () => {
    const options = temporalConnectionOptions(parseConfig({ ...base, TEMPORAL_TLS: 'true' }));
    expect(options.tls).toEqual({ clientCertPair: undefined });
  });

  it('is what the worker, the API and agentctl connect with', () => {
    const source = (file: string) => readFileSync(path.join(__dirname, '..', '..', file), 'utf8');
    expect(source('worker/main.ts')).toMatch(/NativeConnection\.connect\(temporalConnectionOptions\(config\)\)/);
    expect(source('lib/temporal.ts')).toMatch(/const options = \{ \.\.\.temporalConnectionOptions\(config\)/);
    for (const entry of ['api/server.ts', 'cli/agentctl.ts', 'worker/main.ts'])
      expect(source(entry)).toMatch(/createTemporal\(config/);
  });
});

describe('run links to the Temporal UI', () => {
  it('point at TEMPORAL_UI_URL; without it there is none (no link to an address where no UI runs)', () => {
    const withUi = parseConfig({ ...base, TEMPORAL_UI_URL: 'https://temporal-ui.internal/' });
    expect(workflowUiUrl({ uiUrl: withUi.TEMPORAL_UI_URL, namespace: 'prod' }, 'run/run_1')).toBe(
      'https://temporal-ui.internal/namespaces/prod/workflows/run%2Frun_1',
    );
    for (const env of [base, { ...base, TEMPORAL_UI_URL: '' }]) {
      const config = parseConfig(env);
      expect(config.TEMPORAL_UI_URL).toBeUndefined();
      expect(workflowUiUrl({ uiUrl: config.TEMPORAL_UI_URL, namespace: 'default' }, 'run/run_1')).toBeNull();
    }
  });
});

describe('resendUnprocessedUpdate', () => {
  const unprocessed = () =>
    Object.assign(new Error('Update failed'), {
      cause: new Error(
        "Workflow Update is rejected because it wasn't processed by worker. Probably, Workflow Update is not supported by the worker.",
      ),
    });

  it('sends again an update the server dropped unseen, and gives back its result', async () => {
    let calls = 0;
    const result = await resendUnprocessedUpdate(async () => {
      calls++;
      if (calls < 3) throw unprocessed();
      return 'answered';
    });
    expect([result, calls]).toEqual(['answered', 3]);
  });

  it('does not resend any other failure, and stops after its attempts', async () => {
    let calls = 0;
    await expect(
      resendUnprocessedUpdate(async () => {
        calls++;
        throw new Error('handoff_disabled');
      }),
    ).rejects.toThrow('handoff_disabled');
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      resendUnprocessedUpdate(async () => {
        calls++;
        throw unprocessed();
      }, 2),
    ).rejects.toThrow('Update failed');
    expect(calls).toBe(2);
  });
});
