import { readFileSync } from 'node:fs';
import path from 'node:path';
import { splitDocument } from '../lib/knowledge/chunk';
import type { Block } from '../lib/knowledge/document';
import { searchText } from '../lib/knowledge/normalize';

/**
 * How large passages should be (docs/decisions/146-passages-keep-context.md). Long documents are made from the Cranfield
 * set (bench/data/retrieval/cranfield): each "manual" holds 20 abstracts, each a section under its title. Every
 * size is split with the real splitter, ranked with BM25 (k1 1.2, b 0.75, over the index's own normalization, title
 * and headings with the body), and judged on what a turn gives the model: the best 5 passages. A relevant abstract
 * counts as found when one of the 5 lies in its section. Prints recall@5, nDCG@5 and the characters the 5 passages
 * cost. Usage: npm run bench -- passage-size
 */
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(
    [
      'Usage: npm run bench -- passage-size',
      '',
      'Splits long documents made of Cranfield abstracts (bench/data/retrieval/cranfield) at passage sizes of',
      '300-1500 characters and ranks them with BM25: recall@5, nDCG@5 and the characters the best 5 passages cost,',
      'with and without headings in the index. No platform is started; prints a table.',
    ].join('\n'),
  );
  process.exit(0);
}
const DATA = path.join(__dirname, 'data', 'retrieval', 'cranfield');
const PER_DOC = 20;
const TOP = 5;

const lines = (f: string) => readFileSync(path.join(DATA, f), 'utf8').split('\n').filter(Boolean);
const corpus = lines('corpus.jsonl').map((l) => JSON.parse(l) as { _id: string; title: string; text: string });
const queries = lines('queries.jsonl').map((l) => JSON.parse(l) as { _id: string; text: string });
const qrels = new Map<string, Map<string, number>>();
for (const l of lines('qrels.tsv').slice(1)) {
  const [q, d, s] = l.split('\t');
  if (!qrels.has(q)) qrels.set(q, new Map());
  qrels.get(q)!.set(d, Number(s));
}

const STOP = new Set(
  'a an the of in on at to for and or is are was were be by with as from that this it its which'.split(' '),
);
const tokens = (t: string) =>
  searchText(t)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1 && !STOP.has(w))
    .map((w) => w.replace(/(ies|es|s|ing|ed)$/, ''));

function run(opts: { min: number; target: number; max: number; overlap: number }, withHeadings: boolean) {
  // Abstracts are split into sentences-as-paragraphs so size, not the abstract's own length, decides a passage.
  const passages: { abstract: string; terms: string[] }[] = [];
  for (let i = 0; i < corpus.length; i += PER_DOC) {
    const blocks: Block[] = [{ kind: 'heading', level: 1, text: `Manual ${i / PER_DOC + 1}` }];
    const sectionOf: string[] = [];
    for (const d of corpus.slice(i, i + PER_DOC)) {
      blocks.push({ kind: 'heading', level: 2, text: `${d._id}: ${d.title}` });
      for (const sentence of d.text.split(/ \. /)) blocks.push({ kind: 'paragraph', text: `${sentence} .` });
      sectionOf.push(d._id);
    }
    for (const p of splitDocument({ blocks }, opts)) {
      const abstract = p.headingPath[1]?.split(':')[0] ?? '';
      const context = withHeadings ? p.headingPath.map((h) => h.replace(/^\d+: /, '')).join(' ') : '';
      passages.push({ abstract, terms: tokens(`${context} ${p.text}`) });
    }
  }
  const df = new Map<string, number>();
  for (const p of passages) for (const t of new Set(p.terms)) df.set(t, (df.get(t) ?? 0) + 1);
  const avg = passages.reduce((s, p) => s + p.terms.length, 0) / passages.length;
  const n = passages.length;
  let recall = 0;
  let ndcg = 0;
  let chars = 0;
  let judged = 0;
  for (const q of queries) {
    const rel = qrels.get(q._id);
    if (!rel?.size) continue;
    judged++;
    const qt = [...new Set(tokens(q.text))];
    const scored = passages.map((p, i) => {
      const tf = new Map<string, number>();
      for (const t of p.terms) tf.set(t, (tf.get(t) ?? 0) + 1);
      let s = 0;
      for (const t of qt) {
        const f = tf.get(t);
        if (!f) continue;
        const idf = Math.log(1 + (n - df.get(t)! + 0.5) / (df.get(t)! + 0.5));
        s += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * p.terms.length) / avg));
      }
      return { i, s };
    });
    const top = scored.sort((a, b) => b.s - a.s).slice(0, TOP);
    const found = new Set<string>();
    let dcg = 0;
    top.forEach(({ i }, rank) => {
      const a = passages[i].abstract;
      const g = rel.get(a) ?? 0;
      if (g && !found.has(a)) dcg += (2 ** g - 1) / Math.log2(rank + 2);
      if (g) found.add(a);
    });
    const ideal = [...rel.values()].sort((a, b) => b - a).slice(0, TOP);
    const idcg = ideal.reduce((s, g, r) => s + (2 ** g - 1) / Math.log2(r + 2), 0);
    recall += found.size / Math.min(rel.size, TOP);
    ndcg += dcg / idcg;
    chars += top.reduce((s, { i }) => s + passages[i].terms.join(' ').length, 0);
  }
  return { passages: n, recall5: recall / judged, ndcg5: ndcg / judged, promptChars: Math.round(chars / judged) };
}

const sizes = [300, 500, 700, 1000, 1500];
console.log('target  max   passages  recall@5  nDCG@5  chars in top 5   (headings in the index: yes / no)');
for (const target of sizes) {
  const opts = {
    min: Math.round(target * 0.6),
    target,
    max: Math.round(target * 1.4),
    overlap: Math.min(100, Math.round(target * 0.2)),
  };
  const a = run(opts, true);
  const b = run(opts, false);
  console.log(
    `${String(target).padStart(6)} ${String(opts.max).padStart(5)} ${String(a.passages).padStart(9)}   ` +
      `${a.recall5.toFixed(3)} / ${b.recall5.toFixed(3)}   ${a.ndcg5.toFixed(3)} / ${b.ndcg5.toFixed(3)}   ${a.promptChars}`,
  );
}
