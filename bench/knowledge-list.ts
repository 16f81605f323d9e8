/**
 * The dashboard's sources list searched by text (docs/decisions/153-see-what-the-agent-reads.md): `listSources` with `q`
 * (title or id containing it, or passages holding all its words through the fragments' GIN index) and `kind`, on one
 * bot with thousands of sources, beside the alternative it was chosen over (ILIKE over every source's whole text).
 *
 *   node --import tsx bench/knowledge-list.ts            # a throwaway embedded Postgres, started and migrated here
 *   DATABASE_URL=postgres://… node --import tsx bench/knowledge-list.ts --database
 *
 * Options: --sources N (5000), --chars N (3000, text per source), --queries N (200). Prints JSON and writes
 * bench/results/knowledge-list.json. The texts are synthetic prose: Zipf-distributed words, so common words are in
 * most sources and rare ones in a few.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bootstrapWorkspace } from '../lib/accounts/service';
import { createDb } from '../lib/db';
import { containsPattern, listSources, upsertSource } from '../lib/knowledge/store';
import { createSecretBox } from '../lib/secret-box';
import { benchDatabase } from './database';
import { seededRandom, summarize, timedOneByOne } from './measure';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string, fallback: number) => (flag(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const SOURCES = option('--sources', 5_000);
const CHARS = option('--chars', 3_000);
const QUERIES = option('--queries', 200);

const SYLLABLES = ['ka', 'lo', 'ven', 'tri', 'mar', 'so', 'del', 'qui', 'ren', 'bo', 'sta', 'mi', 'nor', 'pe', 'gal'];
const vocabRandom = seededRandom(7);
const VOCAB = Array.from({ length: 20_000 }, (_, i) => {
  const n = 2 + Math.floor(vocabRandom() * 3);
  return Array.from({ length: n }, () => SYLLABLES[Math.floor(vocabRandom() * SYLLABLES.length)]).join('') + i;
});
/** A word by Zipf's law: rank r with probability ∝ 1/r. */
function zipfWord(random: () => number): string {
  return VOCAB[Math.min(VOCAB.length - 1, Math.floor(Math.exp(random() * Math.log(VOCAB.length))) - 1)];
}
function text(random: () => number, chars: number): string {
  const words: string[] = [];
  let length = 0;
  while (length < chars) {
    const w = zipfWord(random);
    words.push(w);
    length += w.length + 1;
  }
  return words.join(' ');
}

async function main() {
  if (flag('--help')) {
    console.log(readFileSync(__filename, 'utf8').split('*/')[0]);
    return;
  }
  const database = await benchDatabase(
    'agent-platform-bench-list-',
    flag('--database') ? process.env.DATABASE_URL : undefined,
  );
  const url = database.url;
  const db = createDb(url, { max: 4, applicationName: 'bench-knowledge-list' });
  const box = createSecretBox(randomBytes(32).toString('hex'));
  let workspace: string | undefined;
  try {
    const bot = await bootstrapWorkspace(db, box, { workspaceName: 'bench-knowledge-list' });
    workspace = bot.workspace_id;
    const random = seededRandom(11);
    const origins = ['api', 'api', 'api', 'scan', 'scan', 'scan', 'scan', 'scan', 'scan', 'file'] as const;
    const started = performance.now();
    for (let i = 0; i < SOURCES; i++) {
      const origin = origins[i % origins.length];
      await upsertSource(db, {
        botId: bot.bot_id,
        sourceId: `src-${i}`,
        title: `${zipfWord(random)} ${zipfWord(random)} ${i}`,
        text: text(random, CHARS),
        origin,
        url: origin === 'scan' ? `https://site.test/page-${i}` : null,
      });
    }
    const indexingS = (performance.now() - started) / 1000;
    await db.query('ANALYZE knowledge_fragments');
    await db.query('ANALYZE knowledge_sources');
    const fragments = await db.query<{ n: string }>(`SELECT count(*) AS n FROM knowledge_fragments WHERE bot_id = $1`, [
      bot.bot_id,
    ]);

    const qr = seededRandom(13);
    const common = Array.from({ length: QUERIES }, () => VOCAB[Math.floor(qr() * 20)]);
    const rare = Array.from({ length: QUERIES }, () => VOCAB[2_000 + Math.floor(qr() * 10_000)]);
    const two = Array.from(
      { length: QUERIES },
      () => `${VOCAB[Math.floor(qr() * 200)]} ${VOCAB[Math.floor(qr() * 200)]}`,
    );
    const none = Array.from({ length: QUERIES }, (_, i) => `nothingcalledthis${i}`);
    const page = (q?: string, kind?: 'text' | 'page' | 'file') =>
      listSources(db, bot.bot_id, { limit: 20, order: 'newest', ...(q ? { q } : {}), ...(kind ? { kind } : {}) });
    // Warm the cache.
    for (let i = 0; i < 20; i++) await page(common[i]);

    let rareFound = 0;
    const results = {
      at: new Date().toISOString(),
      postgres: (await db.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0].v,
      sources: SOURCES,
      chars_per_source: CHARS,
      fragments: Number(fragments.rows[0].n),
      indexing_s: Math.round(indexingS),
      first_page_ms: {
        no_filter: summarize(await timedOneByOne(QUERIES, () => page())),
        kind_file: summarize(await timedOneByOne(QUERIES, () => page(undefined, 'file'))),
        q_common_word: summarize(await timedOneByOne(QUERIES, (i) => page(common[i]))),
        q_rare_word: summarize(
          await timedOneByOne(QUERIES, async (i) => {
            rareFound += (await page(rare[i])).sources.length ? 1 : 0;
          }),
        ),
        q_two_words: summarize(await timedOneByOne(QUERIES, (i) => page(two[i]))),
        q_no_match: summarize(await timedOneByOne(QUERIES, (i) => page(none[i]))),
        q_rare_word_kind_file: summarize(await timedOneByOne(QUERIES, (i) => page(rare[i], 'file'))),
        // The alternative: a substring of every source's whole text, one page of matches.
        ilike_text_rare_word: summarize(
          await timedOneByOne(Math.min(QUERIES, 50), (i) =>
            db.query(
              `SELECT source_id FROM knowledge_sources WHERE bot_id = $1 AND text ILIKE $2 ESCAPE '\\' ORDER BY seq DESC LIMIT 21`,
              [bot.bot_id, containsPattern(rare[i])],
            ),
          ),
        ),
        ilike_text_no_match: summarize(
          await timedOneByOne(Math.min(QUERIES, 50), (i) =>
            db.query(
              `SELECT source_id FROM knowledge_sources WHERE bot_id = $1 AND text ILIKE $2 ESCAPE '\\' ORDER BY seq DESC LIMIT 21`,
              [bot.bot_id, containsPattern(none[i])],
            ),
          ),
        ),
      },
      rare_words_found: `${rareFound}/${QUERIES}`,
    };
    const out = JSON.stringify(results, null, 2);
    console.log(out);
    mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    writeFileSync(path.join(__dirname, 'results', 'knowledge-list.json'), `${out}\n`);
  } finally {
    if (workspace) await db.query(`DELETE FROM workspaces WHERE id = $1`, [workspace]).catch(() => undefined);
    await db.end();
    await database.stop();
  }
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
