"""Ranking a run the trec_eval way and joining it with the qrels: columns in, rank-ordered grades out.

:func:`rank_columns` turns qrels and a run held as
:class:`~ragworkbook.columns.Columns` (read from TREC files, or built from
``{qid: {doc: value}}`` dicts) into a :class:`~ragworkbook.metrics.ranked.Ranked`:

- **Queries**: those of the qrels that the run answers, in id order (a run query
  without qrels is ignored; a judged query the run lacks is left out, or with
  ``missing="zero"`` kept with an empty ranking: trec_eval ``-c``).
- **Ranking**: by score descending, ties broken by document id descending (the
  bytes of the UTF-8 ids, as trec_eval's ``strcmp``); the rank column of a run
  file is never read. ``float32=True`` rounds the scores to float32 first
  (trec_eval 9, pytrec_eval); the default compares them at full precision
  (trec_eval 10). ``depth`` keeps the first ``depth`` documents of each ranking
  (trec_eval ``-M``).
- **Duplicates**: a document judged or retrieved twice for one query is a
  ValueError naming where (trec_eval refuses them too).

How it is fast (ten million run lines in well under a second): every document
id gets a 64-bit fingerprint computed from Arrow's buffers with numpy (the id
itself when it has at most 8 bytes; else a mix of its first and last 8 bytes and
its length); a judged document is found among its query's retrieved ones by
comparing fingerprints row against row, and every match of a longer id is then
confirmed byte for byte. A run written in rank order (the usual case) is not
sorted again: only its queries with a score out of order are, and only the
judged documents tied with others compare ids.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragworkbook.columns import Columns
from ragworkbook.metrics.ranked import Ranked

__all__ = ["rank_columns", "fingerprints"]

_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_K1, _K2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)
_LOW = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
#: Elements compared at once in the row-against-row search (bounds its temporary memory).
_STEP = 1 << 22


def _chunks(arr: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return list(arr.chunks) if isinstance(arr, pa.ChunkedArray) else [arr]


def _offsets(a: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Start and end byte offsets of each string of ``a`` in its data buffer, and the buffer."""
    width = np.int64 if a.type == pa.large_string() else np.int32
    off = np.frombuffer(a.buffers()[1], dtype=width)[a.offset:a.offset + len(a) + 1].astype(np.int64)
    return off, np.frombuffer(a.buffers()[2], dtype=np.uint8) if a.buffers()[2] is not None else np.zeros(
        0, dtype=np.uint8)


def fingerprints(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A 64-bit fingerprint and the byte length of every string of ``arr``.

    Equal strings have equal fingerprints. A string of at most 8 bytes is its own
    fingerprint (its bytes as a little-endian integer: no two such strings share
    one); a longer string's mixes its first 8 bytes, last 8 bytes and length, so
    two longer strings may share one and must be compared to be told apart.
    """
    fps, lens = [], []
    for a in _chunks(arr):
        off, data = _offsets(a)
        n = len(a)
        if not n:
            continue
        padded = np.zeros(data.size + 16, dtype=np.uint8)
        padded[8:8 + data.size] = data
        win = np.lib.stride_tricks.sliding_window_view(padded, 8)
        start, end = off[:-1] + 8, off[1:] + 8
        length = end - start
        first = np.ascontiguousarray(win[start]).view(np.uint64).ravel()
        first &= _LOW[np.minimum(length, 8)]
        last = np.ascontiguousarray(win[end - 8]).view(np.uint64).ravel()
        h = first * _K1
        h ^= last * _K2
        h ^= length.astype(np.uint64) * _M1
        h ^= h >> np.uint64(31)
        h *= _M2
        h ^= h >> np.uint64(29)
        fps.append(np.where(length <= 8, first, h))
        lens.append(length)
    if not fps:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    return (np.concatenate(fps) if len(fps) > 1 else fps[0]), (np.concatenate(lens) if len(lens) > 1 else lens[0])


def _take(arr: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    got = arr.take(pa.array(rows, type=pa.int64()))
    return got.combine_chunks() if isinstance(got, pa.ChunkedArray) else got


def _equal(a: pa.Array | pa.ChunkedArray, ra: np.ndarray, b: pa.Array | pa.ChunkedArray,
           rb: np.ndarray) -> np.ndarray:
    """Whether string ``a[ra[i]]`` equals ``b[rb[i]]``, for each i."""
    if not ra.size:
        return np.zeros(0, dtype=bool)
    x, y = _take(a, ra), _take(b, rb)
    if x.type != y.type:
        y = y.cast(x.type)
    return np.asarray(pc.equal(x, y).to_numpy(zero_copy_only=False), dtype=bool)


def _greater(arr: pa.Array | pa.ChunkedArray, ra: np.ndarray, rb: np.ndarray) -> np.ndarray:
    """Whether ``arr[ra[i]] > arr[rb[i]]`` (byte order), for each i."""
    if not ra.size:
        return np.zeros(0, dtype=bool)
    return np.asarray(pc.greater(_take(arr, ra), _take(arr, rb)).to_numpy(zero_copy_only=False), dtype=bool)


def _duplicates(cols: Columns, rows: np.ndarray, e: np.ndarray, fp: np.ndarray, verb: str,
                matrix: np.ndarray | None = None) -> None:
    """No document twice for one query (``e``: query of each row): an error at the second occurrence.

    Rows with the same query and fingerprint are candidates, confirmed by their ids. ``matrix``: the
    fingerprints as a (queries, depth) view when every query has the same number of rows (each row is
    then sorted on its own, cheaper than one sort of everything)."""
    if matrix is not None:
        srt = np.sort(matrix, axis=1)
        flagged = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
        if not flagged.size:
            return
        depth = matrix.shape[1]
        cand = (flagged[:, None] * depth + np.arange(depth)).ravel()
    else:
        key = fp ^ (e.astype(np.uint64) * _K1)
        srt = np.sort(key)
        dup = srt[1:][srt[1:] == srt[:-1]]
        if not dup.size:
            return
        cand = np.flatnonzero(np.isin(key, dup))
    groups: dict[tuple[int, int], list[int]] = {}
    for i in cand.tolist():
        groups.setdefault((int(e[i]), int(fp[i])), []).append(i)
    found: list[tuple[int, int]] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        first: dict[str, int] = {}
        for i in sorted(members, key=lambda i: _line(cols, int(rows[i]))):
            d = cols.doc_at(int(rows[i]))
            if d in first:
                found.append((first[d], i))
            else:
                first[d] = i
    if found:
        _, b = min(found, key=lambda ab: _line(cols, int(rows[ab[1]])))
        r = int(rows[b])
        raise ValueError(f"{cols.where(r)}: document {cols.doc_at(r)!r} is {verb} twice for query "
                         f"{cols.qids[int(cols.q[r])]!r}")


def _line(cols: Columns, row: int) -> int:
    return int(cols.line[row]) if cols.line is not None else row


def rank_columns(qrels: Columns, run: Columns, *, missing: str = "skip", depth: int | None = None,
                 level: float | None = None, float32: bool = False) -> tuple[Ranked, dict[str, list[str]]]:
    """Rank ``run`` and join it with ``qrels`` (see the module docstring) -> the rank-ordered grades and
    the query ids left out, by reason (``"not_in_run"``)."""
    grade = np.asarray(qrels.value, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(grade))
    if bad.size:
        i = int(bad[0])
        raise ValueError(qrels.problem(i, "grade", grade[i], "is not a finite number"))
    score = np.asarray(run.value, dtype=np.float64)
    bad = np.flatnonzero(np.isnan(score))
    if bad.size:
        raise ValueError(run.problem(int(bad[0]), "score", "nan", "is NaN"))

    # --- the evaluated queries, in id order
    in_run = set(run.qids)
    absent = sorted(q for q in qrels.qids if q not in in_run)
    kept = [q for q in qrels.qids if q in in_run] + (absent if missing == "zero" else [])
    ids = sorted(kept)
    index = {qid: i for i, qid in enumerate(ids)}
    skipped = {"not_in_run": absent} if absent and missing != "zero" else {}
    n = len(ids)
    e_of_qrels = np.array([index.get(q, -1) for q in qrels.qids], dtype=np.int64)
    e_of_run = np.array([index.get(q, -1) for q in run.qids], dtype=np.int64)

    # --- the judgements of the evaluated queries
    qe = e_of_qrels[np.asarray(qrels.q)] if len(qrels) else np.zeros(0, dtype=np.int64)
    jrows = np.flatnonzero(qe >= 0)
    jq, jgrade = qe[jrows], grade[jrows]
    qfp, qlen = fingerprints(qrels.doc)
    qfp, qlen = qfp[jrows], qlen[jrows]
    _duplicates(qrels, jrows, jq, qfp, "judged")

    # --- the run's rows of evaluated queries, grouped by query, each query in rank order
    re = e_of_run[np.asarray(run.q)] if len(run) else np.zeros(0, dtype=np.int64)
    keep = re >= 0
    rows: np.ndarray | None = None if keep.all() else np.flatnonzero(keep)
    rfp, rlen = fingerprints(run.doc)
    if rows is not None:
        re, s, rfp, rlen = re[rows], score[rows], rfp[rows], rlen[rows]
    else:
        s = score
        rows = np.arange(len(run), dtype=np.int64)
    del keep
    if float32:
        s = s.astype(np.float32)
    m = re.size
    if m:
        change = np.flatnonzero(re[1:] != re[:-1]) + 1
        if change.size + 1 != np.count_nonzero(np.bincount(re, minlength=n)):  # a query's lines are apart
            perm = np.argsort(re, kind="stable")
            re, s, rfp, rlen, rows = re[perm], s[perm], rfp[perm], rlen[perm], rows[perm]
            del perm
            change = np.flatnonzero(re[1:] != re[:-1]) + 1
        inverted = np.flatnonzero((s[1:] > s[:-1]) & (re[1:] == re[:-1]))
        if inverted.size:  # queries not written in rank order: sort those (by score, stable)
            s = s.copy() if s is score else s
            bad_q = np.zeros(n, dtype=bool)
            bad_q[re[inverted]] = True
            sub = np.flatnonzero(bad_q[re])
            segment = np.searchsorted(change, sub, side="right")  # keep each query where it stands
            order = sub[np.lexsort((-s[sub].astype(np.float64), segment))]
            for arr in (s, rfp, rlen, rows):
                arr[sub] = arr[order]
            del sub, order, bad_q, segment
        seg_start = np.r_[0, change]
    else:
        seg_start = np.zeros(0, dtype=np.int64)
    seg_q = re[seg_start] if m else np.zeros(0, dtype=np.int64)
    seg_len = np.diff(np.r_[seg_start, m])
    start = np.zeros(n, dtype=np.int64)
    length = np.zeros(n, dtype=np.int64)
    start[seg_q], length[seg_q] = seg_start, seg_len
    # one segment per query; when all have the same length the fingerprints are a (segments, depth) view
    uniform = bool(m) and bool((seg_len == seg_len[0]).all())
    _duplicates(run, rows, re, rfp, "retrieved", rfp.reshape(seg_len.size, -1) if uniform else None)
    seg_of = np.full(n, -1, dtype=np.int64)
    seg_of[seg_q] = np.arange(seg_q.size)

    # --- where each judged document is in its query's ranking (-1: not retrieved)
    pos = _find(rfp, seg_start, seg_len, seg_of, jq, qfp, uniform)
    hit = np.flatnonzero(pos >= 0)
    g = start[jq[hit]] + pos[hit]  # the run row (in the grouped order)
    long_ids = (rlen[g] > 8) | (qlen[hit] > 8)
    if long_ids.any():  # fingerprints of ids over 8 bytes may be shared: confirm byte for byte
        check = np.flatnonzero(long_ids)
        same = _equal(run.doc, rows[g[check]], qrels.doc, jrows[hit[check]])
        wrong = check[~same]
        if wrong.size:  # a shared fingerprint: look for the id among the whole ranking
            for w in wrong.tolist():
                j = int(hit[w])
                seg = np.arange(start[jq[j]], start[jq[j]] + length[jq[j]])
                cand = seg[rfp[seg] == qfp[j]]
                match = cand[_equal(run.doc, rows[cand], qrels.doc, np.full(cand.size, jrows[j]))]
                pos[j] = int(match[0] - start[jq[j]]) if match.size else -1
            hit = np.flatnonzero(pos >= 0)
            g = start[jq[hit]] + pos[hit]
    rank = _ranks(run.doc, rows, re, s, g, start)

    # --- the rank-ordered grades
    hq, hgrade = jq[hit], jgrade[hit]
    n_ret = length
    if depth is not None:
        inside = rank <= depth
        hq, rank, hgrade = hq[inside], rank[inside], hgrade[inside]
        n_ret = np.minimum(length, depth)
    order = np.argsort(hq * (int(rank.max()) + 1 if rank.size else 1) + rank, kind="stable")
    q_of_j = jq

    def describe(i: int) -> str:
        mine = np.flatnonzero(q_of_j == i)
        if not mine.size:
            return f"query {ids[i]!r}"
        top = int(mine[np.argmax(jgrade[mine])])
        return f"query {ids[i]!r} (its largest grade, {jgrade[top]:g}, is at {qrels.where(int(jrows[top]))})"

    ranked = Ranked(ids, n_ret.astype(np.int64), hq[order], rank[order], hgrade[order], jq, jgrade, level,
                    describe=describe)
    return ranked, skipped


def _find(rfp: np.ndarray, seg_start: np.ndarray, seg_len: np.ndarray, seg_of: np.ndarray, jq: np.ndarray,
          qfp: np.ndarray, uniform: bool) -> np.ndarray:
    """For each judged document (query ``jq``, fingerprint ``qfp``): its position in its query's ranking
    (segment ``seg_of[q]``: rows ``seg_start .. seg_start + seg_len`` of ``rfp``), or -1."""
    m = jq.size
    pos = np.full(m, -1, dtype=np.int64)
    nseg = seg_start.size
    if not m or not rfp.size:
        return pos
    depth = int(seg_len.max())
    if uniform:
        mat = rfp.reshape(nseg, depth)
    elif nseg * depth <= 3 * rfp.size + (1 << 20):
        mat = np.zeros((nseg, depth), dtype=np.uint64)
        where = np.repeat(np.arange(nseg), seg_len)
        mat[where, np.arange(rfp.size) - np.repeat(seg_start, seg_len)] = rfp
        del where
    else:  # very uneven depths: a sorted search instead of a padded matrix
        return _find_sorted(rfp, seg_start, seg_len, seg_of, jq, qfp)
    seg = seg_of[jq]
    in_run = np.flatnonzero(seg >= 0)
    valid = None if uniform else (np.arange(depth) < seg_len[:, None])
    step = max(1, _STEP // max(depth, 1))
    for a in range(0, in_run.size, step):
        j = in_run[a:a + step]
        sj = seg[j]
        eq = mat[sj] == qfp[j, None]
        if valid is not None:
            eq &= valid[sj]
        found = eq.any(axis=1)
        pos[j] = np.where(found, eq.argmax(axis=1), -1)
    return pos


def _find_sorted(rfp: np.ndarray, seg_start: np.ndarray, seg_len: np.ndarray, seg_of: np.ndarray,
                 jq: np.ndarray, qfp: np.ndarray) -> np.ndarray:
    seg_of_row = np.repeat(np.arange(seg_start.size), seg_len)
    order = np.lexsort((rfp, seg_of_row))
    ks, kf = seg_of_row[order], rfp[order]
    seg = seg_of[jq]
    lo = np.searchsorted(ks, seg, side="left")
    hi = np.searchsorted(ks, seg, side="right")
    pos = np.full(jq.size, -1, dtype=np.int64)
    for j in np.flatnonzero(seg >= 0).tolist():  # one binary search per judged document, in its query
        a, b = lo[j], hi[j]
        i = a + int(np.searchsorted(kf[a:b], qfp[j]))
        if i < b and kf[i] == qfp[j]:
            pos[j] = order[i] - seg_start[seg[j]]
    return pos


def _ranks(doc: pa.Array | pa.ChunkedArray, rows: np.ndarray, re: np.ndarray, s: np.ndarray, g: np.ndarray,
           start: np.ndarray) -> np.ndarray:
    """The rank of each found judged document (at grouped position ``g``): 1 + its position in its query's
    score order, where documents with the same score are ordered by id descending."""
    rank = g - start[re[g]] + 1 if g.size else np.zeros(0, dtype=np.int64)
    if not g.size:
        return rank.astype(np.int64)
    # the tie group around each found document: the run of equal scores of its query
    same_prev = np.zeros(g.size, dtype=bool)
    same_next = np.zeros(g.size, dtype=bool)
    inner = g > 0
    same_prev[inner] = (s[g[inner] - 1] == s[g[inner]]) & (re[g[inner] - 1] == re[g[inner]])
    inner = g < s.size - 1
    same_next[inner] = (s[g[inner] + 1] == s[g[inner]]) & (re[g[inner] + 1] == re[g[inner]])
    tied = np.flatnonzero(same_prev | same_next)
    if not tied.size:
        return rank.astype(np.int64)
    boundary = np.flatnonzero(np.r_[True, (s[1:] != s[:-1]) | (re[1:] != re[:-1])])
    gi = np.searchsorted(boundary, g[tied], side="right") - 1
    lo = boundary[gi]
    hi = np.r_[boundary, s.size][gi + 1]
    size = hi - lo
    # every other member of the group, compared by id: those with a larger id rank first
    owner = np.repeat(np.arange(tied.size), size)
    member = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size) + np.repeat(lo, size)
    other = member != g[tied][owner]
    owner, member = owner[other], member[other]
    larger = _greater(doc, rows[member], rows[g[tied][owner]])
    rank[tied] = lo - start[re[g[tied]]] + 1 + np.bincount(owner, weights=larger, minlength=tied.size).astype(
        np.int64)
    return rank.astype(np.int64)


#: How a kernel error names a query.
Describe = Callable[[int], str]
