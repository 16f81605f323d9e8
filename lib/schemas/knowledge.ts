import { z } from 'zod';
import { NOT_BLANK } from '../text';
import { LIMITS } from '../limits';
import { PageQuery } from './common';

const MAX_SOURCE_ID_CHARS = LIMITS.sourceIdChars;
const MAX_TITLE_CHARS = LIMITS.sourceTitleChars;

// Control characters (NUL above all, which Postgres cannot store) have no place in an id. Spelled as ranges (the
// Unicode `Cc` class) rather than `\p{Cc}`, which test-data generators reading the contract cannot satisfy.
const NO_CONTROL = /^[^\x00-\x1F\x7F-\x9F]*$/;

export const SourceId = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_SOURCE_ID_CHARS, `must be at most ${MAX_SOURCE_ID_CHARS} characters`)
  .regex(NO_CONTROL, 'must not contain control characters')
  .describe('Stable id chosen by the integrator, unique within the bot; a URL is fine (percent-encode it in paths).');

export const KnowledgeWriteRequest = z
  .object({
    source_id: SourceId.optional().describe(
      'Same `source_id` replaces that source; without it every write creates a new source with a generated id.',
    ),
    title: z
      .string()
      .max(MAX_TITLE_CHARS, `must be at most ${MAX_TITLE_CHARS} characters`)
      .optional()
      .describe('Shown in the list; without it the first line of the text is used.'),
    text: z
      .string({ error: 'is required' })
      .min(1, 'must not be empty')
      .regex(NOT_BLANK, 'must not be empty')
      .describe('The knowledge itself, plain text. The whole request body may be up to 5 MiB.'),
  })
  .meta({ id: 'KnowledgeWriteRequest' });

export const KnowledgeIndexed = z
  .object({
    status: z.literal('indexed'),
    source_id: z.string().describe('The given `source_id`, or the generated one (`src_…`).'),
  })
  .meta({ id: 'KnowledgeIndexed' });

const SourceFields = {
  source_id: z.string(),
  title: z.string(),
  fragments: z.number().int().describe('How many retrieval fragments the text was split into.'),
  origin: z.enum(['api', 'scan']).describe('`api` for writes through the API, `scan` for pages read by a site scan.'),
  url: z.string().nullable().describe('The page a scanned source was read from; `null` for API writes.'),
  created_at: z.number().int().describe('Unix milliseconds'),
  updated_at: z.number().int().describe('Unix milliseconds; changes with every write of the same `source_id`.'),
};

export const KnowledgeSourceSummary = z.object(SourceFields).meta({ id: 'KnowledgeSourceSummary' });

export const KnowledgeSource = z
  .object({ ...SourceFields, text: z.string().describe('The full text as written.') })
  .meta({ id: 'KnowledgeSource' });

export const KnowledgeList = z
  .object({
    sources: z
      .array(KnowledgeSourceSummary)
      .describe(
        'In creation order: oldest first on `/v1/api/knowledge`, as asked on the dashboard. An update keeps a source in its place.',
      ),
    next_cursor: z.string().describe('Pass as `cursor` for the next page; empty on the last page.'),
  })
  .meta({ id: 'KnowledgeList' });

export const KnowledgeDeleted = z
  .object({ status: z.literal('deleted'), source_id: z.string() })
  .meta({ id: 'KnowledgeDeleted' });

export { PageQuery };

const MAX_SEARCH_CHARS = LIMITS.knowledgeSearchChars;

/** The dashboard's list: a page, newest first by default, optionally only the sources whose title or id match. */
export const DashboardKnowledgeQuery = PageQuery.extend({
  q: z
    .string()
    .trim()
    .max(MAX_SEARCH_CHARS, `must be at most ${MAX_SEARCH_CHARS} characters`)
    .optional()
    .transform((v) => v || undefined)
    .describe(
      `Only sources whose title or \`source_id\` contains this text, in any case (\`%\` and \`_\` are plain ` +
        `characters); trimmed, up to ${MAX_SEARCH_CHARS} characters. Empty lists all.`,
    ),
  order: z
    .enum(['newest', 'oldest'])
    .default('newest')
    .describe(
      'By when a source was first written (an update keeps its place): `newest` first (default) or `oldest`. ' +
        'Pass the same order with a `cursor` as for its first page.',
    ),
});

export const SourceIdParams = z.object({
  id: z
    .string()
    .min(1)
    .regex(NO_CONTROL, 'must not contain control characters')
    .describe('The `source_id`, percent-encoded.'),
});
