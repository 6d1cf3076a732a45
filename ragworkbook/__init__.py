"""ragworkbook: RAG evaluation, hands-on.

The package the workbook's notebooks import. Importing it is cheap: heavy
dependencies (torch, sentence-transformers, llama.cpp, NLTK) are imported only
inside the functions that need them.

One entry point for scoring what a RAG system produced, as practitioners know it from
``ragas.evaluate``: ``ragworkbook.evaluate(records_or_dataframe, metrics=[...], judge=...)``
returns a result with ``to_pandas()``, ``summary()``, ``ledger()`` and ``save(path)``
(:mod:`ragworkbook.evaluation.api`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"
__all__ = ["evaluate", "EvaluationResult", "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.evaluation.api import EvaluationResult, evaluate


def __getattr__(name: str) -> object:
    """``evaluate`` and ``EvaluationResult``, imported when first used (``import ragworkbook`` stays
    cheap)."""
    if name in ("evaluate", "EvaluationResult"):
        from ragworkbook.evaluation import api

        return getattr(api, name)
    raise AttributeError(f"module 'ragworkbook' has no attribute {name!r}")
