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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragworkbook.columns import Columns
from ragworkbook.metrics.ranked import Ranked

__all__ = ["rank_columns", "fingerprints"]

_K1 = np.uint64(0x9E3779B97F4A7C15)
_LOW = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
#: Elements compared at once in the row-against-row search (bounds its temporary memory).
_STEP = 1 << 22


def _buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (int64, one more than the strings) and the bytes of a pyarrow string array."""
    width = np.int64 if arr.type == pa.large_string() else np.int32
    off = np.frombuffer(arr.buffers()[1], dtype=width)[arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
    data = arr.buffers()[2]
    return off, (np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8))


class _Lengths:
    """``lengths[rows]`` of strings with offsets ``off``, without an array of every length."""

    def __init__(self, off: np.ndarray) -> None:
        self.off = off

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        return self.off[rows + 1] - self.off[rows]

    def all(self) -> np.ndarray:
        return np.diff(self.off)


class _Ids:
    """Document ids (one contiguous pyarrow string array) read as 8-byte words with numpy."""

    def __init__(self, arr: pa.Array | pa.ChunkedArray) -> None:
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
        self.arr = arr
        width = np.int64 if arr.type == pa.large_string() else np.int32
        self.off = np.frombuffer(arr.buffers()[1], dtype=width)[arr.offset:arr.offset + len(arr) + 1]
        data = arr.buffers()[2]
        data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
        every = np.diff(self.off)
        self.shortest = int(every.min()) if every.size else 0
        self.longest = int(every.max()) if every.size else 0
        del every
        self.data = data if data.size >= 8 else np.r_[data, np.zeros(8, np.uint8)]
        # every 8-byte window of the bytes (a view): a window starting in the last 7 bytes is read
        # separately (:meth:`word`), so nothing is copied
        self.win = np.lib.stride_tricks.as_strided(self.data, shape=(self.data.size - 7, 8),
                                                   strides=(1, 1), writeable=False)

    @property
    def length(self) -> _Lengths:
        """The byte length of each id, indexable by rows (computed from the offsets, never stored)."""
        return _Lengths(self.off)

    def word(self, part: str, rows: np.ndarray | None = None) -> np.ndarray:
        """Each id's ``"first"`` 8 bytes, ``"second"`` 8 (bytes 8-15) or ``"last"`` 8 as a little-endian
        integer, bytes past the id's end zeroed (the id's own bytes when it has at most 8)."""
        start = self.off[:-1] if rows is None else self.off[rows]
        lengths = (lambda: self.length.all()) if rows is None else (lambda: self.length[rows])
        if part == "last":
            if self.shortest >= 8:  # every id has 8 bytes or more: its last 8, nothing to mask
                at, keep = (self.off[1:] if rows is None else self.off[rows + 1]) - 8, None
            else:
                length = lengths()
                at, keep = np.where(length >= 8, start + length - 8, start), np.minimum(length, 8)
        elif part == "first":
            at, keep = start, (None if self.shortest >= 8 else np.minimum(lengths(), 8))
        else:
            at = start + 8
            keep = None if self.shortest >= 16 else np.clip(lengths() - 8, 0, 8)
        if not at.size:
            return np.zeros(0, dtype=np.uint64)
        limit = self.win.shape[0]
        late = np.flatnonzero(at >= limit) if int(at.max()) >= limit else np.zeros(0, dtype=np.int64)
        w = np.ascontiguousarray(self.win[np.minimum(at, limit - 1) if late.size else at]).view(
            np.uint64).ravel()
        for i in late.tolist():  # a window past the end: its bytes one by one
            a = int(at[i])
            w[i] = int.from_bytes(bytes(self.data[a:a + 8]).ljust(8, b"\0"), "little")
        if keep is not None:
            w &= _LOW[keep]
        return w

    def key(self, rows: np.ndarray | None = None) -> np.ndarray:
        """A 64-bit key of every id (of ``rows``): equal ids, equal keys; two ids of at most 8 bytes (no
        control bytes) have equal keys only when equal; longer ids must be compared to be told apart."""
        k = self.word("last", rows)
        length = self.length.all() if rows is None else self.length[rows]
        k.view(np.uint8).reshape(-1, 8)[:, 7] ^= length.astype(np.uint8)  # the length, in place
        del length
        return k

    def order_words(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Big-endian words of the first 16 bytes (the second None when no id has more than 8):
        comparing them, then the lengths, orders ids by their bytes, as ``strcmp``, whenever they
        differ in the first 16 bytes."""
        first = self.word("first", rows).byteswap()
        return first, (self.word("second", rows).byteswap() if self.longest > 8 else None)


def fingerprints(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """The 64-bit key (see :meth:`_Ids.key`) and the byte length of every string of ``arr``."""
    ids = _Ids(arr)
    return ids.key(), ids.length.all()


def _take(arr: pa.Array, rows: np.ndarray) -> pa.Array:
    got = arr.take(pa.array(rows, type=pa.int64()))
    return got.combine_chunks() if isinstance(got, pa.ChunkedArray) else got


def _same(a: _Ids, ra: np.ndarray, b: _Ids, rb: np.ndarray) -> np.ndarray:
    """Whether id ``a[ra[i]]`` equals ``b[rb[i]]`` (their keys already equal): lengths and the first 8
    bytes compared with numpy (with the last 8 that covers ids up to 16 bytes), longer ones by pyarrow."""
    la, lb = a.length[ra], b.length[rb]
    same = la == lb
    long_ = same & (la > 8)
    if long_.any():
        i = np.flatnonzero(long_)
        same[i] = a.word("first", ra[i]) == b.word("first", rb[i])
        longer = i[same[i] & (la[i] > 16)]
        if longer.size:
            x, y = _take(a.arr, ra[longer]), _take(b.arr, rb[longer])
            if x.type != y.type:
                y = y.cast(x.type)
            same[longer] = np.asarray(pc.equal(x, y).to_numpy(zero_copy_only=False), dtype=bool)
    return same


def _greater(ids: _Ids, ra: np.ndarray, rb: np.ndarray) -> np.ndarray:
    """Whether id ``ra[i]`` sorts after id ``rb[i]`` in byte order (``strcmp`` > 0), for each i."""
    if not ra.size:
        return np.zeros(0, dtype=bool)
    (a0, a1), (b0, b1) = ids.order_words(ra), ids.order_words(rb)
    la, lb = ids.length[ra], ids.length[rb]
    if a1 is None or b1 is None:
        return (a0 > b0) | ((a0 == b0) & (la > lb))
    out = (a0 > b0) | ((a0 == b0) & ((a1 > b1) | ((a1 == b1) & (la > lb))))
    tied16 = np.flatnonzero((a0 == b0) & (a1 == b1) & (la > 16) & (lb > 16))
    if tied16.size:  # the first 16 bytes are equal: pyarrow compares the rest
        x, y = _take(ids.arr, ra[tied16]), _take(ids.arr, rb[tied16])
        out[tied16] = np.asarray(pc.greater(x, y).to_numpy(zero_copy_only=False), dtype=bool)
    return out


def _duplicates(cols: Columns, rows: np.ndarray | None, e: np.ndarray, key: np.ndarray, verb: str,
                matrix: np.ndarray | None = None) -> None:
    """No document twice for one query (``e``: query of each row): an error at the second occurrence.

    Rows with the same query and key are candidates, confirmed by their ids. ``matrix``: the keys as
    a (queries, depth) view of their 32-bit folds when every query has the same number of rows (each row
    is then sorted on its own, cheaper than one sort of everything)."""
    if matrix is not None:
        folded = matrix.copy()
        folded.sort(axis=1)
        flagged = np.flatnonzero((folded[:, 1:] == folded[:, :-1]).any(axis=1))
        del folded
        if not flagged.size:
            return
        depth = matrix.shape[1]
        cand = (flagged[:, None] * depth + np.arange(depth)).ravel()
    else:
        mixed = key.astype(np.uint64) ^ (e.astype(np.uint64) * _K1)
        srt = np.sort(mixed)
        dup = srt[1:][srt[1:] == srt[:-1]]
        if not dup.size:
            return
        cand = np.flatnonzero(np.isin(mixed, dup))
    row = (lambda i: int(i)) if rows is None else (lambda i: int(rows[i]))
    groups: dict[tuple[int, int], list[int]] = {}
    for i in cand.tolist():
        groups.setdefault((int(e[i]), int(key[i])), []).append(i)
    found: list[int] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        first: dict[str, int] = {}
        for i in sorted(members, key=lambda i: _line(cols, row(i))):
            d = cols.doc_at(row(i))
            if d in first:
                found.append(i)
            else:
                first[d] = i
    if found:
        r = row(min(found, key=lambda i: _line(cols, row(i))))
        raise ValueError(f"{cols.where(r)}: document {cols.doc_at(r)!r} is {verb} twice for query "
                         f"{cols.qids[int(cols.q[r])]!r}")


def _line(cols: Columns, row: int) -> int:
    return int(cols.line[row]) if cols.line is not None else row


def _query_ids(qrels: Columns, run: Columns, missing: str) -> tuple[list[str], np.ndarray, np.ndarray,
                                                                     list[str]]:
    """The evaluated queries in id order, the index of each qrels / run query among them (-1 for a
    qrels query left out; a run query without qrels gets its own index from ``n`` on), and the ids of
    the judged queries the run lacks."""
    in_run = set(run.qids)
    absent = sorted(q for q in qrels.qids if q not in in_run)
    kept = [q for q in qrels.qids if q in in_run] + (absent if missing == "zero" else [])
    ids = sorted(kept)
    index = dict(zip(ids, range(len(ids)), strict=True))
    n = len(ids)
    e_qrels = np.fromiter(map(index.get, qrels.qids, [-1] * len(qrels.qids)), dtype=np.int64,
                          count=len(qrels.qids))
    e_run = np.fromiter(map(index.get, run.qids, range(n, n + len(run.qids))), dtype=np.int64,
                        count=len(run.qids))
    return ids, e_qrels, e_run, absent


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

    ids, e_of_qrels, e_of_run, absent = _query_ids(qrels, run, missing)
    skipped = {"not_in_run": absent} if absent and missing != "zero" else {}
    n = len(ids)
    slots = n + len(run.qids)  # the evaluated queries, then one slot per run query without qrels

    # --- the judgements of the evaluated queries
    qe = e_of_qrels[np.asarray(qrels.q)] if len(qrels) else np.zeros(0, dtype=np.int64)
    jrows = np.flatnonzero(qe >= 0)
    jq, jgrade = qe[jrows], grade[jrows]
    qids_ = _Ids(qrels.doc)
    qkey = qids_.key()[jrows]
    _duplicates(qrels, jrows, jq, qkey, "judged")

    # --- the run grouped by query (one segment each), each query in rank order
    rdoc = _Ids(run.doc)
    re = e_of_run.astype(np.int32 if slots < 2**31 else np.int64)[np.asarray(run.q)]
    # 32 bits per row are enough to search; whole keys are made when needed
    fold = _fold(rdoc.key(), spend=True)
    rows: np.ndarray | None = None  # grouped position -> run row (None: the same)
    s = score.astype(np.float32) if float32 else score
    m = re.size
    change = np.flatnonzero(re[1:] != re[:-1]) + 1 if m else np.zeros(0, dtype=np.int64)
    if m and change.size + 1 != np.count_nonzero(np.bincount(re, minlength=slots)):  # a query is split
        rows = np.argsort(re, kind="stable")
        re, s, fold = re[rows], s[rows], fold[rows]
        change = np.flatnonzero(re[1:] != re[:-1]) + 1
    if m:
        up = np.flatnonzero(s[1:] > s[:-1])
        up = up[re[up + 1] == re[up]]
        if up.size:  # queries not written in rank order: sort those (by score, stable), in place
            s = s.copy() if s is score else s
            rows = np.arange(m) if rows is None else rows
            bad_q = np.zeros(slots, dtype=bool)
            bad_q[re[up]] = True
            sub = np.flatnonzero(bad_q[re])
            lengths = np.diff(np.r_[0, change, m])
            if sub.size == m and (lengths == lengths[0]).all():  # every query, all of one length
                width = int(lengths[0])
                within = np.argsort(-s.reshape(-1, width).astype(np.float64), axis=1, kind="stable")
                order = (within + (np.arange(m // width) * width)[:, None]).ravel()
                segment = within = None
            else:
                segment = np.searchsorted(change, sub, side="right")  # each query stays where it stands
                order = sub[np.lexsort((-s[sub].astype(np.float64), segment))]
            for arr in (s, fold, rows):
                arr[sub] = arr[order]
            del sub, order, bad_q, segment
    seg_start = np.r_[0, change] if m else np.zeros(0, dtype=np.int64)
    seg_q = re[seg_start].astype(np.int64) if m else np.zeros(0, dtype=np.int64)
    seg_len = np.diff(np.r_[seg_start, m])
    start = np.zeros(slots, dtype=np.int64)
    length = np.zeros(slots, dtype=np.int64)
    start[seg_q], length[seg_q] = seg_start, seg_len
    uniform = bool(m) and bool((seg_len == seg_len[0]).all())
    _duplicates(run, rows, re, fold, "retrieved", fold.reshape(seg_len.size, -1) if uniform else None)
    seg_of = np.full(slots, -1, dtype=np.int64)
    seg_of[seg_q] = np.arange(seg_q.size)

    # --- where each judged document is in its query's ranking (-1: not retrieved)
    pos = _find(rdoc, rows, fold, seg_start, seg_len, seg_of, jq, qkey, uniform)
    del fold
    hit = np.flatnonzero(pos >= 0)
    g = start[jq[hit]] + pos[hit]  # grouped position of the retrieved judged document
    grow = g if rows is None else rows[g]
    same = _same(rdoc, grow, qids_, jrows[hit])
    if not same.all():  # a key shared by two ids of one query: look for the id in its whole ranking
        for w in np.flatnonzero(~same).tolist():
            j = int(hit[w])
            seg = np.arange(start[jq[j]], start[jq[j]] + length[jq[j]])
            segrow = seg if rows is None else rows[seg]
            cand, crow = seg[rdoc.key(segrow) == qkey[j]], segrow[rdoc.key(segrow) == qkey[j]]
            match = cand[_same(rdoc, crow, qids_, np.full(cand.size, jrows[j]))]
            pos[j] = int(match[0] - start[jq[j]]) if match.size else -1
        hit = np.flatnonzero(pos >= 0)
        g = start[jq[hit]] + pos[hit]
    rank = _ranks(rdoc, rows, re, s, g, start, change)

    # --- the rank-ordered grades
    hq, hgrade = jq[hit], jgrade[hit]
    n_ret = length[:n]
    if depth is not None:
        inside = rank <= depth
        hq, rank, hgrade = hq[inside], rank[inside], hgrade[inside]
        n_ret = np.minimum(n_ret, depth)
    order = np.argsort(hq * (int(rank.max()) + 1 if rank.size else 1) + rank, kind="stable")

    def describe(i: int) -> str:
        mine = np.flatnonzero(jq == i)
        if not mine.size:
            return f"query {ids[i]!r}"
        top = int(mine[np.argmax(jgrade[mine])])
        return f"query {ids[i]!r} (its largest grade, {jgrade[top]:g}, is at {qrels.where(int(jrows[top]))})"

    ranked = Ranked(ids, n_ret.astype(np.int64), hq[order], rank[order], hgrade[order], jq, jgrade, level,
                    describe=describe)
    return ranked, skipped


def _fold(key: np.ndarray, spend: bool = False) -> np.ndarray:
    """A 64-bit key hashed to 32 bits (the high half of the key times an odd constant: every byte of
    the key moves it). ``spend``: ``key`` is not needed afterwards and is overwritten (no copy)."""
    if spend:
        key *= _K1
        mixed = key
    else:
        mixed = key * _K1
    return mixed.view(np.uint32)[1::2].copy()


def _find(ids: _Ids, rows: np.ndarray | None, fold: np.ndarray, seg_start: np.ndarray, seg_len: np.ndarray,
          seg_of: np.ndarray, jq: np.ndarray, qkey: np.ndarray, uniform: bool) -> np.ndarray:
    """For each judged document (query ``jq``, key ``qkey``): its position in its query's ranking
    (segment ``seg_of[q]``: grouped positions ``seg_start .. seg_start + seg_len``; ``rows`` maps them to
    run rows, None: the same), or -1. Keys are compared folded to 32 bits (``fold``) row against row; a
    match is then checked on the whole key."""
    m = jq.size
    pos = np.full(m, -1, dtype=np.int64)
    nseg = seg_start.size
    if not m or not fold.size:
        return pos
    as_row = (lambda x: x) if rows is None else (lambda x: rows[x])
    depth = int(seg_len.max())
    if uniform:
        mat = fold.reshape(nseg, depth)
    elif nseg * depth <= 3 * fold.size + (1 << 20):
        mat = np.zeros((nseg, depth), dtype=np.uint32)
        where = np.repeat(np.arange(nseg), seg_len)
        mat[where, np.arange(fold.size) - np.repeat(seg_start, seg_len)] = fold
        del where
    else:  # very uneven depths: a sorted search instead of a padded matrix
        rkey = ids.key(as_row(np.arange(fold.size)))
        return _find_sorted(rkey, seg_start, seg_len, seg_of, jq, qkey)
    qfold = _fold(qkey)
    seg = seg_of[jq]
    todo = np.flatnonzero(seg >= 0)
    step = max(1, _STEP // max(depth, 1))
    for a in range(0, todo.size, step):
        j = todo[a:a + step]
        sj = seg[j]
        p = (mat[sj] == qfold[j, None]).argmax(axis=1)
        ok = (mat[sj, p] == qfold[j]) & (p < seg_len[sj])
        pos[j] = np.where(ok, p, -1)
    found = np.flatnonzero(pos >= 0)
    wrong = found[ids.key(as_row(seg_start[seg[found]] + pos[found])) != qkey[found]]
    for j in wrong.tolist():  # the fold matched another key first: search the whole key in the segment
        a = seg_start[seg[j]]
        same = np.flatnonzero(ids.key(as_row(np.arange(a, a + seg_len[seg[j]]))) == qkey[j])
        pos[j] = int(same[0]) if same.size else -1
    return pos


def _find_sorted(rkey: np.ndarray, seg_start: np.ndarray, seg_len: np.ndarray, seg_of: np.ndarray,
                 jq: np.ndarray, qkey: np.ndarray) -> np.ndarray:
    seg_of_row = np.repeat(np.arange(seg_start.size), seg_len)
    order = np.lexsort((rkey, seg_of_row))
    ks, kf = seg_of_row[order], rkey[order]
    seg = seg_of[jq]
    lo = np.searchsorted(ks, seg, side="left")
    hi = np.searchsorted(ks, seg, side="right")
    pos = np.full(jq.size, -1, dtype=np.int64)
    for j in np.flatnonzero(seg >= 0).tolist():  # one binary search per judged document, in its query
        a, b = lo[j], hi[j]
        i = a + int(np.searchsorted(kf[a:b], qkey[j]))
        if i < b and kf[i] == qkey[j]:
            pos[j] = order[i] - seg_start[seg[j]]
    return pos


def _tie_groups(s: np.ndarray, re: np.ndarray, at: np.ndarray, change: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """The run of equal scores (within one query) around each position of ``at``: its first position and
    one past its last. Found by stepping out from each position (tie groups are short); when some are
    long, by numbering every run of the whole ranking once."""
    m = s.size
    lo, hi = at.copy(), at + 1
    v, q = s[at], re[at]
    down = np.flatnonzero(lo > 0)  # the positions still stepping down / up
    up = np.flatnonzero(hi < m)
    for _ in range(32):
        down = down[(s[lo[down] - 1] == v[down]) & (re[lo[down] - 1] == q[down])]
        lo[down] -= 1
        down = down[lo[down] > 0]
        up = up[(s[hi[up]] == v[up]) & (re[hi[up]] == q[up])]
        hi[up] += 1
        up = up[hi[up] < m]
        if not down.size and not up.size:
            return lo, hi
    new = np.empty(m, dtype=bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    new[change] = True
    first = np.flatnonzero(new)
    gi = np.searchsorted(first, at, side="right") - 1
    return first[gi], np.r_[first, m][gi + 1]


def _ranks(ids: _Ids, rows: np.ndarray | None, re: np.ndarray, s: np.ndarray, g: np.ndarray,
           start: np.ndarray, change: np.ndarray) -> np.ndarray:
    """The rank of each found judged document (at grouped position ``g``): 1 + its position in its query's
    score order, where documents with the same score are ordered by id descending."""
    rank = (g - start[re[g]] + 1).astype(np.int64) if g.size else np.zeros(0, dtype=np.int64)
    if not g.size:
        return rank
    m = s.size
    # is a found document tied with a neighbour (same query, same score)?
    prev = np.maximum(g - 1, 0)
    nxt = np.minimum(g + 1, m - 1)
    tied = np.flatnonzero(((s[prev] == s[g]) & (re[prev] == re[g]) & (g > 0))
                          | ((s[nxt] == s[g]) & (re[nxt] == re[g]) & (g < m - 1)))
    if not tied.size:
        return rank
    gt = g[tied]
    lo, hi = _tie_groups(s, re, gt, change)
    size = hi - lo
    # every other member of the group, compared by id: those with a larger id rank first
    owner = np.repeat(np.arange(tied.size), size)
    member = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size) + np.repeat(lo, size)
    other = member != gt[owner]
    owner, member = owner[other], member[other]
    as_row = (lambda x: x) if rows is None else (lambda x: rows[x])
    larger = _greater(ids, as_row(member), as_row(gt[owner]))
    rank[tied] = lo - start[re[gt]] + 1 + np.bincount(owner, weights=larger, minlength=tied.size).astype(
        np.int64)
    return rank
