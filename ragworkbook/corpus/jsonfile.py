"""Reading the workbook's JSON and JSON Lines data files with errors that say where.

Shared by the eval-set and corpus loaders (and any other data file): a
malformed line, a missing or mistyped field raises :class:`DatasetError`
(a ``ValueError``) whose message names the file, the line and the field, e.g.
``ragworkbook/data/x.jsonl, line 4: item is missing the field 'question'``. A loader that
checks every record collects its problems and raises them together
(:func:`raise_problems`: up to :data:`MAX_PROBLEMS` listed, the rest counted),
so one run shows everything to fix.

What every reader here accepts and refuses, the same way for every data file:

- a UTF-8 byte-order mark (Excel's "CSV UTF-8", Notepad) is skipped; text that is not UTF-8
  is an error naming the line of the first bad byte (UTF-16 is named as such);
- a pipe (``<(cat f)``, a named FIFO) is read like a file (:func:`ragworkbook._io.read_input`);
- JSON nested deeper than Python's recursion limit (about 1,000 levels), a key repeated in
  one object, and a lone UTF-16 surrogate escape (``"\\ud800"``: half a character, which no
  UTF-8 file can hold) are errors naming the line and the field, never a traceback;
- CSV: a cell of any size (the ``csv`` module's 131,072-character limit is lifted while
  reading; the scorers cap what they score), a header naming a column twice, and a quote
  that is never closed are errors naming the line where the row starts.
"""

from __future__ import annotations

import contextlib
import csv
import gc
import io
import json
import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ragworkbook._io import is_pipe, read_input
from ragworkbook._types import JSON, JSONObject

__all__ = ["DatasetError", "PathLike", "MAX_PROBLEMS", "gc_paused", "location", "decode_bytes", "read_text",
           "iter_text_lines", "element_lines", "decode_json", "parse_json", "parse_jsonl", "iter_jsonl",
           "parse_csv", "require_str", "raise_problems", "read_records"]

PathLike = str | os.PathLike[str]

#: How many problems of one file an error lists (the rest are counted).
MAX_PROBLEMS = 20


class DatasetError(ValueError):
    """A data file is malformed; the message names the file, the line and the field.

    ``problems`` holds every problem found (each a message naming its line and
    field); the message lists up to :data:`MAX_PROBLEMS` of them."""

    def __init__(self, message: str, problems: Sequence[str] | None = None):
        super().__init__(message)
        self.problems: list[str] = list(problems) if problems is not None else [message]


def raise_problems(source: PathLike, problems: Sequence[str], cap: int = MAX_PROBLEMS) -> None:
    """Raise one :class:`DatasetError` for all ``problems`` of ``source`` (nothing when there are none).

    One problem is the message itself; several are listed one a line under
    ``<source>: N problems:``, the first ``cap`` of them, then how many more.
    """
    if not problems:
        return
    if len(problems) == 1:
        raise DatasetError(problems[0], problems)
    shown = list(problems[:cap])
    more = len(problems) - len(shown)
    lines = [f"{source}: {len(problems)} problems:"] + [f"  {p}" for p in shown]
    if more:
        lines.append(f"  ... and {more} more (fix these first)")
    raise DatasetError("\n".join(lines), problems)


def location(path: Path, line: int | None) -> str:
    return f"{path}, line {line}" if line else str(path)


_UTF8_BOM = b"\xef\xbb\xbf"


def decode_bytes(path: Path, data: bytes) -> str:
    """``data`` as text: UTF-8, a leading byte-order mark dropped. DatasetError naming ``path`` and
    the line of the first byte that is not UTF-8 (a UTF-16 file is named as such)."""
    if data.startswith(_UTF8_BOM):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise DatasetError(f"{path}: not UTF-8 text: it is UTF-16 (it starts with the byte-order mark "
                               f"{data[:2].hex(' ').upper()}); save it as UTF-8") from None
        line = data.count(b"\n", 0, exc.start) + 1
        raise DatasetError(f"{path}: not UTF-8 text at line {line} (byte {data[exc.start]:#04x} at offset "
                           f"{exc.start}: {exc.reason}); save the file as UTF-8") from None


def _read_bytes(path: Path) -> bytes:
    try:
        return read_input(path, "file")
    except (FileNotFoundError, IsADirectoryError, TimeoutError):
        raise
    except OSError as exc:
        raise type(exc)(f"{path}: cannot be read ({exc.strerror or exc})") from None


def read_text(path: Path) -> str:
    """The text of ``path`` (:func:`decode_bytes`); an error naming the file when it is missing, a
    folder, unreadable (permissions, I/O), not UTF-8, or a pipe nothing writes to."""
    return decode_bytes(path, _read_bytes(path))


def iter_text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of ``path`` one at a time, without holding the whole file (a
    byte-order mark dropped, line ends kept, errors as :func:`read_text`)."""
    if path.is_dir() or not path.exists() or is_pipe(path):
        source: Iterable[bytes] = io.BytesIO(_read_bytes(path))
    else:
        try:
            source = path.open("rb")
        except OSError as exc:
            raise type(exc)(f"{path}: cannot be read ({exc.strerror or exc})") from None
    with contextlib.closing(source) if hasattr(source, "close") else contextlib.nullcontext():
        for lineno, raw in enumerate(source, start=1):
            if lineno == 1 and raw.startswith(_UTF8_BOM):
                raw = raw[3:]
            elif lineno == 1 and raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
                raise DatasetError(f"{path}: not UTF-8 text: it is UTF-16 (it starts with the byte-order "
                                   f"mark {raw[:2].hex(' ').upper()}); save it as UTF-8")
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DatasetError(f"{path}: not UTF-8 text at line {lineno} (byte {raw[exc.start]:#04x}: "
                                   f"{exc.reason}); save the file as UTF-8") from None


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, JSON]]) -> JSONObject:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return out


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large file becomes many small objects.

    Parsing creates no reference cycles, but every collection walks all the objects made so far,
    so the time per item would grow with the file; with the collector paused it stays flat.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_STRICT = json.JSONDecoder(object_pairs_hook=_no_duplicates)


def element_lines(text: str, key: str) -> list[int]:
    """Line numbers where the elements of the top-level array ``key`` start (best effort).

    One pass over the text: the newlines between consecutive elements are counted once, so the
    cost is linear in the file's length (a line number per element, not a rescan per element).
    """
    m = re.search(r'"' + re.escape(key) + r'"\s*:\s*\[', text)
    if not m:
        return []
    pos = m.end()
    lines: list[int] = []
    line, counted = 1 + text.count("\n", 0, pos), pos
    n = len(text)
    while pos < n:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n or text[pos] == "]":
            break
        line += text.count("\n", counted, pos)
        counted = pos
        lines.append(line)
        try:
            _, pos = _STRICT.raw_decode(text, pos)
        except (json.JSONDecodeError, _DuplicateKey):
            break
    return lines


def _duplicate_line(text: str, key: str) -> int | None:
    """The line of the first top-level array element that holds a repeated key (for the error message)."""
    m = re.search(r"\[", text)
    pos = m.end() if m else 0
    dec = json.JSONDecoder()
    while pos < len(text):
        while pos < len(text) and text[pos] in " \t\r\n,[":
            pos += 1
        if pos >= len(text):
            return None
        try:
            _STRICT.raw_decode(text, pos)
        except _DuplicateKey as exc:
            if exc.key == key:
                inner = re.compile(r'"' + re.escape(key) + r'"\s*:')
                first = inner.search(text, pos)
                second = inner.search(text, first.end()) if first else None
                return 1 + text.count("\n", 0, second.start() if second else pos)
            return None
        except json.JSONDecodeError:
            pass
        try:
            _, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos += 1
    return None


#: A ``\\uD800``-``\\uDFFF`` escape in JSON text: a half of a UTF-16 surrogate pair (a pair is fine).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                               r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_LONE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(obj: JSON) -> str | None:
    """The path (``answer``, ``contexts[1]``, ``items[3].question``) of the first string of ``obj``
    (keys included) that holds a lone surrogate, or None. Iterative: any depth."""
    stack: list[tuple[str, JSON]] = [("", obj)]
    while stack:
        where, x = stack.pop()
        if isinstance(x, str):
            if _LONE.search(x):
                return where or "the value"
        elif isinstance(x, dict):
            for k, v in reversed(list(x.items())):
                if _LONE.search(k):
                    return f"{where}.{k}" if where else k
                stack.append((f"{where}.{k}" if where else k, v))
        elif isinstance(x, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(x))))
    return None


class _Invalid(ValueError):
    """Why a JSON text cannot be used: ``problem`` (a message without the place), ``line`` and
    ``column`` within the text when known."""

    def __init__(self, problem: str, line: int | None = None, column: int | None = None):
        super().__init__(problem)
        self.problem, self.line, self.column = problem, line, column


def _decode(text: str) -> JSON:
    """One JSON document -> its value, or :class:`_Invalid` (invalid JSON, a repeated key, nesting too
    deep, a lone surrogate; the line where it is when it can be told)."""
    try:
        value = _STRICT.decode(text)
    except json.JSONDecodeError as exc:
        raise _Invalid(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except _DuplicateKey as exc:
        raise _Invalid(f"field {exc.key!r} appears twice in one object (JSON would keep the last silently); "
                       "keep one", _duplicate_line(text, exc.key)) from None
    except RecursionError:
        raise _Invalid(f"JSON nested too deeply (over {sys.getrecursionlimit()} levels of arrays and "
                       "objects, more than any record of this package has); is it the right file?") from None
    m = _SURROGATE_ESCAPE.search(text) if ("\\ud" in text or "\\uD" in text) else None
    if m is not None:
        field = _lone_surrogate(value)
        if field is not None:
            raise _Invalid(f"field {field!r} holds a lone surrogate escape {m.group(0)!r} (half of a UTF-16 "
                           "pair: no character, and not writable as UTF-8); the program that wrote the file "
                           "cut a character in two: remove it or write the whole character",
                           1 + text.count("\n", 0, m.start()))
    return value


def decode_json(text: str, where: str) -> JSON:
    """One JSON document (a whole file, or a line of a .jsonl file) -> its value; DatasetError starting
    with ``where`` (and the line within ``text`` when known) for invalid JSON, a repeated key,
    nesting too deep or a lone surrogate."""
    try:
        return _decode(text)
    except _Invalid as exc:
        at = f", line {exc.line}" if exc.line else ""
        at += f", column {exc.column}" if exc.column else ""
        raise DatasetError(f"{where}{at}: {exc.problem}") from None


def parse_json(path: Path, text: str) -> JSON:
    """Parse a whole JSON file; invalid JSON, a repeated key, nesting too deep and a lone surrogate are
    errors naming the line."""
    return decode_json(text, str(path))


def _jsonl_record(path: Path, lineno: int, line: str) -> JSON:
    try:
        return _decode(line)
    except _Invalid as exc:
        if exc.column:  # invalid JSON: the line is the file's; the column is within it
            what = exc.problem.replace(": ", " (", 1)
            raise DatasetError(f"{path}, line {lineno}: {what} at column {exc.column}); a .jsonl file needs "
                               "one complete JSON object per line") from None
        raise DatasetError(f"{path}, line {lineno}: {exc.problem}") from None


def parse_jsonl(path: Path, text: str) -> list[tuple[int, JSON]]:
    """The records of a JSON Lines text -> ``[(line, value), ...]`` (blank lines skipped)."""
    return [(lineno, _jsonl_record(path, lineno, line))
            for lineno, line in enumerate(text.splitlines(), start=1) if line.strip()]


def read_records(path: Path, key: str, what: str, holds: str, *,
                 bare_list: bool = False) -> tuple[JSONObject, list[tuple[int, str, JSON]]]:
    """The records of a JSON Lines file (one a line), or of a JSON object's list ``key`` (with
    ``bare_list``, a top-level array too): ``(the object, or {} for JSON Lines and an array,
    [(line, where, record)])``, ``where`` naming the file, the line and, for JSON, the element
    (``items[3]``). ``what`` names the file's kind ("an eval set") and ``holds`` what ``key`` holds in
    the error when ``key`` is missing."""
    text = read_text(path)
    if path.suffix.lower() == ".jsonl":
        return {}, [(ln, location(path, ln), rec) for ln, rec in parse_jsonl(path, text)]
    obj = parse_json(path, text)
    meta: JSONObject = {}
    if bare_list and isinstance(obj, list):
        raw, lines = obj, element_lines(f'{{"{key}": ' + text, key)
    elif isinstance(obj, dict):
        if key not in obj:
            raise DatasetError(f"{path}: the {what.split(' ', 1)[1]} is missing the field '{key}' ({holds})")
        raw = obj[key]
        if not isinstance(raw, list):
            raise DatasetError(f"{path}: field '{key}' must be a list, got {type(raw).__name__}")
        meta, lines = obj, element_lines(text, key)
    else:
        raise DatasetError(f"{path}: {what} must be a JSON object with '{key}', got {type(obj).__name__}")
    if len(lines) != len(raw):
        lines = [0] * len(raw)
    return meta, [(ln, location(path, ln) + f" ({key}[{i}])", rec)
                  for i, (ln, rec) in enumerate(zip(lines, raw, strict=True))]


def iter_jsonl(path: Path) -> Iterator[tuple[int, JSON]]:
    """The records of a JSON Lines file one at a time (:func:`iter_text_lines`): ``(line, value)``,
    blank lines skipped, errors as :func:`parse_jsonl`."""
    for lineno, line in iter_text_lines(path):
        if line.strip():
            yield lineno, _jsonl_record(path, lineno, line)


_CSV_LIMIT_LOCK = threading.Lock()


@contextlib.contextmanager
def _csv_cells_unbounded() -> Iterator[None]:
    """Lift the csv module's cell-size limit (131,072 characters, process-wide) while reading."""
    with _CSV_LIMIT_LOCK:
        old = csv.field_size_limit()
        csv.field_size_limit(sys.maxsize)
        try:
            yield
        finally:
            csv.field_size_limit(old)


def parse_csv(path: Path, text: str) -> list[tuple[int, dict[str, str]]]:
    """Rows of a CSV file with a header line -> ``[(line where the row starts, {column: cell}), ...]``.

    Cells stay strings (a list field holds a JSON array in its cell). Errors naming the line where
    the row starts: a row with more cells than the header, a quote never closed, a character
    after a closing quote; and line 1 for a header without names or naming a column twice.
    """
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, dict[str, str]]] = []
    start = 1
    with _csv_cells_unbounded():
        try:
            header = next(reader, None)
            if not header or not any(h.strip() for h in header):
                raise DatasetError(f"{path}: the CSV file has no header line (the first line names the "
                                   "columns)")
            seen: set[str] = set()
            for name in header:
                if name in seen:
                    raise DatasetError(f"{path}, line 1: the header names the column {name!r} twice (only "
                                       "one of the two columns could be read); rename or remove one")
                seen.add(name)
            start = reader.line_num + 1
            for cells in reader:
                if len(cells) > len(header):
                    raise DatasetError(f"{path}, line {start}: more cells than the header has columns "
                                       f"({len(header)}); quote cells that contain commas")
                if any(c.strip() for c in cells):
                    row = dict(zip(header, cells, strict=False))
                    for name in header[len(cells):]:
                        row[name] = ""
                    rows.append((start, row))
                start = reader.line_num + 1
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                raise DatasetError(f"{path}, line {start}: a quoted cell of the row starting here is never "
                                   "closed (a '\"' without its closing quote: the rest of the file was read "
                                   "into it); close the quote, or double a quote inside a cell "
                                   "(\"\")") from None
            raise DatasetError(f"{path}, line {start}: malformed CSV ({exc}); a quoted cell must be followed "
                               "by a comma or the end of the line") from None
    return rows


def require_str(rec: JSONObject, key: str, where: str, what: str, allow_empty: bool = False) -> str:
    if key not in rec:
        raise DatasetError(f"{where}: {what} is missing the field {key!r}")
    val = rec[key]
    if not isinstance(val, str):
        raise DatasetError(f"{where}: field {key!r} must be a string, got {type(val).__name__}")
    if not allow_empty and not val.strip():
        raise DatasetError(f"{where}: field {key!r} is empty")
    return val
