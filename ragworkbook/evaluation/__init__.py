"""Evaluation of a whole RAG system: the evaluate loop, reports, comparison, targets, experiments."""
