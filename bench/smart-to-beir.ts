import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const HELP = `Usage: node --import tsx bench/smart-to-beir.ts --set cisi|cacm|npl --in DIR --out DIR

Converts a classic SMART-format test collection into the BEIR layout bench/retrieval.ts reads (corpus.jsonl,
queries.jsonl, qrels.tsv; judgements are binary, each relevant pair scores 1). Keep the output outside the repository:
these sets are for measuring, not for committing.

  cisi   DIR/cisi-CISI.ALL (.I records: .T title, .A authors, .W abstract, .X references), DIR/cisi-CISI.QRY,
         DIR/cisi-CISI.REL ("qid docid 0 0" rows)
  cacm   DIR/cacm-cacm.all (.I records: .T, .W, .B, .A, .N, .X), DIR/cacm-query.text, DIR/cacm-qrels.text
  npl    DIR/npl-doc-text and DIR/npl-query-text ("id\\ntext\\n   /" records, no titles), DIR/npl-rlv-ass
         ("qid\\n docids…\\n   /")

A document's title is its .T field, its text the abstract (.W) followed by its authors (.A): the fields a reader of the
record sees, as most evaluations of these sets index them. A query's text is its .T and .W fields. Query and document
ids are the numbers of the records (leading zeros dropped).`;

interface Doc {
  _id: string;
  title: string;
  text: string;
}

/** The records of a SMART file: `.I n` starts one, `.X` lines start its fields. */
function smartRecords(file: string): { id: string; fields: Record<string, string> }[] {
  const out: { id: string; fields: Record<string, string> }[] = [];
  let current: { id: string; fields: Record<string, string> } | null = null;
  let field = '';
  for (const line of readFileSync(file, 'utf8').split(/\r?\n/)) {
    const start = /^\.I\s+(\d+)/.exec(line);
    if (start) {
      current = { id: String(Number(start[1])), fields: {} };
      out.push(current);
      field = '';
      continue;
    }
    const tag = /^\.([A-Z])\s*$/.exec(line);
    if (tag) {
      field = tag[1];
      continue;
    }
    if (current && field) current.fields[field] = current.fields[field] ? `${current.fields[field]}\n${line}` : line;
  }
  return out;
}

const clean = (s: string | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();

/** NPL's records: an id line, text lines, a line holding "/". */
function slashRecords(file: string): { id: string; lines: string[] }[] {
  const out: { id: string; lines: string[] }[] = [];
  let current: { id: string; lines: string[] } | null = null;
  for (const line of readFileSync(file, 'utf8').split(/\r?\n/)) {
    if (line.trim() === '/') {
      current = null;
    } else if (!current) {
      if (line.trim()) {
        current = { id: String(Number(line.trim())), lines: [] };
        out.push(current);
      }
    } else {
      current.lines.push(line);
    }
  }
  return out;
}

function convert(set: string, dir: string) {
  const file = (name: string) => path.join(dir, name);
  if (set === 'npl') {
    const docs = slashRecords(file('npl-doc-text')).map((r) => ({
      _id: r.id,
      title: '',
      text: clean(r.lines.join(' ')),
    }));
    const queries = slashRecords(file('npl-query-text')).map((r) => ({ _id: r.id, text: clean(r.lines.join(' ')) }));
    const qrels = slashRecords(file('npl-rlv-ass')).flatMap((r) =>
      r.lines
        .join(' ')
        .split(/\s+/)
        .filter(Boolean)
        .map((d) => [r.id, String(Number(d))] as const),
    );
    return { docs, queries, qrels };
  }
  const files: Record<string, [string, string, string]> = {
    cisi: ['cisi-CISI.ALL', 'cisi-CISI.QRY', 'cisi-CISI.REL'],
    cacm: ['cacm-cacm.all', 'cacm-query.text', 'cacm-qrels.text'],
  };
  if (!files[set]) throw new Error(`--set: cisi, cacm or npl, not ${set}`);
  const [all, qry, rel] = files[set];
  const docs: Doc[] = smartRecords(file(all)).map((r) => ({
    _id: r.id,
    title: clean(r.fields.T),
    text: [clean(r.fields.W), clean(r.fields.A)].filter(Boolean).join(' '),
  }));
  const queries = smartRecords(file(qry))
    .map((r) => ({ _id: r.id, text: [clean(r.fields.T), clean(r.fields.W)].filter(Boolean).join(' ') }))
    .filter((q) => q.text);
  const qrels = readFileSync(file(rel), 'utf8')
    .split(/\r?\n/)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 2 && /^\d+$/.test(f[0]) && /^\d+$/.test(f[1]))
    .map((f) => [String(Number(f[0])), String(Number(f[1]))] as const);
  return { docs, queries, qrels };
}

function main() {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h') || !args.length) {
    console.log(HELP);
    process.exit(args.length ? 0 : 2);
  }
  const opt = (name: string) => {
    const i = args.indexOf(name);
    if (i < 0 || !args[i + 1]) throw new Error(`${name} is required (--help)`);
    return args[i + 1];
  };
  const set = opt('--set');
  const out = path.resolve(opt('--out'));
  const { docs, queries, qrels } = convert(set, path.resolve(opt('--in')));
  const ids = new Set(docs.map((d) => d._id));
  const unique = [...new Map(qrels.filter(([, d]) => ids.has(d)).map((p) => [p.join('\t'), p])).values()];
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'corpus.jsonl'), docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
  writeFileSync(path.join(out, 'queries.jsonl'), queries.map((q) => JSON.stringify(q)).join('\n') + '\n');
  writeFileSync(
    path.join(out, 'qrels.tsv'),
    `query-id\tcorpus-id\tscore\n${unique.map(([q, d]) => `${q}\t${d}\t1`).join('\n')}\n`,
  );
  const judged = new Set(unique.map(([q]) => q));
  console.log(
    `${set}: ${docs.length} documents (${docs.filter((d) => !d.text).length} with no text), ${queries.length} queries (${queries.filter((q) => judged.has(q._id)).length} judged), ${unique.length} relevant pairs → ${out}`,
  );
}

main();
