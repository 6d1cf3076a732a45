"""Retrievers with one interface: dense (MiniLM), BM25 (bm25s) and hybrid (reciprocal-rank fusion).

Every retriever is built from a list of :class:`~ragworkbook.chunking.Chunk`
and answers ``.search(query, k) -> list[Hit]`` and ``.search_many(queries, k)``.
``.scores(queries)`` returns the full (n_queries, n_chunks) score matrix.

Conventions shared by all of them:

- a :class:`Hit` holds the chunk, its score and its 1-based rank;
- ranking is by score descending, ties broken by chunk order (the order of
  the ``chunks`` list), so the same query always gives the same ranking;
- ``k`` larger than the corpus returns every chunk; ``k <= 0`` is an error;
- chunks with score 0 are still ranked (they fill the list after the matches).

:func:`to_run` turns results into a run ``{qid: {chunk_id: score}}`` for the
batch metrics in :mod:`ragworkbook.retrieval_metrics` and TREC tools.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ragworkbook.chunking import Chunk, chunks_by_id
from ragworkbook.datasets import Corpus, EvalItem, EvalSet, Page

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.batch_metrics import RunResult

__all__ = [
    "Hit",
    "Retriever",
    "DenseRetriever",
    "BM25Retriever",
    "HybridRetriever",
    "tokenize",
    "to_run",
    "to_rankings",
    "run_retriever",
    "evaluate_retriever",
    "evaluate_dense_on_pages",
    "c1_metrics",
]


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk: the chunk, its retriever score and its 1-based rank."""

    chunk: Chunk
    score: float
    rank: int

    @property
    def id(self) -> str:
        """The chunk id, e.g. ``"p05-c02"``."""
        return self.chunk.id


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an int, got {k!r}")
    if k <= 0:
        raise ValueError(f"k must be a positive integer, got {k}")
    return int(k)


def _check_queries(queries: Sequence[str]) -> list[str]:
    if isinstance(queries, str):
        raise TypeError("search_many() takes a list of query strings, not a single string; use search()")
    out = list(queries)
    for i, q in enumerate(out):
        if not isinstance(q, str):
            raise TypeError(f"query {i} must be a string, got {type(q).__name__}")
    return out


def _rank_order(scores: np.ndarray) -> np.ndarray:
    """Indices by score descending, ties by index ascending (stable)."""
    if np.isnan(scores).any():
        raise ValueError("a retriever produced NaN scores; check the inputs (empty or non-text chunks?)")
    return np.argsort(-scores, kind="stable")


class Retriever:
    """Base class: subclasses implement :meth:`scores`."""

    name = "retriever"

    def __init__(self, chunks: Sequence[Chunk]):
        chunks = list(chunks)
        if not chunks:
            raise ValueError("a retriever needs at least one chunk; the chunk list is empty")
        for i, c in enumerate(chunks):
            if not isinstance(c, Chunk):
                raise TypeError(f"chunks[{i}] is a {type(c).__name__}, expected a Chunk (see chunk_pages)")
        chunks_by_id(chunks)  # unique ids
        self.chunks: list[Chunk] = chunks

    def scores(self, queries: Sequence[str]) -> np.ndarray:  # pragma: no cover - abstract
        """Score matrix (n_queries, n_chunks), float64."""
        raise NotImplementedError

    def _hits(self, row: np.ndarray, k: int) -> list[Hit]:
        order = _rank_order(row)[:k]
        return [Hit(self.chunks[i], float(row[i]), r) for r, i in enumerate(order, start=1)]

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """The top ``k`` chunks for ``query``, best first."""
        k = _check_k(k)
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        return self._hits(self.scores([query])[0], k)

    def search_many(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        """:meth:`search` for each query (scored in one batch)."""
        k = _check_k(k)
        queries = _check_queries(queries)
        if not queries:
            return []
        mat = self.scores(queries)
        return [self._hits(row, k) for row in mat]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.chunks)} chunks)"


class DenseRetriever(Retriever):
    """all-MiniLM-L6-v2 embeddings (L2-normalised), scored by dot product = cosine similarity.

    ``cache``: passed to :func:`ragworkbook.embeddings.encode` for the chunk
    texts and the queries (``True``: the package cache folder; a path: that
    folder; ``False``: encode every time). The cache is keyed by the model
    fingerprint and the exact texts, so a changed corpus or model is encoded
    again and an unchanged one is read back without loading the model.
    Scores are computed in float64 from the float32 embeddings.
    """

    name = "dense"

    def __init__(
        self,
        chunks: Sequence[Chunk],
        cache: bool | str | os.PathLike[str] = True,
        model_path: str | None = None,
    ):
        super().__init__(chunks)
        from ragworkbook.embeddings import encode

        self.cache = cache
        self.model_path = model_path
        self.embeddings = encode([c.text for c in self.chunks], cache=cache, model_path=model_path)

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Embeddings of ``queries`` (n, 384), float32, L2-normalised, cached like the chunks."""
        from ragworkbook.embeddings import encode

        return encode(list(queries), cache=self.cache, model_path=self.model_path)

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        q = self.encode_queries(queries).astype(np.float64)
        return q @ self.embeddings.astype(np.float64).T


_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """BM25 tokens: lowercase, then runs of word characters (``\\w+``); no stemming, no stop words.

    ``"Adam (beta1 = 0.9)"`` -> ``["adam", "beta1", "0", "9"]``. Punctuation
    splits tokens, so ``"28.4"`` becomes ``["28", "4"]``.
    """
    return _TOKEN.findall(text.lower())


class BM25Retriever(Retriever):
    """Okapi BM25 from the ``bm25s`` library over :func:`tokenize` tokens.

    ``k1``, ``b`` and ``method`` are bm25s's (defaults 1.5, 0.75, "lucene",
    i.e. Lucene's idf ``log(1 + (N - df + 0.5) / (df + 0.5))``). Query words
    absent from the corpus contribute 0; a query with no known word scores
    every chunk 0 (ranking = chunk order).
    """

    name = "bm25"

    def __init__(self, chunks: Sequence[Chunk], k1: float = 1.5, b: float = 0.75, method: str = "lucene"):
        super().__init__(chunks)
        import logging

        # bm25s logs at DEBUG; once any library has configured the root logger
        # (rouge-score's absl does) those lines would reach stderr.
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        import bm25s

        self.k1, self.b, self.method = k1, b, method
        self._bm25 = bm25s.BM25(k1=k1, b=b, method=method)
        self._bm25.index([tokenize(c.text) or [""] for c in self.chunks], show_progress=False)

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        rows = []
        for q in queries:
            toks = tokenize(q)
            if not toks:
                rows.append(np.zeros(len(self.chunks)))
            else:
                rows.append(np.asarray(self._bm25.get_scores(toks), dtype=np.float64))
        return np.vstack(rows) if rows else np.zeros((0, len(self.chunks)))


class HybridRetriever(Retriever):
    """Reciprocal-rank fusion: ``score(d) = sum_i weight_i / (k_rrf + rank_i(d))``.

    ``rank_i`` is the 1-based rank of chunk ``d`` in retriever ``i``'s full
    ranking (every chunk is ranked by every retriever, ties by chunk order), or
    only its top ``depth`` when ``depth`` is given (deeper chunks contribute 0).
    ``k_rrf = 60`` is the constant of Cormack et al. (2009). All retrievers must
    be built on the same chunks, in the same order.
    """

    name = "hybrid"

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        k_rrf: float = 60,
        depth: int | None = None,
        weights: Sequence[float] | None = None,
    ):
        retrievers = list(retrievers)
        if len(retrievers) < 1:
            raise ValueError("HybridRetriever needs at least one retriever to fuse")
        ids = [c.id for c in retrievers[0].chunks]
        for r in retrievers[1:]:
            if [c.id for c in r.chunks] != ids:
                raise ValueError("all fused retrievers must be built on the same chunks in the same order")
        if k_rrf < 0:
            raise ValueError(f"k_rrf must be >= 0, got {k_rrf}")
        if depth is not None:
            depth = _check_k(depth)
        if weights is None:
            weights = [1.0] * len(retrievers)
        if len(weights) != len(retrievers):
            raise ValueError(f"got {len(weights)} weights for {len(retrievers)} retrievers")
        super().__init__(retrievers[0].chunks)
        self.retrievers = retrievers
        self.k_rrf = k_rrf
        self.depth = depth
        self.weights = [float(w) for w in weights]

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        n = len(self.chunks)
        total = np.zeros((len(queries), n))
        for r, w in zip(self.retrievers, self.weights, strict=True):
            mat = r.scores(queries)
            for qi, row in enumerate(mat):
                order = _rank_order(row)
                ranks = np.empty(n)
                ranks[order] = np.arange(1, n + 1)
                contrib = w / (self.k_rrf + ranks)
                if self.depth is not None:
                    contrib[ranks > self.depth] = 0.0
                total[qi] += contrib
        return total

    def __repr__(self) -> str:
        inner = ", ".join(type(r).__name__ for r in self.retrievers)
        return f"HybridRetriever([{inner}], k_rrf={self.k_rrf})"


# --------------------------------------------------------------------------- runs


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
    items = list(eval_set)
    hits = retriever.search_many([it.question for it in items], k)
    return {it.id: h for it, h in zip(items, hits, strict=True)}


def c1_metrics(k: int = 3, mrr_depth: int = 5) -> list[str]:
    """Metric names of the documented retrieval figures (C1): P@k, recall@k, mrr@depth, ndcg@k, hit_rate@k."""
    return [f"P@{k}", f"recall@{k}", f"mrr@{mrr_depth}", f"ndcg@{k}", f"hit_rate@{k}"]


def evaluate_retriever(
    retriever: Retriever,
    eval_set: EvalSet | Sequence[EvalItem],
    qrels: Mapping[str, Mapping[str, int]] | None = None,
    k: int = 3,
    mrr_depth: int = 5,
    metrics: Sequence[str] | None = None,
) -> RunResult:
    """Search every question (top ``max(k, mrr_depth)``) and score the run -> ``batch_metrics.RunResult``.

    Defaults follow the documented recipe (C1): keyword qrels over the
    retriever's chunks, Precision/Recall/NDCG/Hit Rate at ``k`` and MRR over the
    top ``mrr_depth``; binary NDCG with the ideal DCG over ``min(|relevant|, k)``.
    The run keeps this retriever's ranking exactly (scores ``1 / rank``, see
    :func:`to_run`); questions with no relevant chunk count as 0 in the means.
    Exactly the eval set's questions are scored: ``qrels`` entries of other
    questions are ignored, and a question missing from ``qrels`` counts as
    having no relevant chunk (0), never silently dropped.
    """
    from ragworkbook.batch_metrics import evaluate_run
    from ragworkbook.ground_truth import keyword_qrels

    k = _check_k(k)
    mrr_depth = _check_k(mrr_depth)
    items = list(eval_set)
    if qrels is None:
        qrels = keyword_qrels(retriever.chunks, items)
    qrels = {it.id: dict(qrels.get(it.id, {})) for it in items}
    results = run_retriever(retriever, items, k=max(k, mrr_depth))
    names = list(metrics) if metrics is not None else c1_metrics(k, mrr_depth)
    return evaluate_run(qrels, to_run(results, score="rank"), names, missing="zero")


def evaluate_dense_on_pages(
    pages: Corpus | Sequence[Page],
    eval_set: EvalSet | Sequence[EvalItem] | None = None,
    k: int = 3,
    mrr_depth: int = 5,
    cache: bool | str | os.PathLike[str] = True,
) -> RunResult:
    """The documented pipeline end to end on any pages (the bundled notes, or the real PDF's pages).

    Chunk with :func:`~ragworkbook.chunking.chunk_pages` (400 / 50 / 40), keyword
    ground truth, :class:`DenseRetriever`, then :func:`evaluate_retriever`.
    ``pages``: a Corpus or a list of Page (e.g. ``ragworkbook.pdf.load_pdf_pages(path)``).
    """
    from ragworkbook.chunking import chunk_pages
    from ragworkbook.datasets import load_eval_set

    es = eval_set if eval_set is not None else load_eval_set()
    return evaluate_retriever(DenseRetriever(chunk_pages(pages), cache=cache), es, k=k, mrr_depth=mrr_depth)
