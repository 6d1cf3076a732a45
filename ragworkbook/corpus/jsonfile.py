"""Reading the workbook's JSON and JSON Lines data files with errors that say where.

Shared by the eval-set and corpus loaders (and any other data file): a
malformed line, a missing or mistyped field raises :class:`DatasetError`
(a ``ValueError``) whose message names the file, the line and the field, e.g.
``ragworkbook/data/x.jsonl, line 4: item is missing the field 'question'``. A loader that
checks every record collects its problems and raises them together
(:func:`raise_problems`: up to :data:`MAX_PROBLEMS` listed, the rest counted),
so one run shows everything to fix.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DatasetError", "PathLike", "MAX_PROBLEMS", "gc_paused", "location", "read_text", "element_lines",
           "parse_json", "parse_jsonl", "parse_csv", "require_str", "raise_problems"]

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


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path``; an error naming the file when it is missing, a folder, unreadable
    (permissions, I/O) or not UTF-8."""
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a folder, not a file")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc})") from None
    except OSError as exc:
        raise type(exc)(f"{path}: cannot be read ({exc.strerror or exc})") from None


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
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


def parse_json(path: Path, text: str) -> Any:
    """Parse a whole JSON file; invalid JSON and an object with a repeated key are errors naming the line."""
    try:
        return _STRICT.decode(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"{path}, line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}"
        ) from None
    except _DuplicateKey as exc:
        line = _duplicate_line(text, exc.key)
        where = f"{path}, line {line}" if line else str(path)
        raise DatasetError(f"{where}: field {exc.key!r} appears twice in one object (JSON would keep the "
                           "last silently); keep one") from None


def parse_jsonl(path: Path, text: str) -> list[tuple[int, Any]]:
    records: list[tuple[int, Any]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((lineno, _STRICT.decode(line)))
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{path}, line {lineno}: invalid JSON ({exc.msg} at column {exc.colno}); "
                "a .jsonl file needs one complete JSON object per line"
            ) from None
        except _DuplicateKey as exc:
            raise DatasetError(f"{path}, line {lineno}: field {exc.key!r} appears twice in one object "
                               "(JSON would keep the last silently); keep one") from None
    return records


def parse_csv(path: Path, text: str) -> list[tuple[int, dict[str, str]]]:
    """Rows of a CSV file with a header line -> ``[(line where the row starts, {column: cell}), ...]``.

    Cells stay strings (a list field holds a JSON array in its cell); a row
    with more cells than the header is an error naming its line.
    """
    import csv
    import io

    reader = csv.DictReader(io.StringIO(text, newline=""), restkey="\x00extra")
    if not reader.fieldnames:
        raise DatasetError(f"{path}: the CSV file has no header line (the first line names the columns)")
    rows: list[tuple[int, dict[str, str]]] = []
    start = 2
    try:
        for row in reader:
            if "\x00extra" in row:
                raise DatasetError(f"{path}, line {start}: more cells than the header has columns "
                                   f"({len(reader.fieldnames)}); quote cells that contain commas")
            if any((v or "").strip() for v in row.values()):
                rows.append((start, {k: (v if v is not None else "") for k, v in row.items()}))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise DatasetError(f"{path}, line {reader.line_num}: malformed CSV ({exc})") from None
    return rows


def require_str(rec: dict[str, Any], key: str, where: str, what: str, allow_empty: bool = False) -> str:
    if key not in rec:
        raise DatasetError(f"{where}: {what} is missing the field {key!r}")
    val = rec[key]
    if not isinstance(val, str):
        raise DatasetError(f"{where}: field {key!r} must be a string, got {type(val).__name__}")
    if not allow_empty and not val.strip():
        raise DatasetError(f"{where}: field {key!r} is empty")
    return val
