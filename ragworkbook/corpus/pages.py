"""Paged corpora: a document as numbered pages of text.

:func:`load_corpus` reads any of these, deciding by what the path is:

- ``.json``: one object ``{"title", "source", "licence", "pages": [{"page": 1,
  "text": "..."}, ...]}`` (only ``pages`` is required);
- ``.jsonl``: one page per line; the title is the file name;
- a PDF (a file starting with ``%PDF-``, whatever its name): one page per PDF
  page, text extracted by pypdf (:func:`ragworkbook.corpus.pdf.load_pdf_corpus`);
- a text file (``.txt``, ``.md``): UTF-8; form feeds (``\f``, as ``pdftotext``
  writes between pages) separate pages, else the file is one page;
- a folder: every PDF and text file in it and its sub-folders (hidden ones
  skipped), in sorted path order, their pages numbered on from one file to the
  next; ``Corpus.meta["files"]`` says which pages came from which file.

:class:`Page` and :class:`Corpus` are defined in :mod:`ragworkbook.corpus.document` (and
importable from here).

Errors name the path, and for JSON the line and the field
(:class:`~ragworkbook.corpus.jsonfile.DatasetError`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ragworkbook._io import is_pipe, read_input
from ragworkbook._types import JSON, JSONObject
from ragworkbook.corpus.document import Corpus, Page
from ragworkbook.corpus.jsonfile import (
    DatasetError,
    PathLike,
    gc_paused,
    read_records,
    read_text,
    require_str,
)
from ragworkbook.corpus.pdf import load_pdf_corpus, load_pdf_pages
from ragworkbook.paths import data_path

__all__ = ["DEFAULT_CORPUS", "TEXT_SUFFIXES", "Page", "Corpus", "load_corpus", "load_text_corpus",
           "load_folder_corpus", "corpus_kind", "corpus_from_pages"]

DEFAULT_CORPUS = "attention_notes.json"
#: Suffixes read as plain-text corpora.
TEXT_SUFFIXES = (".txt", ".md")


def _page_from_record(rec: JSON, where: str) -> Page:
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
    pages: Iterable[Page | str | tuple[int, str] | JSONObject], title: str = "", source: str = "<memory>"
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


def corpus_kind(path: PathLike) -> str:
    """What :func:`load_corpus` reads ``path`` as: ``"folder"``, ``"pdf"`` (by its first bytes),
    ``"json"`` (``.json``/``.jsonl``), ``"text"`` (``.txt``/``.md``); ValueError naming the path
    for anything else, FileNotFoundError when there is nothing there."""
    path = Path(path)
    if path.is_dir():
        return "folder"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file or folder (a corpus is a .json/.jsonl paged corpus, "
                                "a PDF, a .txt/.md file, or a folder of PDFs and text files)")
    with path.open("rb") as fh:
        if fh.read(5) == b"%PDF-":
            return "pdf"
    suffix = path.suffix.lower()
    if suffix in (".json", ".jsonl"):
        return "json"
    if suffix in TEXT_SUFFIXES:
        return "text"
    if suffix == ".pdf":
        raise DatasetError(f"{path}: named .pdf but does not start with %PDF-: not a PDF file")
    raise DatasetError(f"{path}: cannot read {path.suffix or 'a file without suffix'!r} as a corpus; give "
                       "a .json/.jsonl paged corpus, a PDF, a .txt/.md file, or a folder of PDFs and text "
                       "files")


def load_corpus(path: PathLike | None = None) -> Corpus:
    """Load a corpus from a paged JSON/JSONL file, a PDF, a text file or a folder of PDFs and text
    files (see the module docstring); default ``ragworkbook/data/attention_notes.json``.

    Errors name the path (and for JSON the line and the field).
    """
    if path is None:
        path = data_path(DEFAULT_CORPUS)
    path = Path(path)
    if is_pipe(path):
        return _load_piped_corpus(path)
    kind = corpus_kind(path)
    if kind == "folder":
        return load_folder_corpus(path)
    if kind == "pdf":
        return load_pdf_corpus(path)
    if kind == "text":
        return load_text_corpus(path)
    return _load_json_corpus(path)


def _piped_suffix(data: bytes) -> str:
    """The file kind of a corpus read from a pipe, by its first bytes: a PDF, a paged JSON corpus (JSON
    Lines when its first line is a page object and more lines follow), else text."""
    if data[:5] == b"%PDF-":
        return ".pdf"
    body = data.lstrip()
    if body[:1] == b"[":
        return ".json"
    if body[:1] == b"{":
        first, _, rest = body.partition(b"\n")
        try:
            obj = json.loads(first)
        except ValueError:
            return ".json"
        return ".jsonl" if isinstance(obj, dict) and "text" in obj and rest.strip() else ".json"
    return ".txt"


def _load_piped_corpus(path: Path) -> Corpus:
    """A corpus read from a pipe (``--corpus <(cat notes.txt)``, a named FIFO): read once (a pipe nothing
    writes to is an error, not a hang), its kind told by its first bytes, errors naming the pipe."""
    import contextlib
    import os
    import tempfile

    data = read_input(path, "corpus")
    suffix = _piped_suffix(data)
    fd, tmp = tempfile.mkstemp(prefix=".ragworkbook-corpus.", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        del data
        try:
            corpus = load_corpus(tmp)
        except (OSError, ValueError) as exc:
            raise type(exc)(str(exc).replace(tmp, str(path))) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    import dataclasses

    title = path.name if corpus.title == Path(tmp).stem else corpus.title
    return dataclasses.replace(corpus, source=str(path), title=title)


def _text_pages(path: Path) -> list[str]:
    text = read_text(path)
    parts = text.split("\f")
    if len(parts) > 1 and not parts[-1].strip():
        parts = parts[:-1]  # a form feed after the last page
    return parts


def load_text_corpus(path: PathLike, title: str | None = None) -> Corpus:
    """A UTF-8 text file as a corpus: pages separated by form feeds (``\f``), else one page."""
    path = Path(path)
    pages = [Page(i, t) for i, t in enumerate(_text_pages(path), start=1)]
    return Corpus(title=title or path.stem, pages=pages, source=str(path))


def load_folder_corpus(path: PathLike, title: str | None = None) -> Corpus:
    """Every PDF and text file under the folder ``path`` (sub-folders included, hidden ones skipped),
    in sorted path order, as one corpus: pages numbered 1, 2, ... across the files.

    ``meta["files"]``: ``[{"file", "first_page", "pages"}]`` (paths relative to the folder);
    ``meta["skipped"]``: the other files. ValueError naming the folder when it holds no PDF or text file.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    pages: list[Page] = []
    files: list[JSONObject] = []
    skipped: list[str] = []
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = f.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts):
            continue
        try:
            kind = corpus_kind(f)
        except DatasetError:
            kind = "other"
        if kind == "pdf":
            texts = [p.text for p in load_pdf_pages(f)]
        elif kind == "text":
            texts = _text_pages(f)
        else:
            skipped.append(rel.as_posix())
            continue
        base = len(pages)
        files.append({"file": rel.as_posix(), "first_page": base + 1, "pages": len(texts)})
        pages.extend(Page(base + i, t) for i, t in enumerate(texts, start=1))
    if not files:
        raise DatasetError(f"{folder}: no PDF or text file (.pdf, {', '.join(TEXT_SUFFIXES)}) in this folder")
    meta: JSONObject = {"files": files}
    if skipped:
        meta["skipped"] = skipped
    return Corpus(title=title or folder.name, pages=pages, source=str(folder), meta=meta)


def _load_json_corpus(path: Path) -> Corpus:
    """Load and validate a paged corpus (``.json`` or ``.jsonl``).

    Every page needs ``page`` (a positive int, unique) and ``text`` (a string,
    may be empty, as for a PDF page with no extractable text). In ``.jsonl``
    each line is one page and the title is the file name. Errors name the
    file, line and field.
    """
    with gc_paused():
        return _parse_json_corpus(path)


def _parse_json_corpus(path: Path) -> Corpus:
    meta, records = read_records(path, "pages", "a corpus", 'a list of {"page": n, "text": ...} objects')
    if path.suffix.lower() == ".jsonl":
        meta = {"title": path.stem}
    pages = [_page_from_record(rec, where) for _, where, rec in records]
    if not pages:
        raise DatasetError(f"{path}: the corpus has no pages")
    _check_unique_pages(pages, str(path), [ln for ln, _, _ in records])
    extra = {k: v for k, v in meta.items() if k not in {"title", "source", "licence", "pages"}}
    return Corpus(
        title=str(meta.get("title", path.stem)),
        pages=pages,
        source=str(meta.get("source", "")),
        licence=str(meta.get("licence", "")),
        meta=extra,
    )
