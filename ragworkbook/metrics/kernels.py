"""The kernel of every retrieval metric: rank-ordered grades in, one value per query out.

Each kernel is the ``impl`` of a retrieval metric's spec in
:mod:`ragworkbook.metrics.registry`. It takes a
:class:`~ragworkbook.metrics.ranked.Ranked` (every query's retrieved judged
documents with their ranks and grades, the judgements, the counts) and the
metric's bound parameters as keyword arguments
(:attr:`ragworkbook.metrics.registry.Metric.kwargs`), and returns a float array
with one value per query, computed with array operations over all queries at
once (``np.bincount`` over query indices, cumulative sums within queries): no
Python loop per query, except for trec_eval's G and R-NDCG, whose bookkeeping of
the ideal gain levels is ported from trec_eval's C loops query by query, and the
relevance string, which is text.

Definitions follow trec_eval 10 (``m_*.c`` of its source), which the tests check
on trec_eval's own suite; see :mod:`ragworkbook.metrics.ranked` for relevance,
judged and unjudged documents. A query without relevant documents scores 0 on
every metric that divides by their number.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ragworkbook.metrics.ranked import Ranked, positions_in_groups

__all__ = ["MIN_GEO_MEAN", "gain_table", "relstring"]

_MIN_GEO_MEAN = 1e-5  # trec_eval's MIN_GEO_MEAN: the floor of a value in a geometric mean
_INFAP_EPSILON = 1e-5


def _safe(n: np.ndarray) -> np.ndarray:
    return np.where(n > 0, n, 1).astype(float)


def _group_cumsum(q: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Cumulative sum of ``x`` within each run of equal ``q`` (``q`` sorted), inclusive."""
    c = np.cumsum(x, dtype=np.float64)
    if q.size == 0:
        return c
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    before = np.r_[0.0, c][starts]
    return c - np.repeat(before, np.diff(np.r_[starts, q.size]))


# --------------------------------------------------------------------------- binary metrics


def precision(r: Ranked, k: int) -> np.ndarray:
    """Relevant documents among the first k, divided by k (missing positions are non-relevant)."""
    return r.count_within(r.rq, r.rrank, k) / k


def recall(r: Ranked, k: int) -> np.ndarray:
    """Relevant documents among the first k, divided by R (0 when R = 0)."""
    return np.where(r.n_rel > 0, r.count_within(r.rq, r.rrank, k) / _safe(r.n_rel), 0.0)


def hit_rate(r: Ranked, k: int) -> np.ndarray:
    """1 when a relevant document is among the first k (trec_eval's success)."""
    return (r.count_within(r.rq, r.rrank, k) > 0).astype(float)


def mrr(r: Ranked, k: int | None = None) -> np.ndarray:
    """1 / rank of the first relevant document, 0 when there is none within the first k."""
    first = r.first_rel_rank
    limit = np.inf if k is None else k
    return np.where(first <= limit, 1.0 / first, 0.0)


def _ap(r: Ranked, k: int | None) -> np.ndarray:
    within = np.ones(r.rq.size, dtype=bool) if k is None else r.rrank <= k
    prec = r.rpos[within] / r.rrank[within]
    return np.bincount(r.rq[within], weights=prec, minlength=r.n) / _safe(r.n_rel)


def average_precision(r: Ranked, k: int | None = None) -> np.ndarray:
    """Sum of Precision@i over the ranks i (<= k) of the relevant documents, divided by R."""
    return _ap(r, k)


def gm_average_precision(r: Ranked) -> np.ndarray:
    """Average precision per query (averaged over queries by the geometric mean: the spec's aggregate)."""
    return _ap(r, None)


def r_precision(r: Ranked) -> np.ndarray:
    """Relevant documents among the first R, divided by R."""
    inside = r.rrank <= r.n_rel[r.rq]
    return np.bincount(r.rq[inside], minlength=r.n) / _safe(r.n_rel)


def relative_precision(r: Ranked, k: int) -> np.ndarray:
    """Relevant documents among the first k, divided by min(k, R) (0 when R = 0)."""
    hits = r.count_within(r.rq, r.rrank, k)
    return np.where(r.n_rel > 0, hits / _safe(np.minimum(r.n_rel, k)), 0.0)


def rprec_mult(r: Ranked, mult: float) -> np.ndarray:
    """Precision at rank c = floor(mult x R + 0.9) (trec_eval's Rprec_mult; 0 when c = 0)."""
    cut = np.floor(mult * r.n_rel + 0.9).astype(np.int64)
    inside = r.rrank <= cut[r.rq]
    return np.bincount(r.rq[inside], minlength=r.n) / _safe(cut) * (cut > 0)


def _iprec_suffix_max(r: Ranked) -> np.ndarray:
    """For each relevant retrieved document (the j-th of its query), the highest precision j'/rank_j'
    over j' >= j: interpolated precision at its recall."""
    def make() -> np.ndarray:
        prec = r.rpos / np.maximum(r.rrank, 1)
        if not prec.size:
            return prec
        # a segmented running maximum from the bottom: offset each query so that no earlier
        # (in reversed order) query's values can exceed a later one's
        group = np.cumsum(np.r_[True, r.rq[1:] != r.rq[:-1]])
        rev = prec[::-1] + 2.0 * (group[-1] - group[::-1])
        out = np.maximum.accumulate(rev)
        return (out - 2.0 * (group[-1] - group[::-1]))[::-1]
    return r.cached("iprec", make)


def iprec_at_recall(r: Ranked, level: float) -> np.ndarray:
    """Interpolated precision at recall ``level``: the highest precision at the ranks where at least
    c = round(level x R) relevant documents have been seen (0 when fewer than c are retrieved)."""
    c = np.floor(level * r.n_rel + 0.5).astype(np.int64)  # C's lround for non-negative values
    best = _iprec_suffix_max(r)
    start = np.r_[0, np.cumsum(r.n_rel_ret)[:-1]] if r.n else np.zeros(0, dtype=np.int64)
    at = np.maximum(c, 1)
    ok = at <= r.n_rel_ret
    out = np.zeros(r.n)
    out[ok] = best[start[ok] + at[ok] - 1]
    return out


def eleven_point_average(r: Ranked, levels: tuple[float, ...]) -> np.ndarray:
    """Mean of the interpolated precision at each recall level (trec_eval's 11pt_avg)."""
    if not levels:
        raise ValueError("11pt_avg needs at least one recall level")
    return sum(iprec_at_recall(r, lv) for lv in levels) / len(levels)


def _before(r: Ranked, mask: np.ndarray) -> np.ndarray:
    """For each hit, how many hits of its query ranked above it satisfy ``mask``."""
    return _group_cumsum(r.q, mask.astype(np.float64)) - mask


def _bpref_per_hit(r: Ranked) -> np.ndarray:
    judged_nonrel = (r.grade >= 0) & ~r.rel
    above = _before(r, judged_nonrel)[r.rel]
    R = r.n_rel[r.rq].astype(float)
    denom = np.minimum(r.n_nonrel[r.rq], r.n_rel[r.rq]).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        part = np.where(above > 0, 1.0 - np.minimum(above, R) / np.where(denom > 0, denom, 1.0), 1.0)
    return part


def bpref(r: Ranked) -> np.ndarray:
    """Binary preference: for each relevant retrieved document, 1 - (judged non-relevant documents
    above it, at most R) / min(R, judged non-relevant), summed and divided by R."""
    return np.bincount(r.rq, weights=_bpref_per_hit(r), minlength=r.n) / _safe(r.n_rel)


def infap(r: Ranked) -> np.ndarray:
    """Inferred AP (trec_eval's infAP): negative grades are pooled documents left unjudged."""
    judged_nonrel = (r.grade >= 0) & ~r.rel
    pooled = r.grade < 0
    nonrel = _before(r, judged_nonrel)[r.rel]
    unjudged = _before(r, pooled)[r.rel]
    rel_before = r.rpos - 1.0
    j = r.rrank - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        seen = (rel_before + nonrel + unjudged) / np.where(j > 0, j, 1)
        part = 1.0 / (j + 1.0) + (j / (j + 1.0)) * seen * (
            (rel_before + _INFAP_EPSILON) / (rel_before + nonrel + 2 * _INFAP_EPSILON))
    part = np.where(j == 0, 1.0, part)
    return np.bincount(r.rq, weights=part, minlength=r.n) / _safe(r.n_rel)


def binary_g(r: Ranked) -> np.ndarray:
    """trec_eval's binG: sum over relevant retrieved documents of 1 / log2(2 + documents above it that
    are not relevant), divided by R."""
    w = 1.0 / np.log2(2.0 + r.rrank - r.rpos)
    return np.bincount(r.rq, weights=w, minlength=r.n) / _safe(r.n_rel)


# --------------------------------------------------------------------------- counts and sets


def num_q(r: Ranked) -> np.ndarray:
    """1 per query (summed: the number of queries)."""
    return np.ones(r.n)


def num_ret(r: Ranked) -> np.ndarray:
    """Documents retrieved."""
    return r.n_ret.astype(float)


def num_rel(r: Ranked) -> np.ndarray:
    """Relevant documents of the query (R)."""
    return r.n_rel.astype(float)


def num_rel_ret(r: Ranked) -> np.ndarray:
    """Relevant documents retrieved."""
    return r.n_rel_ret.astype(float)


def num_nonrel_judged_ret(r: Ranked) -> np.ndarray:
    """Retrieved documents judged non-relevant (grade >= 0, not relevant)."""
    return np.bincount(r.q[(r.grade >= 0) & ~r.rel], minlength=r.n).astype(float)


def set_precision(r: Ranked) -> np.ndarray:
    """Relevant retrieved / retrieved."""
    return r.n_rel_ret / _safe(r.n_ret)


def set_relative_precision(r: Ranked) -> np.ndarray:
    """Relevant retrieved / min(retrieved, R)."""
    m = np.minimum(r.n_ret, r.n_rel)
    return np.where(m > 0, r.n_rel_ret / _safe(m), 0.0)


def set_recall(r: Ranked) -> np.ndarray:
    """Relevant retrieved / R."""
    return r.n_rel_ret / _safe(r.n_rel)


def set_map(r: Ranked) -> np.ndarray:
    """Set precision times set recall."""
    return np.where((r.n_ret > 0) & (r.n_rel > 0), r.n_rel_ret ** 2 / (_safe(r.n_ret) * _safe(r.n_rel)), 0.0)


def set_f(r: Ranked, beta: float = 1.0) -> np.ndarray:
    """(beta + 1) P R / (beta P + R) of set precision P and set recall R (trec_eval's set_F)."""
    p = r.n_rel_ret / _safe(r.n_ret)
    rec = r.n_rel_ret / _safe(r.n_rel)
    with np.errstate(invalid="ignore", divide="ignore"):
        f = (beta + 1.0) * p * rec / (beta * p + rec)
    return np.where(r.n_rel_ret > 0, f, 0.0)


def utility(r: Ranked, coefficients: tuple[float, ...] = (1.0, -1.0, 0.0, 0.0)) -> np.ndarray:
    """a x relevant retrieved + b x non-relevant retrieved + c x relevant missed + d x non-relevant
    missed, the collection's size taken as 0 (trec_eval without -N); 0 for a query with no ranking."""
    if len(coefficients) != 4:
        raise ValueError(f"utility takes 4 coefficients (a, b, c, d), got {len(coefficients)}")
    a, b, c, d = coefficients
    rr, ret, rel = r.n_rel_ret, r.n_ret, r.n_rel
    value = a * rr + b * (ret - rr) + c * (rel - rr) + d * (rr - ret - rel)
    return np.where(ret > 0, value, 0.0)


def unjudged(r: Ranked, k: int) -> np.ndarray:
    """Share of the first k ranks holding a document without a judgement (negative grades included)."""
    judged = r.grade >= 0
    seen = np.minimum(r.n_ret, k)
    return (seen - r.count_within(r.q[judged], r.rank[judged], k)) / k


# --------------------------------------------------------------------------- graded metrics


def gain_table(gains: str | None) -> Callable[[np.ndarray], np.ndarray] | None:
    """trec_eval's gain table (``"1=3,2=9,4=4.5"``: grade=gain pairs) as a function of grades: a grade
    in the table gets its gain, another non-negative grade its own value, a negative one 0."""
    if not gains:
        return None
    table: dict[int, float] = {}
    for pair in gains.split(","):
        name, _, value = pair.partition("=")
        name = name.strip()
        if not value or not name.lstrip("+-").isdigit():
            continue  # trec_eval skips a pair whose name is not an integer
        table[int(name)] = float(value)
    keys = np.array(sorted(table), dtype=float)
    vals = np.array([table[int(k)] for k in keys], dtype=float)

    def gain_of(grade: np.ndarray) -> np.ndarray:
        g = np.floor(np.asarray(grade, dtype=float))
        out = np.where(g >= 0, g, 0.0)
        if keys.size:
            idx = np.clip(np.searchsorted(keys, g), 0, keys.size - 1)
            hit = keys[idx] == g
            out = np.where(hit, vals[idx], out)
        return out

    gain_of.table = table  # type: ignore[attr-defined]
    return gain_of


def _gains(grade: np.ndarray, gain: str) -> np.ndarray:
    g = np.maximum(grade, 0.0)
    if gain == "linear":
        return g
    with np.errstate(over="ignore"):
        return np.exp2(g) - 1.0


def _gain_fn(gain: str, gains: str | None) -> Callable[[np.ndarray], np.ndarray]:
    table = gain_table(gains)
    if table is not None:
        return table
    return _LINEAR if gain == "linear" else _EXPONENTIAL


def _LINEAR(g: np.ndarray) -> np.ndarray:
    return _gains(g, "linear")


def _EXPONENTIAL(g: np.ndarray) -> np.ndarray:
    return _gains(g, "exponential")


def _dcg_of(q: np.ndarray, pos: np.ndarray, gain: np.ndarray, k: int | None, n: int) -> np.ndarray:
    within = np.ones(q.size, dtype=bool) if k is None else pos <= k
    with np.errstate(over="ignore", invalid="ignore"):
        w = gain[within] / np.log2(pos[within] + 1.0)
    return np.bincount(q[within], weights=w, minlength=n)


def dcg(r: Ranked, k: int | None = None, gain: str = "linear") -> np.ndarray:
    """Sum of gain(grade) / log2(rank + 1) over the first k documents."""
    return _dcg_of(r.q, r.rank, _gains(r.grade, gain), k, r.n)


def _scaled(grade: np.ndarray, top: np.ndarray, gain: str) -> np.ndarray:
    """``gain(grade) / gain(top)`` without forming either (no overflow)."""
    g = np.maximum(grade, 0.0)
    if gain == "linear":
        return g / top
    return np.exp2(g - top) - np.exp2(-top)


def ndcg(r: Ranked, k: int | None = None, gain: str = "linear", gains: str | None = None) -> np.ndarray:
    """DCG@k over the DCG@k of the ideal ranking of every judged document (0 when that is 0). NDCG is
    exact however large the grades: when a sum overflows, every gain of the query is divided by its
    largest one (the ratio is unchanged)."""
    gain_of = _gain_fn(gain, gains)
    iq, ipos, ig = r.ideal((gain, gains), gain_of)
    hit_gain = gain_of(r.grade)
    d = _dcg_of(r.q, r.rank, hit_gain, k, r.n)
    idcg = _dcg_of(iq, ipos, ig, k, r.n)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.divide(d, idcg, out=np.zeros(r.n), where=idcg > 0)
    bad = ~(np.isfinite(d) & np.isfinite(idcg))
    if bad.any() and gains is None:  # gains too large for a float: divide by the query's largest grade
        gq, gpos, gg = r.ideal("grade", _LINEAR)
        top = np.ones(r.n)
        first = gpos == 1
        top[gq[first]] = gg[first]
        sd = _dcg_of(r.q, r.rank, _scaled(r.grade, top[r.q], gain), k, r.n)
        si = _dcg_of(gq, gpos, _scaled(gg, top[gq], gain), k, r.n)
        out = np.where(bad, np.divide(sd, si, out=np.zeros(r.n), where=si > 0), out)
    return out


def err(r: Ranked, k: int | None = None, max_grade: float = 4.0) -> np.ndarray:
    """ERR: ``sum_r R_r / r * prod_{i<r} (1 - R_i)``, ``R = (2^grade - 1) / 2^max_grade``.

    A non-relevant document has R = 0: it neither adds to the sum nor stops the
    cascade, so only the retrieved documents with a positive grade enter, in rank
    order. R is computed as ``2^(grade - max_grade) - 2^-max_grade`` (no overflow on
    any scale). A grade above ``max_grade`` is an error.
    """
    keep = r.grade > 0 if k is None else (r.grade > 0) & (r.rank <= k)
    q, rank, grade = r.q[keep], r.rank[keep], r.grade[keep]
    if grade.size and grade.max() > max_grade:
        raise ValueError(f"err: a grade of {grade.max():g} exceeds max_grade = {max_grade:g}; pass the "
                         "largest grade of your relevance scale as max_grade")
    stop = np.exp2(grade - max_grade) - np.exp2(-max_grade)
    # the probability of reaching each document: the product of (1 - R) over the earlier relevant
    # documents of its query, multiplied in rank order (as gdeval.pl does), one position at a time
    reach = np.ones(q.size)
    pos = positions_in_groups(q)
    if q.size:
        by_pos = np.argsort(pos, kind="stable")
        bounds = np.searchsorted(pos[by_pos], np.arange(2, int(pos.max()) + 2))
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            idx = by_pos[lo:hi]
            reach[idx] = reach[idx - 1] * (1.0 - stop[idx - 1])
    return np.bincount(q, weights=stop * reach / rank, minlength=r.n)


def rbp(r: Ranked, p: float = 0.9) -> np.ndarray:
    """Rank-biased precision, (1 - p) sum_i gain_i p^(i-1), gains = grades scaled to [0, 1] by the
    largest grade of the query's judgements when above 1 (trec_eval's rbp)."""
    top = np.zeros(r.n)
    judged = r.jgrade >= 0
    np.maximum.at(top, r.jq[judged], np.floor(r.jgrade[judged]))
    g = np.floor(np.maximum(r.grade, 0.0))
    scale = np.where(top[r.q] > 1, top[r.q], 1.0)
    w = np.where(r.grade >= 0, g / scale, 0.0) * np.power(p, r.rank - 1.0)
    return (1.0 - p) * np.bincount(r.q, weights=w, minlength=r.n)


def rbp_resid(r: Ranked, p: float = 0.9) -> np.ndarray:
    """trec_eval's rbp_resid: p^n + (1 - p) x the sum of p^(i-1) over the unjudged ranks i (0 when every
    retrieved document is judged)."""
    judged = r.grade >= 0
    judged_weight = np.bincount(r.q[judged], weights=np.power(p, r.rank[judged] - 1.0), minlength=r.n)
    total = r.n_ret.astype(float) if p >= 1 else (1.0 - np.power(p, r.n_ret)) / (1.0 - p)
    unj = total - judged_weight
    n_judged = np.bincount(r.q[judged], minlength=r.n)
    return np.where(n_judged < r.n_ret, np.power(p, r.n_ret) + (1.0 - p) * unj, 0.0)


def relstring(r: Ranked, k: int = 10) -> np.ndarray:
    """The first k ranks as text: the grade 0-9 (``>`` above 9), ``-`` a document with no judgement,
    ``.`` a pooled document left unjudged (negative grade). An object array of strings."""
    length = np.minimum(r.n_ret, max(k, 0))
    width = int(length.max()) if r.n else 0
    chars = np.full((r.n, max(width, 1)), ord("-"), dtype=np.uint8)
    keep = r.rank <= length[r.q]
    g = r.grade[keep]
    code = np.where(g > 9, ord(">"), np.where(g >= 0, ord("0") + np.clip(np.floor(g), 0, 9), ord(".")))
    chars[r.q[keep], r.rank[keep] - 1] = code.astype(np.uint8)
    out = np.empty(r.n, dtype=object)
    for i in range(r.n):
        out[i] = chars[i, :length[i]].tobytes().decode("ascii")
    return out


# ------------------------------------------------ trec_eval's G, ndcg_rel and R-NDCG: its C loops


def _rank_lists(r: Ranked) -> tuple[list[np.ndarray], list[dict[int, int]]]:
    """Per query: trec_eval's ``results_rel_list`` (a level per rank: the grade, -1 not judged, -2
    pooled unjudged) and its ``rel_levels`` (judged documents per level >= 0)."""
    def make() -> tuple[list[np.ndarray], list[dict[int, int]]]:
        lists = []
        starts = np.searchsorted(r.q, np.arange(r.n + 1))
        for i in range(r.n):
            rl = np.full(int(r.n_ret[i]), -1, dtype=np.int64)
            a, b = starts[i], starts[i + 1]
            g = r.grade[a:b]
            rl[r.rank[a:b] - 1] = np.where(g < 0, -2, np.floor(g)).astype(np.int64)
            lists.append(rl)
        levels: list[dict[int, int]] = [dict() for _ in range(r.n)]
        for qi, g in zip(r.jq.tolist(), np.floor(r.jgrade).tolist(), strict=True):
            if g >= 0:
                levels[qi][int(g)] = levels[qi].get(int(g), 0) + 1
        return lists, levels
    return r.cached("rank_lists", make)


def _setup_gains(levels: dict[int, int], table: dict[int, float]) -> list[list[float]]:
    """trec_eval's setup_gains: [level, gain, count] sorted by increasing gain."""
    top = max(levels, default=-1)
    out = [[lv, g, 0] for lv, g in table.items()]
    for lv in range(top + 1):
        for entry in out:
            if entry[0] == lv:
                entry[2] = levels.get(lv, 0)
                break
        else:
            out.append([lv, float(lv), levels.get(lv, 0)])
    out.sort(key=lambda e: e[1])
    return out


def _walk(r: Ranked, gains: str | None, body: Callable[..., float]) -> np.ndarray:
    lists, levels = _rank_lists(r)
    table = getattr(gain_table(gains), "table", {}) if gains else {}
    out = np.zeros(r.n)
    for i in range(r.n):
        g = _setup_gains(levels[i], table)
        gain_by_level = {lv: gain for lv, gain, _ in g}
        out[i] = body(lists[i], g, gain_by_level, int(r.n_rel[i]))
    return out


class _Ideal:
    """trec_eval's walk down the ideal gain levels (``cur_level``, ``num_at_level``)."""

    def __init__(self, g: list[list[float]]) -> None:
        self.g = g
        self.cur = len(g) - 1
        self.gain = g[self.cur][1] if self.cur >= 0 else 0.0
        self.num = 0

    def step(self) -> float:
        self.num += 1
        while self.cur >= 0 and self.num > self.g[self.cur][2]:
            self.num = 1
            self.cur -= 1
            self.gain = self.g[self.cur][1] if self.cur >= 0 else 0.0
        return self.gain


def _g_body(rl: np.ndarray, g: list[list[float]], gain_by_level: dict[int, float], n_rel: int) -> float:
    ideal = _Ideal(g)
    results_g = sum_results = sum_ideal = sum_cost = 0.0
    min_cost = 1.0
    i = 0
    n = len(rl)
    while i < n and ideal.gain > 0.0:
        rg = gain_by_level.get(int(rl[i]), 0.0)
        sum_results += rg
        ig = ideal.step()
        if ig > 0.0:
            sum_ideal += ig
        sum_cost += ig if ig >= min_cost else min_cost
        if rg != 0:
            results_g += rg / math.log2(2 + sum_cost - sum_results)
        i += 1
    while i < n:
        rg = gain_by_level.get(int(rl[i]), 0.0)
        sum_results += rg
        sum_cost += min_cost
        if rg != 0:
            results_g += rg / math.log2(2 + sum_cost - sum_results)
        i += 1
    while ideal.gain > 0.0:
        ig = ideal.step()
        if ig > 0.0:
            sum_ideal += ig
    return results_g / sum_ideal if sum_ideal > 0.0 else 0.0


def trec_g(r: Ranked, gains: str | None = None) -> np.ndarray:
    """trec_eval's G (its m_G.c, query by query)."""
    return _walk(r, gains, _g_body)


def _ndcg_rel_body(rl: np.ndarray, g: list[list[float]], gain_by_level: dict[int, float],
                   n_rel: int) -> float:
    ideal = _Ideal(g)
    results_dcg = ideal_dcg = total = 0.0
    num_rel_ret = num_rel = 0
    i = 0
    n = len(rl)
    while i < n and ideal.gain > 0.0:
        rg = gain_by_level.get(int(rl[i]), 0.0)
        if rg != 0:
            results_dcg += rg / math.log2(i + 2)
        ig = ideal.step()
        if ig > 0.0:
            num_rel += 1
            ideal_dcg += ig / math.log2(i + 2)
        if rg > 0:
            total += results_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while i < n:
        rg = gain_by_level.get(int(rl[i]), 0.0)
        if rg != 0:
            results_dcg += rg / math.log2(i + 2)
        if rg > 0:
            total += results_dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while ideal.gain > 0.0:
        ig = ideal.step()
        if ig > 0.0:
            num_rel += 1
            ideal_dcg += ig / math.log2(i + 2)
        i += 1
    if ideal_dcg > 0:
        total += (num_rel - num_rel_ret) * results_dcg / ideal_dcg
    return total / num_rel if total > 0.0 else 0.0


def ndcg_rel(r: Ranked, gains: str | None = None) -> np.ndarray:
    """trec_eval's ndcg_rel (its m_ndcg_rel.c, query by query)."""
    return _walk(r, gains, _ndcg_rel_body)


def _rndcg_body(rl: np.ndarray, g: list[list[float]], gain_by_level: dict[int, float], n_rel: int) -> float:
    if n_rel == 0:
        return 0.0
    ideal = _Ideal(g)
    results_dcg = ideal_dcg = total = 0.0
    old = ideal.gain
    changed = 0
    i = 0
    n = len(rl)
    # along the ideal ranking to its last positive gain (the run's gains count 0 beyond its end), then
    # whatever of the run is left, which closes one more segment
    while ideal.gain > 0.0:
        rg = gain_by_level.get(int(rl[i]), 0.0) if i < n else 0.0
        ig = ideal.step()
        if old != ig:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changed += 1
            old = ig
        if rg != 0:
            results_dcg += rg / math.log2(i + 2)
        if ig > 0.0:
            ideal_dcg += ig / math.log2(i + 2)
        i += 1
    if i < n:
        while i < n:
            rg = gain_by_level.get(int(rl[i]), 0.0)
            if rg != 0:
                results_dcg += rg / math.log2(i + 2)
            i += 1
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            changed += 1
    return total / changed if changed else 0.0


def rndcg(r: Ranked, gains: str | None = None) -> np.ndarray:
    """trec_eval's Rndcg (its m_Rndcg.c, query by query)."""
    return _walk(r, gains, _rndcg_body)


#: The floor of a per-query value in a geometric mean (trec_eval's MIN_GEO_MEAN).
MIN_GEO_MEAN = _MIN_GEO_MEAN
