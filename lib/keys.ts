import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Keys are random, prefixed by their kind, stored only as a SHA-256 hash plus a short fingerprint, shown once.
 * A hash (not a slow KDF) is right here: the keys carry 192 bits of randomness, so they cannot be guessed.
 */
const KEY_PREFIXES = {
  secret: 'sk_',
  public: 'pk_',
  builder: 'ck_',
  access: 'ak_',
  webhook: 'whsec_',
  identity: 'idsec_',
  trigger: 'trsec_',
} as const;

export type KeyKind = keyof typeof KEY_PREFIXES;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** base62 without modulo bias: bytes >= 248 are rejected and drawn again. */
export function randomToken(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

export function generateKey(kind: KeyKind): string {
  return KEY_PREFIXES[kind] + randomToken(32);
}

export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** What the dashboard shows for a key after it was issued: its kind and the last four characters. */
export function fingerprint(key: string): string {
  const prefix = Object.values(KEY_PREFIXES).find((p) => key.startsWith(p)) ?? '';
  return `${prefix}…${key.slice(-4)}`;
}

export function keyKindOf(key: string): KeyKind | undefined {
  // Longest prefixes first so `whsec_` is not mistaken for anything shorter.
  const entries = Object.entries(KEY_PREFIXES).sort((a, b) => b[1].length - a[1].length);
  return entries.find(([, p]) => key.startsWith(p))?.[0] as KeyKind | undefined;
}

export function constantTimeEqual(a: Buffer | string, b: Buffer | string): boolean {
  const ab = typeof a === 'string' ? Buffer.from(a) : a;
  const bb = typeof b === 'string' ? Buffer.from(b) : b;
  if (ab.length !== bb.length) {
    // Still spend the time of a comparison so length is the only thing learnt.
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}
