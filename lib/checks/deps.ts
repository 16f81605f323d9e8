import type { Db } from '../db';
import type { Temporal } from '../temporal';

/**
 * What every operation of the owner's check runs on: built once by `lib/services.ts` and handed to each operation as
 * its first argument (`lib/checks/service.ts` binds them for the routes).
 */
export interface CheckDeps {
  db: Db;
  temporal: Temporal;
}

/** A timestamp column as milliseconds since the epoch, the way the API answers times. */
export const MS = (column: string, as = column.replace(/^\w+\./, '')) =>
  `(extract(epoch FROM ${column}) * 1000)::bigint AS ${as}`;

/** Whether `err` is Postgres's unique violation of `constraint` (the table's own rule said no). */
export const isUniqueViolation = (err: unknown, constraint: string) =>
  (err as { code?: string; constraint?: string }).code === '23505' &&
  (err as { constraint?: string }).constraint === constraint;
