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

const SourceFile = z
  .object({
    name: z.string().describe('The file name as uploaded (its last path segment).'),
    content_type: z.string().describe('What the file is, judged by its content (not by its name).'),
    size: z.number().int().describe('Bytes'),
    pages: z.number().int().nullable().describe('Pages of a PDF, once read; `null` for other formats.'),
    uploaded_at: z.number().int().describe('Unix milliseconds'),
  })
  .meta({ id: 'KnowledgeSourceFile' });

const SourceFields = {
  source_id: z.string(),
  title: z.string(),
  fragments: z.number().int().describe('How many retrieval fragments (passages) the text was split into.'),
  origin: z
    .enum(['api', 'scan', 'file'])
    .describe('`api` for texts written through the API, `scan` for pages read by a site scan, `file` for uploads.'),
  kind: z
    .enum(['text', 'page', 'file'])
    .describe('What the source is: a written `text`, a scanned `page`, or an uploaded `file`.'),
  status: z
    .enum(['reading', 'indexed', 'failed'])
    .describe(
      '`indexed` once its passages are searchable. An uploaded file is `reading` until then, or `failed` (see ' +
        '`reason`); a replaced file keeps the passages of its previous version until the new one is indexed.',
    ),
  reason: z.string().nullable().describe('Why a file could not be read, when `status` is `failed`; else `null`.'),
  file: SourceFile.nullable().describe('The original of an uploaded file (download it at `…/{id}/file`); else `null`.'),
  url: z.string().nullable().describe('The page a scanned source was read from; `null` for API writes.'),
  created_at: z.number().int().describe('Unix milliseconds'),
  updated_at: z.number().int().describe('Unix milliseconds; changes with every write of the same `source_id`.'),
};

export const KnowledgeSourceSummary = z.object(SourceFields).meta({ id: 'KnowledgeSourceSummary' });

export const KnowledgePassage = z
  .object({
    text: z.string(),
    heading_path: z.array(z.string()).describe('The headings the passage sits under, outermost first.'),
    page: z.number().int().nullable().describe('Its page, for a PDF; else `null`.'),
  })
  .meta({ id: 'KnowledgePassage' });

export const KnowledgeSource = z
  .object({
    ...SourceFields,
    text: z.string().describe('The full text as written (a file: its text as read, headings marked with `#`).'),
    passages: z
      .array(KnowledgePassage)
      .optional()
      .describe('With `?passages=true`: the passages the source was split into, in order.'),
  })
  .meta({ id: 'KnowledgeSource' });

export const SourceQuery = z.object({
  passages: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true')
    .describe('`true` adds the passages with their heading paths and pages.'),
});

/** The text fields of a file upload (the file itself is the multipart field `file`). */
export const KnowledgeFileFields = z
  .object({
    source_id: SourceId.optional().describe(
      'Same `source_id` replaces that source. Without it, an earlier upload of the same file name is replaced, ' +
        'else a new source is made.',
    ),
    title: z
      .string()
      .max(MAX_TITLE_CHARS, `must be at most ${MAX_TITLE_CHARS} characters`)
      .optional()
      .describe("Shown in the list; without it the document's own title (a PDF's, a first heading), else its name."),
  })
  .meta({ id: 'KnowledgeFileFields' });

export const KnowledgeFileAccepted = z
  .object({
    status: z
      .literal('reading')
      .describe('Being read; follow `GET /v1/api/knowledge/{source_id}` to `indexed` or `failed`.'),
    source_id: z.string(),
    name: z.string(),
    format: z.enum(['pdf', 'docx', 'html', 'markdown', 'csv', 'text']).describe('What the file is, by its content.'),
    content_type: z.string(),
    size: z.number().int(),
    replaced: z.boolean().describe('An earlier upload of this source (same `source_id` or file name) was replaced.'),
  })
  .meta({ id: 'KnowledgeFileAccepted' });

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

/** The dashboard's list: a page, newest first by default, optionally only the sources of a kind, or that match `q`. */
export const DashboardKnowledgeQuery = PageQuery.extend({
  q: z
    .string()
    .trim()
    .max(MAX_SEARCH_CHARS, `must be at most ${MAX_SEARCH_CHARS} characters`)
    .optional()
    .transform((v) => v || undefined)
    .describe(
      `Only sources whose title or \`source_id\` contains this text, in any case (\`%\` and \`_\` are plain ` +
        `characters), or whose passages hold all of its words (as the agent's search reads words: any form of ` +
        `them, "quoted phrases", -excluded); trimmed, up to ${MAX_SEARCH_CHARS} characters. Empty lists all.`,
    ),
  kind: z
    .enum(['text', 'page', 'file'])
    .optional()
    .describe('Only sources of this kind: written `text`s, scanned `page`s or uploaded `file`s. Absent: every kind.'),
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

const SEARCH = LIMITS.knowledgeSearch;

/** `POST /v1/api/knowledge/search`: a question, and how many passages to answer. */
export const KnowledgeSearchRequest = z
  .object({
    query: z
      .string({ error: 'is required' })
      .max(SEARCH.queryChars, `must be at most ${SEARCH.queryChars} characters`)
      .regex(NOT_BLANK, 'must not be empty')
      .describe('The question, as a visitor would write it.'),
    limit: z
      .number({ error: 'must be a whole number' })
      .int('must be a whole number')
      .min(SEARCH.min, `must be at least ${SEARCH.min}`)
      .max(SEARCH.max, `must be at most ${SEARCH.max}`)
      .default(SEARCH.default)
      .describe(`Passages to answer, ${SEARCH.min}–${SEARCH.max}; default ${SEARCH.default}, what a chat turn reads.`),
  })
  .meta({ id: 'KnowledgeSearchRequest' });

export const KnowledgeSearchPassage = z
  .object({
    source_id: z.string(),
    title: z.string().describe("The source's title."),
    heading_path: z.array(z.string()).describe('The headings the passage sits under, outermost first.'),
    page: z.number().int().nullable().describe('Its page, for a PDF; else `null`.'),
    text: z.string(),
    score: z
      .number()
      .describe('Higher is better; comparable within one answer only (its scale is the ranking’s, not a promise).'),
    url: z.string().optional().describe('The page a scanned source was read from.'),
  })
  .meta({ id: 'KnowledgeSearchPassage' });

export const KnowledgeSearchResult = z
  .object({
    passages: z
      .array(KnowledgeSearchPassage)
      .describe('Best first: what a chat turn asking this question alone would give the model.'),
  })
  .meta({ id: 'KnowledgeSearchResult' });

/** The passages each answer of a conversation read (the test chat shows them under its answers). */
export const PassagesRead = z
  .object({
    answers: z
      .array(
        z.object({
          run_id: z.string(),
          message_id: z.string().describe("The agent's answer in the transcript."),
          question: z.string().describe("The visitor's message the run answered."),
          searched_with: z
            .string()
            .nullable()
            .describe(
              'What the knowledge was searched with when the message did not stand alone (a follow-up): the ' +
                'standalone question the model wrote, or the recent messages joined; `null`: the message itself.',
            ),
          passages: z
            .array(KnowledgeSearchPassage)
            .describe('The passages the model was given, best first, as they were then; empty: none matched.'),
          started_at: z.number().int().describe('Unix milliseconds'),
        }),
      )
      .describe(`Newest first, the last ${LIMITS.passagesReadListed} answers at most.`),
  })
  .meta({ id: 'PassagesRead' });
