import pg from 'pg';

export type Db = pg.Pool;
export type DbClient = pg.PoolClient;
export type Queryable = Pick<pg.Pool, 'query'>;

// BIGINT columns (Unix ms timestamps, counters) come back as JS numbers; every value we store fits in 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export function createDb(url: string, opts: { max?: number; applicationName?: string } = {}): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    // Fail fast when Postgres is down, so callers answer 503 instead of hanging.
    connectionTimeoutMillis: 3_000,
    idleTimeoutMillis: 30_000,
    application_name: opts.applicationName ?? 'agent-platform',
  });
  // An idle client losing its connection (Postgres restarted) must not crash the process: the pool drops it
  // and the next query opens a fresh connection.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * A statement of a hot path, sent as a named (prepared) statement: each connection has Postgres parse and plan it
 * once, then only binds and runs it. For the multi-part statements of polling, the key check and the chat turn,
 * planning cost several times more than running (docs/decisions/007-prepared-statements-and-poolers.md). Only for fixed SQL text whose
 * plan does not depend on the values (not, say, full-text search, where selectivity varies). Behind a pooler such
 * as PgBouncer in transaction mode, it needs prepared-statement support (PgBouncer 1.21+).
 */
export function preparedStatement(name: string, text: string): (values: unknown[]) => pg.QueryConfig {
  return (values) => ({ name, text, values });
}

export async function withTransaction<T>(db: Db, fn: (client: DbClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
