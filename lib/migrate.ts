import path from 'node:path';

export const MIGRATIONS_DIR = path.join(__dirname, '..', 'migrations');

/**
 * Applies pending SQL migrations in order with node-pg-migrate; applied ones are recorded in the `pgmigrations`
 * table and a lock keeps two processes from migrating at once.
 */
export async function migrate(databaseUrl: string, log: (msg: string) => void = () => undefined): Promise<string[]> {
  // node-pg-migrate is an ES module; a dynamic import keeps this file CommonJS.
  const { runner } = await import('node-pg-migrate');
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: Infinity,
    checkOrder: true,
    singleTransaction: true,
    log,
    logger: { debug: () => undefined, info: log, warn: log, error: log },
  } as Parameters<typeof runner>[0]);
  return applied.map((m: { name: string }) => m.name);
}
