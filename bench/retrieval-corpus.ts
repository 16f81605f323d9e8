import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { splitText } from '../lib/knowledge/chunk';
import { seededRandom } from './measure';

/**
 * The judged sets and the latency corpus of bench/retrieval.ts. Not a benchmark itself (bench/run.ts skips it).
 */

export interface JudgedSet {
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

/** A judged set in the BEIR layout (corpus.jsonl, queries.jsonl, qrels.tsv). */
export function readSet(dir: string): JudgedSet {
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

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Where this machine keeps documentation in prose, when they exist. */
export function defaultProseRoots(root: string): string[] {
  return [
    path.join(root, 'node_modules'),
    '/usr/share/doc',
    '/usr/local/go/doc',
    path.join(os.homedir(), 'go', 'pkg', 'mod'),
  ].filter((d) => existsSync(d));
}

/**
 * Documentation files under `roots`: Markdown anywhere (README, docs, changelogs), and the release notes and
 * READMEs Debian packages keep as plain text (gzipped or not; not Debian's own packaging changelogs). Each file once
 * however many copies are installed (a package nested in several node_modules, a Go module in several versions):
 * the path without version segments and node_modules nesting, and the content, must both be new. At most 512 KiB
 * a file (a few huge changelogs would otherwise be a large share of the corpus).
 */
export function proseFiles(roots: string[]): { file: string; key: string }[] {
  const found: { file: string; key: string }[] = [];
  const markdown = /\.(md|markdown)(\.gz)?$/i;
  const plain = /^(NEWS|changelog|README|FAQ|HACKING|TODO)(\.(txt|gz))*$/i;
  const walk = (dir: string, depth: number) => {
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of entries) {
      const file = path.join(dir, name);
      let st;
      try {
        st = statSync(file);
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        if (depth < 12 && name !== '.git' && name !== 'testdata') walk(file, depth + 1);
      } else if (st.isFile() && st.size > 200 && st.size <= 512 * 1024) {
        if (markdown.test(name) || (dir.startsWith('/usr/share/doc') && plain.test(name))) {
          const key = file
            .replace(/^.*node_modules\//, 'node_modules/')
            .replace(/@v?[0-9][^/]*/g, '')
            .replace(/\.gz$/, '');
          found.push({ file, key });
        }
      }
    }
  };
  for (const r of roots) walk(r, 0);
  return found;
}

export interface CorpusSource {
  id: string;
  title: string;
  text: string;
  passages: number;
}

export interface LatencyCorpus {
  /** In the order they are written: judged documents and prose files shuffled together. */
  sources: CorpusSource[];
  /** The queries of every judged set, ids prefixed as the documents are (`set:id`). */
  queries: { id: string; set: string; text: string }[];
  qrels: Map<string, Map<string, number>>;
  description: {
    judged: Record<string, { documents: number; passages: number; queries: number }>;
    prose: { roots: string[]; files_found: number; files: number; mib: number; passages: number };
    passages: number;
  };
}

/**
 * The corpus latency is measured on: every document of the judged sets (one source each, title + text), then
 * documentation files of this machine (`proseFiles`, split by the platform's own splitter when written) in a seeded
 * random order until `passages` is reached; the whole list shuffled with the same seed, so any prefix is a mix
 * of both, as a growing knowledge base is. Source ids are `set:id` for judged documents and `prose:n` for files.
 */
export function latencyCorpus(sets: JudgedSet[], proseRoots: string[], passages: number): LatencyCorpus {
  const random = seededRandom(20261128);
  const sources: CorpusSource[] = [];
  const judged: LatencyCorpus['description']['judged'] = {};
  const queries: LatencyCorpus['queries'] = [];
  const qrels = new Map<string, Map<string, number>>();
  for (const set of sets) {
    let count = 0;
    for (const d of set.docs) {
      if (!(d.title + d.text).trim()) continue;
      const text = d.text || d.title;
      const n = splitText(text).length;
      sources.push({ id: `${set.name}:${d.id}`, title: d.title, text, passages: n });
      count += n;
    }
    for (const q of set.queries) {
      queries.push({ id: `${set.name}:${q.id}`, set: set.name, text: q.text });
      const rel = set.qrels.get(q.id);
      if (rel) qrels.set(`${set.name}:${q.id}`, new Map([...rel].map(([d, g]) => [`${set.name}:${d}`, g])));
    }
    judged[set.name] = { documents: set.docs.length, passages: count, queries: set.queries.length };
  }
  let total = sources.reduce((n, s) => n + s.passages, 0);
  const files = proseFiles(proseRoots);
  const seenKeys = new Set<string>();
  const seenHashes = new Set<string>();
  let proseFilesUsed = 0;
  let proseBytes = 0;
  let prosePassages = 0;
  for (const { file, key } of shuffle(files, random)) {
    if (total >= passages) break;
    if (seenKeys.has(key)) continue;
    seenKeys.add(key);
    let raw = readFileSync(file);
    if (file.endsWith('.gz')) raw = gunzipSync(raw);
    const text = raw.toString('utf8').replace(/\u0000/g, '');
    const hash = createHash('sha1').update(text).digest('hex');
    if (seenHashes.has(hash) || !text.trim()) continue;
    seenHashes.add(hash);
    const n = splitText(text).length;
    if (!n) continue;
    const title = key.split('/').slice(-2).join('/');
    sources.push({ id: `prose:${proseFilesUsed}`, title, text, passages: n });
    proseFilesUsed++;
    proseBytes += Buffer.byteLength(text);
    prosePassages += n;
    total += n;
  }
  return {
    sources: shuffle(sources, random),
    queries,
    qrels,
    description: {
      judged,
      prose: {
        roots: proseRoots,
        files_found: files.length,
        files: proseFilesUsed,
        mib: Math.round((proseBytes / 1024 / 1024) * 10) / 10,
        passages: prosePassages,
      },
      passages: total,
    },
  };
}
