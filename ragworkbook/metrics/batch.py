"""Retrieval metrics over many queries at once, vectorised with numpy.

Two entry points, one engine:

- :func:`evaluate_run` takes the interchange format of trec_eval / ranx:
  ``qrels = {qid: {doc: grade}}`` and ``run = {qid: {doc: score}}``.
- :func:`evaluate_arrays` takes relevance already in rank order: a
  ``(n_queries, depth)`` matrix of grades (row i = the grades of query i's
  ranking, best first; pad short rankings with 0), plus optionally the number of
  relevant documents per query and the grades of all judged documents per query
  (for the ideal DCG).

Both reduce a query to the ranks and grades of its *retrieved relevant*
documents, then compute every metric with array operations (``np.bincount``
over query indices): there is no Python loop per query in the array path; the
dict path loops once over the judged documents to look them up in the run.

Conventions (see also :mod:`ragworkbook.metrics.retrieval`)
-------------------------------------------------------------
- **Score ties** are broken like trec_eval: score descending, then document id
  descending (string order). trec_eval compares scores as float32; we compare
  the float64 values, so two scores equal in float32 but not in float64 may be
  ordered differently (tested). ranx uses an unstable sort on ties: results
  differ from ranx only for tied scores. The ``rank`` column of a TREC run file
  is ignored (as in trec_eval): only the scores order a ranking.
- **NaN scores** are an error naming the query and document.
- **Relevant** = grade > 0; grades <= 0 give gain 0.
- **Queries without relevant documents** (judged, but no grade > 0):
  ``no_relevant="zero"`` (default) keeps them with every metric 0 — measured to
  be what both pytrec_eval 0.5.11 (trec_eval 9) and ranx 0.3.21 do;
  ``no_relevant="skip"`` leaves them out of ``per_query`` and of the mean (the
  skipped ids are listed in ``RunResult.skipped``).
- **Queries in the qrels but absent from the run**: ``missing="skip"`` (default)
  leaves them out, like trec_eval without ``-c``; ``missing="zero"`` scores them 0
  (trec_eval ``-c``, ranx ``make_comparable``). Queries in the run but not in the
  qrels are ignored (nothing to judge them with).
- **k beyond a ranking**: missing positions are non-relevant (P@k divides by k).
- **AP with a cutoff** divides by all relevant documents (trec_eval ``map_cut``).
- **ERR** (Chapelle et al. 2009) turns a grade into a stopping probability
  ``(2^grade - 1) / 2^max_grade``; ``max_grade`` is the top of the relevance
  scale (default 4, as ``gdeval.pl``); a grade above it is an error.
- The metrics and their names come from :mod:`ragworkbook.metrics.registry`;
  each has one kernel in :data:`KERNELS`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from ragworkbook.metrics.registry import Metric, parse_metrics
from ragworkbook.metrics.retrieval import check_gain, gain_values

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["KERNELS", "RunResult", "evaluate_run", "evaluate_arrays", "score_ranking"]

_NO_RELEVANT = ("skip", "zero")


@dataclass
class RunResult:
    """Per-query values and means of a batch evaluation.

    ``values[metric]`` is a float array aligned with ``query_ids``; ``mean`` maps
    each metric name to the mean over the evaluated queries; ``skipped`` maps a
    reason (``"no_relevant"``, ``"not_in_run"``) to the query ids left out.
    """

    metrics: list[str]
    query_ids: list[str]
    values: dict[str, np.ndarray]
    gain: str = "linear"
    skipped: dict[str, list[str]] = field(default_factory=dict)

    @property
    def mean(self) -> dict[str, float]:
        """Mean of each metric over the evaluated queries (arithmetic mean, like trec_eval)."""
        return {m: float(np.mean(v)) for m, v in self.values.items()}

    @property
    def n_queries(self) -> int:
        """Number of queries evaluated (and averaged)."""
        return len(self.query_ids)

    @property
    def per_query(self) -> dict[str, dict[str, float]]:
        """``{qid: {metric: value}}``, the shape pytrec_eval returns."""
        cols = [(m, self.values[m].tolist()) for m in self.metrics]
        return {q: {m: vals[i] for m, vals in cols} for i, q in enumerate(self.query_ids)}

    def to_frame(self) -> pd.DataFrame:
        """Per-query values as a pandas DataFrame (index ``qid``, one column per metric)."""
        import pandas as pd

        frame = pd.DataFrame({m: self.values[m] for m in self.metrics}, index=list(self.query_ids))
        frame.index.name = "qid"
        return frame

    def __repr__(self) -> str:
        means = ", ".join(f"{m}={v:.4f}" for m, v in self.mean.items())
        return f"RunResult(n_queries={self.n_queries}, gain={self.gain!r}, {means})"


# --------------------------------------------------------------------------- the engine


@dataclass
class _Hits:
    """A batch reduced to what the metrics need.

    ``q``/``rank``/``grade``: the retrieved relevant documents (grade > 0), sorted
    by (query, rank), ranks from 1. ``n_rel``: relevant documents per query.
    ``iq``/``ipos``/``igrade``: every relevant judged grade of each query in
    descending order, ``ipos`` its position from 1 (for the ideal DCG).
    """

    n: int
    q: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    n_rel: np.ndarray
    iq: np.ndarray
    ipos: np.ndarray
    igrade: np.ndarray
    first_rank: np.ndarray | None = None  # rank of the first relevant document (inf: none)


def _positions_in_groups(q: np.ndarray) -> np.ndarray:
    """1-based position of each element within its run of equal ``q`` (q sorted)."""
    if q.size == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    lengths = np.diff(np.r_[starts, q.size])
    return np.arange(q.size) - np.repeat(starts, lengths) + 1


def _ideal(iq: np.ndarray, igrade: np.ndarray):
    """Sort relevant judged grades by (query, grade desc); return q, position, grade."""
    keep = igrade > 0
    iq, igrade = iq[keep], igrade[keep]
    order = np.lexsort((-igrade, iq))
    iq, igrade = iq[order], igrade[order]
    return iq, _positions_in_groups(iq), igrade


@dataclass
class _Options:
    """Evaluation-wide parameters a kernel may read (:attr:`MetricSpec.params`)."""

    gain: str = "linear"
    max_grade: float = 4.0


def _within(rank: np.ndarray, k: int | None) -> np.ndarray:
    return rank <= k if k is not None else np.ones(rank.shape, dtype=bool)


def _hits_within(h: _Hits, k: int | None) -> np.ndarray:
    within = _within(h.rank, k)
    return np.bincount(h.q[within], minlength=h.n).astype(float)


def _safe_rel(h: _Hits) -> np.ndarray:
    return np.where(h.n_rel > 0, h.n_rel, 1).astype(float)


def _precision(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    return _hits_within(h, k) / k


def _recall(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    return np.where(h.n_rel > 0, _hits_within(h, k) / _safe_rel(h), 0.0)


def _hit_rate(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    return (_hits_within(h, k) > 0).astype(float)


def _mrr(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    if h.first_rank is None:
        first_rank = np.full(h.n, np.inf)
        if h.q.size:
            starts = np.flatnonzero(np.r_[True, h.q[1:] != h.q[:-1]])
            first_rank[h.q[starts]] = h.rank[starts]
        h.first_rank = first_rank
    limit = k if k is not None else np.inf
    return np.where(h.first_rank <= limit, 1.0 / h.first_rank, 0.0)


def _map(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    within = _within(h.rank, k)
    prec = _positions_in_groups(h.q)[within] / h.rank[within]
    return np.bincount(h.q[within], weights=prec, minlength=h.n) / _safe_rel(h)


def _r_precision(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    inside = h.rank <= h.n_rel[h.q]
    return np.bincount(h.q[inside], minlength=h.n) / _safe_rel(h)


def _dcg(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    within = _within(h.rank, k)
    w = gain_values(h.grade[within], o.gain) / np.log2(h.rank[within] + 1.0)
    return np.bincount(h.q[within], weights=w, minlength=h.n)


def _ndcg(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    dcg = _dcg(h, k, o)
    iwithin = _within(h.ipos, k)
    iw = gain_values(h.igrade[iwithin], o.gain) / np.log2(h.ipos[iwithin] + 1.0)
    idcg = np.bincount(h.iq[iwithin], weights=iw, minlength=h.n)
    return np.divide(dcg, idcg, out=np.zeros(h.n), where=idcg > 0)


def _err(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    """ERR: ``sum_r R_r / r * prod_{i<r} (1 - R_i)``, ``R = (2^grade - 1) / 2^max_grade``.

    A non-relevant document has R = 0: it neither adds to the sum nor stops the
    cascade, so only the retrieved relevant documents enter, in rank order.
    """
    within = _within(h.rank, k)
    q, rank, grade = h.q[within], h.rank[within], h.grade[within]
    if grade.size and grade.max() > o.max_grade:
        raise ValueError(f"err: a grade of {grade.max():g} exceeds max_grade = {o.max_grade:g}; pass the "
                         "largest grade of your relevance scale as max_grade")
    stop = (np.exp2(grade) - 1.0) / np.exp2(o.max_grade)
    log_go_on = np.log1p(-stop)
    # log of the product over the earlier relevant documents of the same query
    before = np.cumsum(log_go_on) - log_go_on
    if q.size:
        starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
        before -= np.repeat(before[starts], np.diff(np.r_[starts, q.size]))
    return np.bincount(q, weights=stop / rank * np.exp(before), minlength=h.n)


#: The batch kernel of every retrieval metric of the registry, by canonical name:
#: (reduced batch, cutoff or None for the whole ranking, options) -> one value per query.
KERNELS: dict[str, Callable[[_Hits, int | None, _Options], np.ndarray]] = {
    "precision": _precision,
    "recall": _recall,
    "hit_rate": _hit_rate,
    "mrr": _mrr,
    "map": _map,
    "r_precision": _r_precision,
    "dcg": _dcg,
    "ndcg": _ndcg,
    "err": _err,
}


def _compute(h: _Hits, metrics: list[Metric], options: _Options) -> dict[str, np.ndarray]:
    return {m.name: np.asarray(KERNELS[m.kind](h, m.k, options), dtype=float) for m in metrics}


def _check_max_grade(max_grade: Any) -> float:
    try:
        value = float(max_grade)
    except (TypeError, ValueError):
        value = float("nan")
    if not value > 0 or math.isinf(value):
        raise ValueError(f"max_grade must be a positive number (the top grade of the relevance scale), "
                         f"got {max_grade!r}")
    return value


def _check_options(gain: str, no_relevant: str, missing: str | None = None) -> None:
    check_gain(gain)
    if no_relevant not in _NO_RELEVANT:
        raise ValueError(
            f"no_relevant must be 'zero' (score such queries 0, like trec_eval and ranx) or "
            f"'skip' (leave them out of the mean), got {no_relevant!r}"
        )
    if missing is not None and missing not in _NO_RELEVANT:
        raise ValueError(
            f"missing must be 'skip' (like trec_eval) or 'zero' (like trec_eval -c / ranx), got {missing!r}"
        )


# --------------------------------------------------------------------------- array API


def evaluate_arrays(
    grades: Any,
    metrics: str | Iterable[str],
    *,
    n_relevant: Any = None,
    ideal_grades: Any = None,
    gain: str = "linear",
    no_relevant: str = "zero",
    query_ids: Sequence[Any] | None = None,
    max_grade: float = 4.0,
) -> RunResult:
    """Evaluate rankings given as a matrix of grades in rank order.

    Parameters
    ----------
    grades
        ``(n_queries, depth)`` array: ``grades[i, j]`` is the grade of the document
        query ``i`` retrieved at rank ``j + 1``. Pad short rankings with 0 (missing
        positions are non-relevant anyway). A 1-D array is one query.
    metrics
        Retrieval metric names (:func:`~ragworkbook.metrics.registry.parse_metric`); the
        result is keyed by the names as written.
    n_relevant
        ``(n_queries,)`` number of relevant documents of each query (for recall, AP,
        R-precision). Default: from ``ideal_grades`` (count of grades > 0) if given,
        else the relevant documents in the row itself (i.e. every relevant
        document was retrieved).
    ideal_grades
        ``(n_queries, m)`` grades of all judged documents of each query, any order,
        padded with 0 — the ideal ranking for NDCG. Default: the row itself
        (every judged document was retrieved).
    gain, no_relevant, max_grade
        As in :func:`evaluate_run`.
    query_ids
        Labels of the rows (default ``"0"``, ``"1"``, ...).

    Raises ``ValueError`` on NaN grades, a shape mismatch, ``n_relevant``
    negative or smaller than the relevant documents the row itself holds, or
    ``ideal_grades`` that miss grades of the row (an NDCG above 1).
    """
    metric_list = parse_metrics(metrics, "retrieval")
    _check_options(gain, no_relevant)
    g = np.asarray(grades, dtype=float)
    if g.ndim == 1:
        g = g[None, :]
    if g.ndim != 2:
        raise ValueError(f"grades must be a (n_queries, depth) matrix, got shape {g.shape}")
    n, depth = g.shape
    if np.isnan(g.sum()) and np.isnan(g).any():
        raise ValueError(f"grades contain NaN (first at row {int(np.argwhere(np.isnan(g))[0][0])})")
    relevant = g > 0
    row_rel = np.count_nonzero(relevant, axis=1)
    # Only the first `cut` ranks matter when every metric has a cutoff; MRR without a
    # cutoff needs only the first relevant rank of each row (argmax, no extraction).
    cuts, full, first_rank = [], False, None
    for m in metric_list:
        if m.kind == "r_precision":
            cuts.append(-1)  # filled in once n_rel is known
        elif m.k is not None:
            cuts.append(m.k)
        elif m.kind == "mrr":
            first_rank = np.where(row_rel > 0, relevant.argmax(axis=1) + 1.0, np.inf)
        else:
            full = True
    ideal_full = any(m.kind == "ndcg" and m.k is None for m in metric_list)
    ideal_cut = max((m.k for m in metric_list if m.kind == "ndcg" and m.k is not None), default=0)

    if ideal_grades is not None:
        ig = np.asarray(ideal_grades, dtype=float)
        if ig.ndim == 1:
            ig = ig[None, :]
        if ig.ndim != 2 or ig.shape[0] != n:
            raise ValueError(f"ideal_grades must have one row per query ({n}), got shape {ig.shape}")
        if np.isnan(ig).any():
            raise ValueError("ideal_grades contain NaN")
        default_rel = np.count_nonzero(ig > 0, axis=1)
        ig = -np.sort(-ig, axis=1)
        if not ideal_full:
            ig = ig[:, :ideal_cut]
        iq, ipos = np.nonzero(ig > 0)
        igrade, ipos_ = ig[iq, ipos], ipos + 1
    else:
        default_rel = row_rel
        if ideal_full or ideal_cut:
            fq, fpos = np.nonzero(relevant)
            iq, ipos_, igrade = _ideal(fq, g[fq, fpos])
        else:
            iq = ipos_ = np.zeros(0, dtype=np.int64)
            igrade = np.zeros(0)

    if n_relevant is None:
        n_rel = default_rel
    else:
        n_rel = np.asarray(n_relevant)
        if n_rel.shape != (n,):
            raise ValueError(f"n_relevant must have shape ({n},), got {n_rel.shape}")
        if not np.issubdtype(n_rel.dtype, np.integer):
            if np.isnan(n_rel.astype(float)).any() or (n_rel != np.round(n_rel)).any():
                raise ValueError("n_relevant must hold whole numbers")
            n_rel = n_rel.astype(np.int64)
        if (n_rel < 0).any():
            i = int(np.argmin(n_rel))
            raise ValueError(f"n_relevant must be >= 0, got {int(n_rel[i])} at row {i}")
    bad = np.flatnonzero(n_rel < row_rel)
    if bad.size:
        i = int(bad[0])
        if n_relevant is None:  # counted from ideal_grades
            raise ValueError(
                f"ideal_grades[{i}] holds {int(n_rel[i])} relevant grades but row {i} of grades already "
                f"holds {int(row_rel[i])}: ideal_grades must list every judged document of the query, "
                "the retrieved ones included"
            )
        raise ValueError(
            f"n_relevant[{i}] = {int(n_rel[i])} but row {i} of grades already holds "
            f"{int(row_rel[i])} relevant documents: n_relevant counts all relevant documents of the query"
        )
    if -1 in cuts:
        cuts.append(int(n_rel.max()) if n else 0)
    cut = depth if full else min(depth, max(cuts, default=0))
    q, pos = np.nonzero(relevant[:, :cut])
    hit_grade = g[q, pos]
    hits = _Hits(n, q, pos + 1, hit_grade, n_rel, iq, ipos_, igrade, first_rank)
    values = _compute(hits, metric_list, _Options(gain, _check_max_grade(max_grade)))
    for m in metric_list:
        over = np.flatnonzero(values[m.name] > 1.0 + 1e-9) if m.kind == "ndcg" else ()
        if len(over):
            i = int(over[0])
            raise ValueError(
                f"{m.name} of row {i} is {values[m.name][i]:.4f} > 1: its ranking is better than the ideal "
                "one, so ideal_grades does not hold the grades of every judged document of the query "
                "(the retrieved ones included)"
            )
    ids = [str(i) for i in range(n)] if query_ids is None else [str(x) for x in query_ids]
    if len(ids) != n:
        raise ValueError(f"query_ids has {len(ids)} labels for {n} rows")
    return _result(metric_list, ids, values, gain, {}, n_rel, no_relevant,
                   "nothing to evaluate: no query has a relevant document "
                   "(no_relevant='skip' left every query out)")


def _result(metric_list: list[Metric], ids: list[str], values: dict[str, np.ndarray], gain: str,
            skipped: dict[str, list[str]], n_rel: np.ndarray, no_relevant: str,
            empty_message: str) -> RunResult:
    """Apply ``no_relevant="skip"`` and build the RunResult (ValueError if nothing is left)."""
    if no_relevant == "skip":
        keep = n_rel > 0
        if not keep.all():
            skipped["no_relevant"] = [ids[i] for i in np.flatnonzero(~keep)]
            values = {m: v[keep] for m, v in values.items()}
            ids = [ids[i] for i in np.flatnonzero(keep)]
    if not ids:
        raise ValueError(empty_message)
    return RunResult([m.name for m in metric_list], ids, values, gain, skipped)


# --------------------------------------------------------------------------- dict API


def _scores_of(qid: Any, docs: Mapping) -> None:
    for doc, s in docs.items():
        if not isinstance(s, (int, float, np.floating, np.integer)) or isinstance(s, bool):
            raise ValueError(f"run: score of query {qid!r}, document {doc!r} must be a number, got {s!r}")
        if math.isnan(s):
            raise ValueError(f"run: score of query {qid!r}, document {doc!r} is NaN")
    raise ValueError(f"run: query {qid!r} holds a score that is not a finite number")  # pragma: no cover


def evaluate_run(
    qrels: Mapping[Any, Mapping[Any, float]],
    run: Mapping[Any, Mapping[Any, float]],
    metrics: str | Iterable[str],
    gain: str = "linear",
    *,
    no_relevant: str = "zero",
    missing: str = "skip",
    max_grade: float = 4.0,
) -> RunResult:
    """Evaluate a run against relevance judgements, trec_eval style.

    ``qrels = {qid: {doc: grade}}``, ``run = {qid: {doc: score}}`` (higher score =
    better; the interchange format of trec_eval/pytrec_eval and ranx). Rankings
    are ordered by score descending, ties by document id descending (trec_eval).
    See the module docstring for every convention; ``no_relevant`` and
    ``missing`` choose what happens to queries without relevant documents and to
    judged queries the run did not answer; ``max_grade`` is the top grade of the
    relevance scale, used by ERR only (default 4, the 0-4 scale of the TREC Web
    track and of ``gdeval.pl``, which ir_measures runs for ERR). The result is
    keyed by the metric names as written (``"ndcg_cut_10"`` stays
    ``"ndcg_cut_10"``). Query ids are reported as strings, in sorted order (like
    trec_eval).

    >>> qrels = {"q1": {"a": 1, "b": 0}}
    >>> run = {"q1": {"a": 0.2, "b": 0.9}}
    >>> evaluate_run(qrels, run, "mrr").mean
    {'mrr': 0.5}
    """
    metric_list = parse_metrics(metrics, "retrieval")
    _check_options(gain, no_relevant, missing)
    if not isinstance(qrels, Mapping) or not isinstance(run, Mapping):
        raise TypeError("qrels and run must be mappings {qid: {doc: value}}")

    qids = sorted(qrels, key=str)
    skipped: dict[str, list[str]] = {}
    evaluated: list[Any] = []
    for qid in qids:
        if qid not in run and missing == "skip":
            skipped.setdefault("not_in_run", []).append(str(qid))
            continue
        evaluated.append(qid)

    n = len(evaluated)
    runs = [_as_dict(run.get(qid, {}), "run", qid) for qid in evaluated]
    lengths = np.fromiter(map(len, runs), dtype=np.int64, count=n)
    total = int(lengths.sum())
    try:
        scores = np.fromiter(chain.from_iterable(map(dict.values, runs)), dtype=float, count=total)
    except (TypeError, ValueError):
        scores = None
    if scores is None or np.isnan(scores).any():
        for qid, docs in zip(evaluated, runs, strict=True):
            _scores_of(qid, docs)
    depth = int(lengths.max()) if n else 0
    # The scores as a padded (n, depth) matrix; padding -inf sorts below every score.
    if total == n * depth:
        score_mat = scores.reshape(n, depth)
    else:
        score_mat = np.full((n, depth), -np.inf)
        offsets = np.r_[0, np.cumsum(lengths)[:-1]]
        rows = np.repeat(np.arange(n), lengths)
        score_mat[rows, np.arange(total) - np.repeat(offsets, lengths)] = scores

    # The judged documents, flattened; keep the relevant ones and look up their run scores
    # (map/compress run the per-document work in C; no Python loop per query).
    judged = [_as_dict(qrels[qid], "qrels", qid) for qid in evaluated]
    jlen = np.fromiter(map(len, judged), dtype=np.int64, count=n)
    try:
        jgrade = np.fromiter(
            chain.from_iterable(map(dict.values, judged)), dtype=float, count=int(jlen.sum())
        )
    except (TypeError, ValueError):
        raise ValueError("qrels: every grade must be a number") from None
    if np.isnan(jgrade).any():
        raise ValueError("qrels contain a NaN grade")
    relevant = jgrade > 0
    iq = np.repeat(np.arange(n), jlen)[relevant]
    igrade = jgrade[relevant]
    rel_docs = list(compress(chain.from_iterable(judged), relevant.tolist()))
    rel_runs = [runs[i] for i in iq.tolist()]
    looked_up = np.fromiter(
        map(dict.get, rel_runs, rel_docs, repeat(np.nan)), dtype=float, count=len(rel_docs)
    )
    found = ~np.isnan(looked_up)
    q = iq[found]
    hs = looked_up[found]
    grade_arr = igrade[found]
    hdoc = list(compress(rel_docs, found.tolist()))

    # rank = 1 + (documents with a higher score) + (tied documents with a larger id).
    rank = np.empty(q.size, dtype=np.int64)
    ties = np.zeros(q.size, dtype=bool)
    chunk = max(1, 4_000_000 // max(depth, 1))
    for start in range(0, q.size, chunk):
        sl = slice(start, start + chunk)
        rows = score_mat[q[sl]]
        s = hs[sl, None]
        rank[sl] = 1 + np.count_nonzero(rows > s, axis=1)
        ties[sl] = np.count_nonzero(rows == s, axis=1) > 1
    for j in np.flatnonzero(ties):
        docs, d, s = runs[q[j]], hdoc[j], hs[j]
        rank[j] += sum(1 for other, t in docs.items() if t == s and _after(other, d))

    order = np.lexsort((rank, q))
    n_rel = np.bincount(iq, minlength=n)
    iq_s, ipos, ig_s = _ideal(iq, igrade)
    hits = _Hits(n, q[order], rank[order], grade_arr[order], n_rel, iq_s, ipos, ig_s)
    values = _compute(hits, metric_list, _Options(gain, _check_max_grade(max_grade)))
    ids = [str(x) for x in evaluated]
    return _result(metric_list, ids, values, gain, skipped, n_rel, no_relevant,
                   "nothing to evaluate: no judged query of the qrels has both a run entry and a relevant "
                   "document; check that the query ids of qrels and run match "
                   f"(qrels: {list(qrels)[:3]}, run: {list(run)[:3]})")


def _as_dict(docs: Any, what: str, qid: Any) -> dict:
    if type(docs) is dict:
        return docs
    if isinstance(docs, Mapping):
        return dict(docs)
    raise TypeError(
        f"{what}[{qid!r}] must be a mapping {{doc: {'grade' if what == 'qrels' else 'score'}}}, "
        f"got {type(docs).__name__}"
    )


def _after(other: Any, doc: Any) -> bool:
    """True if ``other`` ranks before ``doc`` on a score tie: larger id first (trec_eval)."""
    return str(other) > str(doc)


def score_ranking(
    ranking: Sequence[Any],
    relevance: Mapping[Any, float] | Iterable[Any],
    metrics: str | Iterable[str],
    *,
    gain: str = "linear",
    max_grade: float = 4.0,
) -> dict[str, float]:
    """Any registered retrieval metric of one ranking, through the batch kernels.

    ``ranking``: document ids in rank order; ``relevance``: ``{doc: grade}`` or a
    collection of relevant ids (grade 1). The ranking is taken as given (no
    re-sorting), every judged document counts for the ideal DCG, and a query
    without relevant documents scores 0. Returns ``{name as written: value}``.

    >>> score_ranking(["a", "b", "c"], {"b": 2, "c": 1}, "mrr, err@3")["mrr"]
    0.5
    """
    from ragworkbook.metrics.retrieval import _check_ranking, _check_relevance

    docs = _check_ranking(ranking)
    rel = _check_relevance(relevance)
    run = {"q": {d: float(len(docs) - i) for i, d in enumerate(docs)}}
    result = evaluate_run({"q": rel}, run, metrics, gain, max_grade=max_grade, missing="zero")
    return {m: float(v[0]) for m, v in result.values.items()}
