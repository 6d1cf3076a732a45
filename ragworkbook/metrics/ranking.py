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

How it is fast: every document id gets a 64-bit key, its last 8 bytes (read from
Arrow's buffers as two aligned words shifted together) with its length, folded to
32 bits for the search. When the rankings fit (at most 4095 deep, depths even
enough to pad), each query's folds, with their positions packed into the low
bits, form a row of a matrix sorted row by row (:class:`_Table`): two documents
of one query with the same fold sit side by side (the duplicate check), and a
judged document is found by a binary search in its query's row. Every match is
confirmed on the id's bytes. A run written in rank order (the usual case) is not
sorted again: only its queries with a score out of order are, and only the
judged documents tied with others compare ids. Work over every row is done a
cache-sized chunk at a time, and the judged documents are taken in run order, so
that each stretch of the run is read while it is in the processor's cache.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragworkbook.columns import Columns, found_or, mask_of, one_chunk, row_indices
from ragworkbook.metrics.ranked import Ranked

__all__ = ["rank_columns", "fingerprints"]

_K1 = np.uint64(0x9E3779B97F4A7C15)
_U1, _U3, _U7, _U8, _U16, _U56, _U63 = (np.uint64(x) for x in (1, 3, 7, 8, 16, 56, 63))
_LOW = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
#: Rows handled at once when every id is read (bounds the temporaries of :class:`_Ids`).
_CHUNK = 1 << 16
#: Judged documents handled at once by :func:`_judged_ranks` (the stretch of the run they touch stays in
#: the processor's cache).
_HITS = 1 << 13
#: The most bits of a ranking position :class:`_Table` packs with a fold (rankings up to 4095 deep).
_POS_BITS = 12


class _Lengths:
    """``lengths[rows]`` of strings with offsets ``off``, without an array of every length."""

    def __init__(self, off: np.ndarray) -> None:
        self.off = off

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        return self.off[rows + 1] - self.off[rows]

    def all(self) -> np.ndarray:
        return np.diff(self.off)


class _Ids:
    """Document ids (one contiguous pyarrow string array) read as 8-byte words with numpy.

    The bytes are viewed as aligned little-endian 64-bit words (zero-copy when the
    Arrow buffer is 8-byte aligned and holds two words past the last id, as the
    TREC reader's buffers do; else copied once); the 8 bytes at any offset are two
    aligned words shifted together. Work on every row is done in chunks of
    :data:`_CHUNK` rows, so temporaries stay small.
    """

    def __init__(self, arr: pa.Array | pa.ChunkedArray) -> None:
        self.arr = arr = one_chunk(arr)
        width = np.int64 if arr.type == pa.large_string() else np.int32
        self.off = np.frombuffer(arr.buffers()[1], dtype=width)[arr.offset:arr.offset + len(arr) + 1]
        self.n = len(arr)
        end = int(self.off[-1]) if self.n else 0
        self.end = end
        nwords = end // 8 + 3  # the words holding bytes 0 .. end + 8 (a "second" word read past a short id)
        buf = arr.buffers()[2]
        if buf is not None and buf.address % 8 == 0 and buf.size >= nwords * 8:
            self.words = np.frombuffer(buf, dtype=np.uint64, count=nwords)
        else:
            padded = np.zeros(nwords * 8, dtype=np.uint8)
            if buf is not None and end:
                padded[:end] = np.frombuffer(buf, dtype=np.uint8, count=end)
            self.words = padded.view(np.uint64)
        lo = hi = 0
        for a in range(0, self.n, _CHUNK):
            every = np.diff(self.off[a:a + _CHUNK + 1])
            lo = int(every.min()) if not a else min(lo, int(every.min()))
            hi = max(hi, int(every.max()))
        self.shortest, self.longest = lo, hi

    @property
    def length(self) -> _Lengths:
        """The byte length of each id, indexable by rows (computed from the offsets, never stored)."""
        return _Lengths(self.off)

    def _at(self, at: np.ndarray) -> np.ndarray:
        """The 8 bytes from each byte offset of ``at`` (uint64, overwritten) as a little-endian integer:
        the two aligned words that hold them, shifted together."""
        shift = at & _U7
        shift <<= _U3
        at >>= _U3  # the index of the first word
        w = self.words.take(at)
        high = self.words[1:].take(at)
        w >>= shift
        high <<= _U1  # two shifts: a shift by 64 (shift 0) is undefined, by 1 + 63 is not
        np.subtract(_U63, shift, out=shift)
        high <<= shift
        w |= high
        return w

    def _bounds(self, rows: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray]:
        """Start and end byte offsets (uint64) of the ids of ``rows`` (an index array or a slice)."""
        if isinstance(rows, slice):
            return (self.off[rows.start:rows.stop].astype(np.uint64),
                    self.off[rows.start + 1:rows.stop + 1].astype(np.uint64))
        return self.off.take(rows).astype(np.uint64), self.off[1:].take(rows).astype(np.uint64)

    def _chunks(self) -> Iterator[slice]:
        return (slice(a, min(a + _CHUNK, self.n)) for a in range(0, self.n, _CHUNK))

    def word(self, part: str, rows: np.ndarray | slice | None = None) -> np.ndarray:
        """Each id's ``"first"`` 8 bytes, ``"second"`` 8 (bytes 8-15) or ``"last"`` 8 as a little-endian
        integer, bytes past the id's end zeroed (the id's own bytes when it has at most 8)."""
        if rows is None:
            out = np.empty(self.n, dtype=np.uint64)
            for c in self._chunks():
                out[c] = self.word(part, c)
            return out
        return self._word(part, *self._bounds(rows))

    def _word(self, part: str, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """:meth:`word` of the ids with these byte offsets (uint64; both may be overwritten)."""
        if not start.size:
            return np.zeros(0, dtype=np.uint64)
        keep = None
        if part == "last":
            if self.shortest >= 8:  # every id has 8 bytes or more: its last 8, nothing to mask
                end -= _U8
                at = end
            else:
                length = end - start
                keep = np.minimum(length, _U8)
                at = np.where(length >= _U8, end - _U8, start)
        elif part == "first":
            if self.shortest < 8:
                keep = np.minimum(end - start, _U8)
            at = start
        else:
            if self.shortest < 16:
                length = end - start
                keep = np.clip(length, _U8, _U16) - _U8
            start += _U8
            at = start
        w = self._at(at)
        if keep is not None:
            w &= _LOW.take(keep)
        return w

    def key(self, rows: np.ndarray | slice | None = None) -> np.ndarray:
        """A 64-bit key of every id (of ``rows``): equal ids, equal keys; two ids of at most 8 bytes (no
        control bytes) have equal keys only when equal; longer ids must be compared to be told apart.
        The key is the id's last 8 bytes (:meth:`word`) with its length xored into the top byte."""
        if rows is None:
            out = np.empty(self.n, dtype=np.uint64)
            for c in self._chunks():
                out[c] = self.key(c)
            return out
        start, end = self._bounds(rows)
        length = end - start
        length <<= _U56
        k = self._word("last", start, end)
        k ^= length
        return k

    def fold(self) -> np.ndarray:
        """:func:`_fold` of every id's key (32 bits a row), computed a chunk at a time."""
        out = np.empty(self.n, dtype=np.uint32)
        for c in self._chunks():
            out[c] = _fold(self.key(c), spend=True)
        return out


def fingerprints(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """The 64-bit key (see :meth:`_Ids.key`) and the byte length of every string of ``arr``."""
    ids = _Ids(arr)
    return ids.key(), ids.length.all()


def _take(arr: pa.Array, rows: np.ndarray) -> pa.Array:
    return one_chunk(arr.take(row_indices(rows)))


def _same(a: _Ids, ra: np.ndarray, b: _Ids, rb: np.ndarray, key_b: np.ndarray | None = None) -> np.ndarray:
    """Whether id ``a[ra[i]]`` equals ``b[rb[i]]``: their keys (the last 8 bytes and the length; ``key_b``
    the keys of ``b``'s ids when known, else the keys are taken to be equal already) and the first 8
    bytes compared with numpy (that covers ids up to 16 bytes), longer ones by pyarrow."""
    la, lb = a.length[ra], b.length[rb]
    same = la == lb
    if key_b is not None:
        same &= a.key(ra) == key_b
    long_ = same & (la > 8)
    if long_.any():
        i = np.flatnonzero(long_)
        same[i] = a.word("first", ra[i]) == b.word("first", rb[i])
        longer = i[same[i] & (la[i] > 16)]
        if longer.size:
            x, y = _take(a.arr, ra[longer]), _take(b.arr, rb[longer])
            if x.type != y.type:
                y = y.cast(x.type)
            same[longer] = mask_of(pc.equal(x, y))
    return same


def _greater(ids: _Ids, ra: np.ndarray, rb: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Whether id ``ra[i]`` sorts after id ``rb[owner[i]]`` in byte order (``strcmp`` > 0), for each i.

    The first 8 bytes (big-endian words) decide most pairs; the next 8 and the lengths those with equal
    first words, pyarrow the rest (equal first 16 bytes). Each id of ``rb`` is read once."""
    if not ra.size:
        return np.zeros(0, dtype=bool)
    a0 = ids.word("first", ra).byteswap()
    b0 = ids.word("first", rb).byteswap()[owner]
    out = a0 > b0
    eq = np.flatnonzero(a0 == b0)
    if not eq.size:
        return out
    ra, rb = ra[eq], rb[owner[eq]]
    la, lb = ids.length[ra], ids.length[rb]
    if ids.longest <= 8:
        out[eq] = la > lb
        return out
    a1, b1 = ids.word("second", ra).byteswap(), ids.word("second", rb).byteswap()
    out[eq] = (a1 > b1) | ((a1 == b1) & (la > lb))
    tied16 = np.flatnonzero((a1 == b1) & (la > 16) & (lb > 16))
    if tied16.size:  # the first 16 bytes are equal: pyarrow compares the rest
        x, y = _take(ids.arr, ra[tied16]), _take(ids.arr, rb[tied16])
        out[eq[tied16]] = mask_of(pc.greater(x, y))
    return out


def _duplicates(cols: Columns, rows: np.ndarray | None, e: np.ndarray, verb: str, *,
                key: np.ndarray | None = None, cand: np.ndarray | None = None,
                ids: _Ids | None = None) -> None:
    """No document twice for one query (``e``: query of each row): an error at the second occurrence.

    Rows with the same query and key are candidates, confirmed by their ids. ``cand``: the candidates
    when they are known already (the rows of the queries that :class:`_Table` flags; their keys are
    read from ``ids``), else all rows are sorted by query and ``key``."""
    if cand is None:
        mixed = key.astype(np.uint64) ^ (e.astype(np.uint64) * _K1)
        srt = np.sort(mixed)
        dup = srt[1:][srt[1:] == srt[:-1]]
        if not dup.size:
            return
        cand = np.flatnonzero(np.isin(mixed, dup))
        ckey = key[cand]
    else:
        if not cand.size:
            return
        ckey = ids.key(cand if rows is None else rows[cand])
    row = (lambda i: int(i)) if rows is None else (lambda i: int(rows[i]))
    groups: dict[tuple[int, int], list[int]] = {}
    for i, k in zip(cand.tolist(), ckey.tolist(), strict=True):
        groups.setdefault((int(e[i]), k), []).append(i)
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
    the judged queries the run lacks. Ids are matched and sorted by pyarrow (byte order of the UTF-8
    ids: the order of Python's ``sorted``)."""
    judged, retrieved = qrels.qids_arrow, run.qids_arrow
    if judged.type != retrieved.type:
        retrieved = retrieved.cast(judged.type)
    in_run = mask_of(pc.is_in(judged, value_set=retrieved))
    absent = sorted(judged.take(row_indices(np.flatnonzero(~in_run))).to_pylist())
    kept = judged if missing == "zero" else judged.take(row_indices(np.flatnonzero(in_run)))
    ids = kept.take(pc.sort_indices(kept))
    n = len(ids)
    e_qrels = found_or(pc.index_in(judged, value_set=ids), -1)
    # a run query without qrels: a slot of its own
    e_run = found_or(pc.index_in(retrieved, value_set=ids), np.arange(n, n + len(retrieved), dtype=np.int64))
    return ids.to_pylist(), e_qrels, e_run, absent


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
    _duplicates(qrels, jrows, jq, "judged", key=qkey)

    # --- the run grouped by query (one segment each), each query in rank order
    rdoc = _Ids(run.doc)
    # each row's query as the run's own code (its slot is looked up once a segment, not once a row)
    e = np.asarray(run.q)
    # 32 bits per row are enough to search; whole keys are made when needed
    fold = rdoc.fold()
    rows: np.ndarray | None = None  # grouped position -> run row (None: the same)
    s = score.astype(np.float32) if float32 else score
    m = e.size
    change = np.flatnonzero(e[1:] != e[:-1]) + 1 if m else np.zeros(0, dtype=np.int64)
    heads = e[np.r_[0, change]] if m else e
    if np.count_nonzero(np.bincount(heads, minlength=len(run.qids))) != heads.size:  # a query is split
        rows = np.argsort(e, kind="stable")
        e, s, fold = e[rows], s[rows], fold[rows]
        change = np.flatnonzero(e[1:] != e[:-1]) + 1
    if m:
        up = np.flatnonzero(s[1:] > s[:-1])
        up = up[e[up + 1] == e[up]]
        if up.size:  # queries not written in rank order: sort those (by score, stable), in place
            s = s.copy() if s is score else s
            rows = np.arange(m) if rows is None else rows
            bad_q = np.zeros(len(run.qids), dtype=bool)
            bad_q[e[up]] = True
            sub = np.flatnonzero(bad_q[e])
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
    seg_q = e_of_run[e[seg_start]] if m else np.zeros(0, dtype=np.int64)  # the slot of each segment
    seg_len = np.diff(np.r_[seg_start, m])
    length = np.zeros(slots, dtype=np.int64)
    length[seg_q] = seg_len
    uniform = bool(m) and bool((seg_len == seg_len[0]).all())
    # the folds become the table when they can (in place: fold is not read again then)
    table = _Table.build(fold, seg_start, seg_len, uniform) if m else None
    if table is not None:
        _duplicates(run, rows, e, "retrieved", cand=table.flagged(seg_start, seg_len), ids=rdoc)
    else:
        _duplicates(run, rows, e, "retrieved", key=fold)
    seg_of = np.full(slots, -1, dtype=np.int64)
    seg_of[seg_q] = np.arange(seg_q.size)

    # --- the rank of each judged document in its query's ranking (0: not retrieved)
    found = _judged_ranks(rdoc, rows, e, s, change, table, seg_start, seg_len, seg_of[jq], qids_, jrows, qkey)
    del fold, table
    hit = np.flatnonzero(found)
    rank = found[hit]

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


class _Table:
    """The rankings as a (queries, depth) matrix of uint32, each row sorted: a document's key folded to 32
    bits (:func:`_fold`) with its low ``bits`` bits replaced by its position in the ranking. A judged
    document is found by a binary search in its query's row, and two documents of one query with the
    same fold sit side by side. Padding (queries shorter than the deepest) is all ones: a position past
    every ranking."""

    def __init__(self, mat: np.ndarray, bits: int) -> None:
        self.mat, self.bits = mat, bits
        self.low = np.uint32((1 << bits) - 1)

    @classmethod
    def build(cls, fold: np.ndarray, seg_start: np.ndarray, seg_len: np.ndarray, uniform: bool
              ) -> _Table | None:
        """None when a ranking is deeper than ``2**_POS_BITS - 1`` or the depths are too uneven to pad.
        When every ranking has the same depth, ``fold`` itself is turned into the table."""
        nseg = seg_start.size
        depth = int(seg_len.max())
        bits = max(1, depth.bit_length())  # 2**bits > depth: the padding's position is past every ranking
        if bits > _POS_BITS:
            return None
        high = np.uint32(~((1 << bits) - 1) & 0xFFFFFFFF)
        if uniform:  # the folds themselves become the table (no copy)
            mat = fold.reshape(nseg, depth)
            mat &= high
            mat |= np.arange(depth, dtype=np.uint32)
        elif nseg * depth <= 3 * fold.size + (1 << 20):
            mat = np.full((nseg, depth), 0xFFFFFFFF, dtype=np.uint32)
            flat = mat.ravel()
            step = max(1, _CHUNK // depth)
            for a in range(0, nseg, step):  # a few queries at a time: each row's place in the matrix
                lengths = seg_len[a:a + step]
                lo, hi = int(seg_start[a]), int(seg_start[a] + lengths.sum())
                shift = np.repeat(np.arange(a, a + lengths.size) * depth - seg_start[a:a + step], lengths)
                at = np.arange(lo, hi) + shift  # where each of these rows goes in the matrix
                packed = fold[lo:hi] & high
                packed |= (at % depth).astype(np.uint32)
                flat[at] = packed
        else:
            return None
        mat.sort(axis=1)
        return cls(mat, bits)

    def flagged(self, seg_start: np.ndarray, seg_len: np.ndarray) -> np.ndarray:
        """The grouped positions of the documents whose fold's top bits equal a neighbour's in their
        query's sorted row: the candidates of :func:`_duplicates` (a document twice in one query is
        among them)."""
        nseg, depth = self.mat.shape
        parts: list[np.ndarray] = []
        step = max(1, _CHUNK // max(depth, 1))
        for a in range(0, nseg, step):
            part = self.mat[a:a + step]
            same = (part[:, 1:] ^ part[:, :-1]) <= self.low  # neighbours with equal high bits
            if not same.any():
                continue
            both = np.zeros(part.shape, dtype=bool)  # both of each pair
            both[:, 1:] = same
            both[:, :-1] |= same
            r, c = np.nonzero(both)
            parts.append((r + a) * depth + c)
        if not parts:
            return np.zeros(0, dtype=np.int64)
        entry = np.concatenate(parts)
        row, p = entry // depth, (self.mat.ravel()[entry] & self.low).astype(np.int64)
        keep = p < seg_len[row]  # not the padding
        return seg_start[row[keep]] + p[keep]

    def find(self, seg: np.ndarray, qfold: np.ndarray) -> np.ndarray:
        """The position of each fold ``qfold`` in row ``seg`` (its first match), -1 where it is not;
        :data:`_CHUNK` at a time (the temporaries of a binary search stay in the processor's cache)."""
        out = np.empty(seg.size, dtype=np.int64)
        for a in range(0, seg.size, _CHUNK):
            out[a:a + _CHUNK] = self._find(seg[a:a + _CHUNK], qfold[a:a + _CHUNK])
        return out

    def _find(self, seg: np.ndarray, qfold: np.ndarray) -> np.ndarray:
        nseg, depth = self.mat.shape
        flat = self.mat.ravel()
        target = qfold & np.uint32(~int(self.low) & 0xFFFFFFFF)
        base = seg.astype(np.int64) * depth
        lo = np.zeros(seg.size, dtype=np.int64)
        n = np.full(seg.size, depth, dtype=np.int64)
        for _ in range(self.bits):  # a lower bound: the first entry >= target (n < 2**bits entries left)
            half = n >> 1
            mid = lo + half
            go = (n > 0) & (flat[base + np.minimum(mid, depth - 1)] < target)
            lo = np.where(go, mid + 1, lo)
            n = np.where(go, n - half - 1, half)
        cand = flat[base + np.minimum(lo, depth - 1)]
        ok = (lo < depth) & ((cand ^ target) <= self.low)
        return np.where(ok, (cand & self.low).astype(np.int64), -1)


def _judged_ranks(ids: _Ids, rows: np.ndarray | None, e: np.ndarray, s: np.ndarray, change: np.ndarray,
                  table: _Table | None, seg_start: np.ndarray, seg_len: np.ndarray,
                  seg: np.ndarray, jids: _Ids, jrows: np.ndarray, qkey: np.ndarray) -> np.ndarray:
    """The rank of each judged document (its query's segment ``seg``, -1 for a query the run lacks; its
    row ``jrows`` of ``jids``; its key ``qkey``) in its query's ranking, 0 when it was not retrieved.

    The judgements are taken in run order, :data:`_HITS` at a time, so that each stretch of the run is
    read once while it is in the processor's cache: its fold searched in ``table`` (or, without one, its
    whole key among the segment's sorted keys), the match confirmed on the id itself (a fold or key that
    two ids share sends it to a search of its whole segment), then its rank (:func:`_ranks`)."""
    out = np.zeros(seg.size, dtype=np.int64)
    if not s.size:
        return out
    as_row = (lambda x: x) if rows is None else (lambda x: rows[x])
    todo = np.flatnonzero(seg >= 0)
    todo = todo[np.argsort(seg[todo], kind="stable")]  # run order (usually the qrels order already)
    every = None
    if table is None:  # very deep or very uneven rankings: a sorted search instead of a matrix
        every = _find_sorted(ids.key(as_row(np.arange(s.size))), seg_start, seg_len, seg[todo], qkey[todo])
    for a in range(0, todo.size, _HITS):
        j = todo[a:a + _HITS]
        sj = seg[j]
        if every is None:
            p = table.find(sj, _fold(qkey[j]))
            p[p >= seg_len[sj]] = -1
        else:
            p = every[a:a + _HITS]
        g = seg_start[sj] + p
        ok = p >= 0
        ok[ok] = _same(ids, as_row(g[ok]), jids, jrows[j[ok]], qkey[j[ok]])
        for w in np.flatnonzero((p >= 0) & ~ok).tolist():  # a shared fold or key: search the whole segment
            at = np.arange(seg_start[sj[w]], seg_start[sj[w]] + seg_len[sj[w]])
            cand = at[ids.key(as_row(at)) == qkey[j[w]]]
            match = cand[_same(ids, as_row(cand), jids, np.full(cand.size, jrows[j[w]]))]
            if match.size:
                g[w], ok[w] = match[0], True
        j, g, sj = j[ok], g[ok], sj[ok]
        out[j] = _ranks(ids, rows, e, s, g, seg_start[sj], change)
    return out


def _find_sorted(rkey: np.ndarray, seg_start: np.ndarray, seg_len: np.ndarray, seg: np.ndarray,
                 qkey: np.ndarray) -> np.ndarray:
    """The position of each key ``qkey`` in segment ``seg`` of the run's keys ``rkey`` (its first match),
    -1 where it is not: the keys sorted by segment, then one binary search a judged document."""
    seg_of_row = np.repeat(np.arange(seg_start.size), seg_len)
    order = np.lexsort((rkey, seg_of_row))
    ks, kf = seg_of_row[order], rkey[order]
    lo = np.searchsorted(ks, seg, side="left")
    hi = np.searchsorted(ks, seg, side="right")
    pos = np.full(seg.size, -1, dtype=np.int64)
    for j in range(seg.size):
        a, b = lo[j], hi[j]
        i = a + int(np.searchsorted(kf[a:b], qkey[j]))
        if i < b and kf[i] == qkey[j]:
            pos[j] = order[i] - seg_start[seg[j]]
    return pos


def _tie_groups(s: np.ndarray, e: np.ndarray, at: np.ndarray, change: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """The run of equal scores (within one query) around each position of ``at``: its first position and
    one past its last. Found by stepping out from each position (tie groups are short); when some are
    long, by numbering every run of the whole ranking once."""
    m = s.size
    lo, hi = at.copy(), at + 1
    v, q = s[at], e[at]
    down = np.flatnonzero(lo > 0)  # the positions still stepping down / up
    up = np.flatnonzero(hi < m)
    for _ in range(32):
        down = down[(s[lo[down] - 1] == v[down]) & (e[lo[down] - 1] == q[down])]
        lo[down] -= 1
        down = down[lo[down] > 0]
        up = up[(s[hi[up]] == v[up]) & (e[hi[up]] == q[up])]
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


def _ranks(ids: _Ids, rows: np.ndarray | None, e: np.ndarray, s: np.ndarray, g: np.ndarray,
           gstart: np.ndarray, change: np.ndarray) -> np.ndarray:
    """The rank of each found judged document (at grouped position ``g``, its query's ranking starting at
    ``gstart``): 1 + its position in its query's score order, where documents with the same score are
    ordered by id descending. ``e``: the query of each grouped position."""
    rank = (g - gstart + 1).astype(np.int64)
    if not g.size:
        return rank
    m = s.size
    # is a found document tied with a neighbour (same query, same score)?
    prev = np.maximum(g - 1, 0)
    nxt = np.minimum(g + 1, m - 1)
    tied = np.flatnonzero(((s[prev] == s[g]) & (e[prev] == e[g]) & (g > 0))
                          | ((s[nxt] == s[g]) & (e[nxt] == e[g]) & (g < m - 1)))
    as_row = (lambda x: x) if rows is None else (lambda x: rows[x])
    for a in range(0, tied.size, _CHUNK):  # a chunk at a time: the temporaries stay in the cache
        t = tied[a:a + _CHUNK]
        gt = g[t]
        lo, hi = _tie_groups(s, e, gt, change)
        size = hi - lo
        # every other member of the group, compared by id: those with a larger id rank first
        owner = np.repeat(np.arange(t.size), size)
        member = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size) + np.repeat(lo, size)
        other = member != gt[owner]
        owner, member = owner[other], member[other]
        larger = _greater(ids, as_row(member), as_row(gt), owner)
        rank[t] = lo - gstart[t] + 1 + np.bincount(owner, weights=larger, minlength=t.size).astype(np.int64)
    return rank
