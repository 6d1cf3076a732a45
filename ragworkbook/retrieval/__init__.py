"""Retrievers over chunks: dense (MiniLM), BM25, hybrid (reciprocal-rank fusion)."""
