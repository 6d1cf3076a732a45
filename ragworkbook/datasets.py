"""Loading and validating the workbook's data files: eval sets and corpora.

Two formats are accepted for each, chosen by the file suffix:

- ``.json``: one object. An eval set is ``{"name", "description", "source",
  "items": [{"id", "question", "keyword", "reference"}, ...]}`` (only
  ``items`` is required); a corpus is ``{"title", "source", "licence",
  "pages": [{"page": 1, "text": "..."}, ...]}`` (only ``pages`` is required).
- ``.jsonl``: one item (eval set) or one page (corpus) per line; blank lines
  are skipped.

Validation is strict and the errors are specific: a malformed line, a missing
or mistyped field, a duplicate id or page number raises :class:`DatasetError`
(a ``ValueError``) whose message names the file, the line and the field, e.g.
``data/x.jsonl, line 4: item is missing the field 'keyword'``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DatasetError",
    "EvalItem",
    "EvalSet",
    "Page",
    "Corpus",
    "load_eval_set",
    "load_corpus",
    "eval_set_from_records",
    "corpus_from_pages",
    "DEFAULT_CORPUS",
    "DEFAULT_EVAL_SET",
]

DEFAULT_EVAL_SET = "eval_set.json"
DEFAULT_CORPUS = "attention_notes.json"

PathLike = str | os.PathLike[str]


class DatasetError(ValueError):
    """A data file is malformed; the message names the file, the line and the field."""


@dataclass(frozen=True)
class EvalItem:
    """One evaluation question: ``keyword`` marks where the answer is stated."""

    id: str
    question: str
    keyword: str
    reference: str


@dataclass(frozen=True)
class EvalSet:
    """An ordered list of :class:`EvalItem` with unique ids (iterable, has ``len``)."""

    items: list[EvalItem]
    name: str = ""
    description: str = ""
    source: str = ""

    def __iter__(self) -> Iterator[EvalItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, key: int | str) -> EvalItem:
        """Item by position (int) or by id (str)."""
        if isinstance(key, str):
            for it in self.items:
                if it.id == key:
                    return it
            raise KeyError(f"no eval item with id {key!r}; ids are {self.ids}")
        return self.items[key]

    @property
    def ids(self) -> list[str]:
        """The item ids, in order."""
        return [it.id for it in self.items]

    @property
    def questions(self) -> list[str]:
        """The questions, in order."""
        return [it.question for it in self.items]


@dataclass(frozen=True)
class Page:
    """One page of a document: its 1-based number and its text."""

    page: int
    text: str


@dataclass(frozen=True)
class Corpus:
    """A titled document split into pages (page numbers unique, in file order)."""

    title: str
    pages: list[Page]
    source: str = ""
    licence: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Page]:
        return iter(self.pages)

    def __len__(self) -> int:
        return len(self.pages)

    def page(self, number: int) -> Page:
        """The page with this page number."""
        for p in self.pages:
            if p.page == number:
                return p
        raise KeyError(f"no page {number}; pages are {[p.page for p in self.pages]}")

    @property
    def n_chars(self) -> int:
        """Total number of characters over all pages."""
        return sum(len(p.text) for p in self.pages)


# --------------------------------------------------------------------------- helpers


def _where(path: Path, line: int | None) -> str:
    return f"{path}, line {line}" if line else str(path)


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc})") from None


def _element_lines(text: str, key: str) -> list[int]:
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


def _parse_json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"{path}, line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}"
        ) from None


def _parse_jsonl(path: Path, text: str) -> list[tuple[int, Any]]:
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


def _require_str(rec: dict[str, Any], key: str, where: str, what: str, allow_empty: bool = False) -> str:
    if key not in rec:
        raise DatasetError(f"{where}: {what} is missing the field {key!r}")
    val = rec[key]
    if not isinstance(val, str):
        raise DatasetError(f"{where}: field {key!r} must be a string, got {type(val).__name__}")
    if not allow_empty and not val.strip():
        raise DatasetError(f"{where}: field {key!r} is empty")
    return val


# --------------------------------------------------------------------------- eval sets


def _item_from_record(rec: Any, where: str) -> EvalItem:
    if not isinstance(rec, dict):
        raise DatasetError(f"{where}: an eval item must be a JSON object, got {type(rec).__name__}")
    rid = rec.get("id")
    if isinstance(rid, int) and not isinstance(rid, bool):
        rec = {**rec, "id": str(rid)}
    return EvalItem(
        id=_require_str(rec, "id", where, "item"),
        question=_require_str(rec, "question", where, "item"),
        keyword=_require_str(rec, "keyword", where, "item"),
        reference=_require_str(rec, "reference", where, "item"),
    )


def eval_set_from_records(
    records: Iterable[dict[str, Any]], *, name: str = "", source: str = "<memory>", description: str = ""
) -> EvalSet:
    """Build a validated :class:`EvalSet` from dicts with id, question, keyword and reference."""
    items: list[EvalItem] = []
    seen: set[str] = set()
    for i, rec in enumerate(records):
        item = _item_from_record(rec, f"{source}, items[{i}]")
        if item.id in seen:
            raise DatasetError(f"{source}, items[{i}]: duplicate id {item.id!r} (ids must be unique)")
        seen.add(item.id)
        items.append(item)
    if not items:
        raise DatasetError(f"{source}: the eval set has no items")
    return EvalSet(items=items, name=name, description=description)


def load_eval_set(path: PathLike | None = None) -> EvalSet:
    """Load and validate an eval set (``.json`` or ``.jsonl``); default ``data/eval_set.json``.

    Every item needs non-empty string fields ``id`` (an int id is accepted and
    turned into a string), ``question``, ``keyword`` and ``reference``; ids are
    unique; the set is not empty. Errors name the file, line and field.
    """
    if path is None:
        from ragworkbook.paths import data_path

        path = data_path(DEFAULT_EVAL_SET)
    path = Path(path)
    text = _read_text(path)
    meta: dict[str, Any] = {}
    if path.suffix.lower() == ".jsonl":
        records = _parse_jsonl(path, text)
    else:
        obj = _parse_json(path, text)
        if isinstance(obj, list):
            raw_items = obj
            lines = _element_lines('{"items": ' + text, "items")
        elif isinstance(obj, dict):
            if "items" not in obj:
                raise DatasetError(f"{path}: the eval set is missing the field 'items' (a list of questions)")
            raw_items = obj["items"]
            if not isinstance(raw_items, list):
                raise DatasetError(f"{path}: field 'items' must be a list, got {type(raw_items).__name__}")
            meta = obj
            lines = _element_lines(text, "items")
        else:
            raise DatasetError(
                f"{path}: an eval set must be a JSON object with 'items', got {type(obj).__name__}"
            )
        if len(lines) != len(raw_items):
            lines = [0] * len(raw_items)
        records = list(zip(lines, raw_items, strict=True))
    items: list[EvalItem] = []
    seen: dict[str, int] = {}
    for i, (lineno, rec) in enumerate(records):
        where = _where(path, lineno) + ("" if path.suffix.lower() == ".jsonl" else f" (items[{i}])")
        item = _item_from_record(rec, where)
        if item.id in seen:
            raise DatasetError(
                f"{where}: field 'id': duplicate id {item.id!r} (first seen at item {seen[item.id]})"
            )
        seen[item.id] = i
        items.append(item)
    if not items:
        raise DatasetError(f"{path}: the eval set has no items")
    return EvalSet(
        items=items,
        name=str(meta.get("name", path.stem)),
        description=str(meta.get("description", "")),
        source=str(meta.get("source", "")),
    )


# --------------------------------------------------------------------------- corpora


def _page_from_record(rec: Any, where: str) -> Page:
    if not isinstance(rec, dict):
        raise DatasetError(f"{where}: a page must be a JSON object, got {type(rec).__name__}")
    if "page" not in rec:
        raise DatasetError(f"{where}: page is missing the field 'page' (its 1-based number)")
    num = rec["page"]
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise DatasetError(f"{where}: field 'page' must be a positive integer, got {num!r}")
    text = _require_str(rec, "text", where, "page", allow_empty=True)
    return Page(page=num, text=text)


def corpus_from_pages(
    pages: Iterable[Page | str | tuple[int, str] | dict[str, Any]], title: str = "", source: str = "<memory>"
) -> Corpus:
    """Build a validated :class:`Corpus` from pages.

    Each page may be a :class:`Page`, a ``(page, text)`` pair, a dict with
    ``page`` and ``text``, or a plain string (numbered 1, 2, ... by position).
    """
    out: list[Page] = []
    for i, p in enumerate(pages):
        where = f"{source}, pages[{i}]"
        if isinstance(p, Page):
            out.append(_page_from_record({"page": p.page, "text": p.text}, where))
        elif isinstance(p, str):
            out.append(Page(page=i + 1, text=p))
        elif isinstance(p, tuple) and len(p) == 2:
            out.append(_page_from_record({"page": p[0], "text": p[1]}, where))
        else:
            out.append(_page_from_record(p, where))
    _check_unique_pages(out, source, [0] * len(out))
    return Corpus(title=title, pages=out)


def _check_unique_pages(pages: list[Page], where: str, lines: list[int]) -> None:
    seen: set[int] = set()
    for p, ln in zip(pages, lines, strict=True):
        if p.page in seen:
            loc = f"{where}, line {ln}" if ln else where
            raise DatasetError(f"{loc}: field 'page': duplicate page number {p.page}")
        seen.add(p.page)


def load_corpus(path: PathLike | None = None) -> Corpus:
    """Load and validate a paged corpus (``.json`` or ``.jsonl``); default ``data/attention_notes.json``.

    Every page needs ``page`` (a positive int, unique) and ``text`` (a string,
    may be empty, as for a PDF page with no extractable text). In ``.jsonl``
    each line is one page and the title is the file name. Errors name the
    file, line and field.
    """
    if path is None:
        from ragworkbook.paths import data_path

        path = data_path(DEFAULT_CORPUS)
    path = Path(path)
    text = _read_text(path)
    if path.suffix.lower() == ".jsonl":
        records = _parse_jsonl(path, text)
        meta: dict[str, Any] = {"title": path.stem}
        suffix = False
    else:
        obj = _parse_json(path, text)
        if not isinstance(obj, dict):
            raise DatasetError(
                f"{path}: a corpus must be a JSON object with 'pages', got {type(obj).__name__}"
            )
        if "pages" not in obj:
            raise DatasetError(
                f"{path}: the corpus is missing the field 'pages' (a list of "
                '{"page": n, "text": ...} objects)'
            )
        raw = obj["pages"]
        if not isinstance(raw, list):
            raise DatasetError(f"{path}: field 'pages' must be a list, got {type(raw).__name__}")
        lines = _element_lines(text, "pages")
        if len(lines) != len(raw):
            lines = [0] * len(raw)
        records = list(zip(lines, raw, strict=True))
        meta = obj
        suffix = True
    pages: list[Page] = []
    for i, (lineno, rec) in enumerate(records):
        where = _where(path, lineno) + (f" (pages[{i}])" if suffix else "")
        pages.append(_page_from_record(rec, where))
    if not pages:
        raise DatasetError(f"{path}: the corpus has no pages")
    _check_unique_pages(pages, str(path), [ln for ln, _ in records])
    extra = {k: v for k, v in meta.items() if k not in {"title", "source", "licence", "pages"}}
    return Corpus(
        title=str(meta.get("title", path.stem)),
        pages=pages,
        source=str(meta.get("source", "")),
        licence=str(meta.get("licence", "")),
        meta=extra,
    )
