"""Retrieval evaluated over an eval set: the one path from rankings to retrieval metrics.

:func:`score_rankings` is what every retrieval number of the package goes
through (the evaluate loop, the documented C1 figures, the notebooks): the
rankings, exactly in the order given, against relevance judgements, with the
batch engine (:func:`ragworkbook.metrics.batch.evaluate_rankings`: the rankings
become rank-ordered grades once, no scores are made up) and the metrics of the
registry. Conventions: every question of the eval set is scored (a question
missing from the qrels has no relevant chunk and scores 0, never dropped); a
cutoff beyond a ranking's length counts the missing positions as non-relevant;
binary relevance is grade > 0 and NDCG uses the grades.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from ragworkbook._validate import check_k
from ragworkbook.corpus.chunking import chunk_pages
from ragworkbook.corpus.eval_set import EvalItem, EvalSet, as_items, load_eval_set
from ragworkbook.corpus.ground_truth import keyword_qrels
from ragworkbook.corpus.pages import Corpus, Page
from ragworkbook.metrics.batch import RunResult, evaluate_rankings
from ragworkbook.metrics.registry import Metric
from ragworkbook.retrieval.base import Retriever
from ragworkbook.retrieval.dense import DenseRetriever
from ragworkbook.retrieval.runs import run_retriever, to_rankings

__all__ = ["score_rankings", "c1_metrics", "evaluate_retriever", "evaluate_dense_on_pages"]


def score_rankings(rankings: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]],
                   metrics: str | Metric | Iterable[str | Metric], *, gain: str = "linear") -> RunResult:
    """Score rankings ``{qid: [doc id, ...]}`` (best first) against ``qrels`` ``{qid: {doc: grade}}``.

    Every query of ``rankings`` is scored, in the given order; one missing from
    ``qrels`` has no relevant document (0). The rankings are kept exactly. Returns
    the batch engine's ``RunResult``, keyed by the metric names as written.
    """
    return evaluate_rankings({str(q): list(docs) for q, docs in rankings.items()},
                             {str(q): v for q, v in qrels.items()}, metrics, gain=gain)


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
    """Search every question (top ``max(k, mrr_depth)``) and score the run -> a ``RunResult``.

    Defaults follow the documented recipe (C1): keyword qrels over the
    retriever's chunks, Precision/Recall/NDCG/Hit Rate at ``k`` and MRR over the
    top ``mrr_depth``; binary NDCG with the ideal DCG over ``min(|relevant|, k)``.
    The run keeps this retriever's ranking exactly; questions with no relevant chunk count as 0 in the means.
    Exactly the eval set's questions are scored: ``qrels`` entries of other
    questions are ignored, and a question missing from ``qrels`` counts as
    having no relevant chunk (0), never silently dropped.
    """
    k = check_k(k)
    mrr_depth = check_k(mrr_depth, "mrr_depth")
    items = as_items(eval_set)
    if qrels is None:
        qrels = keyword_qrels(retriever.chunks, items)
    results = run_retriever(retriever, items, k=max(k, mrr_depth))
    names = list(metrics) if metrics is not None else c1_metrics(k, mrr_depth)
    return score_rankings(to_rankings(results), qrels, names)


def evaluate_dense_on_pages(
    pages: Corpus | Sequence[Page],
    eval_set: EvalSet | Sequence[EvalItem] | None = None,
    k: int = 3,
    mrr_depth: int = 5,
    cache: bool | str | os.PathLike[str] = True,
) -> RunResult:
    """The documented pipeline end to end on any pages (the bundled notes, or the real PDF's pages).

    Chunk with :func:`~ragworkbook.corpus.chunking.chunk_pages` (400 / 50 / 40), keyword
    ground truth, :class:`DenseRetriever`, then :func:`evaluate_retriever`.
    ``pages``: a Corpus or a list of Page (e.g. ``ragworkbook.corpus.pdf.load_pdf_pages(path)``).
    """
    es = eval_set if eval_set is not None else load_eval_set()
    return evaluate_retriever(DenseRetriever(chunk_pages(pages), cache=cache), es, k=k, mrr_depth=mrr_depth)
