"""The retriever interface: :class:`Hit` and the :class:`Retriever` base class.

Every retriever is built from a list of :class:`~ragworkbook.corpus.chunking.Chunk`
and answers ``.search(query, k) -> list[Hit]`` and ``.search_many(queries, k)``;
``.scores(queries)`` returns the full (n_queries, n_chunks) score matrix.

Conventions shared by all of them:

- a :class:`Hit` holds the chunk, its score and its 1-based rank;
- ranking is by score descending, ties broken by chunk order (the order of
  the ``chunks`` list), so the same query always gives the same ranking;
- ``k`` larger than the corpus returns every chunk; ``k <= 0`` is an error;
- chunks with score 0 are still ranked (they fill the list after the matches).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragworkbook._validate import check_k
from ragworkbook.corpus.chunking import Chunk, chunks_by_id

__all__ = ["Hit", "Retriever"]


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk: the chunk, its retriever score and its 1-based rank."""

    chunk: Chunk
    score: float
    rank: int

    @property
    def id(self) -> str:
        """The chunk id, e.g. ``"p05-c02"``."""
        return self.chunk.id


def _check_queries(queries: Sequence[str]) -> list[str]:
    if isinstance(queries, str):
        raise TypeError("search_many() takes a list of query strings, not a single string; use search()")
    out = list(queries)
    for i, q in enumerate(out):
        if not isinstance(q, str):
            raise TypeError(f"query {i} must be a string, got {type(q).__name__}")
    return out


def _rank_order(scores: np.ndarray) -> np.ndarray:
    """Indices by score descending, ties by index ascending (stable)."""
    if np.isnan(scores).any():
        raise ValueError("a retriever produced NaN scores; check the inputs (empty or non-text chunks?)")
    return np.argsort(-scores, kind="stable")


class Retriever:
    """Base class: subclasses implement :meth:`scores`."""

    name = "retriever"

    def __init__(self, chunks: Sequence[Chunk]):
        chunks = list(chunks)
        if not chunks:
            raise ValueError("a retriever needs at least one chunk; the chunk list is empty")
        for i, c in enumerate(chunks):
            if not isinstance(c, Chunk):
                raise TypeError(f"chunks[{i}] is a {type(c).__name__}, expected a Chunk (see chunk_pages)")
        chunks_by_id(chunks)  # unique ids
        self.chunks: list[Chunk] = chunks

    def scores(self, queries: Sequence[str]) -> np.ndarray:  # pragma: no cover - abstract
        """Score matrix (n_queries, n_chunks), float64."""
        raise NotImplementedError

    def _hits(self, row: np.ndarray, k: int) -> list[Hit]:
        order = _rank_order(row)[:k]
        return [Hit(self.chunks[i], float(row[i]), r) for r, i in enumerate(order, start=1)]

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """The top ``k`` chunks for ``query``, best first."""
        k = check_k(k)
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        return self._hits(self.scores([query])[0], k)

    def search_many(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        """:meth:`search` for each query (scored in one batch)."""
        k = check_k(k)
        queries = _check_queries(queries)
        if not queries:
            return []
        mat = self.scores(queries)
        return [self._hits(row, k) for row in mat]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.chunks)} chunks)"
