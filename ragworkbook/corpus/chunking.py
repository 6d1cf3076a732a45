"""Splitting pages into chunks for retrieval.

Two strategies:

- :func:`chunk_pages` — the documented recipe (rag-cookbook's
  ``evaluation-metrics`` recipe), matched character for character::

      for page_num, page in enumerate(pages, start=1):
          text = (page_text or "").strip()
          if not text: continue
          for start in range(0, len(text), size - overlap):
              piece = text[start:start + size].strip()
              if len(piece) < min_chars: continue
              keep (piece, page_num)

  i.e. fixed windows of ``size`` characters starting at 0 with step
  ``size - overlap`` over the *stripped* page text, each window stripped of
  surrounding whitespace and dropped when shorter than ``min_chars``. The last
  windows of a page are often short and dropped, which loses nothing: they lie
  inside the previous window.
- :func:`chunk_sentences` — sentence-aware packing: whole sentences are packed
  greedily into chunks of at most ``max_chars``; a sentence longer than that is
  cut with the window recipe. A fact stated in one sentence is never cut.

Every :class:`Chunk` keeps its page number and a stable id ``"p03-c02"`` (page 3,
second chunk kept on that page; both 1-based, zero-padded to two digits).
``start`` is the offset of ``chunk.text`` in the page's original text, so
``page.text[chunk.start:chunk.end] == chunk.text`` always holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ragworkbook.corpus.pages import Corpus, Page, corpus_from_pages

__all__ = ["Chunk", "chunk_pages", "chunk_sentences", "split_sentences", "chunk_id", "chunks_by_id"]


@dataclass(frozen=True)
class Chunk:
    """A piece of one page: ``id`` like ``"p03-c02"``, 1-based ``page``, ``text``, ``start`` offset."""

    id: str
    page: int
    text: str
    start: int

    @property
    def end(self) -> int:
        """Offset just past the chunk in the page's original text."""
        return self.start + len(self.text)


def chunk_id(page: int, index: int) -> str:
    """The stable id of the ``index``-th (1-based) chunk kept on ``page``: ``p03-c02``."""
    return f"p{page:02d}-c{index:02d}"


def _as_pages(pages: Corpus | Iterable[Page | str | tuple[int, str] | dict]) -> list[Page]:
    if isinstance(pages, Corpus):
        return list(pages.pages)
    if isinstance(pages, str):
        raise TypeError("chunking takes a list of pages (or a Corpus), not a single string; wrap it: [text]")
    return corpus_from_pages(pages).pages


def _check_sizes(size: int, overlap: int, min_chars: int) -> None:
    for name, val in (("size", size), ("overlap", overlap), ("min_chars", min_chars)):
        if isinstance(val, bool) or not isinstance(val, int):
            raise TypeError(f"{name} must be an int, got {val!r}")
    if size <= 0:
        raise ValueError(f"size must be positive, got {size}")
    if overlap < 0 or overlap >= size:
        raise ValueError(f"overlap must satisfy 0 <= overlap < size, got overlap={overlap}, size={size}")
    if min_chars < 0:
        raise ValueError(f"min_chars must be >= 0, got {min_chars}")


def _windows(text: str, base: int, size: int, overlap: int, min_chars: int) -> list[tuple[int, str]]:
    """(offset, piece) for the recipe's windows over the stripped ``text``; offsets are base-relative."""
    out = []
    for start in range(0, len(text), size - overlap):
        raw = text[start : start + size]
        piece = raw.strip()
        if len(piece) < min_chars:
            continue
        lead = len(raw) - len(raw.lstrip())
        out.append((base + start + lead, piece))
    return out


def chunk_pages(
    pages: Corpus | Iterable[Page | str | tuple[int, str] | dict],
    size: int = 400,
    overlap: int = 50,
    min_chars: int = 40,
) -> list[Chunk]:
    """Fixed character windows per page, as documented (400 / 50 / drop under 40 by default).

    ``pages``: a :class:`Corpus`, or :class:`Page` objects, ``(page, text)``
    pairs, dicts, or strings (numbered from 1). Windows start at 0 with step
    ``size - overlap`` over ``page.text.strip()``; each piece is stripped and
    kept only when ``len(piece) >= min_chars``. Pages with no text yield no
    chunks (their numbers are not reused). Output order: page order, then
    position. Matches rag-cookbook's ``build_corpus`` piece for piece.
    """
    _check_sizes(size, overlap, min_chars)
    chunks: list[Chunk] = []
    for p in _as_pages(pages):
        text = p.text.strip()
        if not text:
            continue
        base = len(p.text) - len(p.text.lstrip())
        for i, (off, piece) in enumerate(_windows(text, base, size, overlap, min_chars), start=1):
            chunks.append(Chunk(id=chunk_id(p.page, i), page=p.page, text=piece, start=off))
    return chunks


# A sentence ends at . ! or ? followed by whitespace, or at a blank line / line break
# that starts a heading or list item. Decimal points ("28.4") and "e.g." inside a
# sentence are not followed by whitespace+capital, so they do not split.
_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"(\[])|\n\s*\n|\n(?=\s*(?:[-*•]|\d+\.)\s)")


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    pos = 0
    for m in _SENT_END.finditer(text):
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < len(text):
        spans.append((pos, len(text)))
    out = []
    for s, e in spans:
        seg = text[s:e]
        lead = len(seg) - len(seg.lstrip())
        trail = len(seg) - len(seg.rstrip())
        if e - trail > s + lead:
            out.append((s + lead, e - trail))
    return out


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` by the rule :func:`chunk_sentences` packs (``_SENT_END``), stripped."""
    return [text[s:e] for s, e in _sentence_spans(text)]


def chunk_sentences(
    pages: Corpus | Iterable[Page | str | tuple[int, str] | dict], max_chars: int = 400, min_chars: int = 40
) -> list[Chunk]:
    """Sentence-aware chunks: whole sentences packed greedily up to ``max_chars`` characters.

    Sentences end at ``.``, ``!`` or ``?`` followed by whitespace and a capital,
    digit, quote or bracket, at blank lines, and before list items. A chunk is
    the page text from its first sentence's start to its last sentence's end
    (internal whitespace kept as is). A single sentence longer than
    ``max_chars`` is cut into windows of ``max_chars`` with no overlap.
    Chunks shorter than ``min_chars`` are dropped. No overlap between chunks.
    """
    _check_sizes(max_chars, 0, min_chars)
    chunks: list[Chunk] = []
    for p in _as_pages(pages):
        pieces: list[tuple[int, int]] = []
        cur: tuple[int, int] | None = None
        for s, e in _sentence_spans(p.text):
            if e - s > max_chars:
                if cur:
                    pieces.append(cur)
                    cur = None
                for off in range(s, e, max_chars):
                    pieces.append((off, min(off + max_chars, e)))
                continue
            if cur is None:
                cur = (s, e)
            elif e - cur[0] <= max_chars:
                cur = (cur[0], e)
            else:
                pieces.append(cur)
                cur = (s, e)
        if cur:
            pieces.append(cur)
        i = 0
        for s, e in pieces:
            raw = p.text[s:e]
            piece = raw.strip()
            if len(piece) < min_chars:
                continue
            i += 1
            chunks.append(
                Chunk(id=chunk_id(p.page, i), page=p.page, text=piece, start=s + len(raw) - len(raw.lstrip()))
            )
    return chunks


def chunks_by_id(chunks: Iterable[Chunk]) -> dict[str, Chunk]:
    """Map id -> chunk; raises ``ValueError`` on a duplicate id."""
    out: dict[str, Chunk] = {}
    for c in chunks:
        if c.id in out:
            raise ValueError(f"duplicate chunk id {c.id!r}: chunk ids must be unique")
        out[c.id] = c
    return out
