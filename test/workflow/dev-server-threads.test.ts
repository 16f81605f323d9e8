import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { freePort } from '../../stack/processes';
import { type TemporalDevServer, devServerCpus, startTemporalDev } from '../../stack/temporal-dev';

/** The environment a running process was started with. */
function environmentOf(pid: number): Record<string, string> {
  const raw = readFileSync(`/proc/${pid}/environ`, 'utf8');
  return Object.fromEntries(
    raw
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

describe("the dev server's Go threads (stack/temporal-dev.ts)", () => {
  let server: TemporalDevServer | undefined;
  const saved = process.env.TEMPORAL_DEV_SERVER_CPUS;

  afterEach(async () => {
    await server?.stop();
    server = undefined;
    if (saved === undefined) delete process.env.TEMPORAL_DEV_SERVER_CPUS;
    else process.env.TEMPORAL_DEV_SERVER_CPUS = saved;
  });

  it('are half the cores, at least one, unless TEMPORAL_DEV_SERVER_CPUS says otherwise', () => {
    expect(devServerCpus({}, 1)).toBe(1);
    expect(devServerCpus({}, 2)).toBe(1);
    expect(devServerCpus({}, 3)).toBe(1);
    expect(devServerCpus({}, 8)).toBe(4);
    expect(devServerCpus({ TEMPORAL_DEV_SERVER_CPUS: '' }, 8)).toBe(4);
    expect(devServerCpus({ TEMPORAL_DEV_SERVER_CPUS: '3' }, 2)).toBe(3);
    for (const wrong of ['0', '-1', '1.5', 'two']) {
      expect(() => devServerCpus({ TEMPORAL_DEV_SERVER_CPUS: wrong }, 2)).toThrow(
        `TEMPORAL_DEV_SERVER_CPUS must be a whole number of at least 1, not "${wrong}"`,
      );
    }
  });

  it('reach the server as its GOMAXPROCS', async () => {
    delete process.env.TEMPORAL_DEV_SERVER_CPUS;
    server = await startTemporalDev({ port: await freePort(), headless: true, quiet: true });
    expect(environmentOf(server.pid).GOMAXPROCS).toBe(String(devServerCpus()));
  }, 120_000);

  it('take the setting when one is given', async () => {
    process.env.TEMPORAL_DEV_SERVER_CPUS = '3';
    server = await startTemporalDev({ port: await freePort(), headless: true, quiet: true });
    expect(environmentOf(server.pid).GOMAXPROCS).toBe('3');
  }, 120_000);
});
