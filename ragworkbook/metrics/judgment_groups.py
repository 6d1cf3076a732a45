"""trec_eval's judgment groups (``-R qrels_jg``): several assessors' judgements of one query, averaged.

A ``qrels_jg`` file is a qrels file whose second field names the judgment group (the assessor):
``qid jg docno rel``. trec_eval's three measures for it compute, for each query, the ordinary measure
against each of its groups' judgements alone, then the mean over the query's groups:

- ``map_avgjg``: ``map`` per group, averaged;
- ``P_avgjg`` (cutoffs as ``P``: 5, 10, ..., 1000): ``P_k`` per group, averaged;
- ``Rprec_mult_avgjg`` (multiples as ``Rprec_mult``: 0.2, ..., 2.0): per group, averaged.

Each group is evaluated by the package's engine as a qrels of its own (:func:`evaluate_judgment_groups`),
so every convention (ties, ``-M``, ``-l``, ``-J``, ``-c``) is the one of the ordinary measures.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ragworkbook.columns import Columns

__all__ = ["AVGJG", "QRELS_JG_SET", "read_qrels_jg", "avgjg_request", "evaluate_judgment_groups"]

#: trec_eval's judgment-group measure -> the ordinary measure computed per group.
AVGJG = {"map_avgjg": "map", "P_avgjg": "P", "Rprec_mult_avgjg": "Rprec_mult"}
#: trec_eval's ``-m qrels_jg`` set (runid and num_q besides).
QRELS_JG_SET = ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg")


def read_qrels_jg(path: str | os.PathLike[str]) -> dict[str, Columns]:
    """A ``qid jg docno rel`` file -> ``{group: its judgements as Columns}`` (groups in file order).
    ValueError naming the line for a line without four fields, a grade that is not a whole number, or a
    document judged twice by one group for one query."""
    p = Path(path)
    groups: dict[str, dict[str, dict[str, float]]] = {}
    with p.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            if len(fields) != 4:
                raise ValueError(f"{p}, line {n}: a qrels_jg line is 'qid jg docno rel' (four fields); got "
                                 f"{line.strip()[:60]!r}")
            qid, jg, doc, rel = fields
            try:
                grade = int(rel)
            except ValueError:
                raise ValueError(f"{p}, line {n}: the relevance {rel!r} is not a whole number") from None
            judged = groups.setdefault(jg, {}).setdefault(qid, {})
            if doc in judged:
                raise ValueError(f"{p}, line {n}: document {doc!r} is judged twice for query {qid!r} by "
                                 f"judgment group {jg!r}; keep one line")
            judged[doc] = float(grade)
    if not groups:
        raise ValueError(f"{p}: no judgements (a qrels_jg line is 'qid jg docno rel')")
    # trec_eval keeps each query's groups sorted by name (the order in which it adds their values up)
    return {jg: Columns.from_dict(groups[jg], source=str(p), what="grade")
            for jg in sorted(groups, key=lambda g: g.encode("utf-8"))}


def avgjg_request(measures: Sequence[str]) -> tuple[list[str], list[tuple[str, str]], bool]:
    """trec_eval ``-m`` arguments of a ``-R qrels_jg`` run -> ``(the ordinary measures to compute per
    group, in trec_eval's printing order, [(printed prefix of ours, printed prefix of trec_eval)],
    runid wanted)``. ValueError for a measure trec_eval cannot compute from judgment groups."""
    wanted: dict[str, str | None] = {}
    runid = False
    for arg in measures:
        for item in [arg] if "." in arg else arg.split(","):
            name, _, params = item.partition(".")
            if name in ("qrels_jg",):
                runid = True
                wanted.setdefault("num_q", None)
                for m in AVGJG:
                    wanted.setdefault(m, None)
            elif name == "runid":
                runid = True
            elif name == "num_q" or name in AVGJG:
                wanted[name] = params or wanted.get(name)
            else:
                raise ValueError(f"measure {item!r} cannot be computed from judgment groups (-R qrels_jg): "
                                 f"the measures are {', '.join(QRELS_JG_SET)}")
    out, renames = [], []
    for name in ("num_q", *AVGJG):  # trec_eval's order
        if name not in wanted:
            continue
        if name == "num_q":
            out.append("num_q")
            continue
        base = AVGJG[name]
        out.append(base + (f".{wanted[name]}" if wanted[name] else ""))
        renames.append((base if base == "map" else base + "_", name if base == "map" else name + "_"))
    return out, renames, runid


def evaluate_judgment_groups(groups: dict[str, Columns], evaluate: Callable[[Columns], object],
                             ) -> tuple[list[str], dict[str, np.ndarray]]:
    """Each query's values averaged over its judgment groups: ``evaluate(qrels)`` gives a
    :class:`~ragworkbook.metrics.batch.RunResult` for one group's judgements (the queries it
    evaluates and their values); a query's value is the sum over the groups that evaluate it divided by
    their number, as trec_eval does. -> ``(query ids, sorted as trec_eval sorts them; {measure:
    values})``."""
    sums: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    names: list[str] = []
    for qrels in groups.values():
        try:
            result = evaluate(qrels)
        except ValueError as exc:
            if "nothing to evaluate" in str(exc) or "no query" in str(exc):
                continue  # this group judges no query of the run
            raise
        names = list(result.values)  # type: ignore[attr-defined]
        for i, qid in enumerate(result.query_ids):  # type: ignore[attr-defined]
            counts[qid] = counts.get(qid, 0) + 1
            per = sums.setdefault(qid, {})
            for name, vals in result.values.items():  # type: ignore[attr-defined]
                per[name] = per.get(name, 0.0) + float(vals[i])
    ids = sorted(counts, key=lambda q: q.encode("utf-8"))
    values = {name: np.array([sums[q][name] / counts[q] if counts[q] > 1 else sums[q][name] for q in ids])
              for name in names}
    return ids, values
