"""Sparse retrieval: Okapi BM25 (the ``bm25s`` library) over simple word tokens."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ragworkbook.corpus.chunking import Chunk
from ragworkbook.retrieval.base import Retriever

__all__ = ["BM25Retriever", "tokenize"]


_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """BM25 tokens: lowercase, then runs of word characters (``\\w+``); no stemming, no stop words.

    ``"Adam (beta1 = 0.9)"`` -> ``["adam", "beta1", "0", "9"]``. Punctuation
    splits tokens, so ``"28.4"`` becomes ``["28", "4"]``.
    """
    return _TOKEN.findall(text.lower())


class BM25Retriever(Retriever):
    """Okapi BM25 from the ``bm25s`` library over :func:`tokenize` tokens.

    ``k1``, ``b`` and ``method`` are bm25s's (defaults 1.5, 0.75, "lucene",
    i.e. Lucene's idf ``log(1 + (N - df + 0.5) / (df + 0.5))``). Query words
    absent from the corpus contribute 0; a query with no known word scores
    every chunk 0 (ranking = chunk order).
    """

    name = "bm25"

    def __init__(self, chunks: Sequence[Chunk], k1: float = 1.5, b: float = 0.75, method: str = "lucene"):
        super().__init__(chunks)
        import logging

        # bm25s logs at DEBUG; once any library has configured the root logger
        # (rouge-score's absl does) those lines would reach stderr.
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        import bm25s

        self.k1, self.b, self.method = k1, b, method
        self._bm25 = bm25s.BM25(k1=k1, b=b, method=method)
        self._bm25.index([tokenize(c.text) or [""] for c in self.chunks], show_progress=False)

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        rows = []
        for q in queries:
            toks = tokenize(q)
            if not toks:
                rows.append(np.zeros(len(self.chunks)))
            else:
                rows.append(np.asarray(self._bm25.get_scores(toks), dtype=np.float64))
        return np.vstack(rows) if rows else np.zeros((0, len(self.chunks)))
