"""BM25 as the bm25s package computes it, for bench/retrieval.ts: reads a BEIR-layout folder and prints, as JSON on
stdout, each query's ranked document ids ({"query id": ["doc id", ...]}), so the TypeScript side scores this ranking
and the platform's with one evaluation code. Settings (the shared README's): Lucene variant, k1 1.2, b 0.75, English
stop words, Snowball stemmer, title + text.

Usage: .tools/venv/bin/python bench/retrieval-bm25s.py <set folder> [k]
"""
import json
import sys

import bm25s
import Stemmer


def main() -> None:
    folder = sys.argv[1]
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    ids, texts = [], []
    with open(f"{folder}/corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                doc = json.loads(line)
                ids.append(doc["_id"])
                texts.append(f"{doc.get('title', '')} {doc.get('text', '')}")
    queries = []
    with open(f"{folder}/queries.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                q = json.loads(line)
                queries.append((q["_id"], q["text"]))
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    tokens = bm25s.tokenize([t for _, t in queries], stopwords="en", stemmer=stemmer, show_progress=False)
    docs, scores = retriever.retrieve(tokens, k=min(k, len(ids)), show_progress=False, n_threads=1)
    out = {}
    for (qid, _), row, row_scores in zip(queries, docs, scores):
        # A query none of whose words is in the corpus scores 0 everywhere: nothing was found.
        out[qid] = [ids[d] for d, s in zip(row, row_scores) if s > 0]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
