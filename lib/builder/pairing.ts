import type { z } from 'zod';
import type { PairingView as PairingViewSchema } from '../schemas/pairing';
import { randomInt } from 'node:crypto';
import { type Db, type DbClient, withTransaction } from '../db';
import { bindTo } from '../bind-deps';
import { ApiError, errors } from '../errors';
import { constantTimeEqual, hashKey, randomToken } from '../keys';
import { LIMITS } from '../limits';
import { countInWindows } from '../rate-windows';
import type { SecretBox } from '../secret-box';
import { insertApiKey } from '../bots/keys';

/**
 * Builder key pairing (contract, Builder key pairing; docs/decisions/067-pairing-flow.md): a client (an MCP host on someone's machine)
 * starts a pairing and shows its code; the workspace owner, signed in on the dashboard page `/connect`, checks the code
 * and approves; the client, polling with the secret only it holds, collects a workspace builder key `ck_` exactly once.
 * The key never reaches the browser: between approval and collection it is kept sealed, then the sealed copy is erased.
 */

/** Letters and digits a person can read aloud and type without confusion: no 0/O, 1/I/L, 5/S, 2/Z, 8/B, U/V. */
export const PAIRING_CODE_ALPHABET = 'ACDEFGHJKMNPQRTWXY34679';
const CODE_LENGTH = 8;
const SECRET_LENGTH = 40;
const { pairing: P } = LIMITS;

export type PollAnswer =
  | { status: 'pending' }
  | { status: 'ok'; constructor_key: string; workspace: { id: string; name: string } }
  | { status: 'expired' };

/** The schema's type (lib/schemas/pairing.ts): what the route declares is what this returns. */
export type PairingView = z.infer<typeof PairingViewSchema>;

/** `ABCDEFGH` → `ABCD-EFGH`. */
function formatPairingCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What a person typed (`abcd-efgh`, `ABCD EFGH`, `abcdefgh`) as the stored code, or undefined when it cannot be one:
 * the caller answers as for an unknown code.
 */
function normalizePairingCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== CODE_LENGTH) return undefined;
  for (const ch of code) if (!PAIRING_CODE_ALPHABET.includes(ch)) return undefined;
  return code;
}

function newCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += PAIRING_CODE_ALPHABET[randomInt(PAIRING_CODE_ALPHABET.length)];
  return code;
}

/** Counts one request of a client address; past the limit, 429 `rate_limited` with `Retry-After` (contract, Errors). */
async function countAddress(db: Db, what: 'start' | 'poll' | 'check', clients: string[], limit: number): Promise<void> {
  const counted = await countInWindows(
    db,
    clients.map((c) => `mcp-pair-${what}|${c}`),
  );
  const window = counted.find((w) => w.count > limit);
  if (window) {
    const reset = String(Math.max(1, window.reset));
    const noun = { start: 'pairing starts', poll: 'pairing polls', check: 'pairing code checks' }[what];
    throw new ApiError(
      'rate_limited',
      `Too many ${noun} (${limit} a minute); retry after ${reset} s`,
      {},
      { 'Retry-After': reset, 'RateLimit-Limit': String(limit), 'RateLimit-Remaining': '0', 'RateLimit-Reset': reset },
    );
  }
}

interface PairingRow {
  code: string;
  secret_hash: Buffer;
  device: string;
  status: 'pending' | 'approved' | 'collected' | 'lapsed';
  workspace_id: string | null;
  key_sealed: string | null;
  expires_at: Date;
  expired: boolean;
}

const SELECT_ROW = `SELECT code, secret_hash, device, status, workspace_id, key_sealed, expires_at, expires_at <= now() AS expired
                      FROM builder_pairings WHERE code = $1`;

/**
 * An approved pairing whose client never came for the key: the key is revoked (nobody holds it) and its sealed copy
 * erased. One pairing (`code`), or every one that has expired.
 */
async function lapse(db: Db | DbClient, code?: string): Promise<void> {
  await db.query(
    `WITH lapsed AS (
       UPDATE builder_pairings SET status = 'lapsed', key_sealed = NULL
        WHERE status = 'approved' AND expires_at <= now() AND ($1::text IS NULL OR code = $1)
        RETURNING api_key_id)
     UPDATE api_keys SET revoked_at = now() WHERE id IN (SELECT api_key_id FROM lapsed) AND revoked_at IS NULL`,
    [code ?? null],
  );
}

/** Lapses every uncollected approval past its time, and deletes pairings expired for a day. */
async function sweep(db: Db): Promise<void> {
  await lapse(db);
  await db.query(`DELETE FROM builder_pairings WHERE expires_at < now() - interval '1 day'`);
}

/** Who asks on the dashboard: the signed-in person and their workspace. */
interface Person {
  userId: string;
  workspaceId: string;
}

/** What the approval page shows of a pairing: the device and the state, never the key. */
function viewOf(row: PairingRow, status: PairingView['status'], expiresAt = row.expires_at): PairingView {
  return { code: formatPairingCode(row.code), device: row.device, status, expires_at: expiresAt.getTime() };
}

/** Unknown, expired, lapsed or another workspace's: one answer, so a guess learns nothing. */
function unknownCode() {
  return errors.notFound('This code is unknown or has expired; start the connection again from your client');
}

/** What pairing runs on: the database and the box that seals a key until its client collects it. */
export interface PairingDeps {
  db: Db;
  secrets: SecretBox;
}

/**
 * Starts a pairing for a client named `device`; the secret is returned here only (the table keeps its hash). A
 * start also tidies: lapsed approvals are revoked, old pairings deleted.
 */
async function startPairing(
  { db }: PairingDeps,
  device: string,
  ip: string,
): Promise<{ code: string; secret: string; expiresAt: Date }> {
  await countAddress(db, 'start', [ip], P.startsPerAddress);
  await sweep(db);
  const secret = randomToken(SECRET_LENGTH);
  // 23^8 ≈ 7.8e10 codes: a collision with a live pairing is rare; draw again if it happens.
  for (let attempt = 0; ; attempt++) {
    const code = newCode();
    const res = await db.query<{ expires_at: Date }>(
      `INSERT INTO builder_pairings (code, secret_hash, device, expires_at)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4))
       ON CONFLICT (code) DO NOTHING RETURNING expires_at`,
      [code, hashKey(secret), device, P.lifetimeSeconds],
    );
    if (res.rows[0]) return { code: formatPairingCode(code), secret, expiresAt: res.rows[0].expires_at };
    if (attempt >= 5) throw errors.serviceUnavailable('Could not allocate a pairing code; retry');
  }
}

/**
 * The client's question "approved yet?". Unknown code, wrong secret, a key already collected, or a pairing past
 * its time all answer `expired`, the same way: a wrong secret learns nothing and consumes nothing. `ok` carries
 * the key exactly once: it is opened and its sealed copy erased in the transaction that marks it collected.
 */
async function pollPairing(
  { db, secrets }: PairingDeps,
  codeInput: string,
  secret: string,
  ip: string,
): Promise<PollAnswer> {
  await countAddress(db, 'poll', [ip], P.pollsPerAddress);
  const code = normalizePairingCode(codeInput);
  // Hash even when the code is malformed, so every `expired` takes the same work.
  const presented = hashKey(secret);
  if (!code) return { status: 'expired' };
  return withTransaction(db, async (tx) => {
    const row = (await tx.query<PairingRow>(`${SELECT_ROW} FOR UPDATE`, [code])).rows[0];
    if (!row || !constantTimeEqual(row.secret_hash, presented)) return { status: 'expired' };
    if (row.expired) {
      if (row.status === 'approved') await lapse(tx, row.code);
      return { status: 'expired' };
    }
    if (row.status === 'pending') return { status: 'pending' };
    if (row.status !== 'approved' || !row.key_sealed) return { status: 'expired' };
    await tx.query(
      `UPDATE builder_pairings SET status = 'collected', key_sealed = NULL, collected_at = now() WHERE code = $1`,
      [code],
    );
    // The client says which workspace it joined, so its user sees where its changes will land.
    const ws = await tx.query<{ id: string; name: string }>(`SELECT id, name FROM workspaces WHERE id = $1`, [
      row.workspace_id,
    ]);
    return {
      status: 'ok',
      constructor_key: secrets.open(row.key_sealed),
      workspace: { id: ws.rows[0].id, name: ws.rows[0].name },
    };
  });
}

/**
 * What the approval page shows: the device and the state, never the key. Unknown and expired codes are 404, and
 * so is a pairing another workspace approved.
 */
async function describePairing({ db }: PairingDeps, codeInput: string, user: Person): Promise<PairingView> {
  await countAddress(db, 'check', [`user:${user.userId}`], P.checksPerPerson);
  const workspaceId = user.workspaceId;
  const code = normalizePairingCode(codeInput);
  const row = code ? (await db.query<PairingRow>(SELECT_ROW, [code])).rows[0] : undefined;
  if (
    !row ||
    row.expired ||
    row.status === 'lapsed' ||
    (row.workspace_id !== null && row.workspace_id !== workspaceId)
  ) {
    throw unknownCode();
  }
  return viewOf(row, row.status);
}

/**
 * The owner approves: a builder key of the whole workspace is issued (kind `builder`, no bot, issued via pairing)
 * and kept sealed for the client to collect. Earlier builder keys stay valid (contract: approving a second client does
 * not disconnect the first). Only the workspace's owner may approve (403 `forbidden` for a member). Approving a
 * pairing this workspace already approved changes nothing.
 */
async function approvePairing({ db, secrets }: PairingDeps, codeInput: string, user: Person): Promise<PairingView> {
  await countAddress(db, 'check', [`user:${user.userId}`], P.checksPerPerson);
  return withTransaction(db, async (tx) => {
    const who = await tx.query<{ role: string }>(`SELECT role FROM users WHERE id = $1 AND workspace_id = $2`, [
      user.userId,
      user.workspaceId,
    ]);
    if (!who.rows[0]) throw errors.unauthorized('The session expired; sign in again');
    if (who.rows[0].role !== 'owner') {
      throw new ApiError(
        'forbidden',
        'Only the workspace owner can connect a builder client; ask the owner to approve this code',
      );
    }
    const code = normalizePairingCode(codeInput);
    const row = code ? (await tx.query<PairingRow>(`${SELECT_ROW} FOR UPDATE`, [code])).rows[0] : undefined;
    const gone = unknownCode();
    if (!row || row.expired || row.status === 'lapsed') throw gone;
    if (row.status !== 'pending') {
      if (row.workspace_id !== user.workspaceId) throw gone;
      return viewOf(row, row.status);
    }
    const issued = await insertApiKey(tx, {
      workspaceId: user.workspaceId,
      botId: null,
      kind: 'builder',
      issuedVia: 'pairing',
      // The approver is the key's issuer, the client's device name its label (listed on the team page).
      issuedBy: user.userId,
      label: row.device,
    });
    // The client gets at least the grace period to come for the key, even when approval came late.
    const res = await tx.query<{ expires_at: Date }>(
      `UPDATE builder_pairings
          SET status = 'approved', workspace_id = $2, approved_by = $3, api_key_id = $4, key_sealed = $5,
              approved_at = now(), expires_at = GREATEST(expires_at, now() + make_interval(secs => $6))
        WHERE code = $1 RETURNING expires_at`,
      [row.code, user.workspaceId, user.userId, issued.id, secrets.seal(issued.key), P.collectGraceSeconds],
    );
    return viewOf(row, 'approved', res.rows[0].expires_at);
  });
}

/** Pairing as the routes call it (`services.pairing.start(device, ip)`): the operations above, given their deps. */
export function createPairingService(deps: PairingDeps) {
  const bound = bindTo(deps);
  return {
    start: bound(startPairing),
    poll: bound(pollPairing),
    describe: bound(describePairing),
    approve: bound(approvePairing),
    /** Revokes keys of approvals never collected and deletes old pairings (also done on every start). */
    sweep: () => sweep(deps.db),
  };
}

export type PairingService = ReturnType<typeof createPairingService>;
