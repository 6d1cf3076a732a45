"""Retrieval runs: search an eval set, turn the hits into run and ranking dicts, build a retriever by name.

:func:`to_run` turns results into a run ``{qid: {chunk_id: score}}`` for the
batch metrics in :mod:`ragworkbook.metrics.batch` and TREC tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ragworkbook.corpus.chunking import Chunk
from ragworkbook.corpus.eval_set import EvalItem, EvalSet, as_items
from ragworkbook.retrieval.base import Hit, Retriever

__all__ = ["RETRIEVERS", "build_retriever", "to_run", "to_rankings", "run_retriever"]

RETRIEVERS = ("dense", "bm25", "hybrid")


def build_retriever(kind: str, chunks: Sequence[Chunk]) -> Retriever:
    """``dense`` (MiniLM), ``bm25`` or ``hybrid`` (reciprocal-rank fusion of both) over ``chunks``."""
    if kind == "dense":
        from ragworkbook.retrieval.dense import DenseRetriever

        return DenseRetriever(chunks)
    if kind == "bm25":
        from ragworkbook.retrieval.bm25 import BM25Retriever

        return BM25Retriever(chunks)
    if kind == "hybrid":
        from ragworkbook.retrieval.bm25 import BM25Retriever
        from ragworkbook.retrieval.dense import DenseRetriever
        from ragworkbook.retrieval.hybrid import HybridRetriever

        return HybridRetriever([DenseRetriever(chunks), BM25Retriever(chunks)])
    raise ValueError(f"unknown retriever {kind!r}: use one of {', '.join(RETRIEVERS)}")


def to_run(results: Mapping[str, Sequence[Hit]], score: str = "retriever") -> dict[str, dict[str, float]]:
    """``{qid: [Hit, ...]}`` -> run ``{qid: {chunk_id: score}}`` (insertion order = rank order).

    ``score="retriever"`` keeps the retriever's scores (ties possible: a
    consumer that re-sorts by score may break them differently);
    ``score="rank"`` uses ``1 / rank``, strictly decreasing, so any tool
    recovers exactly this ranking.
    """
    if score not in ("retriever", "rank"):
        raise ValueError(f"score must be 'retriever' or 'rank', got {score!r}")
    return {
        qid: {h.chunk.id: (h.score if score == "retriever" else 1.0 / h.rank) for h in hits}
        for qid, hits in results.items()
    }


def to_rankings(results: Mapping[str, Sequence[Hit]]) -> dict[str, list[str]]:
    """``{qid: [Hit, ...]}`` -> ``{qid: [chunk_id, ...]}`` in rank order."""
    return {qid: [h.chunk.id for h in hits] for qid, hits in results.items()}


def run_retriever(
    retriever: Retriever, eval_set: EvalSet | Sequence[EvalItem], k: int = 5
) -> dict[str, list[Hit]]:
    """Search every question of ``eval_set``: ``{qid: [Hit, ...]}`` (top ``k``), in eval-set order."""
    items = as_items(eval_set)
    hits = retriever.search_many([it.question for it in items], k)
    return {it.id: h for it, h in zip(items, hits, strict=True)}
