"""Metadata filters in the retrieval layer: rank only the chunks whose metadata passes a test.

A :class:`FilteredRetriever` wraps any retriever of :mod:`ragworkbook.retrieval` and a
predicate on chunks (``where(chunk) -> bool``). The filter is applied **before ranking**: a
rejected chunk is never ranked, so ``search(query, k)`` returns the best ``k`` of the chunks
kept (fewer only when fewer than ``k`` are kept). Filtering the top ``k`` of the unfiltered
ranking afterwards would instead return fewer than ``k`` chunks whenever a rejected chunk was
among them, which is why vector stores filter first.

A chunk's metadata here is what :class:`~ragworkbook.corpus.chunking.Chunk` carries (its
``page``, ``id``, ``text``) plus what can be derived from its page. Three predicate builders:

- :func:`page_filter` keeps or drops chunks by page number;
- :func:`section_filter` reads each page's section title (:func:`page_sections`: the page's
  first line, without a leading ``"Page N - "``) and keeps or drops chunks whose section
  title matches a pattern (``exclude="appendix"`` drops the appendix pages);
- :func:`text_filter` keeps chunks whose text matches a regular expression (a tag computed
  from the content at indexing time, e.g. "states a value").

Predicates combine with :func:`all_of`. A filter that rejects every chunk is an error
(``ValueError``): a retriever with nothing to rank cannot answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from ragworkbook.corpus.chunking import Chunk
from ragworkbook.corpus.pages import Corpus, Page
from ragworkbook.retrieval.base import Hit, Retriever, _rank_order

__all__ = ["ChunkFilter", "FilteredRetriever", "page_filter", "page_sections", "section_filter",
           "text_filter", "all_of"]

#: A test on one chunk's metadata: True keeps the chunk.
ChunkFilter = Callable[[Chunk], bool]


class FilteredRetriever(Retriever):
    """``retriever`` restricted to the chunks for which ``where(chunk)`` is true, filtered before ranking.

    Scores of rejected chunks are ``-inf`` in :meth:`scores`, and they never appear in
    :meth:`search` / :meth:`search_many`. ``description`` names the filter in reprs and reports.
    """

    name = "filtered"

    def __init__(self, retriever: Retriever, where: ChunkFilter, description: str = ""):
        if not isinstance(retriever, Retriever):
            raise TypeError("FilteredRetriever wraps a ragworkbook Retriever, "
                            f"got {type(retriever).__name__}")
        if not callable(where):
            raise TypeError("where must be a function chunk -> bool (see page_filter, section_filter)")
        super().__init__(retriever.chunks)
        self.retriever = retriever
        self.where = where
        self.description = description
        self.keep = np.array([bool(where(c)) for c in self.chunks], dtype=bool)
        if not self.keep.any():
            raise ValueError(f"the filter {description or where!r} rejects all {len(self.chunks)} chunks: "
                             "nothing is left to rank; loosen it")

    @property
    def n_kept(self) -> int:
        """How many chunks pass the filter."""
        return int(self.keep.sum())

    def kept_chunks(self) -> list[Chunk]:
        """The chunks that pass the filter, in corpus order."""
        return [c for c, k in zip(self.chunks, self.keep, strict=True) if k]

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        s = np.array(self.retriever.scores(queries), dtype=np.float64, copy=True)
        s[:, ~self.keep] = -np.inf
        return s

    def _hits(self, row: np.ndarray, k: int) -> list[Hit]:
        order = _rank_order(row)
        order = order[self.keep[order]][:k]
        return [Hit(self.chunks[i], float(row[i]), r) for r, i in enumerate(order, start=1)]

    def __repr__(self) -> str:
        what = f" {self.description!r}" if self.description else ""
        return f"FilteredRetriever({self.retriever!r}{what}, {self.n_kept} of {len(self.chunks)} chunks kept)"


def page_filter(include: Iterable[int] | None = None, exclude: Iterable[int] | None = None) -> ChunkFilter:
    """Keep chunks whose page is in ``include`` (every page when None) and not in ``exclude``."""
    inc = None if include is None else {int(p) for p in include}
    exc = set() if exclude is None else {int(p) for p in exclude}
    if inc is not None and not inc:
        raise ValueError("include=[] keeps no page; pass None to keep every page")

    def keep(chunk: Chunk) -> bool:
        return (inc is None or chunk.page in inc) and chunk.page not in exc

    return keep


_PAGE_PREFIX = re.compile(r"^\s*page\s+\d+\s*[-–:]\s*", re.IGNORECASE)


def page_sections(pages: Corpus | Iterable[Page]) -> dict[int, str]:
    """``page number -> section title``: each page's first non-empty line, without a leading ``"Page N - "``.

    This is the section metadata of a corpus whose pages begin with their heading (the bundled
    notes do); for another corpus build the mapping yourself and pass it to :func:`section_filter`.
    """
    items = pages.pages if isinstance(pages, Corpus) else list(pages)
    out: dict[int, str] = {}
    for p in items:
        first = next((line.strip() for line in p.text.splitlines() if line.strip()), "")
        out[p.page] = _PAGE_PREFIX.sub("", first)
    return out


def _pattern(p: str | re.Pattern[str] | None) -> re.Pattern[str] | None:
    if p is None or isinstance(p, re.Pattern):
        return p
    return re.compile(p, re.IGNORECASE)


def section_filter(sections: Corpus | Mapping[int, str], *, include: str | re.Pattern[str] | None = None,
                   exclude: str | re.Pattern[str] | None = None) -> ChunkFilter:
    """Keep chunks whose page's section title matches ``include`` (any title when None) and does not
    match ``exclude``; patterns are regular expressions, case-insensitive (``re.search``).

    ``sections`` is a corpus (titles from :func:`page_sections`) or a ``page -> title`` mapping.
    A chunk from a page with no title has the title ``""``.
    """
    titles = page_sections(sections) if isinstance(sections, Corpus) else dict(sections)
    inc, exc = _pattern(include), _pattern(exclude)
    if inc is None and exc is None:
        raise ValueError("section_filter needs include=... or exclude=... (a pattern of section titles)")

    def keep(chunk: Chunk) -> bool:
        title = titles.get(chunk.page, "")
        return (inc is None or inc.search(title) is not None) and (exc is None or exc.search(title) is None)

    return keep


def text_filter(pattern: str | re.Pattern[str]) -> ChunkFilter:
    """Keep chunks whose text matches the regular expression ``pattern`` (``re.search``, case-sensitive
    unless the pattern says otherwise)."""
    rx = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)

    def keep(chunk: Chunk) -> bool:
        return rx.search(chunk.text) is not None

    return keep


def all_of(*filters: ChunkFilter) -> ChunkFilter:
    """A filter that keeps a chunk only when every one of ``filters`` keeps it."""
    if not filters:
        raise ValueError("all_of needs at least one filter")

    def keep(chunk: Chunk) -> bool:
        return all(f(chunk) for f in filters)

    return keep
