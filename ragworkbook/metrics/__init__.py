"""Metrics: the registry of every metric, retrieval kernels (single query and batch), generation metrics."""
