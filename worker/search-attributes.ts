import { searchAttributes, type Temporal } from '../lib/temporal';

const GRPC_INVALID_ARGUMENT = 3;
const GRPC_ALREADY_EXISTS = 6;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNIMPLEMENTED = 12;
const TYPES: Record<string, number> = { Keyword: 2, Text: 1, Int: 3, Double: 4, Bool: 5, Datetime: 6, KeywordList: 7 };

const codeOf = (err: unknown) => (err as { code?: number }).code;
/** The worker's credentials may not use the operator service (Temporal Cloud, or a role without admin rights). */
const refused = (err: unknown) => codeOf(err) === GRPC_PERMISSION_DENIED || codeOf(err) === GRPC_UNIMPLEMENTED;

/**
 * The namespace lacks search attributes the platform's workflows set, and this worker may not add them: every
 * workflow task setting one would fail, so the worker does not start. The message names each attribute, its type and
 * the commands that create them.
 */
export class SearchAttributesMissingError extends Error {
  constructor(
    readonly namespace: string,
    readonly missing: Record<string, string>,
  ) {
    super(searchAttributesMissingMessage(namespace, missing));
    this.name = 'SearchAttributesMissingError';
  }
}

function searchAttributesMissingMessage(namespace: string, missing: Record<string, string>): string {
  const entries = Object.entries(missing);
  const byType = new Map<string, string[]>();
  for (const [name, type] of entries) byType.set(type, [...(byType.get(type) ?? []), name]);
  const cli = [...byType]
    .map(
      ([type, names]) =>
        `temporal operator search-attribute create --namespace ${namespace} ${names.map((n) => `--name ${n}`).join(' ')} --type ${type}`,
    )
    .join(' && ');
  const cloud = `tcld namespace search-attributes add --namespace ${namespace} ${entries
    .map(([name, type]) => `--search-attribute ${name}=${type}`)
    .join(' ')}`;
  return (
    `Temporal namespace "${namespace}" lacks the search attributes ${entries.map(([n, t]) => `${n} (${t})`).join(', ')}` +
    ` and this worker may not add them (permission denied). Create them once by hand, then start the worker again.` +
    ` Self-hosted: ${cli}. Temporal Cloud: ${cloud} (or the namespace's page in the Cloud UI).`
  );
}

/**
 * Which of `wanted` the namespace's visibility does not know, found without the operator service: a list query naming
 * an unknown attribute is refused as an invalid argument. For credentials that may run workflows but not list
 * search attributes.
 */
export async function unknownToVisibility(
  t: Pick<Temporal, 'connection' | 'namespace'>,
  wanted: Record<string, string>,
): Promise<Record<string, string>> {
  const missing: Record<string, string> = {};
  for (const [name, type] of Object.entries(wanted)) {
    try {
      await t.connection.workflowService.countWorkflowExecutions({ namespace: t.namespace, query: `${name} = ''` });
    } catch (err) {
      if (codeOf(err) !== GRPC_INVALID_ARGUMENT) throw err;
      missing[name] = type;
    }
  }
  return missing;
}

/**
 * Registers the custom search attributes (temporal-config/search-attributes.json) so runs can be filtered in the
 * Temporal UI. The dev server gets them as flags; on a cluster this call adds them, and "already exists" is fine.
 * Credentials that may not list or add them (Temporal Cloud's namespace API keys and certificates, a restricted role)
 * are fine as long as the attributes exist; if some are missing the worker stops with the commands to create them.
 */
export async function ensureSearchAttributes(t: Temporal): Promise<void> {
  const wanted = searchAttributes();
  let missing: Record<string, string>;
  try {
    const existing = await t.connection.operatorService.listSearchAttributes({ namespace: t.namespace });
    missing = Object.fromEntries(Object.entries(wanted).filter(([k]) => !(k in (existing.customAttributes ?? {}))));
  } catch (err) {
    if (!refused(err)) throw err;
    missing = await unknownToVisibility(t, wanted);
  }
  if (Object.keys(missing).length === 0) return;
  try {
    await t.connection.operatorService.addSearchAttributes({
      namespace: t.namespace,
      searchAttributes: Object.fromEntries(Object.entries(missing).map(([k, v]) => [k, TYPES[v]])),
    });
  } catch (err) {
    if (codeOf(err) === GRPC_ALREADY_EXISTS) return;
    if (refused(err)) throw new SearchAttributesMissingError(t.namespace, missing);
    throw err;
  }
}
