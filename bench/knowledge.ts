/**
 * Knowledge base benchmark: indexing throughput (MiB of text per second through `upsertSource`: chunking,
 * normalization, tsvector and BM25's term statistics in one transaction per source) and retrieval latency (`retrievePassages`,
 * p50/p99) for one bot with 10 000 fragments, full text alone and fused with embeddings.
 *
 * Run it against a platform's database (migrated):
 *   npm start                                   # in another terminal; .data/runtime.env has DATABASE_URL
 *   DATABASE_URL=postgres://… node --import tsx bench/knowledge.ts
 * or, without DATABASE_URL (or with --embedded), against a throwaway embedded Postgres it starts and migrates itself:
 *   node --import tsx bench/knowledge.ts --embedded
 *
 * Options: --fragments N (10000), --queries N (500), --dims N (256, fake embedding size), --no-hybrid, --keep (leave
 * the bench workspace in place). Prints JSON and writes bench/results/knowledge.json. The corpus is synthetic but
 * shaped like prose: Zipf-distributed words in sentences and paragraphs, so common words are in most fragments and
 * rare ones in a few.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bootstrapWorkspace } from '../lib/accounts/service';
import { createDb, type Db } from '../lib/db';
import { retrievePassages } from '../lib/knowledge/retrieve';
import { deleteSource, upsertSource, type Embedder } from '../lib/knowledge/store';
import { createSecretBox } from '../lib/secret-box';
import { benchDatabase } from './database';
import { seededRandom, summarize, timedOneByOne } from './measure';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string, fallback: number) => (flag(name) ? Number(args[args.indexOf(name) + 1]) : fallback);

const TARGET_FRAGMENTS = option('--fragments', 10_000);
const QUERIES = option('--queries', 500);
const DIMS = option('--dims', 256);
const SOURCE_CHARS = 40_000;

const vocabRandom = seededRandom(42);
const SYLLABLES = [
  'ka',
  'lo',
  'ven',
  'tri',
  'mar',
  'so',
  'del',
  'qui',
  'ren',
  'to',
  'bal',
  'nu',
  'ges',
  'fi',
  'par',
  'os',
];
const VOCAB = Array.from({ length: 6000 }, () => {
  const n = 2 + Math.floor(vocabRandom() * 3);
  return Array.from({ length: n }, () => SYLLABLES[Math.floor(vocabRandom() * SYLLABLES.length)]).join('');
});
const FUNCTION_WORDS = ['the', 'is', 'of', 'and', 'to', 'in', 'a', 'for', 'with', 'on', 'our', 'we', 'what', 'how'];
// Zipf: the k-th word is drawn with probability ∝ 1/k.
const ZIPF_CDF = (() => {
  const w = VOCAB.map((_, k) => 1 / (k + 1));
  const total = w.reduce((a, b) => a + b, 0);
  let acc = 0;
  return w.map((x) => (acc += x / total));
})();
function zipfWord(random: () => number): string {
  const r = random();
  let lo = 0;
  let hi = ZIPF_CDF.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ZIPF_CDF[mid] < r) lo = mid + 1;
    else hi = mid;
  }
  return VOCAB[lo];
}

function sentence(random: () => number): string {
  const n = 8 + Math.floor(random() * 12);
  const words = Array.from({ length: n }, () =>
    random() < 0.35 ? FUNCTION_WORDS[Math.floor(random() * FUNCTION_WORDS.length)] : zipfWord(random),
  );
  const s = words.join(' ');
  return `${s[0].toUpperCase()}${s.slice(1)}.`;
}

function document(random: () => number, chars: number): string {
  const paragraphs: string[] = [];
  let length = 0;
  while (length < chars) {
    const p = Array.from({ length: 3 + Math.floor(random() * 5) }, () => sentence(random)).join(' ');
    paragraphs.push(p);
    length += p.length + 2;
  }
  return paragraphs.join('\n\n');
}

/** A fake embedder: a fixed random projection of word hashes. Deterministic, costs no network. */
const fakeEmbed: Embedder = async (texts) =>
  texts.map((t) => {
    const v = new Array<number>(DIMS).fill(0);
    for (const w of t.toLowerCase().match(/\p{L}+/gu) ?? []) {
      let h = 2166136261;
      for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619);
      v[(h >>> 0) % DIMS] += 1;
    }
    return v;
  });

async function indexCorpus(db: Db, botId: string, embed?: Embedder) {
  let fragments = 0;
  let bytes = 0;
  let sources = 0;
  const random = seededRandom(7); // the same corpus for every bot and every run
  const started = performance.now();
  while (fragments < TARGET_FRAGMENTS) {
    const text = document(random, SOURCE_CHARS);
    const res = await upsertSource(
      db,
      { botId, sourceId: `doc-${sources}`, title: `Document ${sources}`, text },
      { embed },
    );
    fragments += res.fragments;
    bytes += Buffer.byteLength(text);
    sources++;
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    sources,
    fragments,
    mib: Math.round((bytes / 1024 / 1024) * 100) / 100,
    seconds: Math.round(seconds * 100) / 100,
    mib_per_second: Math.round((bytes / 1024 / 1024 / seconds) * 100) / 100,
    fragments_per_second: Math.round(fragments / seconds),
  };
}

async function main() {
  if (flag('--help')) {
    console.log(readFileSync(__filename, 'utf8').split('*/')[0]);
    return;
  }
  const database = await benchDatabase(
    'agent-platform-bench-kb-',
    flag('--embedded') ? undefined : process.env.DATABASE_URL,
  );
  const url = database.url;

  const db = createDb(url, { max: 4, applicationName: 'bench-knowledge' });
  // The bench bots' signing secrets are sealed with a throwaway key: nothing ever opens them.
  const box = createSecretBox(randomBytes(32).toString('hex'));
  const workspaces: string[] = [];
  try {
    const plain = await bootstrapWorkspace(db, box, { workspaceName: 'bench-knowledge' });
    workspaces.push(plain.workspace_id);
    const indexing = await indexCorpus(db, plain.bot_id);

    // The largest single write the API accepts, for its latency.
    const bigText = document(seededRandom(9), 5 * 1024 * 1024).slice(0, 5 * 1024 * 1024);
    const bigStarted = performance.now();
    const big = await upsertSource(db, { botId: plain.bot_id, sourceId: 'big', text: bigText });
    const bigMs = performance.now() - bigStarted;
    await deleteSource(db, plain.bot_id, 'big'); // through the store: BM25's counts go with it

    await db.query('ANALYZE knowledge_fragments, knowledge_sources, knowledge_postings, knowledge_terms');

    const qr = seededRandom(11);
    const common = Array.from({ length: QUERIES }, () => `What is the ${zipfWord(qr)} of ${zipfWord(qr)}?`);
    const rare = Array.from(
      { length: QUERIES },
      () => `How does ${VOCAB[1000 + Math.floor(qr() * 5000)]} work with ${VOCAB[1000 + Math.floor(qr() * 5000)]}?`,
    );
    // Warm the cache and the plan shape before measuring.
    for (const q of common.slice(0, 20)) await retrievePassages(db, plain.bot_id, q);
    let found = 0;
    const commonMs = await timedOneByOne(QUERIES, async (i) => {
      found += (await retrievePassages(db, plain.bot_id, common[i])).length ? 1 : 0;
    });
    const rareMs = await timedOneByOne(QUERIES, (i) => retrievePassages(db, plain.bot_id, rare[i]));

    let hybrid: Record<string, unknown> | undefined;
    if (!flag('--no-hybrid')) {
      const embedded = await bootstrapWorkspace(db, box, { workspaceName: 'bench-knowledge-hybrid' });
      workspaces.push(embedded.workspace_id);
      const hybridIndexing = await indexCorpus(db, embedded.bot_id, fakeEmbed);
      await db.query('ANALYZE knowledge_fragments');
      const vectors = await fakeEmbed(common);
      for (let i = 0; i < 20; i++)
        await retrievePassages(db, embedded.bot_id, common[i], { queryEmbedding: vectors[i] });
      const hybridMs = await timedOneByOne(QUERIES, (i) =>
        retrievePassages(db, embedded.bot_id, common[i], { queryEmbedding: vectors[i] }),
      );
      hybrid = { dims: DIMS, indexing: hybridIndexing, retrieval_ms: summarize(hybridMs) };
    }

    const version = await db.query<{ v: string }>(`SELECT current_setting('server_version') AS v`);
    const results = {
      at: new Date().toISOString(),
      postgres: version.rows[0].v,
      database: database.embedded ? 'embedded (started by the bench)' : 'DATABASE_URL',
      indexing,
      largest_write: { mib: 5, fragments: big.fragments, ms: Math.round(bigMs) },
      retrieval_full_text_ms: {
        fragments: indexing.fragments,
        common_words: { ...summarize(commonMs), answered: `${found}/${QUERIES}` },
        rare_words: summarize(rareMs),
      },
      ...(hybrid ? { retrieval_hybrid: hybrid } : {}),
    };
    const out = JSON.stringify(results, null, 2);
    console.log(out);
    mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    writeFileSync(path.join(__dirname, 'results', 'knowledge.json'), `${out}\n`);
  } finally {
    if (!flag('--keep')) {
      for (const id of workspaces) await db.query(`DELETE FROM workspaces WHERE id = $1`, [id]).catch(() => undefined);
    }
    await db.end();
    await database.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
