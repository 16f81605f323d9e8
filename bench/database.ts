import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '../lib/migrate';
import { freePort } from '../stack/processes';
import { startEmbeddedPostgres } from '../stack/postgres';

/**
 * The database a store benchmark writes to: `url` as given (DATABASE_URL), or, without one, an embedded Postgres of
 * its own in a temporary folder, migrated, which `stop` removes.
 */
export async function benchDatabase(
  prefix: string,
  url?: string,
): Promise<{ url: string; embedded: boolean; stop(): Promise<void> }> {
  if (url) return { url, embedded: false, stop: async () => undefined };
  const dataDir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const pg = await startEmbeddedPostgres({ dataDir, port: await freePort(), database: 'bench', quiet: true });
  await migrate(pg.url);
  return {
    url: pg.url,
    embedded: true,
    async stop() {
      await pg.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
