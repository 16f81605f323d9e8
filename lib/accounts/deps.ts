import type { Db } from '../db';
import type { Outbox } from '../outbox';
import type { PasswordHasher } from '../passwords';
import type { SecretBox } from '../secret-box';

/**
 * What every account and team operation runs on: built once by `lib/services.ts` and handed to each operation as its
 * first argument (`lib/accounts/service.ts` binds them for the routes).
 */
export interface AccountDeps {
  db: Db;
  secrets: SecretBox;
  outbox: Outbox;
  /** Bounded hashing (createPasswordHasher): a flood gets a fast 503 instead of holding memory and threads. */
  passwords: PasswordHasher;
  /** The first delay of an account slowed down after failed sign-ins (LOGIN_SLOWDOWN_SECONDS). */
  loginSlowdownSeconds: number;
  /** Work that goes on after the answer (a reset's e-mail) reports its failures here. */
  warn: (fields: Record<string, unknown>, message: string) => void;
}

/**
 * Where the dashboard's pages are, for links in e-mails: from configuration only (`dashboardAddress` in lib/config.ts:
 * DASHBOARD_URL, else the API's public address), never from the request, whose Host a sender chooses.
 */
export type LinkBase = string;

/** Sends without holding the answer: a slow mail server slows nobody; a failure is logged (the person asks again). */
export function sendLater(deps: AccountDeps, send: Promise<void>, what: string): void {
  void send.catch((err: unknown) => deps.warn({ err: err instanceof Error ? err.message : String(err) }, what));
}
