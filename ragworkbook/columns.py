"""Qrels and runs as columns: the container a TREC file is read into and the ranking engine reads.

One row per judgement (qrels) or per retrieved document (run): the row's query
as an index into the distinct query ids, its document id, its grade or score.
Document ids are a pyarrow string array (Arrow's offsets and bytes: ten million
ids without a Python object each); grades and scores float64. Built by
:func:`ragworkbook.corpus.trec.read_qrels_columns` / ``read_run_columns`` from a
file, or by :meth:`Columns.from_dict` from the ``{qid: {doc: value}}`` dicts of
pytrec_eval and ranx.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import pyarrow as pa

__all__ = ["Columns", "as_id_array", "row_indices", "numbers_of", "mask_of", "string_array",
           "found_or", "one_chunk"]

#: The pyarrow types a document-id column may have.
_STRING_TYPES = (pa.string(), pa.large_string())


def as_id_array(ids: pa.Array | pa.ChunkedArray | np.ndarray | Sequence[str | bytes],
                ) -> pa.Array | pa.ChunkedArray:
    """Document ids as a pyarrow string array: a pyarrow (chunked) array of strings or binary, a numpy
    ``S``/``U``/object array or a sequence of ``str``/``bytes``. Bytes must be UTF-8 (ValueError)."""
    if isinstance(ids, (pa.Array, pa.ChunkedArray)):
        arr = ids
    else:
        a = np.asarray(ids) if not isinstance(ids, np.ndarray) else ids
        if a.dtype.kind == "O":
            a = [x if isinstance(x, (bytes, str)) else str(x) for x in a.tolist()]
            arr = pa.array(a, type=pa.binary() if a and isinstance(a[0], bytes) else pa.string())
        elif a.dtype.kind in "SU":
            arr = pa.array(a)
        else:
            arr = pa.array([str(x) for x in a.tolist()], type=pa.string())
    if arr.type in _STRING_TYPES:
        return arr
    try:
        return arr.cast(pa.large_string() if arr.type == pa.large_binary() else pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        raise ValueError("document ids must be UTF-8 text") from None


def row_indices(rows: np.ndarray) -> pa.Array:
    """Row numbers as a pyarrow int64 array for ``take``, without a copy when they are int64 already.

    Built from the numpy buffer: ``pa.array`` would import pandas (about half a second) to ask whether
    its argument is a pandas object."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), rows.size, [None, pa.py_buffer(rows)])


def string_array(strings: Sequence[str]) -> pa.Array:
    """Python strings as a pyarrow (large) string array, built from their UTF-8 bytes (``pa.array`` would
    import pandas)."""
    data = [x.encode("utf-8") for x in strings]
    off = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=len(data)), out=off[1:])
    return pa.Array.from_buffers(pa.large_string(), len(data),
                                 [None, pa.py_buffer(off), pa.py_buffer(b"".join(data))])


def one_chunk(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A pyarrow array as one contiguous array (a chunked one combined, unless it has a single chunk)."""
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def _values(arr: pa.Array) -> np.ndarray:
    """The value buffer of a fixed-width array as a numpy view (nulls' slots hold whatever is there)."""
    dtype = np.dtype(arr.type.to_pandas_dtype())
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)


def _bits(arr: pa.Array, buffer: int) -> np.ndarray:
    """A bitmap buffer of ``arr`` (0: validity, 1: a boolean array's values) as numpy bools."""
    bits = np.frombuffer(arr.buffers()[buffer], dtype=np.uint8)
    return np.unpackbits(bits, count=arr.offset + len(arr), bitorder="little")[arr.offset:].view(bool)


def numbers_of(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A pyarrow array of fixed-width numbers without nulls as a numpy view of its buffer (no copy for
    one chunk). ``to_numpy`` would import pandas, as ``pa.array`` does."""
    arr = one_chunk(arr)
    if arr.null_count:
        raise ValueError("numbers_of: the array has nulls")
    return _values(arr)


def found_or(arr: pa.Array | pa.ChunkedArray, missing: np.ndarray | int) -> np.ndarray:
    """The int64 values of an integer array (``pc.index_in``'s answer), ``missing`` where it is null
    (``pc.fill_null`` would make a pyarrow scalar, which imports pandas)."""
    arr = one_chunk(arr)
    values = _values(arr).astype(np.int64)
    return np.where(_bits(arr, 0), values, missing) if arr.null_count else values


def mask_of(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A pyarrow boolean array without nulls as a numpy bool array (its bits unpacked)."""
    arr = one_chunk(arr)
    if arr.null_count:
        raise ValueError("mask_of: the array has nulls")
    return _bits(arr, 1)


@dataclass(frozen=True, eq=False)
class Columns:
    """Qrels or a run as columns: one row per judgement or retrieved document.

    ``qids`` are the distinct query ids (strings) and ``q`` gives each row's index
    into them; ``doc`` each row's document id (a pyarrow string array, possibly
    chunked); ``value`` each row's grade (qrels) or score (run) as float64.
    ``source`` names the file and ``line`` gives each row's line in it (``None``:
    row i is line i + 1), so that an error can say where the offending row is.
    ``tag``: the run's name (the sixth field of a run file's first line, trec_eval's
    ``runid``). ``from_file``: ``source`` is a file's path (messages then say ``file:line``).
    ``qid_array``: ``qids`` as a pyarrow string array when the maker has it so (the TREC reader);
    :attr:`qids_arrow` makes it from ``qids`` otherwise.
    """

    qids: Sequence[str]
    q: np.ndarray
    doc: pa.Array | pa.ChunkedArray
    value: np.ndarray
    source: str = ""
    line: np.ndarray | None = None
    tag: str = ""
    from_file: bool = False
    qid_array: pa.Array | None = None

    def __post_init__(self) -> None:
        if self.qid_array is not None and len(self.qid_array) != len(self.qids):
            raise ValueError(f"qid_array holds {len(self.qid_array)} ids, qids {len(self.qids)}")
        object.__setattr__(self, "doc", as_id_array(self.doc))
        object.__setattr__(self, "q", np.asarray(self.q))
        object.__setattr__(self, "value", np.asarray(self.value, dtype=np.float64))
        n = len(self.q)
        if len(self.doc) != n or len(self.value) != n:
            raise ValueError(f"columns of different lengths: q {n}, doc {len(self.doc)}, "
                             f"value {len(self.value)}")
        if n and (int(self.q.min()) < 0 or int(self.q.max()) >= len(self.qids)):
            raise ValueError("q must index into qids")

    @property
    def qids_arrow(self) -> pa.Array:
        """The distinct query ids as a pyarrow string array (``qid_array``, or made from ``qids``)."""
        return self.qid_array if self.qid_array is not None else string_array(self.qids)

    def __len__(self) -> int:
        return len(self.q)

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Mapping[str, float]], source: str = "",
                  what: str = "value") -> Columns:
        """``{qid: {doc: value}}`` as columns (ids turned into strings; every value must be a number:
        ValueError naming the query and document otherwise)."""
        if not isinstance(mapping, Mapping):
            raise TypeError(f"{source or 'columns'} must be a mapping {{qid: {{doc: {what}}}}}")
        qids = [str(q) for q in mapping]
        inner = [_as_dict(docs, source or "columns", q, what) for q, docs in mapping.items()]
        lengths = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
        docs = [str(d) for d in chain.from_iterable(inner)]
        try:
            value = np.fromiter(chain.from_iterable(map(dict.values, inner)), dtype=float,
                                count=int(lengths.sum()))
        except (TypeError, ValueError):
            value = None
        if value is None or (bool(np.isnan(value).any()) and what == "score"):
            for qid, d in zip(mapping, inner, strict=True):
                _check_numbers(source or "columns", qid, d, what)
        return cls(qids, np.repeat(np.arange(len(qids), dtype=np.int64), lengths),
                   pa.array(docs, type=pa.string()), value, source)

    def where(self, row: int) -> str:
        """Where row ``row`` comes from: ``file:line`` when the source is a file, else its query and doc."""
        if self.from_file:
            line = int(self.line[row]) if self.line is not None else row + 1
            return f"{self.source}:{line}"
        prefix = f"{self.source}: " if self.source else ""
        return f"{prefix}query {self.qids[int(self.q[row])]!r}, document {self.doc_at(row)!r}"

    def problem(self, row: int, what: str, value: object, problem: str) -> str:
        """A message about row ``row``'s ``what`` (``"grade"``): ``file:line: grade 1e400 is not a
        finite number``, or ``qrels: grade inf of query 'q', document 'a' is not a finite number``."""
        if self.from_file:
            return f"{self.where(row)}: {what} {value} {problem}"
        prefix = f"{self.source}: " if self.source else ""
        return (f"{prefix}{what} {value} of query {self.qids[int(self.q[row])]!r}, document "
                f"{self.doc_at(row)!r} {problem}")

    def doc_at(self, row: int) -> str:
        """The document id of row ``row``."""
        return self.doc[int(row)].as_py()


def _as_dict(docs: object, what: str, qid: object, value: str) -> dict[object, object]:
    if type(docs) is dict:
        return docs
    if isinstance(docs, Mapping):
        return dict(docs)
    raise TypeError(f"{what}[{qid!r}] must be a mapping {{doc: {value}}}, got {type(docs).__name__}")


def _check_numbers(what: str, qid: object, docs: Mapping[object, object], value: str) -> None:
    for doc, s in docs.items():
        if not isinstance(s, (int, float, np.floating, np.integer)) or isinstance(s, bool):
            raise ValueError(f"{what}: {value} of query {qid!r}, document {doc!r} must be a number, "
                             f"got {s!r}")
        if np.isnan(s):
            raise ValueError(f"{what}: {value} of query {qid!r}, document {doc!r} is NaN")
