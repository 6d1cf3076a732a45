"""A document as numbered pages of text: :class:`Page` and :class:`Corpus`.

The types every corpus reader returns (:mod:`ragworkbook.corpus.pages` for JSON, text and
folders, :mod:`ragworkbook.corpus.pdf` for PDFs); they depend on nothing else in the package.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ragworkbook._types import JSONObject

__all__ = ["Page", "Corpus"]


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
    meta: JSONObject = field(default_factory=dict)

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
