import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

/**
 * The baseline every benchmark prints beside its figures, measured in the same run: a bare Koa route doing one
 * Postgres query over a pool, on the same machine and database. It is the floor for an HTTP endpoint here.
 */
export async function startBaseline(databaseUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 20 });
  const app = new Koa();
  app.use(async (ctx) => {
    const res = await pool.query('SELECT $1::text AS session_id, now() AS at', [ctx.query.session_id ?? 'x']);
    ctx.body = { messages: [], status: 'bot', row: res.rows[0] };
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await new Promise((r) => server.close(r));
      await pool.end();
    },
  };
}
