"""Retrieval metrics over many queries at once, vectorised with numpy.

Three entry points, one engine:

- :func:`evaluate_run` takes the interchange format of trec_eval / ranx:
  ``qrels = {qid: {doc: grade}}`` and ``run = {qid: {doc: score}}``.
- :func:`evaluate_columns` takes qrels and a run as :class:`Columns` (one row per
  line of a TREC file: query, document, grade or score), the form
  :func:`ragworkbook.corpus.trec.read_run_columns` reads a 10-million-line run into
  without building a Python object per line; ``ragworkbook ir-eval`` uses it.
- :func:`evaluate_arrays` takes relevance already in rank order: a
  ``(n_queries, depth)`` matrix of grades (row i = the grades of query i's
  ranking, best first; pad short rankings with 0), plus optionally the number of
  relevant documents per query and the grades of all judged documents per query
  (for the ideal DCG).

All reduce a query to the ranks and grades of its *retrieved judged* documents,
then compute every metric with array operations (``np.bincount`` over query
indices): there is no Python loop per query.

Conventions (see also :mod:`ragworkbook.metrics.retrieval`)
-------------------------------------------------------------
- **Ranking**: by score descending, ties broken by document id descending
  (byte order of the UTF-8 ids, as trec_eval's ``strcmp``). The ``rank`` column
  of a TREC run file is ignored (as in trec_eval): only the scores order a
  ranking. ranx sorts ties unstably: results differ from ranx only on ties.
- **Score precision** (``score_precision``): ``"float64"`` (default) compares the
  scores at full double precision, as trec_eval 10 does (the C trec_eval whose
  conformance suite ragworkbook's tests run; measured: it reads ``sim`` as a
  double). ``"float32"`` rounds every score to float32 first, as trec_eval up to
  9.0.8 did (``float sim``) and as pytrec_eval 0.5 and ir_measures still do: two
  scores closer than float32's resolution (about 6e-8 relative) then tie and are
  ordered by document id. The two agree unless scores differ below float32
  resolution.
- **NaN scores** are an error naming the query and document.
- **Relevant** (binary metrics: P, recall, hit rate, MRR, AP, R-precision) =
  grade >= ``relevance_level`` (trec_eval ``-l``); the default ``None`` means
  grade > 0 (trec_eval's default level 1 on integer grades). **Gains** (DCG,
  NDCG, ERR) come from the grades themselves whatever the level, as in
  trec_eval's ``ndcg``: grades <= 0 give gain 0.
- **Depth** (``depth``, trec_eval ``-M``): only the first ``depth`` documents of
  each ranking (after sorting) count; ``None`` = all.
- **Queries without relevant documents** (judged, but none relevant):
  ``no_relevant="zero"`` (default) keeps them, every binary metric 0 — measured
  to be what both pytrec_eval 0.5.11 and ranx 0.3.21 do; ``no_relevant="skip"``
  leaves them out of ``per_query`` and of the mean (the skipped ids are listed in
  ``RunResult.skipped``).
- **Queries in the qrels but absent from the run**: ``missing="skip"`` (default)
  leaves them out, like pytrec_eval and trec_eval 9 without ``-c`` (trec_eval 10
  at the suite's commit stops with an error instead); ``missing="zero"`` scores
  them 0 (trec_eval ``-c``, ranx ``make_comparable``). Queries in the run but not
  in the qrels are ignored (nothing to judge them with).
- **k beyond a ranking**: missing positions are non-relevant (P@k divides by k).
- **AP with a cutoff** divides by all relevant documents (trec_eval ``map_cut``).
- **ERR** (Chapelle et al. 2009) turns a grade into a stopping probability
  ``(2^grade - 1) / 2^max_grade``; ``max_grade`` is the top of the relevance
  scale (default 4: the 0-4 scale of the TREC Web track and ``gdeval.pl``'s
  ``MAX_JUDGMENT``); a grade above it is an error.
- **Huge grades**: NDCG is computed exactly however large the grades (gains are
  scaled by the query's largest one when the plain sums overflow); a DCG that
  does not fit in a float (exponential gain of a grade above 1023) is an error
  naming the query and the judgement, never an ``inf`` or ``NaN``.
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

from ragworkbook._validate import check_k
from ragworkbook.metrics.registry import Metric, parse_metrics
from ragworkbook.metrics.retrieval import check_gain, gain_values

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["KERNELS", "Columns", "RunResult", "evaluate_run", "evaluate_columns", "evaluate_arrays",
           "score_ranking", "SCORE_PRECISIONS"]

_NO_RELEVANT = ("skip", "zero")
#: The accepted values of ``score_precision``.
SCORE_PRECISIONS = ("float64", "float32")


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


@dataclass(frozen=True, eq=False)
class Columns:
    """Qrels or a run as columns: one row per judgement or retrieved document.

    ``qids`` are the distinct query ids (strings) and ``q`` gives each row's index
    into them; ``doc`` holds each row's document id as UTF-8 bytes (a numpy ``S``
    array, or an object array of ``bytes`` for very long ids); ``value`` each row's
    grade (qrels) or score (run) as float64. ``source`` names the file and ``line``
    gives each row's line in it (``None``: row i is line i + 1), so that an error
    can say where the offending row is. Build one from dicts with
    :meth:`from_dict`, from a TREC file with
    :func:`ragworkbook.corpus.trec.read_qrels_columns` / ``read_run_columns``.
    """

    qids: Sequence[str]
    q: np.ndarray
    doc: np.ndarray
    value: np.ndarray
    source: str = ""
    line: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.q)
        if len(self.doc) != n or len(self.value) != n:
            raise ValueError(f"columns of different lengths: q {n}, doc {len(self.doc)}, "
                             f"value {len(self.value)}")
        if n and (int(self.q.min()) < 0 or int(self.q.max()) >= len(self.qids)):
            raise ValueError("q must index into qids")

    def __len__(self) -> int:
        return len(self.q)

    @classmethod
    def from_dict(cls, mapping: Mapping[Any, Mapping[Any, Any]], source: str = "") -> Columns:
        """``{qid: {doc: value}}`` as columns (ids turned into strings; values must be numbers)."""
        qids = [str(q) for q in mapping]
        inner = [_as_dict(docs, source or "columns", q) for q, docs in mapping.items()]
        lengths = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
        docs = [str(d).encode("utf-8") for d in chain.from_iterable(inner)]
        try:
            value = np.fromiter(chain.from_iterable(map(dict.values, inner)), dtype=float,
                                count=int(lengths.sum()))
        except (TypeError, ValueError):
            raise ValueError(f"{source or 'columns'}: every value must be a number") from None
        return cls(qids, np.repeat(np.arange(len(qids), dtype=np.int64), lengths), _bytes_array(docs),
                   value, source)

    def where(self, row: int) -> str:
        """Where row ``row`` comes from: ``file:line`` when the source is a file, else its query and doc."""
        if self.source:
            line = int(self.line[row]) if self.line is not None else row + 1
            return f"{self.source}:{line}"
        return f"query {self.qids[int(self.q[row])]!r}, document {_text(self.doc[row])!r}"


#: Widest document id kept in a fixed-width ``S`` array; wider ids use an object array.
_MAX_FIXED_WIDTH = 64


def _bytes_array(items: Sequence[bytes]) -> np.ndarray:
    """A list of bytes as an ``S`` array, or an object array when an item is very long."""
    if not items:
        return np.zeros(0, dtype="S1")
    if max(map(len, items)) > _MAX_FIXED_WIDTH:
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out
    return np.array(items, dtype=bytes)


def _text(doc: Any) -> str:
    return doc.decode("utf-8", "replace") if isinstance(doc, bytes) else str(doc)


def _as_bytes(doc: np.ndarray) -> np.ndarray:
    """Document ids as ``S`` or object-of-bytes (``U`` and object-of-str arrays are encoded)."""
    doc = np.asarray(doc)
    if doc.dtype.kind == "S":
        return doc
    if doc.dtype.kind == "U" or (doc.dtype.kind == "O" and any(not isinstance(d, bytes) for d in doc)):
        return _bytes_array([str(d).encode("utf-8") for d in doc])
    return doc


_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _doc_hash(doc: np.ndarray) -> np.ndarray:
    """A 32-bit hash of each document id (uint32, never 0), equal for equal ids whatever the array's
    width. For ``S`` arrays it is vectorised (8-byte words, each times an odd constant, summed, then the
    splitmix64 finaliser); for object arrays it is Python's ``hash`` (stable within a process)."""
    n = len(doc)
    if doc.dtype.kind != "S":
        h = np.fromiter(map(hash, doc), dtype=np.int64, count=n).view(np.uint64)
        return ((h >> np.uint64(32)) ^ h).astype(np.uint32) | np.uint32(1)
    width = doc.dtype.itemsize
    words = -(-width // 8)
    raw = doc.view(np.uint8).reshape(n, width)
    out = np.empty(n, dtype=np.uint32)
    step = 1 << 18
    buf = np.zeros((min(step, max(n, 1)), words * 8), dtype=np.uint8)
    mult = (np.arange(words, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C16)) | np.uint64(1)
    for start in range(0, n, step):
        m = min(step, n - start)
        b = buf[:m]
        b[:, :width] = raw[start:start + m]
        w = b.view(np.uint64)
        h = w[:, 0] * mult[0]
        for j in range(1, words):
            h += w[:, j] * mult[j]
        h ^= h >> np.uint64(30)
        h *= _M1
        h ^= h >> np.uint64(27)
        h *= _M2
        h ^= h >> np.uint64(31)
        out[start:start + m] = h >> np.uint64(32)
    return out | np.uint32(1)


# --------------------------------------------------------------------------- the engine


@dataclass
class _Hits:
    """A batch reduced to what the metrics need.

    ``q``/``rank``/``grade``: the retrieved judged documents that matter (grade > 0,
    or relevant by the relevance level), sorted by (query, rank), ranks from 1;
    ``rel`` marks the relevant ones (``None``: all of them). ``n_rel``: relevant
    documents per query. ``iq``/``ipos``/``igrade``: every positive judged grade of
    each query in descending order, ``ipos`` its position from 1 (for the ideal DCG).
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
    rel: np.ndarray | None = None
    _binary: _Hits | None = None

    def binary(self) -> _Hits:
        """The relevant hits only (the binary metrics' view)."""
        if self.rel is None:
            return self
        if self._binary is None:
            keep = self.rel
            self._binary = _Hits(self.n, self.q[keep], self.rank[keep], self.grade[keep], self.n_rel,
                                 self.iq, self.ipos, self.igrade)
        return self._binary


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
    """Evaluation-wide parameters (a kernel may read the first two, :attr:`MetricSpec.params`)."""

    gain: str = "linear"
    max_grade: float = 4.0
    depth: int | None = None
    level: float | None = None
    float32: bool = False


def _within(rank: np.ndarray, k: int | None) -> np.ndarray:
    return rank <= k if k is not None else np.ones(rank.shape, dtype=bool)


def _hits_within(h: _Hits, k: int | None) -> np.ndarray:
    within = _within(h.rank, k)
    return np.bincount(h.q[within], minlength=h.n).astype(float)


def _safe_rel(h: _Hits) -> np.ndarray:
    return np.where(h.n_rel > 0, h.n_rel, 1).astype(float)


def _precision(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    return _hits_within(h.binary(), k) / k


def _recall(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    return np.where(h.n_rel > 0, _hits_within(h.binary(), k) / _safe_rel(h), 0.0)


def _hit_rate(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    return (_hits_within(h.binary(), k) > 0).astype(float)


def _mrr(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    h = h.binary()
    if h.first_rank is None:
        first_rank = np.full(h.n, np.inf)
        if h.q.size:
            starts = np.flatnonzero(np.r_[True, h.q[1:] != h.q[:-1]])
            first_rank[h.q[starts]] = h.rank[starts]
        h.first_rank = first_rank
    limit = k if k is not None else np.inf
    return np.where(h.first_rank <= limit, 1.0 / h.first_rank, 0.0)


def _map(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    h = h.binary()
    within = _within(h.rank, k)
    prec = _positions_in_groups(h.q)[within] / h.rank[within]
    return np.bincount(h.q[within], weights=prec, minlength=h.n) / _safe_rel(h)


def _r_precision(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    h = h.binary()
    inside = h.rank <= h.n_rel[h.q]
    return np.bincount(h.q[inside], minlength=h.n) / _safe_rel(h)


def _dcg(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    within = _within(h.rank, k)
    with np.errstate(over="ignore"):  # an overflowing gain is reported by _compute, with its query
        w = gain_values(h.grade[within], o.gain) / np.log2(h.rank[within] + 1.0)
    return np.bincount(h.q[within], weights=w, minlength=h.n)


def _scaled_gains(grade: np.ndarray, top: np.ndarray, gain: str) -> np.ndarray:
    """``gain(grade) / gain(top)`` computed without forming either (no overflow): NDCG's ratio is
    unchanged when every gain of a query is divided by the same positive number."""
    g = np.maximum(grade, 0.0)
    if gain == "linear":
        return g / top
    return np.exp2(g - top) - np.exp2(-top)


def _ndcg(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    dcg = _dcg(h, k, o)
    iwithin = _within(h.ipos, k)
    with np.errstate(over="ignore"):
        iw = gain_values(h.igrade[iwithin], o.gain) / np.log2(h.ipos[iwithin] + 1.0)
    idcg = np.bincount(h.iq[iwithin], weights=iw, minlength=h.n)
    with np.errstate(invalid="ignore"):
        out = np.divide(dcg, idcg, out=np.zeros(h.n), where=idcg > 0)
    bad = ~(np.isfinite(dcg) & np.isfinite(idcg))
    if bad.any():  # gains too large for a float: divide every gain of the query by its largest gain
        top = np.ones(h.n)
        first = h.ipos == 1
        top[h.iq[first]] = h.igrade[first]
        within = _within(h.rank, k)
        w = _scaled_gains(h.grade[within], top[h.q[within]], o.gain) / np.log2(h.rank[within] + 1.0)
        sdcg = np.bincount(h.q[within], weights=w, minlength=h.n)
        iw = _scaled_gains(h.igrade[iwithin], top[h.iq[iwithin]], o.gain) / np.log2(h.ipos[iwithin] + 1.0)
        sidcg = np.bincount(h.iq[iwithin], weights=iw, minlength=h.n)
        scaled = np.divide(sdcg, sidcg, out=np.zeros(h.n), where=sidcg > 0)
        out = np.where(bad, scaled, out)
    return out


def _err(h: _Hits, k: int | None, o: _Options) -> np.ndarray:
    """ERR: ``sum_r R_r / r * prod_{i<r} (1 - R_i)``, ``R = (2^grade - 1) / 2^max_grade``.

    A non-relevant document has R = 0: it neither adds to the sum nor stops the
    cascade, so only the retrieved relevant documents enter, in rank order. R is
    computed as ``2^(grade - max_grade) - 2^-max_grade`` (no overflow on any scale).
    """
    within = _within(h.rank, k)
    q, rank, grade = h.q[within], h.rank[within], np.maximum(h.grade[within], 0.0)
    if grade.size and grade.max() > o.max_grade:
        raise ValueError(f"err: a grade of {grade.max():g} exceeds max_grade = {o.max_grade:g}; pass the "
                         "largest grade of your relevance scale as max_grade")
    stop = np.exp2(grade - o.max_grade) - np.exp2(-o.max_grade)
    # the probability of reaching each document: the product of (1 - R) over the earlier relevant
    # documents of its query, multiplied in rank order (as gdeval.pl does), one position at a time
    reach = np.ones(q.size)
    pos = _positions_in_groups(q)
    if q.size:
        by_pos = np.argsort(pos, kind="stable")
        bounds = np.searchsorted(pos[by_pos], np.arange(2, int(pos.max()) + 2))
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            idx = by_pos[lo:hi]
            reach[idx] = reach[idx - 1] * (1.0 - stop[idx - 1])
    return np.bincount(q, weights=stop * reach / rank, minlength=h.n)


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


def _compute(h: _Hits, metrics: list[Metric], options: _Options,
             describe: Callable[[int], str]) -> dict[str, np.ndarray]:
    """Every metric's kernel; a value that is not finite is an error naming the query (``describe``)."""
    out = {}
    for m in metrics:
        values = np.asarray(KERNELS[m.kind](h, m.k, options), dtype=float)
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            i = int(bad[0])
            if m.kind == "dcg" and options.gain == "exponential":
                why = ("its exponential gain 2^grade - 1 does not fit in a float (grades above 1023 "
                       "overflow): use the linear gain or smaller grades")
            else:
                why = "the sum of its gains does not fit in a float: rescale the grades"
            raise ValueError(f"{m.name} of {describe(i)} is {values[i]}: {why}")
        out[m.name] = values
    return out


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


def _options(gain: str, no_relevant: str, missing: str, max_grade: Any, depth: Any,
             relevance_level: Any, score_precision: str) -> _Options:
    """Check every evaluation option; return them as :class:`_Options`."""
    _check_options(gain, no_relevant, missing)
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
    return _Options(gain, _check_max_grade(max_grade), depth, level, score_precision == "float32")


def _considered(grade: np.ndarray, level: float | None) -> np.ndarray:
    """The judged documents the metrics look at: positive grades, and the relevant ones by the level."""
    return grade > 0 if level is None else (grade > 0) | (grade >= level)


def _relevant(grade: np.ndarray, level: float | None) -> np.ndarray:
    return grade > 0 if level is None else grade >= level


def _finish(metric_list: list[Metric], options: _Options, n: int, q: np.ndarray, rank: np.ndarray,
            grade: np.ndarray, n_rel: np.ndarray, iq: np.ndarray, igrade: np.ndarray, ids: list[str],
            skipped: dict[str, list[str]], no_relevant: str, empty_message: str,
            describe: Callable[[int], str]) -> RunResult:
    """From the ranked judged documents to the result: depth cut, metrics, query order, ``no_relevant``."""
    if options.depth is not None:
        keep = rank <= options.depth
        q, rank, grade = q[keep], rank[keep], grade[keep]
    order = np.lexsort((rank, q))
    q, rank, grade = q[order], rank[order], grade[order]
    rel = None if options.level is None else grade >= options.level
    iq_s, ipos, ig_s = _ideal(iq, igrade)
    hits = _Hits(n, q, rank, grade, n_rel, iq_s, ipos, ig_s, rel=rel)
    values = _compute(hits, metric_list, options, describe)
    by_id = sorted(range(n), key=ids.__getitem__)
    if by_id != list(range(n)):
        values = {m: v[by_id] for m, v in values.items()}
        ids = [ids[i] for i in by_id]
        n_rel = n_rel[by_id]
    return _result(metric_list, ids, values, options.gain, skipped, n_rel, no_relevant, empty_message)


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
    values = _compute(hits, metric_list, _Options(gain, _check_max_grade(max_grade)), lambda i: f"row {i}")
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


# --------------------------------------------------------------------------- columns API


def evaluate_columns(
    qrels: Columns,
    run: Columns,
    metrics: str | Iterable[str],
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

    The same metrics, options and conventions as :func:`evaluate_run` (see the
    module docstring), on data in columns: the form a TREC file is read into by
    :func:`ragworkbook.corpus.trec.read_run_columns`, ten million lines without a
    Python object per line. Document ids are matched through a hash of their
    bytes (every match is then checked byte for byte) and ranked in one matrix of
    scores per query. A document retrieved or judged twice for a query is an error
    naming the file and line (``Columns.source``).

    >>> qrels = Columns.from_dict({"q1": {"a": 1, "b": 0}})
    >>> run = Columns.from_dict({"q1": {"a": 0.2, "b": 0.9}})
    >>> evaluate_columns(qrels, run, "mrr").mean
    {'mrr': 0.5}
    """
    metric_list = parse_metrics(metrics, "retrieval")
    options = _options(gain, no_relevant, missing, max_grade, depth, relevance_level, score_precision)
    if not isinstance(qrels, Columns) or not isinstance(run, Columns):
        raise TypeError("qrels and run must be Columns (see Columns.from_dict and "
                        "corpus.trec.read_qrels_columns / read_run_columns)")
    qdoc, rdoc = _as_bytes(qrels.doc), _as_bytes(run.doc)
    if (qdoc.dtype.kind == "O") != (rdoc.dtype.kind == "O"):  # hash both the same way
        qdoc, rdoc = qdoc.astype(object), rdoc.astype(object)
    grade = np.asarray(qrels.value, dtype=float)
    _check_finite(grade, qrels, "grade")
    score = np.asarray(run.value, dtype=float)
    bad = np.flatnonzero(np.isnan(score))
    if bad.size:
        raise ValueError(f"{run.where(int(bad[0]))}: score is NaN")
    qhash = _doc_hash(qdoc)
    _check_unique(qrels, np.asarray(qrels.q), qhash, qdoc, "judged")

    # the evaluated queries, numbered in the run's order, then the judged ones the run lacks
    qrels_code = {qid: i for i, qid in enumerate(qrels.qids)}
    e_of_qrels = np.full(len(qrels.qids), -1, dtype=np.int64)
    e_of_run = np.full(len(run.qids), -1, dtype=np.int64)
    ids: list[str] = []
    for c, qid in enumerate(run.qids):
        j = qrels_code.get(qid)
        if j is not None and e_of_qrels[j] < 0:
            e_of_qrels[j] = e_of_run[c] = len(ids)
            ids.append(qid)
    n_in_run = len(ids)
    absent = sorted(qid for qid, j in qrels_code.items() if e_of_qrels[j] < 0)
    skipped: dict[str, list[str]] = {}
    if missing == "zero":
        for qid in absent:
            e_of_qrels[qrels_code[qid]] = len(ids)
            ids.append(qid)
    elif absent:
        skipped["not_in_run"] = absent
    n = len(ids)

    ranked = _RankedRun(run, rdoc, score, e_of_run, n_in_run, options.float32)
    # the judged documents the metrics look at, and where each one is in the run
    qe = e_of_qrels[np.asarray(qrels.q)]
    sel = np.flatnonzero((qe >= 0) & (qe < n_in_run) & _considered(grade, options.level))
    e_hit, rank = ranked.find(qe[sel], qhash[sel], qdoc[sel])
    found = e_hit >= 0
    rank = rank[found]
    hit_q, hit_grade = qe[sel][found], grade[sel][found]
    judged = qe >= 0
    n_rel = np.bincount(qe[judged & _relevant(grade, options.level)], minlength=n)
    positive = judged & (grade > 0)

    def describe(i: int) -> str:
        rows = np.flatnonzero(qe == i)
        row = int(rows[np.argmax(grade[rows])])
        return f"query {ids[i]!r} (its largest grade, {grade[row]:g}, is at {qrels.where(row)})"

    return _finish(metric_list, options, n, hit_q, rank, hit_grade, n_rel, qe[positive], grade[positive],
                   ids, skipped, no_relevant,
                   "nothing to evaluate: no judged query of the qrels has both a run entry and a relevant "
                   "document; check that the query ids of qrels and run match "
                   f"(qrels: {list(qrels.qids)[:3]}, run: {list(run.qids)[:3]})", describe)


def _check_finite(values: np.ndarray, cols: Columns, what: str) -> None:
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{cols.where(i)}: {what} {values[i]} is not a finite number")


def _check_unique(cols: Columns, q: np.ndarray, h: np.ndarray, doc: np.ndarray, verb: str) -> None:
    """No document twice for one query (trec_eval refuses that too): error at the second occurrence."""
    key = (q.astype(np.uint64) << np.uint64(32)) | h.astype(np.uint64)
    srt = np.sort(key)
    dup = srt[1:][srt[1:] == srt[:-1]]
    if dup.size:
        _raise_duplicate(cols, np.flatnonzero(np.isin(key, dup)), doc, verb)


def _raise_duplicate(cols: Columns, rows: np.ndarray, doc: np.ndarray, verb: str) -> None:
    """Among ``rows`` (sharing a hash), find a true duplicate (same query and id) and report it."""
    seen: dict[tuple[int, Any], int] = {}
    for r in sorted(rows.tolist(), key=lambda r: (cols.line[r] if cols.line is not None else r)):
        k = (int(cols.q[r]), doc[r])
        if k in seen:
            raise ValueError(f"{cols.where(r)}: document {_text(doc[r])!r} is {verb} twice for query "
                             f"{cols.qids[k[0]]!r}")
        seen[k] = r


class _RankedRun:
    """A run grouped by query: one row per evaluated query in a (queries, depth) matrix of scores
    and one of document hashes, padded with -inf and 0; ``find`` ranks judged documents in it."""

    def __init__(self, run: Columns, doc: np.ndarray, score: np.ndarray, e_of_run: np.ndarray,
                 n: int, float32: bool) -> None:
        self.run, self.doc = run, doc
        e = e_of_run.astype(np.int32 if n < 2**31 else np.int64)[np.asarray(run.q)]
        rows = None if n == len(run.qids) else np.flatnonzero(e >= 0)
        ge = e if rows is None else e[rows]
        change = np.flatnonzero(ge[1:] != ge[:-1]) + 1
        seg_start = np.r_[0, change] if ge.size else np.zeros(0, dtype=np.int64)
        if len(seg_start) != n:  # a query's lines are not all together: group them (stable)
            perm = np.argsort(ge, kind="stable")
            rows = perm if rows is None else rows[perm]
            ge = ge[perm]
            change = np.flatnonzero(ge[1:] != ge[:-1]) + 1
            seg_start = np.r_[0, change] if ge.size else np.zeros(0, dtype=np.int64)
        seg_e = ge[seg_start]
        seg_len = np.diff(np.r_[seg_start, ge.size])
        self.start = np.zeros(n, dtype=np.int64)
        self.length = np.zeros(n, dtype=np.int64)
        self.start[seg_e], self.length[seg_e] = seg_start, seg_len
        self.rows = rows  # grouped position -> run row (None: the same)
        self.depth = depth = int(seg_len.max()) if n else 0
        dtype = np.float32 if float32 else np.float64
        hashes = _doc_hash(doc if rows is None else doc[rows])
        if rows is None and (seg_len == depth).all() and np.array_equal(seg_e, np.arange(n)):
            self.scores = score.astype(dtype, copy=False).reshape(n, depth)
            self.hashes = hashes.reshape(n, depth)
        else:
            self.scores = np.full((n, depth), -np.inf, dtype=dtype)
            self.hashes = np.zeros((n, depth), dtype=np.uint32)
            pos = np.arange(ge.size) - np.repeat(seg_start, seg_len)
            self.scores[ge, pos] = score if rows is None else score[rows]
            self.hashes[ge, pos] = hashes
            del pos
        del hashes, ge, e
        self._check_unique()
        valid = np.arange(depth - 1) < (self.length[:, None] - 1)
        # a run file is usually written in rank order: then a document's rank is its position
        self.in_order = bool((self.scores[:, 1:] < self.scores[:, :-1])[valid].all())

    def _check_unique(self) -> None:
        step = max(1, (1 << 22) // max(self.depth, 1))
        for a in range(0, self.hashes.shape[0], step):
            srt = np.sort(self.hashes[a:a + step], axis=1)
            dup = (srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] != 0)
            for i in np.flatnonzero(dup.any(axis=1)) + a:
                _raise_duplicate(self.run, self._group_rows(int(i)), self.doc, "retrieved")

    def _group_rows(self, e: int) -> np.ndarray:
        g = np.arange(self.start[e], self.start[e] + self.length[e])
        return g if self.rows is None else self.rows[g]

    def find(self, e: np.ndarray, h: np.ndarray, doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For judged documents (query ``e``, hash ``h``, id ``doc``): their query where retrieved, else
        -1, and their rank (1 + documents with a higher score + tied ones with a larger id)."""
        m = e.size
        pos = np.full(m, -1, dtype=np.int64)
        step = max(1, (1 << 22) // max(self.depth, 1))
        for a in range(0, m, step):
            eq = self.hashes[e[a:a + step]] == h[a:a + step, None]
            count = np.count_nonzero(eq, axis=1)
            p = np.where(count > 0, eq.argmax(axis=1), -1)
            for j in np.flatnonzero(count > 1):  # two ids of one query share a hash: match exactly
                rows = self._group_rows(int(e[a + j]))
                same = np.flatnonzero(self.doc[rows] == doc[a + j])
                p[j] = int(same[0]) if same.size else -1
            pos[a:a + step] = p
        hit = np.flatnonzero(pos >= 0)
        gpos = self.start[e[hit]] + pos[hit]
        rows = gpos if self.rows is None else self.rows[gpos]
        false = hit[self.doc[rows] != doc[hit]]  # a hash shared with another id: not retrieved
        pos[false] = -1
        hit = np.flatnonzero(pos >= 0)
        rank = np.zeros(m, dtype=np.int64)
        if self.in_order:
            rank[hit] = pos[hit] + 1
        else:
            rank[hit] = self._rank(e[hit], pos[hit], doc[hit])
        return np.where(pos >= 0, e, -1), rank

    def _rank(self, e: np.ndarray, pos: np.ndarray, doc: np.ndarray) -> np.ndarray:
        s = self.scores[e, pos]
        rank = np.empty(e.size, dtype=np.int64)
        tied = np.zeros(e.size, dtype=bool)
        step = max(1, (1 << 22) // max(self.depth, 1))
        for a in range(0, e.size, step):
            rows = self.scores[e[a:a + step]]
            x = s[a:a + step, None]
            rank[a:a + step] = 1 + np.count_nonzero(rows > x, axis=1)
            tied[a:a + step] = np.count_nonzero(rows == x, axis=1) > 1
        ties = np.flatnonzero(tied)
        cols = np.arange(self.depth)
        last = (len(self.doc) if self.rows is None else len(self.rows)) - 1
        for a in range(0, ties.size, step):  # equal scores: the larger document id ranks first
            t = ties[a:a + step]
            valid = cols < self.length[e[t], None]
            g = np.minimum(self.start[e[t], None] + cols, last)
            rows = g if self.rows is None else self.rows[g]
            same = (self.scores[e[t]] == s[t, None]) & valid
            rank[t] += np.count_nonzero(same & (self.doc[rows] > doc[t, None]), axis=1)
        return rank


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
    depth: int | None = None,
    relevance_level: float | None = None,
    score_precision: str = "float64",
) -> RunResult:
    """Evaluate a run against relevance judgements, trec_eval style.

    ``qrels = {qid: {doc: grade}}``, ``run = {qid: {doc: score}}`` (higher score =
    better; the interchange format of trec_eval/pytrec_eval and ranx). Rankings
    are ordered by score descending, ties by document id descending (trec_eval).
    See the module docstring for every convention. The options, with the
    trec_eval flag each one mirrors:

    - ``missing``: ``"skip"`` judged queries the run did not answer, or score them
      ``"zero"`` (``-c``); ``no_relevant``: keep (``"zero"``) or ``"skip"`` queries
      without relevant documents;
    - ``depth``: only the first ``depth`` documents of each ranking count (``-M``);
    - ``relevance_level``: relevant = grade >= it for the binary metrics (``-l``;
      default: grade > 0);
    - ``score_precision``: ``"float64"`` (default: full precision, as trec_eval 10)
      or ``"float32"`` (scores rounded to float32 before ranking, as trec_eval 9,
      pytrec_eval and ir_measures, so scores closer than float32 resolution tie);
    - ``max_grade``: the top grade of the relevance scale, used by ERR only (default
      4, the 0-4 scale of the TREC Web track and ``gdeval.pl``'s ``MAX_JUDGMENT``,
      which ir_measures runs for ERR).

    The result is keyed by the metric names as written (``"ndcg_cut_10"`` stays
    ``"ndcg_cut_10"``). Query ids are reported as strings, in sorted order (like
    trec_eval).

    >>> qrels = {"q1": {"a": 1, "b": 0}}
    >>> run = {"q1": {"a": 0.2, "b": 0.9}}
    >>> evaluate_run(qrels, run, "mrr").mean
    {'mrr': 0.5}
    """
    metric_list = parse_metrics(metrics, "retrieval")
    options = _options(gain, no_relevant, missing, max_grade, depth, relevance_level, score_precision)
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
    if options.float32:
        scores = scores.astype(np.float32).astype(float)
    depth_max = int(lengths.max()) if n else 0
    # The scores as a padded (n, depth) matrix; padding -inf sorts below every score.
    if total == n * depth_max:
        score_mat = scores.reshape(n, depth_max)
    else:
        score_mat = np.full((n, depth_max), -np.inf)
        offsets = np.r_[0, np.cumsum(lengths)[:-1]]
        rows = np.repeat(np.arange(n), lengths)
        score_mat[rows, np.arange(total) - np.repeat(offsets, lengths)] = scores

    # The judged documents, flattened; keep those the metrics look at and look up their run scores
    # (map/compress run the per-document work in C; no Python loop per query).
    judged = [_as_dict(qrels[qid], "qrels", qid) for qid in evaluated]
    jlen = np.fromiter(map(len, judged), dtype=np.int64, count=n)
    try:
        jgrade = np.fromiter(
            chain.from_iterable(map(dict.values, judged)), dtype=float, count=int(jlen.sum())
        )
    except (TypeError, ValueError):
        raise ValueError("qrels: every grade must be a number") from None
    jq = np.repeat(np.arange(n), jlen)
    bad = np.flatnonzero(~np.isfinite(jgrade))
    if bad.size:
        i = int(bad[0])
        doc = list(judged[jq[i]])[i - int(jlen[:jq[i]].sum())]
        raise ValueError(f"qrels: grade {jgrade[i]} of query {evaluated[jq[i]]!r}, document {doc!r} "
                         "is not a finite number")
    considered = _considered(jgrade, options.level)
    iq = jq[considered]
    igrade = jgrade[considered]
    rel_docs = list(compress(chain.from_iterable(judged), considered.tolist()))
    rel_runs = [runs[i] for i in iq.tolist()]
    looked_up = np.fromiter(
        map(dict.get, rel_runs, rel_docs, repeat(np.nan)), dtype=float, count=len(rel_docs)
    )
    found = ~np.isnan(looked_up)
    q = iq[found]
    hs = looked_up[found]
    if options.float32:
        hs = hs.astype(np.float32).astype(float)
    grade_arr = igrade[found]
    hdoc = list(compress(rel_docs, found.tolist()))

    # rank = 1 + (documents with a higher score) + (tied documents with a larger id).
    rank = np.empty(q.size, dtype=np.int64)
    ties = np.zeros(q.size, dtype=bool)
    chunk = max(1, 4_000_000 // max(depth_max, 1))
    for start in range(0, q.size, chunk):
        sl = slice(start, start + chunk)
        rows = score_mat[q[sl]]
        s = hs[sl, None]
        rank[sl] = 1 + np.count_nonzero(rows > s, axis=1)
        ties[sl] = np.count_nonzero(rows == s, axis=1) > 1
    as_ranked = (lambda t: float(np.float32(t))) if options.float32 else float
    for j in np.flatnonzero(ties):
        docs, d, s = runs[q[j]], hdoc[j], hs[j]
        rank[j] += sum(1 for other, t in docs.items() if as_ranked(t) == s and _after(other, d))

    n_rel = np.bincount(jq[_relevant(jgrade, options.level)], minlength=n)
    positive = jgrade > 0
    ids = [str(x) for x in evaluated]

    def describe(i: int) -> str:
        docs = judged[i]
        doc = max(docs, key=lambda d: float(docs[d]))
        return f"query {ids[i]!r} (its largest grade, {float(docs[doc]):g}, is document {doc!r})"

    return _finish(metric_list, options, n, q, rank, grade_arr, n_rel, jq[positive], jgrade[positive],
                   ids, skipped, no_relevant,
                   "nothing to evaluate: no judged query of the qrels has both a run entry and a relevant "
                   "document; check that the query ids of qrels and run match "
                   f"(qrels: {list(qrels)[:3]}, run: {list(run)[:3]})", describe)


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
    """True if ``other`` ranks before ``doc`` on a score tie: larger id first (trec_eval's ``strcmp`` on
    the UTF-8 bytes, which orders like Python's comparison of the strings)."""
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
