"""Retrieval metrics for one query: precision, recall, hit rate, reciprocal rank,
average precision, R-precision, cumulative gain, DCG and NDCG.

Inputs
------
``ranking``
    The retrieved document ids in rank order (best first): a list, tuple or 1-D
    numpy array. A set, a dict or a bare string is refused (they have no rank
    order, or would be read character by character). Duplicate ids are an error:
    a document can be retrieved only once.
``relevant`` / ``relevance``
    Either a mapping ``doc id -> grade`` (graded relevance, as in TREC qrels) or
    a collection of relevant ids (a set, list, ...; every id gets grade 1).

Conventions (the same in the batch API, :mod:`ragworkbook.metrics.batch`)
------------------------------------------------------------------------
- A document is **relevant** when its grade is > 0. Grades <= 0 (TREC's 0 and
  negative "junk" grades) count as non-relevant and add no gain.
- **k beyond the ranking**: the missing positions are non-relevant, so P@k
  always divides by ``k`` (as trec_eval does), never by ``len(ranking)``.
- **No relevant documents**: recall, reciprocal rank, average precision,
  R-precision and NDCG are 0.0 for a single query (precision is 0.0 anyway).
  The batch API keeps such queries with 0 in the mean by default, as
  pytrec_eval (trec_eval 9) and ranx do; ``no_relevant="skip"`` leaves them out.
- **Gain** for (N)DCG: ``"linear"`` = grade (trec_eval ``ndcg``, ranx ``ndcg``)
  or ``"exponential"`` = 2^grade - 1 (ranx ``ndcg_burges``). **Discount**:
  ``log2(rank + 1)`` with ranks counted from 1.
- **Ideal DCG** uses every judged document of the query (from ``relevance``),
  sorted by grade, cut at the same ``k`` — not only the retrieved ones.
- Score ties do not arise here (a ranking is already ordered); the batch API
  breaks them like trec_eval.

All metrics are in [0, 1] (DCG is not normalised and is the exception).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ragworkbook._validate import check_k

__all__ = [
    "GAINS",
    "check_gain",
    "check_ranking",
    "check_relevance",
    "gain_values",
    "precision_at_k",
    "recall_at_k",
    "hit_rate_at_k",
    "reciprocal_rank",
    "average_precision",
    "r_precision",
    "cumulative_gain",
    "cg_from_grades",
    "dcg_at_k",
    "ndcg_at_k",
    "dcg_from_grades",
    "ndcg_from_grades",
    "discounts",
]

GAINS = ("linear", "exponential")

#: Document ids are anything hashable (strings, numbers); relevance is ``{doc: grade}`` or the relevant ids.
Relevance = Mapping[Hashable, float] | Collection[Hashable]


# --------------------------------------------------------------------------- validation


def check_gain(gain: str) -> str:
    """Return ``gain`` if it is ``"linear"`` or ``"exponential"``, else raise ``ValueError``."""
    if gain not in GAINS:
        raise ValueError(
            f"unknown gain {gain!r}: use 'linear' (gain = grade, trec_eval/ranx ndcg) or "
            "'exponential' (gain = 2^grade - 1, ranx ndcg_burges)"
        )
    return gain


def check_ranking(ranking: Sequence[Hashable] | np.ndarray) -> list[Hashable]:
    """``ranking`` as a list of document ids in rank order; TypeError / ValueError naming the problem."""
    if isinstance(ranking, (str, bytes)):
        raise TypeError(
            f"ranking must be a sequence of document ids in rank order, got the string {ranking!r}; "
            "wrap a single id in a list: [doc_id]"
        )
    if isinstance(ranking, np.ndarray):
        if ranking.ndim != 1:
            raise TypeError(f"ranking must be 1-D, got an array of shape {ranking.shape}")
        ranking = ranking.tolist()
    if not isinstance(ranking, Sequence):
        raise TypeError(
            f"ranking must be a sequence of document ids in rank order (list, tuple or 1-D array), "
            f"got {type(ranking).__name__}; a set or dict has no rank order — sort it first"
        )
    seen: set[Hashable] = set()
    for i, doc in enumerate(ranking, start=1):
        if doc in seen:
            raise ValueError(
                f"duplicate document {doc!r} at rank {i} of the ranking: each document may be "
                "retrieved once; de-duplicate the ranking (keep the first occurrence)"
            )
        seen.add(doc)
    return list(ranking)


def check_relevance(relevance: Relevance) -> dict[Hashable, float]:
    """``relevance`` (a mapping doc -> grade, or a collection of relevant ids) as a dict doc -> grade."""
    if isinstance(relevance, (str, bytes)):
        raise TypeError(
            f"relevant must be a mapping doc -> grade or a collection of ids, got the string {relevance!r}"
        )
    if isinstance(relevance, Mapping):
        out: dict[Hashable, float] = {}
        for doc, grade in relevance.items():
            try:
                g = float(grade)
            except (TypeError, ValueError):
                raise ValueError(f"grade of {doc!r} must be a number, got {grade!r}") from None
            if math.isnan(g):
                raise ValueError(f"grade of {doc!r} is NaN")
            out[doc] = g
        return out
    if isinstance(relevance, Iterable):
        return {doc: 1.0 for doc in relevance}
    raise TypeError(
        f"relevant must be a mapping doc -> grade or a collection of ids, got {type(relevance).__name__}"
    )


def _prepare(ranking: Sequence[Hashable], relevance: Relevance, k: int | None,
             optional_k: bool = False) -> tuple[list[Hashable], dict[Hashable, float], int | None]:
    ranking = check_ranking(ranking)
    rel = check_relevance(relevance)
    k = check_k(k, optional=optional_k)
    return ranking, rel, k


def _n_relevant(rel: Mapping) -> int:
    return sum(1 for g in rel.values() if g > 0)


def _hits(ranking: list, rel: Mapping, k: int | None) -> list[bool]:
    top = ranking if k is None else ranking[:k]
    return [rel.get(doc, 0.0) > 0 for doc in top]


# --------------------------------------------------------------------------- binary metrics


def precision_at_k(ranking: Sequence[Hashable], relevant: Relevance, k: int) -> float:
    """Precision@k: relevant documents among the first ``k`` retrieved, divided by ``k``.

    Positions beyond the end of a short ranking count as non-relevant (the
    denominator is always ``k``, as in trec_eval ``P_k``).

    >>> precision_at_k(["a", "b", "c"], {"a", "c"}, 2)
    0.5
    """
    ranking, rel, k = _prepare(ranking, relevant, k)
    return sum(_hits(ranking, rel, k)) / k


def recall_at_k(ranking: Sequence[Hashable], relevant: Relevance, k: int) -> float:
    """Recall@k: relevant documents among the first ``k``, divided by all relevant documents.

    0.0 when the query has no relevant document.

    >>> round(recall_at_k(["doc_3", "doc_7", "doc_1"], {"doc_1", "doc_5", "doc_9"}, 3), 2)
    0.33
    """
    ranking, rel, k = _prepare(ranking, relevant, k)
    n_rel = _n_relevant(rel)
    return sum(_hits(ranking, rel, k)) / n_rel if n_rel else 0.0


def hit_rate_at_k(ranking: Sequence[Hashable], relevant: Relevance, k: int) -> float:
    """Hit rate@k (trec_eval ``success_k``): 1.0 if any of the first ``k`` is relevant, else 0.0."""
    ranking, rel, k = _prepare(ranking, relevant, k)
    return 1.0 if any(_hits(ranking, rel, k)) else 0.0


def reciprocal_rank(ranking: Sequence[Hashable], relevant: Relevance, k: int | None = None) -> float:
    """Reciprocal rank: 1 / (rank of the first relevant document), 0.0 if there is none.

    With ``k``, only the first ``k`` positions are searched (MRR@k). The mean over
    queries is the MRR.

    >>> reciprocal_rank(["x", "y", "a"], {"a"})
    0.3333333333333333
    """
    ranking, rel, k = _prepare(ranking, relevant, k, optional_k=True)
    for i, hit in enumerate(_hits(ranking, rel, k), start=1):
        if hit:
            return 1.0 / i
    return 0.0


def average_precision(ranking: Sequence[Hashable], relevant: Relevance, k: int | None = None) -> float:
    """Average precision: the sum of Precision@i over the ranks i of the relevant
    documents retrieved (within the first ``k`` if given), divided by the number of
    relevant documents of the query — i.e. the mean of Precision@i over all relevant
    documents, a relevant document never retrieved contributing 0.

    The denominator is *all* relevant documents even with a cutoff, as in trec_eval
    ``map_cut_k``. 0.0 when the query has no relevant document. The mean over
    queries is MAP.
    """
    ranking, rel, k = _prepare(ranking, relevant, k, optional_k=True)
    n_rel = _n_relevant(rel)
    if not n_rel:
        return 0.0
    total, found = 0.0, 0
    for i, hit in enumerate(_hits(ranking, rel, k), start=1):
        if hit:
            found += 1
            total += found / i
    return total / n_rel


def r_precision(ranking: Sequence[Hashable], relevant: Relevance) -> float:
    """R-precision: Precision@R where R is the number of relevant documents of the query
    (trec_eval ``Rprec``). 0.0 when the query has no relevant document."""
    ranking, rel, _ = _prepare(ranking, relevant, None, optional_k=True)
    n_rel = _n_relevant(rel)
    return sum(_hits(ranking, rel, n_rel)) / n_rel if n_rel else 0.0


# --------------------------------------------------------------------------- graded metrics


def gain_values(grades: ArrayLike, gain: str = "linear") -> np.ndarray:
    """The gain of each grade: ``grade`` (linear) or ``2**grade - 1`` (exponential).

    Grades <= 0 have gain 0 under both gains (non-relevant, including negative
    TREC grades).
    """
    check_gain(gain)
    g = np.asarray(grades, dtype=float)
    if np.isnan(g).any():
        raise ValueError("grades contain NaN")
    g = np.maximum(g, 0.0)
    return g if gain == "linear" else np.exp2(g) - 1.0


def discounts(n: int) -> np.ndarray:
    """The discounts ``log2(rank + 1)`` for ranks 1..n."""
    return np.log2(np.arange(2, n + 2, dtype=float))


def _grade_list(grades: ArrayLike, what: str = "grades") -> np.ndarray:
    if isinstance(grades, (str, bytes, Mapping, set, frozenset)):
        raise TypeError(f"{what} must be a sequence of numbers in rank order, got {type(grades).__name__}")
    g = np.asarray(grades, dtype=float)
    if g.ndim != 1:
        raise ValueError(f"{what} must be 1-D, got shape {g.shape}")
    if np.isnan(g).any():
        raise ValueError(f"{what} contain NaN")
    return g


# Cumulative gain comes before DCG in the lesson: the same sum of gains without the discount, so that
# the effect of the discount can be seen on its own.
def cg_from_grades(grades: Sequence[float], k: int | None = None, gain: str = "linear") -> float:
    """CG@k of grades listed in rank order: ``sum_{i<=k} gain(grade_i)``, with no discount.

    Cumulative gain (Järvelin & Kekäläinen) is DCG before the discount: it counts how much relevance the
    top k hold, not where it sits, so every order of the same top k has the same CG@k.

    >>> cg_from_grades([0, 2, 3, 1, 1], 3), cg_from_grades([3, 2, 0, 1, 1], 3)
    (5.0, 5.0)
    """
    g = _grade_list(grades)
    k = check_k(k, optional=True)
    top = g if k is None else g[:k]
    return float(np.sum(gain_values(top, gain)))


def cumulative_gain(ranking: Sequence[Hashable], relevance: Relevance, k: int, gain: str = "linear") -> float:
    """CG@k of a ranking: ``sum_{i<=k} gain(grade of doc i)``; unjudged documents have grade 0."""
    ranking, rel, k = _prepare(ranking, relevance, k)
    check_gain(gain)
    return cg_from_grades([rel.get(doc, 0.0) for doc in ranking], k, gain)


def dcg_from_grades(grades: Sequence[float], k: int | None = None, gain: str = "linear") -> float:
    """DCG@k of grades listed in rank order: ``sum_{i<=k} gain(grade_i) / log2(i + 1)``.

    ``k=None`` uses the whole list; ``k`` beyond the list adds nothing.

    >>> round(dcg_from_grades([3, 0, 2, 1, 0], 3), 4)
    4.0
    """
    g = _grade_list(grades)
    k = check_k(k, optional=True)
    top = g if k is None else g[:k]
    return float(np.sum(gain_values(top, gain) / discounts(len(top))))


def ndcg_from_grades(
    grades: Sequence[float],
    k: int | None = None,
    gain: str = "linear",
    ideal_grades: Sequence[float] | None = None,
) -> float:
    """NDCG@k of grades in rank order: DCG@k / IDCG@k.

    IDCG@k is the DCG@k of ``ideal_grades`` sorted from best to worst; by default
    ``ideal_grades`` are the given ``grades`` themselves (right when every judged
    document was retrieved). Pass all of the query's judged grades otherwise.
    0.0 when IDCG is 0 (no relevant document). ``ideal_grades`` that miss grades of
    the ranking (so that DCG > IDCG) raise ``ValueError``.

    >>> round(ndcg_from_grades([0, 2, 3, 1, 1], 5, gain="exponential"), 3)
    0.632
    """
    g = _grade_list(grades)
    ideal = g if ideal_grades is None else _grade_list(ideal_grades, "ideal_grades")
    idcg = dcg_from_grades(np.sort(ideal)[::-1], k, gain)
    dcg = dcg_from_grades(g, k, gain)
    if dcg > idcg * (1 + 1e-9) + 1e-12:
        raise ValueError(
            f"DCG ({dcg:.4f}) exceeds the ideal DCG ({idcg:.4f}): ideal_grades must hold the grades of "
            "every judged document of the query, the retrieved ones included"
        )
    return dcg / idcg if idcg > 0 else 0.0


def dcg_at_k(ranking: Sequence[Hashable], relevance: Relevance, k: int, gain: str = "linear") -> float:
    """DCG@k of a ranking: ``sum_{i<=k} gain(grade of doc i) / log2(i + 1)``;
    unjudged documents have grade 0."""
    ranking, rel, k = _prepare(ranking, relevance, k)
    check_gain(gain)
    return dcg_from_grades([rel.get(doc, 0.0) for doc in ranking], k, gain)


def ndcg_at_k(ranking: Sequence[Hashable], relevance: Relevance, k: int, gain: str = "linear") -> float:
    """NDCG@k of a ranking: DCG@k / IDCG@k, the ideal DCG being computed from every
    judged document of ``relevance`` (trec_eval ``ndcg_cut_k``; ranx ``ndcg@k``
    with linear gain, ``ndcg_burges@k`` with exponential gain). 0.0 without
    relevant documents.

    >>> ranking = ["c1", "c2", "c3", "c4", "c5"]
    >>> grades = {"c1": 0, "c2": 2, "c3": 3, "c4": 1, "c5": 1}
    >>> round(ndcg_at_k(ranking, grades, 5), 3)
    0.689
    """
    ranking, rel, k = _prepare(ranking, relevance, k)
    check_gain(gain)
    return ndcg_from_grades([rel.get(doc, 0.0) for doc in ranking], k, gain, list(rel.values()))
