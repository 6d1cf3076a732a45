"""Hybrid retrieval: reciprocal-rank fusion of several retrievers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragworkbook._validate import check_k
from ragworkbook.retrieval.base import Retriever, _rank_order

__all__ = ["HybridRetriever"]


class HybridRetriever(Retriever):
    """Reciprocal-rank fusion: ``score(d) = sum_i weight_i / (k_rrf + rank_i(d))``.

    ``rank_i`` is the 1-based rank of chunk ``d`` in retriever ``i``'s full
    ranking (every chunk is ranked by every retriever, ties by chunk order), or
    only its top ``depth`` when ``depth`` is given (deeper chunks contribute 0).
    ``k_rrf = 60`` is the constant of Cormack et al. (2009). All retrievers must
    be built on the same chunks, in the same order.
    """

    name = "hybrid"

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        k_rrf: float = 60,
        depth: int | None = None,
        weights: Sequence[float] | None = None,
    ):
        retrievers = list(retrievers)
        if len(retrievers) < 1:
            raise ValueError("HybridRetriever needs at least one retriever to fuse")
        ids = [c.id for c in retrievers[0].chunks]
        for r in retrievers[1:]:
            if [c.id for c in r.chunks] != ids:
                raise ValueError("all fused retrievers must be built on the same chunks in the same order")
        if k_rrf < 0:
            raise ValueError(f"k_rrf must be >= 0, got {k_rrf}")
        if depth is not None:
            depth = check_k(depth, "depth")
        if weights is None:
            weights = [1.0] * len(retrievers)
        if len(weights) != len(retrievers):
            raise ValueError(f"got {len(weights)} weights for {len(retrievers)} retrievers")
        super().__init__(retrievers[0].chunks)
        self.retrievers = retrievers
        self.k_rrf = k_rrf
        self.depth = depth
        self.weights = [float(w) for w in weights]

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        n = len(self.chunks)
        total = np.zeros((len(queries), n))
        for r, w in zip(self.retrievers, self.weights, strict=True):
            mat = r.scores(queries)
            for qi, row in enumerate(mat):
                order = _rank_order(row)
                ranks = np.empty(n)
                ranks[order] = np.arange(1, n + 1)
                contrib = w / (self.k_rrf + ranks)
                if self.depth is not None:
                    contrib[ranks > self.depth] = 0.0
                total[qi] += contrib
        return total

    def __repr__(self) -> str:
        inner = ", ".join(type(r).__name__ for r in self.retrievers)
        return f"HybridRetriever([{inner}], k_rrf={self.k_rrf})"
