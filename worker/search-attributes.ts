import type { Temporal } from '../lib/temporal';
import { searchAttributes } from '../lib/stack/temporal-dev';

const GRPC_ALREADY_EXISTS = 6;
const TYPES: Record<string, number> = { Keyword: 2, Text: 1, Int: 3, Double: 4, Bool: 5, Datetime: 6, KeywordList: 7 };

/**
 * Registers the custom search attributes (temporal-config/search-attributes.json) so runs can be filtered in the
 * Temporal UI. The dev server gets them as flags; on a cluster this call adds them, and "already exists" is fine.
 */
export async function ensureSearchAttributes(t: Temporal): Promise<void> {
  const wanted = Object.fromEntries(Object.entries(searchAttributes()).map(([k, v]) => [k, TYPES[v]]));
  const existing = await t.connection.operatorService.listSearchAttributes({ namespace: t.namespace });
  const missing = Object.fromEntries(Object.entries(wanted).filter(([k]) => !(k in (existing.customAttributes ?? {}))));
  if (Object.keys(missing).length === 0) return;
  try {
    await t.connection.operatorService.addSearchAttributes({ namespace: t.namespace, searchAttributes: missing });
  } catch (err) {
    if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
  }
}
