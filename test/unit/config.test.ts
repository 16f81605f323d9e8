import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { ConfigError, dashboardAddress, listenUrlOf, parseConfig, publicAddress, rateLimitsOf } from '../../lib/config';
import { LIMITS } from '../../lib/limits';

const valid = { DATABASE_URL: 'postgres://u:p@localhost:5432/db', SECRET_ENCRYPTION_KEY: 'ab'.repeat(32) };

describe('configuration', () => {
  it('applies defaults to a minimal environment', () => {
    const c = parseConfig(valid);
    expect(c).toMatchObject({
      PORT: 8080,
      TEMPORAL_ADDRESS: 'localhost:7233',
      SSRF_ALLOW_LOOPBACK: false,
      LLM_MODEL: 'gpt-4o-mini',
    });
  });

  it('links come from configuration: production needs PUBLIC_BASE_URL; development uses localhost:PORT', () => {
    expect(() => parseConfig({ ...valid, NODE_ENV: 'production' })).toThrow(/PUBLIC_BASE_URL: is required/);
    const prod = parseConfig({ ...valid, NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com/' });
    expect(publicAddress(prod)).toBe('https://api.example.com');
    expect(dashboardAddress(prod)).toBe('https://api.example.com');
    expect(dashboardAddress({ ...prod, DASHBOARD_URL: 'https://app.example.com/' })).toBe('https://app.example.com');
    const dev = parseConfig({ ...valid, PORT: '9090' });
    expect(publicAddress(dev)).toBe('http://localhost:9090');
  });

  it("the API's stream listener uses DATABASE_LISTEN_URL when set (a pooler in DATABASE_URL), else DATABASE_URL", () => {
    expect(listenUrlOf(parseConfig(valid))).toBe(valid.DATABASE_URL);
    expect(listenUrlOf(parseConfig({ ...valid, DATABASE_LISTEN_URL: '' }))).toBe(valid.DATABASE_URL);
    const pooled = { ...valid, DATABASE_URL: 'postgres://u:p@pgbouncer:6432/db' };
    const direct = 'postgresql://u:p@db-primary:5432/db';
    const config = parseConfig({ ...pooled, DATABASE_LISTEN_URL: direct });
    expect([config.DATABASE_URL, listenUrlOf(config)]).toEqual(['postgres://u:p@pgbouncer:6432/db', direct]);
    expect(() => parseConfig({ ...valid, DATABASE_LISTEN_URL: 'db-primary:5432' })).toThrow(
      /DATABASE_LISTEN_URL: must be a postgres:\/\/ URL/,
    );
  });

  it("rate limits are the contract's unless RATE_LIMIT_* sets a group's; a limit that is not a whole number of at least 1 is refused", () => {
    expect(rateLimitsOf(parseConfig(valid))).toEqual(LIMITS.rateGroups);
    expect(
      rateLimitsOf(parseConfig({ ...valid, RATE_LIMIT_DIALOGUE: '6000', RATE_LIMIT_WIDGET_READS: '9000' })),
    ).toEqual({ ...LIMITS.rateGroups, dialogue: 6000, widgetReads: 9000 });
    for (const bad of ['0', '-1', '1.5', 'many']) {
      expect(() => parseConfig({ ...valid, RATE_LIMIT_READS: bad })).toThrow(/RATE_LIMIT_READS/);
    }
  });

  it('names every variable that is wrong', () => {
    try {
      parseConfig({ ...valid, PORT: 'eighty', DATABASE_URL: 'mysql://x', SSRF_ALLOW_LOOPBACK: 'maybe' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      for (const name of ['PORT', 'DATABASE_URL', 'SSRF_ALLOW_LOOPBACK']) expect(message).toContain(name);
    }
  });

  it('refuses Temporal TLS settings that would silently do less: half a certificate pair, TLS files without TLS', () => {
    const problems = (env: Record<string, string>) => {
      try {
        parseConfig({ ...valid, ...env });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    const cert = { TEMPORAL_TLS_CERT_PATH: '/etc/temporal/client.pem' };
    const key = { TEMPORAL_TLS_KEY_PATH: '/etc/temporal/client.key' };
    // A certificate without its key (or the key alone) would connect without a client certificate.
    expect(problems({ TEMPORAL_TLS: 'true', ...cert })).toEqual([
      expect.stringMatching(/^TEMPORAL_TLS_KEY_PATH: is required with TEMPORAL_TLS_CERT_PATH/),
    ]);
    expect(problems({ TEMPORAL_TLS: 'true', ...key })).toEqual([
      expect.stringMatching(/^TEMPORAL_TLS_CERT_PATH: is required with TEMPORAL_TLS_KEY_PATH/),
    ]);
    // TLS settings with TEMPORAL_TLS false (or unset) would connect in plain text: each is named.
    expect(problems({ TEMPORAL_TLS: 'false', ...cert, ...key })).toEqual([
      expect.stringMatching(/^TEMPORAL_TLS_CERT_PATH: is set but TEMPORAL_TLS is not true.*plain text/),
      expect.stringMatching(/^TEMPORAL_TLS_KEY_PATH: is set but TEMPORAL_TLS is not true/),
    ]);
    for (const [name, value] of [
      ['TEMPORAL_TLS_CA_PATH', '/etc/temporal/ca.pem'],
      ['TEMPORAL_TLS_SERVER_NAME', 'temporal.internal'],
    ]) {
      expect(problems({ [name]: value })).toEqual([
        expect.stringMatching(new RegExp(`^${name}: is set but TEMPORAL_TLS is not true`)),
      ]);
    }
    expect(problems({ TEMPORAL_TLS: 'false', ...cert })).toHaveLength(2);
    // What does what it says is accepted.
    expect(problems({ TEMPORAL_TLS: 'true', ...cert, ...key, TEMPORAL_TLS_CA_PATH: '/ca.pem' })).toEqual([]);
    expect(problems({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' })).toEqual([]);
    expect(problems({ TEMPORAL_TLS: 'false' })).toEqual([]);
  });

  it('the worker and the API refuse to start on such TLS settings, saying what is wrong', async () => {
    const root = path.join(__dirname, '..', '..');
    const start = (entry: string, env: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', path.join(root, entry)],
          { cwd: root, env: { PATH: process.env.PATH, ...valid, ...env }, timeout: 30_000 },
          (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
        );
      });
    const worker = await start('worker/main.ts', { TEMPORAL_TLS: 'true', TEMPORAL_TLS_CERT_PATH: '/x/client.pem' });
    expect(worker.code).toBe(78);
    expect(worker.stderr).toMatch(/Invalid configuration:\n {2}- TEMPORAL_TLS_KEY_PATH: is required/);
    const api = await start('api/server.ts', { TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA_PATH: '/x/ca.pem' });
    expect(api.code).toBe(78);
    expect(api.stderr).toContain('TEMPORAL_TLS_CA_PATH: is set but TEMPORAL_TLS is not true');
  });

  it('a bad value stops the process with a message naming the variable', async () => {
    const root = path.join(__dirname, '..', '..');
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', path.join(root, 'api', 'server.ts')],
        { cwd: root, env: { PATH: process.env.PATH, ...valid, PORT: '99999' }, timeout: 30_000 },
        (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
      );
    });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('PORT');
  });
});
