"""Retrieval metrics over many queries at once: one engine, its entry points, its result.

The engine, :func:`evaluate_ranked`, takes rank-ordered grades
(:class:`~ragworkbook.metrics.ranked.Ranked`) and :class:`Metric` objects and
calls each metric's kernel (its spec's ``impl``, in :mod:`ragworkbook.metrics.kernels`)
with its bound parameters. Every entry point converts its input once, at the edge:

- :func:`evaluate_run`: the interchange format of trec_eval / ranx,
  ``qrels = {qid: {doc: grade}}`` and ``run = {qid: {doc: score}}``, held as
  :class:`~ragworkbook.columns.Columns` and ranked like a TREC file;
- :func:`evaluate_columns`: qrels and a run as :class:`Columns` (what
  :func:`ragworkbook.corpus.trec.read_run_columns` reads a 10-million-line run
  into); ``ragworkbook ir-eval`` uses it;
- :func:`evaluate_rankings` and :func:`score_ranking`: rankings (document ids,
  best first) taken exactly as given;
- :func:`evaluate_arrays`: a ``(n_queries, depth)`` matrix of grades already in
  rank order.

Conventions (see also :mod:`ragworkbook.metrics.ranked`, :mod:`ragworkbook.metrics.ranking`
and :mod:`ragworkbook.metrics.retrieval`)
-------------------------------------------------------------------------------------------
- **Ranking** (run files and dicts): by score descending, ties broken by document
  id descending (byte order of the UTF-8 ids, as trec_eval's ``strcmp``); the
  ``rank`` column of a TREC run is ignored. ranx sorts ties unstably: results
  differ from ranx only on ties.
- **Score precision** (``score_precision``): ``"float64"`` (default) compares the
  scores at full double precision, as trec_eval 10 does; ``"float32"`` rounds
  every score to float32 first, as trec_eval up to 9.0.8, pytrec_eval 0.5 and
  ir_measures do (scores closer than about 6e-8 relative then tie).
- **NaN scores** are an error naming the query and document.
- **Relevant** (P, recall, hit rate, MRR, AP, R-precision, bpref...) = grade >=
  ``relevance_level`` (trec_eval ``-l``); the default ``None`` means grade > 0.
  **Gains** (DCG, NDCG, ERR) come from the grades whatever the level, as in
  trec_eval's ``ndcg``: grades <= 0 give gain 0.
- **Depth** (``depth``, trec_eval ``-M``): only the first ``depth`` documents of
  each ranking count.
- **Queries without relevant documents**: ``no_relevant="zero"`` (default) keeps
  them, every metric dividing by R scoring 0 — what trec_eval, pytrec_eval 0.5.11
  and ranx 0.3.21 do; ``"skip"`` leaves them out (listed in ``RunResult.skipped``).
- **Queries in the qrels but absent from the run**: ``missing="skip"`` (default,
  pytrec_eval; trec_eval 10 stops with an error instead) or ``"zero"`` (an empty
  ranking: trec_eval ``-c``, ranx ``make_comparable``). Run queries without
  qrels are ignored.
- **k beyond a ranking**: missing positions are non-relevant (P@k divides by k).
- **AP with a cutoff** divides by all relevant documents (trec_eval ``map_cut``).
- **Aggregates**: the mean over queries, except where the spec says otherwise
  (gm_map's geometric mean with values floored at 1e-5; num_ret's sum).
- **Huge grades**: NDCG is exact however large the grades; a DCG that does not fit
  in a float is an error naming the query, never an ``inf`` or ``NaN``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

import numpy as np
from numpy.typing import ArrayLike

from ragworkbook._validate import check_k
from ragworkbook.columns import Columns
from ragworkbook.metrics.kernels import MIN_GEO_MEAN
from ragworkbook.metrics.ranked import Ranked
from ragworkbook.metrics.ranking import rank_columns
from ragworkbook.metrics.registry import Metric, parse_metrics
from ragworkbook.metrics.retrieval import check_gain, check_ranking, check_relevance

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from typing_extensions import Unpack

__all__ = ["Columns", "RunResult", "RunOptions", "evaluate_ranked", "evaluate_run", "evaluate_columns",
           "evaluate_arrays", "evaluate_rankings", "score_ranking", "SCORE_PRECISIONS"]

_NO_RELEVANT = ("skip", "zero")
#: The accepted values of ``score_precision``.
SCORE_PRECISIONS = ("float64", "float32")
MetricsArg = str | Metric | Iterable[str | Metric]


def _in_order(v: np.ndarray) -> float:
    """The sum of ``v`` added one value after another, in query order, as trec_eval sums (numpy's
    ``sum`` adds pairwise, which rounds differently: a mean could differ in its last printed digit)."""
    v = np.asarray(v, dtype=np.float64)
    return float(np.cumsum(v)[-1]) if v.size else 0.0


@dataclass
class RunResult:
    """Per-query values and aggregates of a batch evaluation.

    ``measured`` are the :class:`Metric` objects evaluated, in order, and ``metrics``
    their names as written; ``values[name]`` is an array aligned with ``query_ids``
    (float; a string per query for a text metric such as trec_eval's relstring);
    ``skipped`` maps a reason (``"no_relevant"``, ``"not_in_run"``) to the query ids
    left out.
    """

    measured: list[Metric]
    query_ids: list[str]
    values: dict[str, np.ndarray]
    gain: str = "linear"
    skipped: dict[str, list[str]] = field(default_factory=dict)

    @property
    def metrics(self) -> list[str]:
        """The metrics' names as written, in order (the keys of ``values`` and ``mean``)."""
        return [m.name for m in self.measured]


    def aggregate(self, metric: Metric) -> float:
        """The summary of one metric over the queries, as its spec says (mean, geometric mean, sum)."""
        v = self.values[metric.name]
        how = metric.spec.aggregate
        if how == "sum":
            return _in_order(v)
        if how == "geometric":
            return float(np.exp(_in_order(np.log(np.maximum(v.astype(float), MIN_GEO_MEAN))) / len(v)))
        return _in_order(v) / len(v)

    @property
    def mean(self) -> dict[str, float]:
        """The summary of each metric over the evaluated queries (its mean unless its spec says
        otherwise), keyed by name; text metrics have none."""
        return {m.name: self.aggregate(m) for m in self.measured if m.spec.aggregate != "none"}

    @property
    def n_queries(self) -> int:
        """Number of queries evaluated (and averaged)."""
        return len(self.query_ids)

    @property
    def per_query(self) -> dict[str, dict[str, float | int | str]]:
        """``{qid: {metric: value}}``, the shape pytrec_eval returns."""
        cols = [(m.name, self.values[m.name].tolist()) for m in self.measured]
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


def evaluate_ranked(ranked: Ranked, metrics: Sequence[Metric], *, no_relevant: str = "zero",
                    skipped: Mapping[str, list[str]] | None = None, gain: str = "linear",
                    empty_message: str = "nothing to evaluate: no query") -> RunResult:
    """Every metric of ``metrics`` on ``ranked``: its kernel called with its bound parameters.

    A value that is not finite is an error naming the query; ``no_relevant="skip"``
    leaves out the queries without relevant documents (ValueError when nothing is
    left, with ``empty_message``).
    """
    _check_no_relevant(no_relevant)
    values: dict[str, np.ndarray] = {}
    for m in metrics:
        out = np.asarray(m.compute(ranked))
        if out.dtype.kind == "f":
            bad = np.flatnonzero(~np.isfinite(out))
            if bad.size:
                i = int(bad[0])
                if m.kwargs.get("gain") == "exponential":
                    why = ("its exponential gain 2^grade - 1 does not fit in a float (grades above 1023 "
                           "overflow): use the linear gain or smaller grades")
                else:
                    why = "the sum of its gains does not fit in a float: rescale the grades"
                raise ValueError(f"{m.name} of {ranked.where(i)} is {out[i]}: {why}")
        values[m.name] = out
    ids = list(ranked.ids)
    skip = {k: list(v) for k, v in (skipped or {}).items()}
    if no_relevant == "skip":
        keep = ranked.n_rel > 0
        if not keep.all():
            skip["no_relevant"] = [ids[i] for i in np.flatnonzero(~keep)]
            values = {k: v[keep] for k, v in values.items()}
            ids = [ids[i] for i in np.flatnonzero(keep)]
    if not ids:
        raise ValueError(empty_message)
    return RunResult(list(metrics), ids, values, gain, skip)


def _metrics(metrics: MetricsArg, gain: str, max_grade: float) -> list[Metric]:
    """Parse the retrieval metrics; evaluation-wide ``gain`` and ``max_grade`` become the values of
    the parameters that declare those options (``Param.option``) when a name does not set them."""
    check_gain(gain)
    defaults = {"gain": gain, "max_grade": _check_max_grade(max_grade)}
    return parse_metrics(metrics, "retrieval", defaults=defaults)


def _check_max_grade(max_grade: object) -> float:
    try:
        value = float(max_grade)
    except (TypeError, ValueError):
        value = float("nan")
    if not value > 0 or math.isinf(value):
        raise ValueError(f"max_grade must be a positive number (the top grade of the relevance scale), "
                         f"got {max_grade!r}")
    return value


def _check_no_relevant(no_relevant: str) -> None:
    if no_relevant not in _NO_RELEVANT:
        raise ValueError(f"no_relevant must be 'zero' (score such queries 0, like trec_eval and ranx) or "
                         f"'skip' (leave them out of the mean), got {no_relevant!r}")


def _check_run_options(no_relevant: str, missing: str, depth: int | None, relevance_level: float | None,
                       score_precision: str) -> tuple[int | None, float | None]:
    _check_no_relevant(no_relevant)
    if missing not in _NO_RELEVANT:
        raise ValueError(f"missing must be 'skip' (like trec_eval) or 'zero' (like trec_eval -c / ranx), "
                         f"got {missing!r}")
    depth = check_k(depth, "depth", optional=True)
    level = None
    if relevance_level is not None:
        try:
            level = float(relevance_level)
        except (TypeError, ValueError):
            level = float("nan")
        if not math.isfinite(level) or isinstance(relevance_level, bool):
            raise ValueError(f"relevance_level must be a number (relevant = grade >= it), "
                             f"got {relevance_level!r}")
    if score_precision not in SCORE_PRECISIONS:
        raise ValueError(f"score_precision must be 'float64' (full precision, trec_eval 10) or 'float32' "
                         f"(trec_eval 9, pytrec_eval), got {score_precision!r}")
    return depth, level


def _nothing(qids_a: Sequence[str], qids_b: Sequence[str]) -> str:
    return ("nothing to evaluate: no judged query of the qrels has both a run entry and a relevant "
            "document; check that the query ids of qrels and run match "
            f"(qrels: {list(qids_a)[:3]}, run: {list(qids_b)[:3]})")


# --------------------------------------------------------------------------- columns and dicts


def evaluate_columns(
    qrels: Columns,
    run: Columns,
    metrics: MetricsArg,
    gain: str = "linear",
    *,
    no_relevant: str = "zero",
    missing: str = "skip",
    max_grade: float = 4.0,
    depth: int | None = None,
    relevance_level: float | None = None,
    score_precision: str = "float64",
) -> RunResult:
    """Evaluate a run against relevance judgements given as :class:`Columns`.

    The run is ranked and joined with the qrels by
    :func:`ragworkbook.metrics.ranking.rank_columns` (see the module docstring for
    every convention), then every metric is computed by the engine. The options,
    with the trec_eval flag each one mirrors: ``missing`` (``-c``), ``depth``
    (``-M``), ``relevance_level`` (``-l``), ``no_relevant``, ``score_precision``.
    ``gain`` and ``max_grade`` set those parameters for the metrics that have them
    (a name's own ``ndcg@10(gain=exponential)`` wins). A document retrieved or
    judged twice for a query is an error naming where.

    >>> qrels = Columns.from_dict({"q1": {"a": 1, "b": 0}})
    >>> run = Columns.from_dict({"q1": {"a": 0.2, "b": 0.9}})
    >>> evaluate_columns(qrels, run, "mrr").mean
    {'mrr': 0.5}
    """
    metric_list = _metrics(metrics, gain, max_grade)
    return _evaluate_columns(qrels, run, metric_list, gain, no_relevant=no_relevant, missing=missing,
                             depth=depth, relevance_level=relevance_level, score_precision=score_precision)


def _evaluate_columns(qrels: Columns, run: Columns, metric_list: Sequence[Metric], gain: str, *,
                      no_relevant: str, missing: str, depth: int | None, relevance_level: float | None,
                      score_precision: str) -> RunResult:
    """:func:`evaluate_columns` on metrics already parsed (the run-wide options bound)."""
    depth, level = _check_run_options(no_relevant, missing, depth, relevance_level, score_precision)
    if not isinstance(qrels, Columns) or not isinstance(run, Columns):
        raise TypeError("qrels and run must be Columns (see Columns.from_dict and "
                        "corpus.trec.read_qrels_columns / read_run_columns)")
    ranked, skipped = rank_columns(qrels, run, missing=missing, depth=depth, level=level,
                                   float32=score_precision == "float32")
    return evaluate_ranked(ranked, metric_list, no_relevant=no_relevant, skipped=skipped, gain=gain,
                           empty_message=_nothing(qrels.qids, run.qids))


class RunOptions(TypedDict, total=False):
    """The keyword options of :func:`evaluate_columns`, which :func:`evaluate_run` passes on."""

    #: a query with no relevant document: "zero" scores it 0 (trec_eval), "skip" leaves it out
    no_relevant: str
    #: a judged query the run lacks: "skip" (trec_eval) or "zero" (trec_eval's ``-c``, ranx)
    missing: str
    #: the top grade of the relevance scale, for the metrics that declare it (ERR)
    max_grade: float
    #: only the first ``depth`` documents of each ranking (trec_eval's ``-M``)
    depth: int | None
    #: relevant means a grade at least this (trec_eval's ``-l``)
    relevance_level: float | None
    #: "float64" (full precision, trec_eval 10) or "float32" (trec_eval 9, pytrec_eval)
    score_precision: str


def evaluate_run(
    qrels: Mapping[Hashable, Mapping[Hashable, float]],
    run: Mapping[Hashable, Mapping[Hashable, float]],
    metrics: MetricsArg,
    gain: str = "linear",
    **options: Unpack[RunOptions],
) -> RunResult:
    """Evaluate a run against relevance judgements, trec_eval style.

    ``qrels = {qid: {doc: grade}}``, ``run = {qid: {doc: score}}`` (higher score =
    better; the interchange format of trec_eval/pytrec_eval and ranx), turned into
    :class:`Columns` and evaluated by :func:`evaluate_columns` (the options are
    its). The result is keyed by the metric names as written (``"ndcg_cut_10"``
    stays ``"ndcg_cut_10"``); query ids are strings, in sorted order (like
    trec_eval). ``max_grade``: the top grade of the relevance scale, for ERR
    (default 4, the TREC Web track's 0-4 scale and ``gdeval.pl``'s ``MAX_JUDGMENT``).

    >>> qrels = {"q1": {"a": 1, "b": 0}}
    >>> run = {"q1": {"a": 0.2, "b": 0.9}}
    >>> evaluate_run(qrels, run, "mrr").mean
    {'mrr': 0.5}
    """
    if not isinstance(qrels, Mapping) or not isinstance(run, Mapping):
        raise TypeError("qrels and run must be mappings {qid: {doc: value}}")
    q, r = Columns.from_dict(qrels, "qrels", "grade"), Columns.from_dict(run, "run", "score")
    return evaluate_columns(q, r, metrics, gain, **options)


# --------------------------------------------------------------------------- rankings


def evaluate_rankings(rankings: Mapping[Hashable, Sequence[Hashable]],
                      qrels: Mapping[Hashable, Mapping[Hashable, float]],
                      metrics: MetricsArg, *, gain: str = "linear", max_grade: float = 4.0,
                      no_relevant: str = "zero") -> RunResult:
    """Rankings ``{qid: [doc id, ...]}`` (best first, taken exactly as given) against ``qrels``.

    Every query of ``rankings`` is scored, in the given order; one missing from
    ``qrels`` has no relevant document (0). Every judged document counts for the
    ideal DCG. A document twice in one ranking is an error.
    """
    return _evaluate_rankings(rankings, qrels, _metrics(metrics, gain, max_grade), gain=gain,
                              no_relevant=no_relevant)


def _evaluate_rankings(rankings: Mapping[Hashable, Sequence[Hashable]],
                       qrels: Mapping[Hashable, Mapping[Hashable, float]],
                       metric_list: Sequence[Metric], *, gain: str, no_relevant: str) -> RunResult:
    """:func:`evaluate_rankings` on metrics already parsed (the run-wide options bound)."""
    ranked = Ranked.from_rankings(rankings, qrels)
    return evaluate_ranked(ranked, metric_list, no_relevant=no_relevant, gain=gain,
                           empty_message="nothing to evaluate: no ranking given")


def score_ranking(
    ranking: Sequence[Hashable],
    relevance: Mapping[Hashable, float] | Iterable[Hashable],
    metrics: MetricsArg,
    *,
    gain: str = "linear",
    max_grade: float = 4.0,
) -> dict[str, float]:
    """The named retrieval metrics of one ranking (any registered), through the batch kernels.

    ``ranking``: document ids in rank order; ``relevance``: ``{doc: grade}`` or a
    collection of relevant ids (grade 1). The ranking is taken as given (no
    re-sorting), every judged document counts for the ideal DCG, and a query
    without relevant documents scores 0. Returns ``{name as written: value}``.

    >>> score_ranking(["a", "b", "c"], {"b": 2, "c": 1}, "mrr, err@3")["mrr"]
    0.5
    """
    docs = check_ranking(ranking)
    rel = check_relevance(relevance)
    metric_list = _metrics(metrics, gain, max_grade)
    result = _evaluate_rankings({"q": docs}, {"q": rel}, metric_list, gain=gain, no_relevant="zero")
    return {m: (float(v[0]) if v.dtype.kind == "f" else v[0]) for m, v in result.values.items()}


# --------------------------------------------------------------------------- arrays


def evaluate_arrays(
    grades: ArrayLike,
    metrics: MetricsArg,
    *,
    n_relevant: ArrayLike | None = None,
    ideal_grades: ArrayLike | None = None,
    gain: str = "linear",
    no_relevant: str = "zero",
    query_ids: Sequence[Hashable] | None = None,
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
        Retrieval metric names or :class:`Metric` objects; the result is keyed by the
        names as written.
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
    metric_list = _metrics(metrics, gain, max_grade)
    _check_no_relevant(no_relevant)
    g = np.asarray(grades, dtype=float)
    if g.ndim == 1:
        g = g[None, :]
    if g.ndim != 2:
        raise ValueError(f"grades must be a (n_queries, depth) matrix, got shape {g.shape}")
    n = g.shape[0]
    if np.isnan(g.sum()) and np.isnan(g).any():
        raise ValueError(f"grades contain NaN (first at row {int(np.argwhere(np.isnan(g))[0][0])})")
    row_rel = np.count_nonzero(g > 0, axis=1)
    ig = None
    if ideal_grades is not None:
        ig = np.asarray(ideal_grades, dtype=float)
        if ig.ndim == 1:
            ig = ig[None, :]
        if ig.ndim != 2 or ig.shape[0] != n:
            raise ValueError(f"ideal_grades must have one row per query ({n}), got shape {ig.shape}")
        if np.isnan(ig).any():
            raise ValueError("ideal_grades contain NaN")
        default_rel = np.count_nonzero(ig > 0, axis=1)
    else:
        default_rel = row_rel
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
    ids = [str(i) for i in range(n)] if query_ids is None else [str(x) for x in query_ids]
    if len(ids) != n:
        raise ValueError(f"query_ids has {len(ids)} labels for {n} rows")
    ranked = Ranked.from_matrix(g, n_relevant=np.asarray(n_rel, dtype=np.int64), ideal_grades=ig,
                                query_ids=ids)
    result = evaluate_ranked(ranked, metric_list, no_relevant=no_relevant, gain=gain,
                             empty_message="nothing to evaluate: no query has a relevant document "
                                           "(no_relevant='skip' left every query out)")
    for m in metric_list:
        if not m.spec.graded or m.spec.scale != (0.0, 1.0):
            continue  # a normalised graded metric above 1: the ideal misses grades of the ranking
        over = np.flatnonzero(result.values[m.name] > 1.0 + 1e-9)
        if over.size:
            i = int(over[0])
            raise ValueError(
                f"{m.name} of row {i} is {result.values[m.name][i]:.4f} > 1: its ranking is better than the "
                "ideal one, so ideal_grades does not hold the grades of every judged document of the query "
                "(the retrieved ones included)"
            )
    return result
