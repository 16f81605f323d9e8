import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDb, type Db } from '../lib/db';
import { retrievePassages } from '../lib/knowledge/retrieve';
import { upsertSource } from '../lib/knowledge/store';
import { benchOptions, summarize } from './measure';
import { defaultProseRoots, type JudgedSet, latencyCorpus, readSet } from './retrieval-corpus';
import { benchBot, startBenchStack } from './stack';

const HELP = `Usage: npm run bench -- retrieval [--set DIR] [--latency-sets DIR,DIR] [--prose DIR,DIR]
                                  [--sizes 1000,10000,100000] [--repeat 3] [--no-latency] [--no-quality]

Retrieval quality and speed of the platform's knowledge search (lib/knowledge/retrieve.ts).

  quality   loads a judged set in the BEIR layout (corpus.jsonl, queries.jsonl, qrels.tsv; default
            bench/data/retrieval/cranfield) into a new bot through the public API (POST /v1/admin/sources, one
            source a document: title + text), runs every query through the platform's retrieval, and BM25 as the
            bm25s Python package computes it on the same texts in the same run (Lucene variant, k1 1.2, b 0.75,
            English stop words, Snowball stemmer, title + text). Both rankings are scored by the same code here:
            nDCG@10 (graded gains, as pytrec_eval), Recall@5, Recall@10, over the whole set and over its halves
            (odd and even query positions), each with the platform/bm25s ratio. bench/smart-to-beir.ts converts
            the classic CISI, CACM and NPL collections to this layout.
  latency   one bot grown to each --sizes passages from real text (bench/retrieval-corpus.ts): every document of
            --set and of --latency-sets, and documentation files of this machine (--prose folders; default the
            repository's node_modules, /usr/share/doc, /usr/local/go/doc, ~/go/pkg/mod: Markdown, and Debian's
            plain-text NEWS/changelog/README), split by the platform's own splitter, shuffled together by a
            seeded draw, written through the store functions. Every set's questions are then run once to warm up
            and --repeat times measured: p50/p99 of the retrieval statement as a chat turn runs it (5 passages;
            medians over the passes), Postgres' CPU per retrieval, and how far the top 10 agree with exact BM25
            over every posting (retrieve's \`exact\` option), which long posting lists are cut for. Once every
            document is in, each set's judged questions are scored among all of it, as returned and exactly.

Starts its own platform (as the tests do). bm25s and PyStemmer come from .tools/venv (scripts/setup.sh --bench,
run here when they are missing). Results: bench/results/retrieval.json.`;

/** Per query: nDCG@10 with graded gains (gain = judgement, log2 discount, ideal from all judgements), recalls. */
function evaluate(ranked: Map<string, string[]>, qrels: JudgedSet['qrels'], queryIds: string[]) {
  let ndcg = 0;
  let r5 = 0;
  let r10 = 0;
  let n = 0;
  for (const q of queryIds) {
    const rel = qrels.get(q);
    if (!rel) continue; // as BEIR: only judged queries count
    const run = (ranked.get(q) ?? []).slice(0, 10);
    const dcg = run.reduce((sum, d, i) => sum + (rel.get(d) ?? 0) / Math.log2(i + 2), 0);
    const ideal = [...rel.values()]
      .sort((a, b) => b - a)
      .slice(0, 10)
      .reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0);
    const relevant = [...rel].filter(([, g]) => g > 0).map(([d]) => d);
    ndcg += ideal > 0 ? dcg / ideal : 0;
    if (relevant.length) {
      r5 += run.slice(0, 5).filter((d) => rel.get(d)! > 0).length / relevant.length;
      r10 += run.filter((d) => (rel.get(d) ?? 0) > 0).length / relevant.length;
    }
    n++;
  }
  const round = (x: number) => Math.round((x / n) * 10000) / 10000;
  return { queries: n, ndcg_at_10: round(ndcg), recall_at_5: round(r5), recall_at_10: round(r10) };
}

type Scores = ReturnType<typeof evaluate>;
const ratio = (a: Scores, b: Scores) => ({
  ndcg_at_10: Math.round((a.ndcg_at_10 / b.ndcg_at_10) * 1000) / 1000,
  recall_at_5: Math.round((a.recall_at_5 / b.recall_at_5) * 1000) / 1000,
  recall_at_10: Math.round((a.recall_at_10 / b.recall_at_10) * 1000) / 1000,
});

const ROOT = path.join(__dirname, '..');
const PYTHON = path.join(ROOT, '.tools', 'venv', 'bin', 'python');

/** bm25s's ranking of every query (document ids, best first), from bench/retrieval-bm25s.py. */
function bm25sRanking(dir: string): { ranked: Map<string, string[]>; seconds: number; version: string } {
  const probe = () =>
    spawnSync(PYTHON, ['-c', 'import bm25s, Stemmer; print(bm25s.__version__)'], { encoding: 'utf8' });
  let version = probe();
  if (version.status !== 0) {
    console.error('retrieval: installing bm25s into .tools/venv (scripts/setup.sh --bench)');
    const setup = spawnSync('bash', [path.join(ROOT, 'scripts', 'setup.sh'), '--bench'], { stdio: 'inherit' });
    if (setup.status !== 0) throw new Error('scripts/setup.sh --bench failed');
    version = probe();
    if (version.status !== 0) throw new Error(`bm25s is not importable: ${version.stderr}`);
  }
  const started = performance.now();
  const run = spawnSync(PYTHON, [path.join(__dirname, 'retrieval-bm25s.py'), dir, '100'], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`bm25s failed: ${run.stderr}`);
  const out = JSON.parse(run.stdout) as Record<string, string[]>;
  return {
    ranked: new Map(Object.entries(out)),
    seconds: Math.round((performance.now() - started) / 100) / 10,
    version: version.stdout.trim(),
  };
}

/** Sources ranked by the platform: the order of their first passage among the 50 best. */
async function platformRanking(
  db: Db,
  botId: string,
  queries: { id: string; text: string }[],
  exact = false,
): Promise<Map<string, string[]>> {
  const ranked = new Map<string, string[]>();
  for (const q of queries) {
    const passages = await retrievePassages(db, botId, q.text, { limit: 50, exact });
    ranked.set(q.id, [...new Set(passages.map((p) => p.sourceId))]);
  }
  return ranked;
}

/** Milliseconds of CPU a Postgres backend has used so far (Linux /proc). */
function backendCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const load1 = () => Math.round(os.loadavg()[0] * 10) / 10;

/**
 * The questions timed `repeat` times after a warm-up pass (medians over the passes of each pass's p50 and p99, and
 * of Postgres' CPU per retrieval), then their top 10 compared with exact BM25 over every posting.
 */
async function latencyAt(
  db: Db,
  client: pg.Client,
  pid: number,
  botId: string,
  questions: string[],
  fragments: number,
  repeat: number,
) {
  for (const q of questions) await retrievePassages(client, botId, q); // warm the cache and the plan
  const passes: { p50: number; p99: number; cpu: number; load: number }[] = [];
  for (let r = 0; r < repeat; r++) {
    const ms: number[] = [];
    const load = load1();
    const cpuBefore = backendCpuMs(pid);
    for (const q of questions) {
      const started = performance.now();
      await retrievePassages(client, botId, q);
      ms.push(performance.now() - started);
    }
    const s = summarize(ms);
    passes.push({ p50: s.p50, p99: s.p99, cpu: (backendCpuMs(pid) - cpuBefore) / questions.length, load });
  }
  // Agreement with exact BM25 (every posting read): identical top 10, and the share of its top 10 found.
  let same = 0;
  let found = 0;
  for (const q of questions) {
    const fast = (await retrievePassages(db, botId, q, { limit: 10 })).map((p) => `${p.sourceId}\u0000${p.text}`);
    const exact = (await retrievePassages(db, botId, q, { limit: 10, exact: true })).map(
      (p) => `${p.sourceId}\u0000${p.text}`,
    );
    if (fast.join() === exact.join()) same++;
    found += exact.length ? fast.filter((p) => exact.includes(p)).length / exact.length : 1;
  }
  return {
    fragments,
    questions: questions.length,
    retrieval_ms: { p50: median(passes.map((p) => p.p50)), p99: median(passes.map((p) => p.p99)) },
    postgres_cpu_ms_per_retrieval: Math.round(median(passes.map((p) => p.cpu)) * 10) / 10,
    passes,
    top10_identical_to_exact: Math.round((same / questions.length) * 1000) / 1000,
    top10_overlap_with_exact: Math.round((found / questions.length) * 1000) / 1000,
  };
}

/** Quality: the set through the public API, one source a document, ranked beside bm25s's ranking of it. */
async function measureQuality(
  db: Db,
  stack: Awaited<ReturnType<typeof startBenchStack>>,
  set: ReturnType<typeof readSet>,
  reference: NonNullable<ReturnType<typeof bm25sRanking>>,
) {
  // Quality: the set through the public API, one source a document.
  const bot = await benchBot(db, stack.platform.env.SECRET_ENCRYPTION_KEY);
  const api = stack.platform.apiUrl;
  const loadStarted = performance.now();
  // A document without any text cannot be a source (the API refuses it: 400); bm25s indexes it as an empty one.
  const writable = set.docs.filter((d) => (d.title + d.text).trim());
  let next = 0;
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < writable.length) {
        const doc = writable[next++];
        const res = await fetch(`${api}/v1/admin/sources`, {
          method: 'POST',
          headers: { 'X-Bot-Key': bot.keys.secret_key, 'Content-Type': 'application/json' },
          body: JSON.stringify({ source_id: doc.id, title: doc.title, text: doc.text || doc.title }),
        });
        if (res.status !== 202) failures.push(`${doc.id}: ${res.status} ${await res.text()}`);
      }
    }),
  );
  if (failures.length) throw new Error(`${failures.length} documents refused: ${failures.slice(0, 3).join('; ')}`);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const platform = await platformRanking(db, bot.bot_id, set.queries);

  const ids = set.queries.map((q) => q.id);
  const halves = { odd: ids.filter((_, i) => i % 2 === 0), even: ids.filter((_, i) => i % 2 === 1) };
  const scored = Object.fromEntries(
    Object.entries({ all: ids, ...halves }).map(([part, qs]) => {
      const ours = evaluate(platform, set.qrels, qs);
      const theirs = evaluate(reference.ranked, set.qrels, qs);
      return [part, { platform: ours, bm25s: theirs, ratio: ratio(ours, theirs) }];
    }),
  );
  const all = scored.all;
  console.log(
    `\n${set.name}: ${writable.length} documents (${set.docs.length - writable.length} empty ones left out; loaded in ${loadSeconds.toFixed(1)} s), ${all.platform.queries} judged queries`,
  );
  console.log('              nDCG@10  Recall@5  Recall@10');
  for (const [label, s] of [
    ['platform', all.platform],
    [`bm25s ${reference.version}`, all.bm25s],
    ['ratio', all.ratio],
  ] as const) {
    console.log(
      `${label.padEnd(14)}${s.ndcg_at_10.toFixed(3).padStart(7)}${s.recall_at_5.toFixed(3).padStart(10)}${s.recall_at_10.toFixed(3).padStart(11)}`,
    );
  }
  for (const part of ['odd', 'even'] as const) {
    const r = scored[part].ratio;
    console.log(
      `  ${part} half ratio: nDCG@10 ${r.ndcg_at_10}, Recall@5 ${r.recall_at_5}, Recall@10 ${r.recall_at_10}`,
    );
  }
  return {
    set: { name: set.name, documents: set.docs.length, queries: set.queries.length },
    bm25s: { version: reference.version, seconds: reference.seconds },
    quality: scored,
  };
}

/** Latency: the statement at each size of a corpus of real text, and its agreement with exact BM25. */
async function measureLatency(
  db: Db,
  stack: Awaited<ReturnType<typeof startBenchStack>>,
  latencySets: ReturnType<typeof readSet>[],
  proseRoots: string[],
  sizes: number[],
  repeat: number,
) {
  const corpus = latencyCorpus(latencySets, proseRoots, Math.max(...sizes));
  const d = corpus.description;
  console.log(
    `\nLatency corpus: ${Object.entries(d.judged)
      .map(([name, j]) => `${name} ${j.documents} documents`)
      .join(
        ', ',
      )}; ${d.prose.files} documentation files of this machine (${d.prose.mib} MiB, ${d.prose.passages} passages); ${d.passages} passages, ${corpus.queries.length} questions`,
  );
  const big = await benchBot(db, stack.platform.env.SECRET_ENCRYPTION_KEY);
  const client = new pg.Client({ connectionString: stack.platform.env.DATABASE_URL });
  await client.connect();
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  const speed: Awaited<ReturnType<typeof latencyAt>>[] = [];
  const writes: { fragments: number; seconds: number; fragments_per_second: number }[] = [];
  let inCorpus: Record<string, unknown> | undefined;
  try {
    let fragments = 0;
    let next = 0;
    console.log('\nfragments   p50 ms   p99 ms   Postgres CPU ms   top 10 as exact   overlap   load');
    for (const size of sizes) {
      const started = performance.now();
      const before = fragments;
      // The last size takes the rest of the corpus: every judged document is in when its questions are scored.
      const last = size === sizes[sizes.length - 1];
      while ((last || fragments < size) && next < corpus.sources.length) {
        const s = corpus.sources[next++];
        const res = await upsertSource(db, { botId: big.bot_id, sourceId: s.id, title: s.title, text: s.text });
        fragments += res.fragments;
      }
      const seconds = (performance.now() - started) / 1000;
      writes.push({
        fragments: fragments - before,
        seconds: Math.round(seconds * 10) / 10,
        fragments_per_second: Math.round((fragments - before) / seconds),
      });
      // What autovacuum does after such a load: statistics, and the visibility map index-only scans rely on.
      await db.query('VACUUM (ANALYZE) knowledge_postings, knowledge_terms, knowledge_fragments, knowledge_sources');
      const questions = corpus.queries.map((q) => q.text);
      const s = await latencyAt(db, client, pid, big.bot_id, questions, fragments, repeat);
      speed.push(s);
      console.log(
        `${String(s.fragments).padStart(9)}${s.retrieval_ms.p50.toFixed(1).padStart(9)}${s.retrieval_ms.p99.toFixed(1).padStart(9)}${s.postgres_cpu_ms_per_retrieval.toFixed(1).padStart(18)}${s.top10_identical_to_exact.toFixed(3).padStart(18)}${s.top10_overlap_with_exact.toFixed(3).padStart(10)}   ${s.passes.map((p) => p.load).join('/')}`,
      );
    }
    if (next === corpus.sources.length) {
      // Every judged document is in: each set's judged questions, ranked among all of it, as returned and exactly.
      const fast = await platformRanking(db, big.bot_id, corpus.queries);
      const exact = await platformRanking(db, big.bot_id, corpus.queries, true);
      inCorpus = Object.fromEntries(
        latencySets.map((ls) => {
          const ids = corpus.queries.filter((q) => q.set === ls.name).map((q) => q.id);
          const ours = evaluate(fast, corpus.qrels, ids);
          const full = evaluate(exact, corpus.qrels, ids);
          return [ls.name, { returned: ours, exact: full, ratio: ratio(ours, full) }];
        }),
      );
      console.log(`\nJudged questions among all ${fragments} passages: nDCG@10 / Recall@5 as returned (exact BM25)`);
      for (const [name, q] of Object.entries(inCorpus) as [string, { returned: Scores; exact: Scores }][]) {
        console.log(
          `  ${name.padEnd(10)} ${q.returned.ndcg_at_10.toFixed(3)} (${q.exact.ndcg_at_10.toFixed(3)})   ${q.returned.recall_at_5.toFixed(3)} (${q.exact.recall_at_5.toFixed(3)})`,
        );
      }
    }
  } finally {
    await client.end();
  }
  return {
    latency_corpus: corpus.description,
    latency: speed,
    writes,
    ...(inCorpus ? { quality_in_latency_corpus: inCorpus } : {}),
  };
}

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const dir = path.resolve(arg('--set', path.join(__dirname, 'data', 'retrieval', 'cranfield')));
  const sizes = arg('--sizes', '1000,10000,100000').split(',').map(Number);
  const repeat = Number(arg('--repeat', '3'));
  const latency = !process.argv.includes('--no-latency');
  const quality = !process.argv.includes('--no-quality');
  if (!existsSync(path.join(dir, 'corpus.jsonl'))) throw new Error(`${dir}: no corpus.jsonl (BEIR layout)`);
  const set = readSet(dir);
  const latencySets = [
    set,
    ...arg('--latency-sets', '')
      .split(',')
      .filter(Boolean)
      .map((d) => readSet(path.resolve(d))),
  ];
  const proseRoots = arg('--prose', defaultProseRoots(ROOT).join(',')).split(',').filter(Boolean);
  const reference = quality ? bm25sRanking(dir) : null;

  const stack = await startBenchStack();
  const db = createDb(stack.platform.env.DATABASE_URL, { max: 4, applicationName: 'bench-retrieval' });
  const results: Record<string, unknown> = {
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, load_average_at_start: os.loadavg() },
  };
  try {
    if (quality && reference) Object.assign(results, await measureQuality(db, stack, set, reference));
    if (latency) Object.assign(results, await measureLatency(db, stack, latencySets, proseRoots, sizes, repeat));

    results.load_average_at_end = os.loadavg();
    mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    writeFileSync(path.join(__dirname, 'results', 'retrieval.json'), `${JSON.stringify(results, null, 2)}\n`);
    console.log('\nResults: bench/results/retrieval.json');
  } finally {
    await db.end();
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
