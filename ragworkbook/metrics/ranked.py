"""Rank-ordered grades: what every retrieval metric is computed from.

A :class:`Ranked` holds, for many queries at once, the rankings already sorted
and joined with their relevance judgements: for each query the number of
documents it retrieved, the rank and grade of every retrieved document that
was judged, and the grades of every judgement of the query (for the count of
relevant documents and the ideal ranking). It is sparse: an unjudged retrieved
document is only counted, never stored. Every kernel of
:mod:`ragworkbook.metrics.kernels` reads it and nothing else.

It is built once, at the edge, from whatever the caller has:

- rankings (lists of document ids, best first) and ``{qid: {doc: grade}}``
  judgements: :meth:`Ranked.from_rankings` (the ranking is taken as given);
- a ``(queries, depth)`` matrix of grades in rank order:
  :meth:`Ranked.from_matrix`;
- qrels and a run as columns or dicts, ranked the trec_eval way (score
  descending, ties by document id descending):
  :func:`ragworkbook.metrics.ranking.rank_columns`.

Conventions
-----------
- **Ranks** count from 1. **Grades** are numbers; a negative grade is a document
  in the pool but not judged (trec_eval's ``-1`` grades, read by infAP and
  bpref); grade 0 and below are not relevant and add no gain.
- **Relevant** (the binary metrics) = grade >= ``level`` (trec_eval ``-l``), or
  grade > 0 when ``level`` is None (trec_eval's default level 1 on integer
  grades). **Judged non-relevant** = 0 <= grade and not relevant.
- ``n_ret`` counts every retrieved document (judged or not), after any depth cut.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

import numpy as np

T = TypeVar("T")

__all__ = ["Ranked", "positions_in_groups"]


def positions_in_groups(q: np.ndarray) -> np.ndarray:
    """1-based position of each element within its run of equal ``q`` (``q`` sorted)."""
    if q.size == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    lengths = np.diff(np.r_[starts, q.size])
    return np.arange(q.size) - np.repeat(starts, lengths) + 1


@dataclass(eq=False)
class Ranked:
    """The rankings of ``n`` queries reduced to what the metrics read.

    ``ids``: the query ids, in result order. ``n_ret[i]``: documents query ``i``
    retrieved. ``q``, ``rank``, ``grade``: every retrieved *judged* document, sorted
    by (query, rank). ``jq``, ``jgrade``: every judgement of the queries (any order).
    ``level``: the relevance level (None: grade > 0). ``n_rel_given``: the number of
    relevant documents per query when it is known without the judgements (the
    matrix API's ``n_relevant``). ``describe(i)``: how an error names query ``i``.
    """

    ids: list[str]
    n_ret: np.ndarray
    q: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    jq: np.ndarray
    jgrade: np.ndarray
    level: float | None = None
    n_rel_given: np.ndarray | None = None
    describe: Callable[[int], str] | None = None
    #: what a kernel derives once and the others reuse (ideal rankings, rank lists), by key
    _cache: dict[Hashable, object] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        """Number of queries."""
        return len(self.ids)

    def where(self, i: int) -> str:
        """How messages name query ``i``."""
        return self.describe(i) if self.describe is not None else f"query {self.ids[i]!r}"

    # ----------------------------------------------------------------- relevance

    def relevant(self, grade: np.ndarray) -> np.ndarray:
        """Which of ``grade`` are relevant (>= level, or > 0 without a level)."""
        return grade > 0 if self.level is None else grade >= self.level

    @cached_property
    def rel(self) -> np.ndarray:
        """Mask of the relevant retrieved documents among the hits."""
        return self.relevant(self.grade)

    @cached_property
    def n_rel(self) -> np.ndarray:
        """Relevant documents of each query (R)."""
        if self.n_rel_given is not None:
            return self.n_rel_given
        return np.bincount(self.jq[self.relevant(self.jgrade)], minlength=self.n)

    @cached_property
    def n_nonrel(self) -> np.ndarray:
        """Judged non-relevant documents of each query (0 <= grade, not relevant)."""
        keep = (self.jgrade >= 0) & ~self.relevant(self.jgrade)
        return np.bincount(self.jq[keep], minlength=self.n)

    @cached_property
    def rq(self) -> np.ndarray:
        """Query of each relevant retrieved document (sorted by query, then rank)."""
        return self.q[self.rel]

    @cached_property
    def rrank(self) -> np.ndarray:
        """Rank of each relevant retrieved document."""
        return self.rank[self.rel]

    @cached_property
    def rpos(self) -> np.ndarray:
        """1-based position of each relevant retrieved document among its query's relevant ones."""
        return positions_in_groups(self.rq)

    @cached_property
    def n_rel_ret(self) -> np.ndarray:
        """Relevant documents retrieved, per query."""
        return np.bincount(self.rq, minlength=self.n)

    def count_within(self, q: np.ndarray, rank: np.ndarray, k: int | None) -> np.ndarray:
        """Per query, how many of the documents (``q``, ``rank``) are within the first ``k``."""
        if k is None:
            return np.bincount(q, minlength=self.n).astype(float)
        return np.bincount(q[rank <= k], minlength=self.n).astype(float)

    @cached_property
    def first_rel_rank(self) -> np.ndarray:
        """Rank of each query's first relevant document (inf: none retrieved)."""
        out = np.full(self.n, np.inf)
        if self.rq.size:
            first = self.rpos == 1
            out[self.rq[first]] = self.rrank[first]
        return out

    # ----------------------------------------------------------------- the ideal ranking

    def ideal(self, name: Hashable, gain_of: Callable[[np.ndarray], np.ndarray]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The ideal ranking of each query: (query, position from 1, gain) of every judged document
        with a positive gain, best first. ``gain_of`` maps grades to gains; ``name`` names that
        mapping (the result is kept under it for the other kernels)."""
        key = ("ideal", name)
        if key not in self._cache:
            g = gain_of(self.jgrade)
            keep = g > 0
            iq, ig = self.jq[keep], g[keep]
            order = np.lexsort((-ig, iq))
            iq, ig = iq[order], ig[order]
            self._cache[key] = (iq, positions_in_groups(iq), ig)
        return self._cache[key]  # type: ignore[return-value]

    def cached(self, key: str, make: Callable[[], T]) -> T:
        """A value shared by several kernels (computed once per Ranked)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]  # type: ignore[return-value]

    # ----------------------------------------------------------------- the edges

    @classmethod
    def from_rankings(cls, rankings: Mapping[Hashable, Sequence[Hashable]],
                      qrels: Mapping[Hashable, Mapping[Hashable, float]], *,
                      level: float | None = None) -> Ranked:
        """Rankings ``{qid: [doc, ...]}`` (best first, taken as given) against ``qrels``
        ``{qid: {doc: grade}}``: one query per ranking, in order; a query missing from ``qrels``
        has no judged document. A document twice in one ranking is a ValueError."""
        ids = [str(q) for q in rankings]
        n_ret = np.zeros(len(ids), dtype=np.int64)
        hq: list[int] = []
        hrank: list[int] = []
        hgrade: list[float] = []
        jq: list[int] = []
        jgrade: list[float] = []
        for i, (qid, docs) in enumerate(rankings.items()):
            judged = qrels.get(qid, qrels.get(str(qid), {})) if qrels else {}
            seen: set[Hashable] = set()
            for r, doc in enumerate(docs, start=1):
                if doc in seen:
                    raise ValueError(f"duplicate document {doc!r} at rank {r} of the ranking of query "
                                     f"{str(qid)!r}: each document may be retrieved once")
                seen.add(doc)
                g = judged.get(doc)
                if g is not None:
                    hq.append(i)
                    hrank.append(r)
                    hgrade.append(float(g))
            n_ret[i] = len(docs)
            for g in judged.values():
                jq.append(i)
                jgrade.append(float(g))
        grade = np.asarray(hgrade, dtype=float)
        all_grades = np.asarray(jgrade, dtype=float)
        if np.isnan(all_grades).any():
            raise ValueError("a grade is NaN")
        return cls(ids, n_ret, np.asarray(hq, dtype=np.int64), np.asarray(hrank, dtype=np.int64), grade,
                   np.asarray(jq, dtype=np.int64), all_grades, level)

    @classmethod
    def from_matrix(cls, grades: np.ndarray, *, n_relevant: np.ndarray | None = None,
                    ideal_grades: np.ndarray | None = None, query_ids: Sequence[Hashable] | None = None
                    ) -> Ranked:
        """A ``(queries, depth)`` matrix of grades in rank order (row i = query i's ranking, padded
        with 0), optionally the number of relevant documents per query and the grades of every
        judged document per query (default: the row itself). Every cell counts as retrieved; a
        cell with grade 0 is a non-relevant document (the matrix cannot tell it from an unjudged
        one)."""
        n, depth = grades.shape
        q, pos = np.nonzero(grades)
        hgrade = grades[q, pos]
        if ideal_grades is None:
            jq, jgrade = q, hgrade
        else:
            jq, jpos = np.nonzero(ideal_grades)
            jgrade = ideal_grades[jq, jpos]
        ids = [str(i) for i in range(n)] if query_ids is None else [str(x) for x in query_ids]
        return cls(ids, np.full(n, depth, dtype=np.int64), q.astype(np.int64), pos.astype(np.int64) + 1,
                   hgrade, jq.astype(np.int64), jgrade, None, n_relevant, lambda i: f"row {i}")

