"""Write ``ragworkbook/data/outputs/``: two RAG systems' answers to the eight questions, in RAGAS 0.2 format.

Notebook 15 scores these files as if another team had sent them. Both systems
are the workbook's own naive RAG with SmolLM2-135M; the answers were recorded
by running the embedded backend through ragworkbook, never typed:

- ``dense_ragas.jsonl``: the dense (MiniLM) retriever; the answers of
  ``ragworkbook/data/runs/naive_rag_embedded.json`` (notebook 07, recording ``07_naive_rag.json``);
- ``bm25_ragas.jsonl``: the BM25 retriever; its answers replayed from notebook 12's
  recording ``12_end_to_end.json``.

``reference_context_ids`` holds the chunks of the bundled notes that contain the
question's keyword (:func:`ragworkbook.corpus.ground_truth.keyword_qrels`). The
records have no ``id`` (RAGAS has none): the reader makes one from the question.
Re-running this script rewrites the same bytes::

    python scripts/make_outputs_data.py [OUT_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(out_dir: str | Path | None = None) -> list[Path]:
    from ragworkbook.corpus.answers import ragas_records, save_answer_records
    from ragworkbook.corpus.chunking import chunk_pages
    from ragworkbook.corpus.eval_set import load_eval_set
    from ragworkbook.corpus.ground_truth import keyword_qrels
    from ragworkbook.corpus.pages import load_corpus
    from ragworkbook.llm import get_generator
    from ragworkbook.paths import data_path
    from ragworkbook.pipeline.naive import NaiveRAG
    from ragworkbook.retrieval.bm25 import BM25Retriever

    out = Path(out_dir) if out_dir else data_path("outputs")
    out.mkdir(parents=True, exist_ok=True)
    eval_set = load_eval_set()
    chunks = chunk_pages(load_corpus())
    relevant = {qid: list(docs) for qid, docs in keyword_qrels(chunks, eval_set).items()}
    dense = json.loads(data_path("runs", "naive_rag_embedded.json").read_text(encoding="utf-8"))["answers"]
    generator = get_generator(backend="replay", recording=data_path("recordings", "12_end_to_end.json"))
    bm25 = NaiveRAG(BM25Retriever(chunks), generator, k=3).run(eval_set, progress=False)
    return [save_answer_records(ragas_records(dense, relevant), out / "dense_ragas.jsonl"),
            save_answer_records(ragas_records(bm25, relevant), out / "bm25_ragas.jsonl")]


if __name__ == "__main__":
    for path in main(sys.argv[1] if len(sys.argv) > 1 else None):
        print(f"wrote {path}")
