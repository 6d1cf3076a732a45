"""Dense retrieval: all-MiniLM-L6-v2 embeddings, cosine similarity."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from ragworkbook.corpus.chunking import Chunk
from ragworkbook.retrieval.base import Retriever

__all__ = ["DenseRetriever"]


class DenseRetriever(Retriever):
    """all-MiniLM-L6-v2 embeddings (L2-normalised), scored by dot product = cosine similarity.

    ``cache``: passed to :func:`ragworkbook.embeddings.encode` for the chunk
    texts and the queries (``True``: the package cache folder; a path: that
    folder; ``False``: encode every time). The cache is keyed by the model
    fingerprint and the exact texts, so a changed corpus or model is encoded
    again and an unchanged one is read back without loading the model.
    Scores are computed in float64 from the float32 embeddings.
    """

    name = "dense"

    def __init__(
        self,
        chunks: Sequence[Chunk],
        cache: bool | str | os.PathLike[str] = True,
        model_path: str | None = None,
    ):
        super().__init__(chunks)
        from ragworkbook.embeddings import encode

        self.cache = cache
        self.model_path = model_path
        self.embeddings = encode([c.text for c in self.chunks], cache=cache, model_path=model_path)

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Embeddings of ``queries`` (n, 384), float32, L2-normalised, cached like the chunks."""
        from ragworkbook.embeddings import encode

        return encode(list(queries), cache=self.cache, model_path=self.model_path)

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        q = self.encode_queries(queries).astype(np.float64)
        return q @ self.embeddings.astype(np.float64).T
