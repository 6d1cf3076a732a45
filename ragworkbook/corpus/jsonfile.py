"""Reading the workbook's JSON and JSON Lines data files with errors that say where.

Shared by the eval-set and corpus loaders (and any other data file): a
malformed line, a missing or mistyped field raises :class:`DatasetError`
(a ``ValueError``) whose message names the file, the line and the field, e.g.
``data/x.jsonl, line 4: item is missing the field 'keyword'``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

__all__ = ["DatasetError", "PathLike", "location", "read_text", "element_lines", "parse_json", "parse_jsonl",
           "require_str"]

PathLike = str | os.PathLike[str]


class DatasetError(ValueError):
    """A data file is malformed; the message names the file, the line and the field."""


def location(path: Path, line: int | None) -> str:
    return f"{path}, line {line}" if line else str(path)


def read_text(path: Path) -> str:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc})") from None


def element_lines(text: str, key: str) -> list[int]:
    """Line numbers where the elements of the top-level array ``key`` start (best effort)."""
    m = re.search(r'"' + re.escape(key) + r'"\s*:\s*\[', text)
    if not m:
        return []
    dec = json.JSONDecoder()
    pos = m.end()
    lines: list[int] = []
    n = len(text)
    while pos < n:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n or text[pos] == "]":
            break
        lines.append(text.count("\n", 0, pos) + 1)
        try:
            _, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
    return lines


def parse_json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"{path}, line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}"
        ) from None


def parse_jsonl(path: Path, text: str) -> list[tuple[int, Any]]:
    records: list[tuple[int, Any]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((lineno, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{path}, line {lineno}: invalid JSON ({exc.msg} at column {exc.colno}); "
                "a .jsonl file needs one complete JSON object per line"
            ) from None
    return records


def require_str(rec: dict[str, Any], key: str, where: str, what: str, allow_empty: bool = False) -> str:
    if key not in rec:
        raise DatasetError(f"{where}: {what} is missing the field {key!r}")
    val = rec[key]
    if not isinstance(val, str):
        raise DatasetError(f"{where}: field {key!r} must be a string, got {type(val).__name__}")
    if not allow_empty and not val.strip():
        raise DatasetError(f"{where}: field {key!r} is empty")
    return val
