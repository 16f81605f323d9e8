import Koa from 'koa';
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { freePort, startProcess, waitFor } from '../stack/processes';

/**
 * The baseline every benchmark prints beside its figures, measured in the same run: a bare Koa route doing one
 * Postgres query over a pool, on the same machine and database. It is the floor for an HTTP endpoint here. It runs
 * in a process of its own, as the API does, so it does not share an event loop with the load generator.
 */
export async function startBaseline(
  databaseUrl: string,
  kind: 'koa' | 'node:http' = 'koa',
): Promise<{ url: string; close(): Promise<void> }> {
  const port = await freePort();
  const proc = startProcess('baseline', process.execPath, ['--import', 'tsx', __filename], {
    env: { ...process.env, BASELINE_DATABASE_URL: databaseUrl, BASELINE_PORT: String(port), BASELINE_KIND: kind },
    quiet: true,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor('baseline', async () => (await fetch(`${url}/?session_id=ready`)).ok, 30_000, proc.child);
  return { url, close: () => proc.stop() };
}

/** `node:http`: no framework at all, the same query: the least an HTTP endpoint that reads Postgres costs here. */
function serveBare(databaseUrl: string, port: number): void {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 20 });
  const server = http.createServer((req, res) => {
    const sessionId = new URL(req.url ?? '/', 'http://x').searchParams.get('session_id') ?? 'x';
    pool.query('SELECT $1::text AS session_id, now() AS at', [sessionId]).then(
      (r) => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ messages: [], status: 'bot', row: r.rows[0] }));
      },
      () => {
        res.statusCode = 503;
        res.end();
      },
    );
  });
  server.listen(port, '127.0.0.1');
  process.once('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
}

function serve(databaseUrl: string, port: number): void {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 20 });
  const app = new Koa();
  app.use(async (ctx) => {
    const res = await pool.query('SELECT $1::text AS session_id, now() AS at', [ctx.query.session_id ?? 'x']);
    ctx.body = { messages: [], status: 'bot', row: res.rows[0] };
  });
  const server = app.listen(port, '127.0.0.1');
  process.once('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
}

if (require.main === module || process.argv[1] === path.resolve(__filename)) {
  (process.env.BASELINE_KIND === 'node:http' ? serveBare : serve)(
    process.env.BASELINE_DATABASE_URL!,
    Number(process.env.BASELINE_PORT),
  );
}
