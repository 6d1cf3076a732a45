"""trec_eval's options beyond the measures, with trec_eval 10's semantics: the pieces ``ir-eval`` uses.

- ``-J`` (:func:`judged_only`): every document without a judgement (or with a negative one) is removed
  from each ranking before anything is computed, the rest ranked 1, 2, ... in their order
  (``form_res_rels.c``);
- ``-N NUM`` (:func:`with_collection_size`): the collection size, read by ``utility``'s fourth
  coefficient (non-relevant documents not retrieved = N + relevant retrieved - retrieved - relevant);
- ``-Z FILE`` (:func:`read_zscores`, :func:`to_zscores`): each query's value replaced by
  ``(value - mean) / sd`` from a file of ``qid measure mean sd`` lines before it is averaged,
  -1000000 where the file has no line for it (or sd is 0 and the value differs from the mean);
- ``-D LEVEL.QID`` (:func:`only_query`): only that query is evaluated;
- the run's tag as trec_eval prints it (``runid``): the sixth field of the run file's last line
  (:func:`last_tag`: trec_eval keeps the run id of the last line it read).

Means are summed in query order, one value after another, as trec_eval's ``acc_meas`` does
(:meth:`ragworkbook.metrics.batch.RunResult.aggregate`), so the last printed digit agrees too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa

from ragworkbook.columns import Columns
from ragworkbook.metrics.ranked import Ranked, positions_in_groups

__all__ = ["MISSING_ZSCORE", "judged_only", "with_collection_size", "read_zscores", "to_zscores",
           "only_query", "last_tag"]

#: trec_eval's value for a query and measure the z-score file does not give (``MISSING_ZSCORE_VALUE``).
MISSING_ZSCORE = -1000000.0


def judged_only(ranked: Ranked) -> Ranked:
    """The rankings with every unjudged document removed (trec_eval ``-J``): the judged documents
    (grade >= 0) keep their order and are ranked 1, 2, ...; each query's retrieved count becomes
    the number of them."""
    keep = ranked.grade >= 0
    q = ranked.q[keep]
    return Ranked(ids=ranked.ids, n_ret=np.bincount(q, minlength=ranked.n).astype(ranked.n_ret.dtype),
                  q=q, rank=positions_in_groups(q).astype(ranked.rank.dtype), grade=ranked.grade[keep],
                  jq=ranked.jq, jgrade=ranked.jgrade, level=ranked.level, n_rel_given=ranked.n_rel_given,
                  describe=ranked.describe)


def with_collection_size(values: Mapping[str, np.ndarray], metrics: list, ranked: Ranked,
                         n_docs: int) -> dict[str, np.ndarray]:
    """``utility`` with the collection size ``n_docs`` (trec_eval ``-N``): its fourth coefficient d
    weighs the non-relevant documents not retrieved, N + relevant retrieved - retrieved - relevant
    (the kernel takes N as 0, as trec_eval without -N). Queries that retrieved nothing keep 0."""
    out = dict(values)
    for m in metrics:
        if m.kind == "utility":
            d = float(m.kwargs["coefficients"][3])
            out[m.name] = values[m.name] + np.where(ranked.n_ret > 0, d * n_docs, 0.0)
    return out


def read_zscores(path: str | os.PathLike[str]) -> dict[tuple[str, str], tuple[float, float]]:
    """A z-score file: lines ``qid measure mean sd`` (blank lines skipped) -> ``{(qid, measure): (mean,
    sd)}``. ValueError naming the line for a line of another shape; the last line wins for a repeat."""
    out: dict[tuple[str, str], tuple[float, float]] = {}
    p = Path(path)
    with p.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            fields = line.split()
            if not fields:
                continue
            try:
                if len(fields) != 4:
                    raise ValueError
                out[(fields[0], fields[1])] = (float(fields[2]), float(fields[3]))
            except ValueError:
                raise ValueError(f"{p}, line {n}: a z-score line is 'qid measure mean sd' (four fields, "
                                 f"two numbers); got {line.strip()[:60]!r}") from None
    return out


def to_zscores(values: Mapping[str, np.ndarray], query_ids: list[str],
               zscores: Mapping[tuple[str, str], tuple[float, float]]) -> dict[str, np.ndarray]:
    """Each query's value as a z-score, as trec_eval ``-Z`` computes it before averaging: ``(value -
    mean) / sd`` from ``zscores[(qid, printed name)]``; :data:`MISSING_ZSCORE` when absent, or
    when sd is 0 and the value differs from the mean (0 when it equals it). Text values (relstring)
    are kept."""
    out: dict[str, np.ndarray] = {}
    for name, vals in values.items():
        arr = np.asarray(vals)
        if arr.dtype.kind not in "fiub":
            out[name] = arr
            continue
        z = np.empty(len(arr), dtype=np.float64)
        for i, (qid, v) in enumerate(zip(query_ids, arr.tolist(), strict=True)):
            found = zscores.get((qid, name))
            if found is None:
                z[i] = MISSING_ZSCORE
            elif found[1]:
                z[i] = (v - found[0]) / found[1]
            else:
                z[i] = 0.0 if v == found[0] else MISSING_ZSCORE
        out[name] = z
    return out


def only_query(cols: Columns, qid: str) -> Columns:
    """The rows of query ``qid`` only (trec_eval ``-D LEVEL.QID``); no rows when it is absent."""
    try:
        index = list(cols.qids).index(qid)
    except ValueError:
        index = -1
    keep = cols.q == index
    rows = np.flatnonzero(keep)
    line = cols.line[keep] if cols.line is not None else rows + 1
    return replace(cols, qids=[qid] if rows.size else [], q=np.zeros(rows.size, dtype=cols.q.dtype),
                   doc=cols.doc.take(pa.array(rows)), value=cols.value[keep], line=line, qid_array=None)


def last_tag(path: str | os.PathLike[str], default: str = "") -> str:
    """The sixth field of the last line of a run file that has six fields (comments, ``#``, and blank
    lines skipped): the run id trec_eval prints, ``default`` when there is none."""
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        end = fh.tell()
        size = 1 << 16
        while True:
            start = max(0, end - size)
            fh.seek(start)
            chunk = fh.read(end - start)
            lines = chunk.split(b"\n")
            if start > 0:
                lines = lines[1:]  # the first piece may be a part of a line
            for raw in reversed(lines):
                text = raw.strip()
                if not text or text.startswith(b"#"):
                    continue
                fields = text.split()
                if len(fields) >= 6:
                    return fields[5].decode("utf-8", errors="replace")
            if start == 0 or size > end:
                return default
            size *= 4
