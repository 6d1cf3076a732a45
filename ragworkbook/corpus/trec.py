"""TREC files: qrels and runs, read (vectorised) and written.

Formats, read as trec_eval reads them (whitespace-separated, one judgement / one
retrieved document a line):

- qrels: ``qid iteration docid grade``, exactly four fields (the iteration column
  is ignored; the grade is a number, > 0 = relevant by default). trec_eval reads
  grades as integers (``atol``: "1.5" is 1, "high" is 0); ragworkbook keeps
  fractional grades and refuses one that is not a finite number.
- run: ``qid Q0 docid rank score tag``, at least six fields: ``Q0``, ``rank`` and
  ``tag`` are ignored, and so is any text after the sixth field (trec_eval's
  ``results.trunc`` has such lines). Only the score orders a ranking, ties broken
  by document id descending (see :mod:`ragworkbook.metrics.batch`).

Blank lines and lines whose first field starts with ``#`` are skipped (trec_eval
10). A UTF-8 byte-order mark at the start of the file is skipped (it is not part
of the first query id).

Reading is columnar: the file is read in blocks of 4 MiB of whole lines (one
reused buffer that stays in the processor's cache) and each block is checked with
numpy and parsed by pyarrow's CSV reader on one thread (space-separated, no
quoting) into typed columns: query ids, document ids, grades or scores as float64
(Arrow parses decimals correctly rounded, the same double as ``strtod``); the
query id of each run of equal ids is kept and all are numbered at the end by
pyarrow's hash table (in order of first appearance). That fast path takes the
usual file: ASCII or valid UTF-8, fields separated by single spaces, lines ending
in ``\n``, no blank, comment, overlong or malformed line, every number finite (a
score may be infinite); a pipe goes to the exact reader whole. Any other block
sends the whole file to the **exact reader**, which splits lines into fields with
numpy on their bytes (any whitespace, text after the sixth field, comments, blank
lines) and parses numbers with a vectorised
decimal reader equal to ``strtod``: it either reads the file or raises the
line-numbered error, so what is accepted and every message are the same on both
paths. :func:`read_run_columns` and :func:`read_qrels_columns` return
:class:`~ragworkbook.columns.Columns` (what ``ragworkbook ir-eval`` evaluates);
:func:`read_run` and :func:`read_qrels` return the ``{qid: {doc: value}}`` dicts
of pytrec_eval and ranx.

Bad input is a ``ValueError`` naming the file and line, with at most
:data:`EXCERPT` characters of the line: a malformed line, a grade or score that is
not a number, a NaN score, a grade that is not finite (``1e400``), a byte that is
not UTF-8, a control byte (NUL ...), a line longer than :data:`MAX_LINE_BYTES`
(a binary file is refused at its first block, never read whole into memory), a
document judged or retrieved twice for one query. A directory is an
``IsADirectoryError``, a missing file a ``FileNotFoundError``.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Hashable, Iterator, Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ragworkbook._io import as_regular_file, atomic_write_text, is_pipe
from ragworkbook.columns import Columns, mask_of, numbers_of, row_indices

__all__ = ["read_qrels", "read_run", "read_qrels_columns", "read_run_columns", "read_prefs", "write_qrels",
           "write_run", "MAX_LINE_BYTES", "EXCERPT"]

PathLike = str | os.PathLike

#: Longest line accepted, in bytes: a longer one is an error (a binary file, or newlines missing).
MAX_LINE_BYTES = 1 << 20
#: At most this many characters of a bad line are shown in an error message.
EXCERPT = 80
_BLOCK = 1 << 22
_POW10 = 10.0 ** np.arange(23)


# --------------------------------------------------------------------------- blocks of lines


def _checked_path(path: PathLike, what: str) -> Path:
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{p} is a directory, not a {what} file")
    if not p.exists():
        raise FileNotFoundError(f"no such file: {p}")
    return p


def _blocks(path: Path) -> Iterator[tuple[bytes, int]]:
    """Yield ``(block, lines before it)``: whole lines, each block ending with a newline.

    Never holds more than one block plus one line: a line longer than
    :data:`MAX_LINE_BYTES` is an error as soon as it is seen.
    """
    line0 = 0
    rest = b""
    with open(path, "rb") as fh:
        first = True
        while True:
            data = fh.read(_BLOCK)
            if first:
                first = False
                if data.startswith(codecs.BOM_UTF8):
                    data = data[len(codecs.BOM_UTF8):]
                elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
                    raise ValueError(f"{path}:1: the file is UTF-16 (it starts with a UTF-16 byte-order "
                                     "mark); save it as UTF-8")
            if not data:
                if rest:
                    yield rest + b"\n", line0
                return
            buf = rest + data if rest else data
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                if len(buf) > MAX_LINE_BYTES:
                    _too_long(path, line0 + 1, buf)
                rest = buf
                continue
            block, rest = buf[:cut], buf[cut:]
            if len(rest) > MAX_LINE_BYTES:
                _too_long(path, line0 + block.count(b"\n") + 1, rest)
            yield block, line0
            line0 += block.count(b"\n")


def _too_long(path: Path, line: int, data: bytes) -> None:
    if b"\0" in data[:MAX_LINE_BYTES]:
        raise ValueError(f"{path}:{line}: line longer than {MAX_LINE_BYTES:,} bytes (NUL bytes: not a "
                         "text file)")
    start = data[: EXCERPT * 4].decode("utf-8", "replace")[:EXCERPT]
    raise ValueError(f"{path}:{line}: line longer than {MAX_LINE_BYTES:,} bytes (a missing newline?); it "
                     f"starts {start!r}...")


def _excerpt(line: bytes) -> str:
    """At most :data:`EXCERPT` characters of a line, quoted, with its length when cut."""
    text = line[: EXCERPT * 4].decode("utf-8", "replace").rstrip("\r\n")
    if len(text) > EXCERPT or len(line) > EXCERPT * 4:
        return f"{text[:EXCERPT]!r}... ({len(line):,} bytes)"
    return repr(text)


# --------------------------------------------------------------------------- one block


class _Block:
    """The data lines of one block, split into fields with numpy."""

    def __init__(self, block: bytes, line0: int, path: Path, what: str, fields: int, exact: bool) -> None:
        self.block, self.line0, self.path = block, line0, path
        if not block.isascii():
            try:
                block.decode("utf-8")
            except UnicodeDecodeError as exc:
                line = line0 + block.count(b"\n", 0, exc.start) + 1
                raise ValueError(f"{path}:{line}: byte 0x{block[exc.start]:02x} is not UTF-8 (the file "
                                 "must be UTF-8 text)") from None
        b = np.frombuffer(block, dtype=np.uint8)
        space = b <= 32  # isspace, once the other control bytes are refused:
        blank = b[space]
        if np.count_nonzero((blank < 9) | ((blank > 13) & (blank < 32))):  # not \t \n \v \f \r or space
            at = int(np.flatnonzero((b < 9) | ((b > 13) & (b < 32)))[0])
            raise ValueError(f"{path}:{self._line_at(at)}: control byte 0x{b[at]:02x} in a text file (a "
                             "binary file?)")
        edges = np.flatnonzero(space[1:] != space[:-1])
        edges += 1
        if not space[0]:
            edges = np.concatenate(([0], edges))
        starts, ends = edges[0::2], edges[1::2]  # the block ends with a newline: every field ends
        nl = np.flatnonzero(b == 10)
        if int(np.diff(nl, prepend=-1).max()) > MAX_LINE_BYTES + 1:
            i = int(np.argmax(np.diff(nl, prepend=-1)))
            _too_long(path, line0 + i + 1, self._line(i, nl))
        self.starts, self.ends, self.nl = starts, ends, nl
        k = starts.size // max(nl.size, 1)
        self.k = 0
        same = k == fields if exact else k >= fields
        if same and starts.size == k * nl.size and b"#" not in block and self._uniform(k):
            # the usual file: every line holds the same number of fields
            self.rows = None
            self.first = np.arange(0, starts.size, k)
            self.k = k
        else:
            before = np.searchsorted(starts, nl)  # fields that start before each newline
            count = np.diff(before, prepend=0)
            first = before - count
            data = count > 0
            if b"#" in block and starts.size:
                data &= b[starts[np.minimum(first, starts.size - 1)]] != ord("#")
            bad = data & ((count != fields) if exact else (count < fields))
            if bad.any():
                i = int(np.argmax(bad))
                need = f"{fields} fields" if exact else f"at least {fields} fields"
                shape = "'qid iteration docid grade'" if what == "qrels" else "'qid Q0 docid rank score tag'"
                raise ValueError(f"{path}:{line0 + i + 1}: a {what} line needs {need} {shape}, "
                                 f"got {int(count[i])}: {_excerpt(self._line(i, nl))}")
            self.rows = np.flatnonzero(data)  # block-local line index of each data line
            self.first = first[self.rows]
        self.n = self.first.size
        self.buf = np.frombuffer(bytes(_PAD) + block + bytes(_PAD), dtype=np.uint8)

    def _uniform(self, k: int) -> bool:
        """True when line i holds exactly fields k*i .. k*i + k - 1."""
        if not k:
            return False
        prev = np.empty(self.nl.size, dtype=self.nl.dtype)
        prev[0], prev[1:] = -1, self.nl[:-1]
        return bool((self.starts[0::k] > prev).all() and (self.ends[k - 1::k] <= self.nl).all())

    def _line_at(self, offset: int) -> int:
        return self.line0 + self.block.count(b"\n", 0, offset) + 1

    def _line(self, i: int, nl: np.ndarray) -> bytes:
        start = int(nl[i - 1]) + 1 if i > 0 else 0
        return self.block[start:int(nl[i])]

    def line_of(self, k: int) -> int:
        """File line number of the block's k-th data line."""
        return self.line0 + 1 + (k if self.rows is None else int(self.rows[k]))

    @property
    def skipped_lines(self) -> bool:
        return self.n != self.nl.size

    def field(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Start and end offsets of field ``j`` (0-based) of every data line."""
        if self.k:  # every line has k fields: a strided view, no copy
            return self.starts[j::self.k], self.ends[j::self.k]
        return self.starts[self.first + j], self.ends[self.first + j]

    def strings(self, j: int) -> np.ndarray:
        """Field ``j`` of every data line as bytes (``S`` array, or object array for long fields)."""
        s, e = self.field(j)
        if not s.size:
            return np.zeros(0, dtype="S1")
        lengths = e - s
        width = int(lengths.max())
        if width > _PAD:
            out = np.empty(s.size, dtype=object)
            out[:] = [self.block[a:z] for a, z in zip(s.tolist(), e.tolist(), strict=True)]
            return out
        window = np.lib.stride_tricks.sliding_window_view(self.buf, width)
        g = window[s + _PAD]
        if int(lengths.min()) < width:
            g[np.arange(width) >= lengths[:, None]] = 0  # zero the bytes after each field
        return g.view(f"S{width}").ravel()

    def numbers(self, j: int, what: str) -> np.ndarray:
        """Field ``j`` of every data line as float64, exactly as ``strtod`` would read it."""
        s, e = self.field(j)
        values, slow = _decimals(self.buf, s + _PAD, e + _PAD)
        for k in np.flatnonzero(slow).tolist():
            token = self.block[s[k]:e[k]]
            try:
                if b"_" in token:
                    raise ValueError
                values[k] = float(token)
            except ValueError:
                raise ValueError(f"{self.path}:{self.line_of(k)}: {what} "
                                 f"{_excerpt(token)} is not a number") from None
        return values


_PAD = 64  # bytes of padding around a block: fields up to this long are gathered into arrays
_DIGITS = 15  # at most this many significant digits take the vectorised path
_INT_POW10 = 10 ** np.arange(19, dtype=np.int64)


def _fixed_point(g: np.ndarray, lengths: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The usual case of :func:`_decimals`: unsigned numbers with the same number of decimals (the dot
    in one column of the right-aligned fields), or integers. None when the fields are not all so."""
    dots = np.flatnonzero(g[0] == 46)
    c = int(dots[0]) if dots.size else width
    d = g - np.uint8(48)  # a new array: g is left as it is for the general path
    if c < width:
        if not (d[:, c] == 254).all():
            return None
        d[:, c] = 0
    if (d >= 10).any():  # a sign, a second dot, an exponent...
        return None
    frac = width - 1 - c if c < width else 0
    f = d.astype(np.float64)
    # each part is an integer below 10^15, exact in a double whatever the order of the sums
    whole = f[:, :c] @ _POW10[c - 1::-1] if c else np.zeros(len(f))
    if frac:
        whole = whole * _POW10[frac] + f[:, c + 1:] @ _POW10[frac - 1::-1]
    digits = lengths - (1 if c < width else 0)
    slow = (lengths > width) | (digits > _DIGITS) | (digits < 1)
    return whole / _POW10[frac], slow


def _decimals(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse ``[+-]digits[.digits]`` fields of at most 15 digits, vectorised; return the values and a
    mask of the fields left to parse one by one (others, or invalid).

    The fields are gathered right-aligned and padded on the left with "0"; the
    digits form an integer below 10^15 (exact in a double) divided by a power of
    ten up to 10^15 (exact too): one correctly rounded division, the same double as
    ``strtod`` gives (Clinger's fast path).
    """
    n = s.size
    if not n:
        return np.zeros(0), np.zeros(0, dtype=bool)
    lengths = e - s
    width = int(min(lengths.max(), _DIGITS + 2))
    cols = np.arange(width)
    g = np.lib.stride_tricks.sliding_window_view(buf, width)[e - width]  # right-aligned
    lead_col = np.maximum(width - lengths, 0)
    if int(lead_col.max()):
        g = np.where(cols < lead_col[:, None], np.uint8(48), g)  # "0" to the left of the field
    fixed = _fixed_point(g, lengths, width)
    if fixed is not None:
        return fixed
    rows = np.arange(n)
    lead = g[rows, lead_col]
    neg = lead == 45
    signed = neg | (lead == 43)
    if signed.any():
        g[rows[signed], lead_col[signed]] = 48
    d = g - np.uint8(48)
    is_dot = d == 254
    n_dot = np.count_nonzero(is_dot, axis=1)
    dot_at = np.where(n_dot > 0, np.argmax(is_dot, axis=1), -1)  # -1: no dot, nothing to shift
    d[is_dot] = 0
    ok = (lengths <= width) & (n_dot <= 1) & (lengths - n_dot - signed >= 1)
    ok &= lengths - n_dot - signed <= _DIGITS
    bad = d >= 10
    if bad.any():
        ok &= ~bad.any(axis=1)
    # digits right of the dot weigh 10^(width-1-col), those left of it one power less
    weight = _INT_POW10[width - 1 - cols]
    d64 = d.astype(np.int64)
    full = d64 @ weight
    left = np.where(cols < dot_at[:, None], d64, 0) @ weight
    mantissa = full - left + left // 10
    frac = np.where(n_dot > 0, width - 1 - dot_at, 0)
    values = mantissa.astype(np.float64) / _POW10[frac]
    return np.where(neg, -values, values), ~ok


# --------------------------------------------------------------------------- files -> columns


class _NeedsExact(Exception):
    """A block the fast path does not take: the exact reader reads the file (or explains the problem)."""


def _fast_columns(p: Path, what: str) -> Columns:
    """The fast path (see the module docstring); :class:`_NeedsExact` at the first block it does not take."""
    fields, value_col = (4, "f3") if what == "qrels" else (6, "f4")
    names = [f"f{i}" for i in range(fields)]
    # one thread: pyarrow's threads would parse a block in less time but with more CPU in all
    read = pacsv.ReadOptions(column_names=names, block_size=_BLOCK + 1, use_threads=False)
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, escape_char=False,
                               newlines_in_values=False, ignore_empty_lines=False)
    types = {"f0": pa.string(), "f2": pa.string(), value_col: pa.float64()}
    convert = pacsv.ConvertOptions(column_types=types,
                                   include_columns=["f0", "f2", value_col], null_values=[],
                                   strings_can_be_null=False, quoted_strings_can_be_null=False,
                                   check_utf8=False)
    # the columns, written batch by batch into arrays sized for the most lines the file can hold (pages
    # never written are never resident): no list of pieces joined at the end, no second copy
    if not p.is_file():
        raise _NeedsExact  # a pipe: its size is not known beforehand
    size = p.stat().st_size
    cap = size // (2 * fields) + 2
    values = doc_bytes = doc_off = np.zeros(0)  # allocated at the first block read
    rows = used = 0
    heads: list[pa.Array] = []  # the query id of each run of equal ids, and the run's length
    runs: list[np.ndarray] = []
    tag = ""
    for b in _whole_lines(p):
        counts = _plain(b)
        if counts is None:
            raise _NeedsExact
        try:
            table = pacsv.read_csv(pa.BufferReader(pa.py_buffer(b)), read_options=read, parse_options=parse,
                                   convert_options=convert)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise _NeedsExact from None
        # every line has `fields` fields (pyarrow checked), ends with the one newline pyarrow saw, and holds
        # no other byte below 33
        if counts != (fields * table.num_rows, table.num_rows):
            raise _NeedsExact
        if what == "run" and not tag:
            first_line = b[:MAX_LINE_BYTES + 1]
            tag = first_line[:int(np.argmax(first_line == 10))].tobytes().split(b" ")[5].decode("utf-8")
        if not rows:
            values = np.empty(cap, dtype=np.float64)
            # three words of slack after the bytes: the ranking reads them as aligned 8-byte words
            # without a copy (metrics.ranking._Ids)
            doc_bytes = np.empty(size + 32, dtype=np.uint8)
            doc_off = np.empty(cap + 1, dtype=np.int32 if size < 2**31 else np.int64)
            doc_off[0] = 0
        for batch in table.to_batches():
            k = batch.num_rows
            if not k:
                continue
            if rows + k > cap:
                raise _NeedsExact  # the file grew while it was read
            head, run = _query_runs(batch.column(0))
            heads.append(head)
            runs.append(run)
            v = numbers_of(batch.column(2))
            if (np.isnan(v).any() if what == "run" else not np.isfinite(v).all()):
                raise _NeedsExact
            values[rows:rows + k] = v
            d = batch.column(1)
            off = np.frombuffer(d.buffers()[1], dtype=np.int32)[d.offset:d.offset + k + 1]
            data = np.frombuffer(d.buffers()[2], dtype=np.uint8)[off[0]:off[-1]]
            doc_bytes[used:used + data.size] = data
            np.add(off[1:], used - off[0], out=doc_off[rows + 1:rows + k + 1], casting="unsafe")
            used += data.size
            rows += k
        del table
    if not rows:
        raise _NeedsExact  # no data line: the exact reader says so
    large = doc_off.dtype == np.int64
    doc = pa.Array.from_buffers(pa.large_string() if large else pa.string(), rows,
                                [None, pa.py_buffer(doc_off[:rows + 1]),
                                 pa.py_buffer(doc_bytes[:used // 8 * 8 + 24])])
    # the query ids numbered in order of first appearance (pyarrow's hash table, no Python object a run)
    encoded = pc.dictionary_encode(pa.concat_arrays(heads))
    codes = np.repeat(numbers_of(encoded.indices), np.concatenate(runs))
    return Columns(encoded.dictionary.to_pylist(), codes, doc, values[:rows], str(p), None, tag=tag,
                   from_file=True, qid_array=encoded.dictionary)


def _query_runs(qid: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """The runs of equal query ids of a batch (the usual file has one a query): the id of each run and its
    length. :class:`_NeedsExact` for a comment line (an id starting with ``#``)."""
    k = len(qid)
    if k > 1:
        starts = np.flatnonzero(mask_of(pc.not_equal(qid[1:], qid[:-1])))
        starts += 1
        starts = np.r_[0, starts]
    else:
        starts = np.zeros(k, dtype=np.int64)
    heads = qid.take(row_indices(starts))
    off = np.frombuffer(heads.buffers()[1], dtype=np.int32, count=len(heads) + 1, offset=heads.offset * 4)
    first_bytes = np.frombuffer(heads.buffers()[2], dtype=np.uint8)[off[:-1]]
    if (first_bytes == 35).any():  # "#": a comment line
        raise _NeedsExact
    return heads, np.diff(np.r_[starts, k])


#: Bytes checked at once by :func:`_plain` (its temporaries stay in the processor's cache); a line of
#: MAX_LINE_BYTES + 1 bytes spans at least three whole parts.
_CHECK = MAX_LINE_BYTES // 4


def _plain(b: np.ndarray) -> tuple[int, int] | None:
    """The number of bytes below 33 and of newlines of a block of whole lines when it is plain (no two
    separators in a row nor one at the block's start, ASCII or valid UTF-8, no line longer than
    :data:`MAX_LINE_BYTES`); None when it is not (or may not be).

    With pyarrow's check that every line has the same number ``n`` of space-separated fields, the counts
    tell that no other control byte is there: ``n`` bytes below 33 a line (``n - 1`` spaces, a newline;
    not a tab, a NUL) and one newline a row pyarrow read (a carriage return would end a row too). A line
    longer than the limit spans at least three whole parts of :data:`_CHECK` bytes without a newline;
    three such parts in a row send the block to the exact reader, which measures the line."""
    low_bytes = newlines = 0
    ascii_ = True
    prev = True  # the byte before the block: a line's first byte may not be a separator
    no_newline = 0  # whole parts in a row without a newline
    for a in range(0, b.size, _CHECK):
        part = b[a:a + _CHECK]
        nl = int(np.count_nonzero(part == 10))
        newlines += nl
        no_newline = 0 if nl else no_newline + 1
        if no_newline == 3:
            return None
        low = part <= 32
        if low[0] and prev:
            return None
        prev = bool(low[-1])
        low_bytes += int(np.count_nonzero(low))
        bits = np.packbits(low, bitorder="little")
        bits = np.concatenate((bits, np.zeros(-bits.size % 8, dtype=np.uint8))).view(np.uint64)
        # a separator right after a separator: bit i and bit i + 1, within a word or across two
        if (bits & (bits >> _ONE)).any() or ((bits[:-1] >> _TOP) & bits[1:] & _ONE).any():
            return None
        if ascii_ and int(part.max()) >= 128:
            ascii_ = False
    if not ascii_:  # not ASCII: it must be UTF-8
        try:
            b.tobytes().decode("utf-8")
        except UnicodeDecodeError:
            return None
    return low_bytes, newlines


_ONE, _TOP = np.uint64(1), np.uint64(63)


def _whole_lines(path: Path) -> Iterator[np.ndarray]:
    """The file in blocks of whole lines, each a numpy view of one reused buffer (valid until the next
    block; a block of :data:`_BLOCK` bytes stays in the processor's cache while it is checked and
    parsed). A UTF-8 byte-order mark is skipped; a UTF-16 one, or a line longer than
    :data:`MAX_LINE_BYTES`, is left to the exact reader (:class:`_NeedsExact`)."""
    buf = bytearray(_BLOCK + MAX_LINE_BYTES + 1)
    view = memoryview(buf)
    have = 0
    first = True
    with open(path, "rb") as fh:
        while True:
            got = fh.readinto(view[have:have + _BLOCK])
            if first:
                first = False
                if buf[:3] == codecs.BOM_UTF8:
                    view[:have + got - 3] = view[3:have + got]
                    got -= 3
                elif buf[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
                    raise _NeedsExact
            end = have + got
            if not got:
                if have:  # a last line without a newline
                    buf[have:have + 1] = b"\n"
                    yield np.frombuffer(buf, dtype=np.uint8, count=have + 1)
                return
            cut = buf.rfind(b"\n", 0, end) + 1
            if cut == 0:
                if end > MAX_LINE_BYTES:
                    raise _NeedsExact  # a line longer than the limit: the exact reader says where
                have = end
                continue
            yield np.frombuffer(buf, dtype=np.uint8, count=cut)
            view[:end - cut] = view[cut:end]
            have = end - cut


def _read_columns(path: PathLike, what: str) -> Columns:
    p = _checked_path(path, what)
    if is_pipe(p):  # read once into a file (a pipe nothing writes to is an error, not a hang)
        import dataclasses

        with as_regular_file(p, f"{what} file") as tmp:
            try:
                cols = _read_columns(tmp, what)
            except (OSError, ValueError) as exc:
                raise type(exc)(str(exc).replace(str(tmp), str(p))) from None
        return dataclasses.replace(cols, source=str(p))
    try:
        return _fast_columns(p, what)
    except _NeedsExact:
        return _exact_columns(p, what)


def _exact_columns(p: Path, what: str) -> Columns:
    """The exact reader: numpy on the bytes of each block; every check, every line-numbered message."""
    fields, exact, value_field = (4, True, 3) if what == "qrels" else (6, False, 4)
    value_name = "grade" if what == "qrels" else "score"
    docs, values, lines, seg_qid, seg_len = [], [], [], [], []
    any_skipped = False
    tag = ""
    last_qid: bytes | None = None
    for data, line0 in _blocks(p):
        blk = _Block(data, line0, p, what, fields, exact)
        any_skipped |= blk.skipped_lines
        if not blk.n:
            continue
        qid = blk.strings(0)
        if what == "run" and not tag:
            s0, e0 = blk.field(5)
            tag = data[s0[0]:e0[0]].decode("utf-8")
        docs.append(blk.strings(2))
        v = blk.numbers(value_field, value_name)
        bad = np.flatnonzero(np.isnan(v) if what == "run" else ~np.isfinite(v))
        if bad.size:
            k = int(bad[0])
            s, e = blk.field(value_field)
            raise ValueError(f"{p}:{blk.line_of(k)}: {value_name} {_excerpt(data[s[k]:e[k]])} is "
                             + ("NaN" if what == "run" else "not a finite number"))
        values.append(v)
        lines.append((blk.line0, blk.rows, blk.n))
        # runs of equal query ids (the usual file has one run per query)
        change = np.flatnonzero(qid[1:] != qid[:-1]) + 1
        starts = np.r_[0, change]
        vals = qid[starts].tolist()
        lens = np.diff(np.r_[starts, qid.size]).tolist()
        if last_qid is not None and vals[0] == last_qid:
            seg_len[-1] += lens[0]
            vals, lens = vals[1:], lens[1:]
        seg_qid += vals
        seg_len += lens
        last_qid = seg_qid[-1]
    if not seg_qid:
        raise ValueError(f"{p}: the {what} file holds no " + ("judgement" if what == "qrels" else "result"))
    code: dict[bytes, int] = {}
    seg_code = [code.setdefault(q, len(code)) for q in seg_qid]
    qids = [q.decode("utf-8") for q in code]
    q = np.repeat(np.asarray(seg_code, dtype=np.int32 if len(code) < 2**31 else np.int64), seg_len)
    doc = _concat(docs)
    line = None
    if any_skipped:  # a blank or comment line: keep each row's line number for messages
        line = np.concatenate([line0 + 1 + (np.arange(n) if rows is None else rows)
                               for line0, rows, n in lines])
    return Columns(qids, q, doc, np.concatenate(values), str(p), line, tag=tag, from_file=True)


def _concat(parts: list[np.ndarray]) -> np.ndarray:
    if any(p.dtype.kind == "O" for p in parts):
        return np.concatenate([p.astype(object) for p in parts])
    return np.concatenate(parts)


def read_qrels_columns(path: PathLike) -> Columns:
    """Read a TREC qrels file into :class:`~ragworkbook.metrics.batch.Columns` (grades as float64).

    Query ids are numbered in order of first appearance. Duplicates are found when
    the columns are evaluated (or by :func:`read_qrels`).
    """
    return _read_columns(path, "qrels")


def read_run_columns(path: PathLike) -> Columns:
    """Read a TREC run file into :class:`~ragworkbook.metrics.batch.Columns` (scores as float64).

    Query ids are numbered in order of first appearance; the rows stay in file order.
    """
    return _read_columns(path, "run")


# --------------------------------------------------------------------------- files -> dicts


def _to_dict(cols: Columns, verb: str, integral: bool) -> dict[str, dict[str, int | float]]:
    out: dict[str, dict[str, int | float]] = {qid: {} for qid in cols.qids}
    qids = [cols.qids[i] for i in cols.q.tolist()]
    docs = cols.doc.to_pylist()
    values = cols.value.tolist()
    if integral:
        values = [int(v) if v.is_integer() and abs(v) < 2**53 else v for v in values]
    for row, (qid, doc, v) in enumerate(zip(qids, docs, values, strict=True)):
        inner = out[qid]
        if doc in inner:  # rows are in file order: this is the second occurrence
            raise ValueError(f"{cols.where(row)}: document {doc!r} is {verb} twice for query {qid!r}")
        inner[doc] = v
    return out


def read_qrels(path: PathLike) -> dict[str, dict[str, int | float]]:
    """Read a TREC qrels file into ``{qid: {docid: grade}}``.

    Whole-number grades are ``int``; others are ``float``.
    """
    return _to_dict(read_qrels_columns(path), "judged", integral=True)


def read_run(path: PathLike) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{qid: {docid: score}}`` (the rank column is ignored)."""
    return _to_dict(read_run_columns(path), "retrieved", integral=False)


#: ``{qid: {judgment group: {judgment sub-group: {docno: rel_level}}}}``, as :func:`read_prefs` returns it.
Prefs = dict[str, dict[str, dict[str, dict[str, float]]]]


def read_prefs(path: PathLike, *, qrels_form: bool = False) -> Prefs:
    """Read trec_eval's preference file (``-R prefs``: ``qid jg jsg docno rel_level``, five fields) or a
    qrels file read as preferences (``qrels_form``, ``-R qrels_prefs``: ``qid jg docno rel_level``, the
    judgment group its own single sub-group) -> ``{qid: {jg: {jsg: {docno: rel_level}}}}`` in file order.

    Within a sub-group a document is preferred to every document of a lower level. Blank lines and
    ``#`` lines are skipped. ValueError naming the line for a line with another number of fields, a
    level that is not a finite number, or a document given twice in one sub-group."""
    p = _checked_path(path, "prefs")
    width = 4 if qrels_form else 5
    shape = "qid jg docno rel_level" if qrels_form else "qid jg jsg docno rel_level"
    out: Prefs = {}
    with p.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            if len(fields) != width:
                raise ValueError(f"{p}, line {n}: a {'qrels_prefs' if qrels_form else 'prefs'} line is "
                                 f"'{shape}' ({width} fields); got {line.strip()[:EXCERPT]!r}")
            if qrels_form:
                qid, jg, doc, level = fields
                jsg = jg
            else:
                qid, jg, jsg, doc, level = fields
            try:
                value = float(level)
            except ValueError:
                value = float("nan")
            if not np.isfinite(value):
                raise ValueError(f"{p}, line {n}: the rel_level {level!r} is not a finite number")
            docs = out.setdefault(qid, {}).setdefault(jg, {}).setdefault(jsg, {})
            if doc in docs:
                raise ValueError(f"{p}, line {n}: document {doc!r} appears twice in judgment group {jg!r}"
                                 f"{'' if qrels_form else f', sub-group {jsg!r}'} of query {qid!r}; keep one "
                                 "line")
            docs[doc] = value
    return out


# --------------------------------------------------------------------------- writing


def write_qrels(qrels: Mapping[Hashable, Mapping[Hashable, int | float]], path: PathLike) -> Path:
    """Write ``{qid: {docid: grade}}`` as a TREC qrels file (atomically)."""
    lines = [f"{q} 0 {d} {g}" for q, docs in qrels.items() for d, g in docs.items()]
    return atomic_write_text(path, "\n".join(lines) + "\n")


def write_run(run: Mapping[Hashable, Mapping[Hashable, float]], path: PathLike,
              tag: str = "ragworkbook") -> Path:
    """Write ``{qid: {docid: score}}`` as a TREC run file (atomically), each query's
    documents in rank order (score desc, docid desc — the order trec_eval reads)."""
    lines = []
    for q, docs in run.items():
        ranked = sorted(docs.items(), key=lambda kv: (kv[1], str(kv[0])), reverse=True)
        # repr of a Python float round-trips exactly; numpy scalars are converted first
        # (their repr in numpy >= 2 is "np.float64(0.5)", which is not a number)
        lines += [f"{q} Q0 {d} {i} {float(s)!r} {tag}" for i, (d, s) in enumerate(ranked, start=1)]
    return atomic_write_text(path, "\n".join(lines) + "\n")
