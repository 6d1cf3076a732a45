"""trec_eval's preference measures (``-R prefs`` and ``-R qrels_prefs``): how often a ranking puts a
preferred document above the other one.

A preference file (:func:`ragworkbook.corpus.trec.read_prefs`) gives, for each query, judgment groups
(JG: one user's information need at one time), each made of sub-groups (JSG) of ``docno rel_level``
lines. Inside a sub-group a document is preferred to every document of a lower level (ties express
nothing); a JG's preferences are the union of its sub-groups' ones, closed under transitivity (A > B in
one sub-group and B > C in another give A > C); a JG in which a document ends up preferred to itself
(A > B and B > A) is an error. Different JGs may disagree: each JG counts on its own. ``qrels_prefs`` is
a qrels file read so: the second field is the JG, with one sub-group.

A preference A > B is *fulfilled* by a ranking when A is retrieved above B, or A is retrieved and B is
not; it fails when B is above A, when only B is retrieved, or when neither is. Three families of
measures count the preferences differently:

- plain (``prefs_simp``, ``prefs_pair``, ``prefs_avgjg``): every preference is possible, one with
  neither document retrieved fails;
- ``_ret``: only the preferences whose two documents are both retrieved count at all;
- ``_imp``: a preference with neither document retrieved is left out; one with a single retrieved
  document counts (fulfilled when it is the preferred one).

and combine them three ways:

- ``simp``: fulfilled / possible over all the query's preferences (of every JG);
- ``pair``: per unordered pair of documents, the share of its preferences (from every JG) that are
  fulfilled, averaged over the pairs that have any;
- ``avgjg``: fulfilled / possible within each JG (0 for a JG with none), averaged over the query's JGs.

Besides: ``prefs_num_prefs_poss`` (the preferences, retrieved or not), ``prefs_num_prefs_ful``
(fulfilled, as ``simp`` counts them) and ``prefs_num_prefs_ful_ret`` (fulfilled with both documents
retrieved); their summary (``all``) line is the sum over queries, the others' the mean (summed in query
order, as trec_eval does). A ratio with nothing to count is 0. ``-M N`` keeps the first N documents of
each ranking before anything is counted; ``-J`` (judged documents only) leaves every ranking's order of
judged documents as it is, so no value changes.

``prefs_avgjg_Rnonrel`` and ``prefs_avgjg_Rnonrel_ret`` count, within each JG, as many non-relevant
documents (level 0) as relevant ones (level > 0): their terms are those the C trec_eval 10 computes,
measured against it (:func:`_rnonrel_ratio`), for judgment groups of one sub-group (every
``qrels_prefs`` file); a JG of several sub-groups is refused for these two measures, its result in the C
program not being reproduced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["PREFS_SET", "ALL_PREFS", "COUNTS", "PrefsRequest", "PrefsResult",
           "prefs_request", "jg_preferences", "query_values", "evaluate_prefs", "prefs_lines", "rankings",
           "ir_eval_prefs"]

#: trec_eval's ``-m prefs`` set (runid and num_q besides), in its printing order.
PREFS_SET = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
             "prefs_pair", "prefs_avgjg")
#: Every preference measure (``-m all_prefs``), in trec_eval's printing order.
ALL_PREFS = (*PREFS_SET, "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
             "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp")
#: The counts: printed as whole numbers, summed (not averaged) on the ``all`` line.
COUNTS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")


@dataclass(frozen=True)
class PrefsRequest:
    """What ``-m`` asked for under ``-R prefs``: the measures (trec_eval's order), runid, num_q."""

    measures: tuple[str, ...]
    runid: bool
    num_q: bool


def prefs_request(measures: Sequence[str]) -> PrefsRequest:
    """trec_eval ``-m`` arguments of a ``-R prefs`` / ``-R qrels_prefs`` run -> :class:`PrefsRequest`.
    ``prefs`` and ``all_prefs`` are the sets (runid and num_q with them). ValueError for a measure
    that is not a preference measure (trec_eval cannot compute the others from preferences)."""
    wanted: set[str] = set()
    runid = num_q = False
    if not measures:
        raise ValueError("-R prefs needs preference measures: give -m prefs (or -m all_prefs, or single "
                         f"measures: {', '.join(ALL_PREFS)}); trec_eval's default set cannot be computed "
                         "from preferences")
    for name in measures:
        if name in ("prefs", "all_prefs"):
            runid = num_q = True
            wanted.update(PREFS_SET if name == "prefs" else ALL_PREFS)
        elif name == "runid":
            runid = True
        elif name == "num_q":
            num_q = True
        elif name in ALL_PREFS:
            wanted.add(name)
        else:
            raise ValueError(f"measure {name!r} cannot be computed from preferences (-R prefs / "
                             f"qrels_prefs): the measures are runid, num_q, {', '.join(ALL_PREFS)} and "
                             "the sets prefs and all_prefs")
    return PrefsRequest(tuple(m for m in ALL_PREFS if m in wanted), runid, num_q)


def jg_preferences(subgroups: Mapping[str, Mapping[str, float]],
                   where: str = "") -> tuple[list[str], np.ndarray]:
    """One judgment group's preferences: ``{jsg: {docno: rel_level}}`` -> ``(docnos, P)`` where
    ``P[i, j]`` is True when document i is preferred to document j (each sub-group's levels compared,
    the union closed under transitivity). ValueError when a document ends up preferred to another that
    is also preferred to it (``where`` names the query and group in the message)."""
    docs = list(dict.fromkeys(d for sub in subgroups.values() for d in sub))
    index = {d: i for i, d in enumerate(docs)}
    n = len(docs)
    pref = np.zeros((n, n), dtype=bool)
    for sub in subgroups.values():
        idx = np.array([index[d] for d in sub], dtype=np.int64)
        lev = np.fromiter(sub.values(), dtype=np.float64, count=len(sub))
        pref[np.ix_(idx, idx)] |= lev[:, None] > lev[None, :]
    for k in range(n):  # transitive closure (Warshall), one row-and-column update a document
        pref |= pref[:, k:k + 1] & pref[k:k + 1, :]
    bad = np.argwhere(pref & pref.T & ~np.eye(n, dtype=bool))
    if not bad.size and n and pref.diagonal().any():  # a cycle through three or more documents
        bad = np.argwhere(pref & pref.T)
    if bad.size:
        a, b = (docs[int(i)] for i in bad[0])
        raise ValueError(f"{where}inconsistent preferences: {a!r} is preferred to {b!r} and {b!r} to "
                         f"{a!r} (directly or through other documents) within one judgment group; a "
                         "judgment group must be consistent (put disagreeing judges in separate groups)")
    return docs, pref


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def query_values(groups: Mapping[str, Mapping[str, Mapping[str, float]]], ranking: Sequence[str],
                 where: str = "") -> dict[str, float]:
    """Every measure of :data:`ALL_PREFS` for one query: its judgment groups ``{jg: {jsg: {docno:
    rel_level}}}`` and its ranking (the retrieved docnos, best first). ``prefs_avgjg_Rnonrel[_ret]`` are
    left out when a judgment group has several sub-groups (not reproduced)."""
    position = {d: i for i, d in enumerate(ranking)}
    families = ("", "_ret", "_imp")  # plain, both retrieved, one retrieved at least
    ful = dict.fromkeys(families, 0)
    poss = dict.fromkeys(families, 0)
    jg_sum = dict.fromkeys(families, 0.0)
    # each preference's unordered document pair (a number per pair in the query) and whether it is fulfilled
    pair_keys: dict[str, list[np.ndarray]] = {fam: [] for fam in families}
    pair_good: dict[str, list[np.ndarray]] = {fam: [] for fam in families}
    numbers: dict[str, int] = {}
    several = any(len(subgroups) > 1 for subgroups in groups.values())
    rnonrel = {"": 0.0, "_ret": 0.0}
    for jg, subgroups in groups.items():
        docs, pref = jg_preferences(subgroups, where=f"{where}judgment group {jg!r}: ")
        pos = np.array([position.get(d, -1) for d in docs], dtype=np.int64)
        if not several:
            level: dict[str, float] = {}
            for sub in subgroups.values():
                for d, lev in sub.items():
                    level[d] = max(level.get(d, lev), lev)
            rel = np.array([level[d] > 0 for d in docs], dtype=bool)
            for fam in rnonrel:
                ratio = _rnonrel_ratio(pref, pos, rel, retrieved_only=fam == "_ret")
                rnonrel[fam] += np.nan if ratio is None else ratio  # a group without R: the query's 0
        a, b = np.nonzero(pref)
        if not a.size:
            continue  # a JG without preferences adds 0 to avgjg's sum (and 1 to its count)
        number = np.array([numbers.setdefault(d, len(numbers)) for d in docs], dtype=np.int64)
        lo, hi = np.minimum(number[a], number[b]), np.maximum(number[a], number[b])
        key = lo * (1 << 31) + hi
        pa_, pb = pos[a], pos[b]
        ret_a, ret_b = pa_ >= 0, pb >= 0
        both = ret_a & ret_b
        good = (both & (pa_ < pb)) | (ret_a & ~ret_b)  # the preferred one above, or alone retrieved
        chosen = {"": np.ones(a.size, dtype=bool), "_ret": both, "_imp": ret_a | ret_b}
        for fam, keep in chosen.items():
            f, p = int(np.count_nonzero(good & keep)), int(np.count_nonzero(keep))
            ful[fam] += f
            poss[fam] += p
            jg_sum[fam] += _ratio(f, p)
            pair_keys[fam].append(key[keep])
            pair_good[fam].append(good[keep])
    pairs = {}
    for fam in families:
        keys = np.concatenate(pair_keys[fam]) if pair_keys[fam] else np.zeros(0, dtype=np.int64)
        _, which = np.unique(keys, return_inverse=True)
        fulfilled = np.bincount(which, weights=np.concatenate(pair_good[fam]) if keys.size else None)
        shares = (fulfilled / np.bincount(which)).tolist() if keys.size else []
        pairs[fam] = _ratio(sum(shares), len(shares))
    n_jg = len(groups)
    out: dict[str, float] = {"prefs_num_prefs_poss": poss[""], "prefs_num_prefs_ful": ful[""],
                             "prefs_num_prefs_ful_ret": ful["_ret"]}
    for fam in ("", "_ret", "_imp"):
        out[f"prefs_simp{fam}"] = _ratio(ful[fam], poss[fam])
        out[f"prefs_pair{fam}"] = pairs[fam]
        out[f"prefs_avgjg{fam}"] = _ratio(jg_sum[fam], n_jg)
    for fam, total in rnonrel.items():
        if not several:  # else left out: not computed
            out[f"prefs_avgjg_Rnonrel{fam}"] = 0.0 if np.isnan(total) else _ratio(total, n_jg)
    return out


def _rnonrel_ratio(pref: np.ndarray, pos: np.ndarray, rel: np.ndarray, *,
                   retrieved_only: bool) -> float | None:
    """One judgment group's ``prefs_avgjg_Rnonrel`` (``retrieved_only``: ``_Rnonrel_ret``) ratio, as the C
    trec_eval 10 computes it (measured against it; its help describes the intent, not every term).

    R and N are the group's relevant (level > 0) and non-relevant (level 0) documents (with
    ``retrieved_only``, the retrieved ones; the preferences counted are then those with both documents
    retrieved). When N <= R, R - N non-relevant documents are conceptually added below every ranking:
    each relevant document gains R - N preferences, fulfilled for a retrieved one. When N > R, only the
    first R non-relevant documents (rank order) are kept: fulfilled = the kept preferences fulfilled plus
    the pairs of kept non-relevant documents with one retrieved; possible = all the group's preferences
    plus R * R. None when R is 0: the C program then gives the whole query 0, whatever its other
    groups."""
    retrieved = pos >= 0
    a, b = np.nonzero(pref)
    if retrieved_only:
        keep = retrieved[a] & retrieved[b]
        a, b = a[keep], b[keep]
    good = retrieved[a] & (~retrieved[b] | (pos[a] < pos[b]))
    possible = a.size
    counted = retrieved if retrieved_only else np.ones(pos.size, dtype=bool)
    n_rel = int(np.count_nonzero(rel & counted))
    nonrel = np.flatnonzero(~rel & counted)
    if n_rel == 0:
        return None
    if nonrel.size <= n_rel:
        gap = n_rel - nonrel.size
        ful = int(np.count_nonzero(good)) + int(np.count_nonzero(rel & retrieved)) * gap
        return _ratio(ful, possible + int(np.count_nonzero(rel)) * gap)
    order = np.where(retrieved[nonrel], pos[nonrel], np.iinfo(np.int64).max)
    kept = np.zeros(pos.size, dtype=bool)
    kept[nonrel[np.argsort(order, kind="stable")[:n_rel]]] = True
    used = (rel | kept)[a] & (rel | kept)[b]
    n_ret = int(np.count_nonzero(kept & retrieved))
    pairs = n_rel * (n_rel - 1) // 2 - (n_rel - n_ret) * (n_rel - n_ret - 1) // 2  # one of the two retrieved
    return _ratio(int(np.count_nonzero(good & used)) + pairs, possible + n_rel * n_rel)


@dataclass
class PrefsResult:
    """Per-query values of the requested preference measures and their summary (``all``) values."""

    measures: tuple[str, ...]
    query_ids: list[str]
    values: dict[str, list[float]]
    summary: dict[str, float] = field(default_factory=dict)


def evaluate_prefs(prefs: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]],
                   rankings: Mapping[str, Sequence[str]], measures: Sequence[str], *,
                   complete: bool = False, depth: int | None = None) -> PrefsResult:
    """The measures for every query with preferences that the run retrieved for (``complete``, trec_eval
    ``-c``: every query with preferences, a missing one evaluated on an empty ranking), in trec_eval's
    query order (byte order of the ids); ``depth`` (``-M``) keeps each ranking's first documents. The
    summary sums the counts and averages the rest, adding up in query order."""
    ids = sorted((q for q in prefs if complete or q in rankings), key=lambda q: q.encode("utf-8"))
    values: dict[str, list[float]] = {m: [] for m in measures}
    for qid in ids:
        ranking = list(rankings.get(qid, ()))
        if depth is not None:
            ranking = ranking[:depth]
        per = query_values(prefs[qid], ranking, where=f"query {qid!r}, ")
        for m in measures:
            if m not in per:
                jg = next(jg for jg, subgroups in prefs[qid].items() if len(subgroups) > 1)
                raise ValueError(f"{m}: query {qid!r}, judgment group {jg!r} has several sub-groups; "
                                 "ir-eval computes this measure only for judgment groups of one sub-group "
                                 "(as every -R qrels_prefs file has): what the C trec_eval computes for "
                                 "several is not reproduced. Leave the measure out or use the C trec_eval")
            values[m].append(per[m])
    summary: dict[str, float] = {}
    for m in measures:
        total = 0.0
        for v in values[m]:  # in query order, one after another (trec_eval's sum)
            total += v
        summary[m] = total if m in COUNTS or not ids else total / len(ids)
    return PrefsResult(tuple(measures), ids, values, summary)


def _shown(measure: str, value: float) -> str:
    return str(int(value)) if measure in COUNTS else f"{value:6.4f}"


def prefs_lines(result: PrefsResult, *, per_query: bool, show_summary: bool = True,
                runid: str | None = None, num_q: bool = False) -> list[str]:
    """trec_eval's output of :func:`evaluate_prefs`: with ``per_query`` each query's lines (query by
    query, measures in trec_eval's order), then the summary: runid, num_q, the measures."""
    lines = []
    if per_query:
        for i, qid in enumerate(result.query_ids):
            lines += [f"{m:<22}\t{qid}\t{_shown(m, result.values[m][i])}" for m in result.measures]
    if show_summary:
        if runid is not None:
            lines.append(f"{'runid':<22}\tall\t{runid}")
        if num_q:
            lines.append(f"{'num_q':<22}\tall\t{len(result.query_ids)}")
        lines += [f"{m:<22}\tall\t{_shown(m, result.summary[m])}" for m in result.measures]
    return lines


def rankings(run: Mapping[str, Mapping[str, float]]) -> dict[str, list[str]]:
    """``{qid: {docno: score}}`` -> ``{qid: docnos in the order trec_eval's preference measures read}``:
    by score, highest first, ties broken by docno *ascending* (byte order; trec_eval's other measures
    break ties by docno descending)."""
    return {qid: sorted(docs, key=lambda d: (-docs[d], d.encode("utf-8"))) for qid, docs in run.items()}


def ir_eval_prefs(prefs: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]],
                  run: Mapping[str, Mapping[str, float]], measures: Sequence[str], *, per_query: bool,
                  show_summary: bool = True, complete: bool = False, depth: int | None = None,
                  runid: str = "") -> list[str]:
    """``ir-eval -R prefs`` end to end: the ``-m`` arguments, preferences and a run ``{qid: {docno:
    score}}`` -> the lines trec_eval prints. ValueError for a measure it cannot compute or nothing to
    evaluate."""
    request = prefs_request(measures)
    result = evaluate_prefs(prefs, rankings(run), request.measures, complete=complete, depth=depth)
    if not result.query_ids:
        raise ValueError("nothing to evaluate: no query has both preferences and a ranking in the run "
                         "(-c evaluates every query with preferences)")
    return prefs_lines(result, per_query=per_query, show_summary=show_summary,
                       runid=runid if request.runid else None, num_q=request.num_q)
