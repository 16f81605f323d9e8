import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDb, type Db } from '../lib/db';
import { retrievePassages } from '../lib/knowledge/retrieve';
import { upsertSource } from '../lib/knowledge/store';
import { benchOptions, summarize } from './measure';
import { benchBot, startBenchStack } from './stack';

const HELP = `Usage: npm run bench -- retrieval [--set DIR] [--sizes 1000,10000,100000] [--no-latency]

Retrieval quality and speed of the platform's knowledge search (lib/knowledge/retrieve.ts).

  quality   loads a judged set in the BEIR layout (corpus.jsonl, queries.jsonl, qrels.tsv; default
            bench/data/retrieval/cranfield) into a new bot through the public API (POST /v1/admin/sources, one
            source a document: title + text), runs every query through the platform's retrieval, and BM25 as the
            bm25s Python package computes it on the same texts in the same run (Lucene variant, k1 1.2, b 0.75,
            English stop words, Snowball stemmer, title + text). Both rankings are scored by the same code here:
            nDCG@10 (graded gains, as pytrec_eval), Recall@5, Recall@10, over the whole set and over its halves
            (odd and even query positions), each with the platform/bm25s ratio.
  latency   one bot grown to each --sizes passages (~1000 characters each, the set's own sentences recombined by a
            seeded random draw, written through the store functions), then the set's queries each run once to warm
            up and once measured: p50/p99 of the retrieval statement as a chat turn runs it (5 passages), Postgres'
            CPU per retrieval, and how far the top 10 agree with exact BM25 over every posting (retrieve's
            \`exact\` option), which long posting lists are cut for.

Starts its own platform (as the tests do). bm25s and PyStemmer come from .tools/venv (scripts/setup.sh --bench,
run here when they are missing). Results: bench/results/retrieval.json.`;

interface JudgedSet {
  name: string;
  docs: { id: string; title: string; text: string }[];
  queries: { id: string; text: string }[];
  qrels: Map<string, Map<string, number>>;
}

function readJsonLines<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

function readSet(dir: string): JudgedSet {
  const docs = readJsonLines<{ _id: string; title?: string; text?: string }>(path.join(dir, 'corpus.jsonl')).map(
    (d) => ({ id: String(d._id), title: d.title ?? '', text: d.text ?? '' }),
  );
  const queries = readJsonLines<{ _id: string; text: string }>(path.join(dir, 'queries.jsonl')).map((q) => ({
    id: String(q._id),
    text: q.text,
  }));
  const qrels = new Map<string, Map<string, number>>();
  for (const line of readFileSync(path.join(dir, 'qrels.tsv'), 'utf8').split('\n').slice(1)) {
    const [q, d, s] = line.trim().split('\t');
    if (!q || !d) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q)!.set(d, Number(s));
  }
  return { name: path.basename(path.resolve(dir)), docs, queries, qrels };
}

/** Per query: nDCG@10 with graded gains (gain = judgement, log2 discount, ideal from all judgements), recalls. */
function evaluate(ranked: Map<string, string[]>, set: JudgedSet, queryIds: string[]) {
  let ndcg = 0;
  let r5 = 0;
  let r10 = 0;
  let n = 0;
  for (const q of queryIds) {
    const rel = set.qrels.get(q);
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
async function platformRanking(db: Db, botId: string, set: JudgedSet): Promise<Map<string, string[]>> {
  const ranked = new Map<string, string[]>();
  for (const q of set.queries) {
    const passages = await retrievePassages(db, botId, q.text, { limit: 50 });
    ranked.set(q.id, [...new Set(passages.map((p) => p.sourceId))]);
  }
  return ranked;
}

/** Deterministic PRNG (mulberry32): every run builds the same passages. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The set's sentences, and a writer of sources of `PARAGRAPHS` passages of ~1000 characters drawn from them. */
const PARAGRAPHS = 50;
function passageWriter(set: JudgedSet) {
  const sentences = set.docs.flatMap((d) =>
    d.text
      .split(/(?<=[.!?])\s+/)
      .map((s) => s.trim())
      .filter((s) => s.length > 20),
  );
  const titles = set.docs.map((d) => d.title).filter(Boolean);
  const random = rng(7);
  return () => {
    const paragraphs = Array.from({ length: PARAGRAPHS }, () => {
      let p = '';
      while (p.length < 900) p += `${sentences[Math.floor(random() * sentences.length)]} `;
      return p.trim();
    });
    return { title: titles[Math.floor(random() * titles.length)] ?? '', text: paragraphs.join('\n\n') };
  };
}

/** Milliseconds of CPU a Postgres backend has used so far (Linux /proc). */
function backendCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function latencyAt(db: Db, client: pg.Client, pid: number, botId: string, set: JudgedSet, fragments: number) {
  const questions = set.queries.map((q) => q.text);
  for (const q of questions) await retrievePassages(client, botId, q); // warm the cache and the plan
  const ms: number[] = [];
  const cpuBefore = backendCpuMs(pid);
  for (const q of questions) {
    const started = performance.now();
    await retrievePassages(client, botId, q);
    ms.push(performance.now() - started);
  }
  const cpuMs = (backendCpuMs(pid) - cpuBefore) / questions.length;
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
    retrieval_ms: summarize(ms),
    postgres_cpu_ms_per_retrieval: Math.round(cpuMs * 10) / 10,
    top10_identical_to_exact: Math.round((same / questions.length) * 1000) / 1000,
    top10_overlap_with_exact: Math.round((found / questions.length) * 1000) / 1000,
  };
}

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const dir = path.resolve(arg('--set', path.join(__dirname, 'data', 'retrieval', 'cranfield')));
  const sizes = arg('--sizes', '1000,10000,100000').split(',').map(Number);
  const latency = !process.argv.includes('--no-latency');
  if (!existsSync(path.join(dir, 'corpus.jsonl'))) throw new Error(`${dir}: no corpus.jsonl (BEIR layout)`);
  const set = readSet(dir);
  const reference = bm25sRanking(dir);

  const stack = await startBenchStack();
  const db = createDb(stack.platform.env.DATABASE_URL, { max: 4, applicationName: 'bench-retrieval' });
  try {
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
    const platform = await platformRanking(db, bot.bot_id, set);

    const ids = set.queries.map((q) => q.id);
    const halves = { odd: ids.filter((_, i) => i % 2 === 0), even: ids.filter((_, i) => i % 2 === 1) };
    const quality = Object.fromEntries(
      Object.entries({ all: ids, ...halves }).map(([part, qs]) => {
        const ours = evaluate(platform, set, qs);
        const theirs = evaluate(reference.ranked, set, qs);
        return [part, { platform: ours, bm25s: theirs, ratio: ratio(ours, theirs) }];
      }),
    );
    const all = quality.all;
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
      const r = quality[part].ratio;
      console.log(
        `  ${part} half ratio: nDCG@10 ${r.ndcg_at_10}, Recall@5 ${r.recall_at_5}, Recall@10 ${r.recall_at_10}`,
      );
    }

    const speed: Awaited<ReturnType<typeof latencyAt>>[] = [];
    const writes: { fragments: number; seconds: number; fragments_per_second: number }[] = [];
    if (latency) {
      const big = await benchBot(db, stack.platform.env.SECRET_ENCRYPTION_KEY);
      const client = new pg.Client({ connectionString: stack.platform.env.DATABASE_URL });
      await client.connect();
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      try {
        const source = passageWriter(set);
        let fragments = 0;
        let sources = 0;
        console.log('\nfragments   p50 ms   p99 ms   Postgres CPU ms   top 10 as exact   overlap');
        for (const size of sizes) {
          const started = performance.now();
          const before = fragments;
          while (fragments < size) {
            const res = await upsertSource(db, { botId: big.bot_id, sourceId: `p${sources++}`, ...source() });
            fragments += res.fragments;
          }
          const seconds = (performance.now() - started) / 1000;
          writes.push({
            fragments: fragments - before,
            seconds: Math.round(seconds * 10) / 10,
            fragments_per_second: Math.round((fragments - before) / seconds),
          });
          // What autovacuum does after such a load: statistics, and the visibility map index-only scans rely on.
          await db.query(
            'VACUUM (ANALYZE) knowledge_postings, knowledge_terms, knowledge_fragments, knowledge_sources',
          );
          const s = await latencyAt(db, client, pid, big.bot_id, set, fragments);
          speed.push(s);
          console.log(
            `${String(s.fragments).padStart(9)}${s.retrieval_ms.p50.toFixed(1).padStart(9)}${s.retrieval_ms.p99.toFixed(1).padStart(9)}${s.postgres_cpu_ms_per_retrieval.toFixed(1).padStart(18)}${s.top10_identical_to_exact.toFixed(3).padStart(18)}${s.top10_overlap_with_exact.toFixed(3).padStart(10)}`,
          );
        }
      } finally {
        await client.end();
      }
    }

    const results = {
      at: new Date().toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, load_average: os.loadavg() },
      set: { name: set.name, documents: set.docs.length, queries: set.queries.length },
      bm25s: { version: reference.version, seconds: reference.seconds },
      quality,
      ...(latency ? { latency: speed, writes } : {}),
    };
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
