"""Paged corpora: a document as numbered pages of text.

Two formats, chosen by the file suffix:

- ``.json``: one object ``{"title", "source", "licence", "pages": [{"page": 1,
  "text": "..."}, ...]}`` (only ``pages`` is required);
- ``.jsonl``: one page per line; the title is the file name.

Errors name the file, the line and the field
(:class:`~ragworkbook.corpus.jsonfile.DatasetError`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragworkbook.corpus.jsonfile import (
    DatasetError,
    PathLike,
    element_lines,
    gc_paused,
    location,
    parse_json,
    parse_jsonl,
    read_text,
    require_str,
)

__all__ = ["DEFAULT_CORPUS", "Page", "Corpus", "load_corpus", "corpus_from_pages"]

DEFAULT_CORPUS = "attention_notes.json"


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


def _page_from_record(rec: Any, where: str) -> Page:
    if not isinstance(rec, dict):
        raise DatasetError(f"{where}: a page must be a JSON object, got {type(rec).__name__}")
    if "page" not in rec:
        raise DatasetError(f"{where}: page is missing the field 'page' (its 1-based number)")
    num = rec["page"]
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise DatasetError(f"{where}: field 'page' must be a positive integer, got {num!r}")
    text = require_str(rec, "text", where, "page", allow_empty=True)
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
    with gc_paused():
        return _load_corpus(path)


def _load_corpus(path: Path) -> Corpus:
    text = read_text(path)
    if path.suffix.lower() == ".jsonl":
        records = parse_jsonl(path, text)
        meta: dict[str, Any] = {"title": path.stem}
        suffix = False
    else:
        obj = parse_json(path, text)
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
        lines = element_lines(text, "pages")
        if len(lines) != len(raw):
            lines = [0] * len(raw)
        records = list(zip(lines, raw, strict=True))
        meta = obj
        suffix = True
    pages: list[Page] = []
    for i, (lineno, rec) in enumerate(records):
        where = location(path, lineno) + (f" (pages[{i}])" if suffix else "")
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
