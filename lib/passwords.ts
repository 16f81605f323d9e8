import { Algorithm, hash, verify } from '@node-rs/argon2';
import { scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { ApiError } from './errors';

/**
 * Passwords: argon2id at OWASP's recommended parameters (19 MiB, 2 passes, 1 lane), stored as the PHC string
 * (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`, parameters included). Hashes made with weaker parameters — and the
 * platform's earlier `scrypt$salt$hash` (N=2^14) — still verify, and are upgraded at the next successful login.
 */
const ARGON2 = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number) => Promise<Buffer>;

export async function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

/** Whether the password matches, and whether its stored hash should be replaced by one at today's parameters. */
async function verifyPassword(password: string, stored: string): Promise<{ ok: boolean; rehash: boolean }> {
  if (stored.startsWith('$argon2')) {
    let ok: boolean;
    try {
      ok = await verify(stored, password);
    } catch {
      ok = false;
    }
    return { ok, rehash: ok && weakerThanCurrent(stored) };
  }
  const [scheme, salt, digest] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !digest) return { ok: false, rehash: false };
  const expected = Buffer.from(digest, 'base64url');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length);
  const ok = timingSafeEqual(expected, actual);
  return { ok, rehash: ok };
}

/** An argon2 hash of another variant, or with less memory, fewer passes or lanes than today's. */
function weakerThanCurrent(phc: string): boolean {
  const m = /^\$(argon2(?:id|i|d))\$v=\d+\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(phc);
  if (!m) return true;
  return (
    m[1] !== 'argon2id' ||
    Number(m[2]) < ARGON2.memoryCost ||
    Number(m[3]) < ARGON2.timeCost ||
    Number(m[4]) < ARGON2.parallelism
  );
}

/** Hashing and checking passwords with a bound on how many run at once (docs/decisions/105-bounded-password-hashing.md). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<{ ok: boolean; rehash: boolean }>;
}

/**
 * Each argon2 hash holds 19 MiB and a libuv thread for tens of milliseconds, so a flood of sign-ins, sign-ups or
 * resets could take the API's memory and threads for nothing. At most `concurrency` hashes run; `queue` more wait;
 * beyond that the answer is at once 503 `service_unavailable` with `Retry-After: 1`, before any work.
 */
export function createPasswordHasher(opts: { concurrency: number; queue: number }): PasswordHasher {
  let running = 0;
  const waiting: (() => void)[] = [];
  async function bounded<T>(work: () => Promise<T>): Promise<T> {
    if (running >= opts.concurrency) {
      if (waiting.length >= opts.queue) {
        throw new ApiError(
          'service_unavailable',
          'Too many passwords are being checked right now; retry in a second',
          {},
          {
            'Retry-After': '1',
          },
        );
      }
      await new Promise<void>((resolve) => waiting.push(resolve)); // the finishing hash hands its slot over
    } else {
      running++;
    }
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  }
  return {
    hash: (password) => bounded(() => hashPassword(password)),
    verify: (password, stored) => bounded(() => verifyPassword(password, stored)),
  };
}
