import { type Queryable, preparedStatement } from './db';
import { constantTimeEqual, hashKey } from './keys';

export type PrincipalKind = 'secret' | 'public' | 'builder' | 'access';

export interface Principal {
  kind: PrincipalKind;
  keyId: string;
  botId: string | null;
  workspaceId: string;
  /** A public key's bot: the origins whose pages may use it from a browser (CORS on `/v1/widget/*`). */
  allowedOrigins?: string[];
}

/**
 * A builder key's last use, for the team page's list (docs/decisions/106-builder-key-issuers.md):
 * written at most once a minute per key, so a busy client costs one small write a minute, not one a request.
 */
const TOUCH_BUILDER_KEY = `used AS (UPDATE api_keys a SET last_used_at = now() FROM k
                 WHERE a.id = k.id AND k.kind = 'builder'
                   AND (a.last_used_at IS NULL OR a.last_used_at < now() - interval '1 minute') RETURNING 1)`;

const FIND_KEY = preparedStatement(
  'find-key',
  `WITH k AS (SELECT id, kind, bot_id, workspace_id, key_hash FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL),
         ${TOUCH_BUILDER_KEY}
    SELECT * FROM k`,
);

const FIND_KEY_COUNTING = preparedStatement(
  'find-key-counting',
  `WITH k AS (SELECT id, kind, bot_id, workspace_id, key_hash FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL),
         w AS (INSERT INTO rate_windows (bucket, window_start, count)
               SELECT k.id || '|' || $2 || '|' || $3, date_trunc('minute', now()), $5 FROM k WHERE k.kind = ANY($4)
               ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_windows.count + EXCLUDED.count
               RETURNING count, ceil(extract(epoch FROM (window_start + interval '1 minute' - now())))::int AS reset),
         ${TOUCH_BUILDER_KEY}
    SELECT k.*, w.count, w.reset FROM k LEFT JOIN w ON true`,
);

/** A public key is the bot's own column (not secret: it is in every visitor's page); its window is counted alike. */
const FIND_PUBLIC_KEY_COUNTING = preparedStatement(
  'find-public-key-counting',
  `WITH b AS (SELECT id, workspace_id, public_key, allowed_origins FROM bots WHERE public_key = $1),
         w AS (INSERT INTO rate_windows (bucket, window_start, count)
               SELECT 'public:' || b.id || '|' || $2 || '|' || $3, date_trunc('minute', now()), $5 FROM b WHERE 'public' = ANY($4)
               ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_windows.count + EXCLUDED.count
               RETURNING count, ceil(extract(epoch FROM (window_start + interval '1 minute' - now())))::int AS reset)
    SELECT b.*, w.count, w.reset FROM b LEFT JOIN w ON true`,
);

/** A secret, builder or access key's row. */
interface KeyRow {
  id: string;
  kind: PrincipalKind;
  bot_id: string | null;
  workspace_id: string;
  key_hash: Buffer;
}

/** A bot's row, as its public key finds it. */
interface PublicKeyRow {
  id: string;
  workspace_id: string;
  public_key: string;
  allowed_origins: string[];
}

/** The request's place in its rate window; null when the key is not of a kind the route accepts (nothing counted). */
interface WindowColumns {
  count: number | null;
  reset: number | null;
}

interface RateOptions {
  ip: string;
  group: string;
  accept: PrincipalKind[];
  increment?: number;
}

interface Counted {
  principal: Principal;
  window?: { count: number; reset: number };
}

const keyPrincipal = (row: KeyRow): Principal => ({
  kind: row.kind,
  keyId: row.id,
  botId: row.bot_id,
  workspaceId: row.workspace_id,
});

const publicKeyPrincipal = (bot: PublicKeyRow): Principal => ({
  kind: 'public',
  keyId: `public:${bot.id}`,
  botId: bot.id,
  workspaceId: bot.workspace_id,
  allowedOrigins: bot.allowed_origins,
});

const counted = (principal: Principal, row: WindowColumns): Counted => ({
  principal,
  ...(row.count !== null ? { window: { count: row.count, reset: row.reset ?? 60 } } : {}),
});

async function findPublicKeyCounting(db: Queryable, key: string, rate: RateOptions): Promise<Counted | null> {
  const res = await db.query<PublicKeyRow & WindowColumns>(
    FIND_PUBLIC_KEY_COUNTING([key, rate.ip, rate.group, rate.accept, rate.increment ?? 1]),
  );
  const bot = res.rows[0];
  if (!bot || !constantTimeEqual(bot.public_key, key)) return null;
  return counted(publicKeyPrincipal(bot), bot);
}

/**
 * Finds who a presented key belongs to, or null when it is unknown or revoked. The lookup is by the key's hash
 * (an indexed equality), and the stored hash is compared again in constant time. Database errors propagate: the
 * caller answers 503 `service_unavailable`, since the key could not be checked (contract, Authentication rule 3).
 */
export async function findPrincipal(db: Queryable, key: string): Promise<Principal | null> {
  if (key.startsWith('pk_')) {
    const res = await db.query<PublicKeyRow>(
      `SELECT id, workspace_id, public_key, allowed_origins FROM bots WHERE public_key = $1`,
      [key],
    );
    const bot = res.rows[0];
    if (!bot || !constantTimeEqual(bot.public_key, key)) return null;
    return publicKeyPrincipal(bot);
  }
  const hash = hashKey(key);
  const res = await db.query<KeyRow>(FIND_KEY([hash]));
  const row = res.rows[0];
  if (!row || !constantTimeEqual(row.key_hash, hash)) return null;
  return keyPrincipal(row);
}

/**
 * The key check and its rate window in one round trip (the polling path is the hottest): finds the key and, when
 * it is of an accepted kind, counts the request in the window of (key + IP + group).
 */
export async function findPrincipalCounting(db: Queryable, key: string, rate: RateOptions): Promise<Counted | null> {
  if (key.startsWith('pk_')) return findPublicKeyCounting(db, key, rate);
  const hash = hashKey(key);
  const res = await db.query<KeyRow & WindowColumns>(
    FIND_KEY_COUNTING([hash, rate.ip, rate.group, rate.accept, rate.increment ?? 1]),
  );
  const row = res.rows[0];
  if (!row || !constantTimeEqual(row.key_hash, hash)) return null;
  return counted(keyPrincipal(row), row);
}

type CountedPrincipal = Counted | null;

/**
 * Coalesces concurrent checks of the same (key, IP, group) in one process into one round trip that adds their
 * number to the window at once. Without it, every concurrent request of one client waits on the same row lock in
 * turn; with it, each request still gets its own exact position in the window (the database stays the one count
 * that all replicas share).
 */
export function createKeyRateChecker(db: Queryable) {
  const queues = new Map<
    string,
    { inFlight: boolean; waiting: { resolve: (r: CountedPrincipal) => void; reject: (e: unknown) => void }[] }
  >();

  const flush = async (id: string, key: string, rate: Omit<RateOptions, 'increment'>) => {
    const queue = queues.get(id)!;
    const batch = queue.waiting.splice(0);
    queue.inFlight = true;
    try {
      const found = await findPrincipalCounting(db, key, { ...rate, increment: batch.length });
      batch.forEach((w, i) =>
        w.resolve(
          found && found.window
            ? { ...found, window: { ...found.window, count: found.window.count - batch.length + 1 + i } }
            : found,
        ),
      );
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      queue.inFlight = false;
      if (queue.waiting.length) void flush(id, key, rate);
      else queues.delete(id);
    }
  };

  return function check(key: string, rate: Omit<RateOptions, 'increment'>): Promise<CountedPrincipal> {
    const id = `${hashKey(key).toString('base64')}|${rate.ip}|${rate.group}|${rate.accept.join(',')}`;
    return new Promise((resolve, reject) => {
      let queue = queues.get(id);
      if (!queue) queues.set(id, (queue = { inFlight: false, waiting: [] }));
      queue.waiting.push({ resolve, reject });
      if (!queue.inFlight) void flush(id, key, rate);
    });
  };
}

export type KeyRateChecker = ReturnType<typeof createKeyRateChecker>;
