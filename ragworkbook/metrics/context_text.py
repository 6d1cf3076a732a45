"""Metrics on texts without a model: string presence, and context precision / recall by text.

ragas' non-LLM metrics of the same names, computed as ragas 0.4.3 computes them (a test checks each
against the ragas library on the same samples, ``tests/metrics/test_ragas_nonllm.py``):

- :func:`string_presence`: 1.0 when the reference occurs in the answer as written (case-sensitive
  substring), else 0.0 (ragas ``StringPresence``);
- :func:`text_similarity`: 1 - the normalised Levenshtein distance of two texts (rapidfuzz; ragas'
  ``NonLLMStringSimilarity`` default);
- :func:`non_llm_context_precision`: each retrieved context is relevant when its similarity to some
  reference context is at least ``threshold`` (0.5); the average precision of those verdicts,
  sum over relevant ranks of precision@rank / (number relevant + 1e-10) (ragas
  ``NonLLMContextPrecisionWithReference``: 0.0 when none is relevant);
- :func:`non_llm_context_recall`: each reference context is found when its similarity to some
  retrieved context is above ``threshold`` (strictly: ragas compares with ``>`` here and ``>=`` in
  precision); the share found (ragas ``NonLLMContextRecall``).

Both context metrics need the reference contexts (``reference_contexts``, deepeval's ``context``) and
are undefined without them; with no retrieved context, precision is 0.0 and recall 0.0 (ragas
fails on an empty list).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["THRESHOLD", "CONTEXT_SCORERS", "string_presence", "text_similarity", "non_llm_context_precision",
           "non_llm_context_recall"]

#: ragas' default threshold of the text-based context metrics.
THRESHOLD = 0.5


def string_presence(answer: str, reference: str) -> float:
    """1.0 when ``reference`` occurs in ``answer`` exactly as written (case-sensitive), else 0.0."""
    if not isinstance(answer, str) or not isinstance(reference, str):
        raise TypeError("string_presence takes two strings (answer, reference)")
    return float(reference in answer)


def text_similarity(a: str, b: str) -> float:
    """1 - the normalised Levenshtein distance (rapidfuzz): 1.0 for equal texts, 0.0 for nothing alike."""
    from rapidfuzz.distance import Levenshtein

    return 1.0 - float(Levenshtein.normalized_distance(a, b))


def _best(texts: Sequence[str], others: Sequence[str]) -> list[float]:
    return [max((text_similarity(o, t) for o in others), default=0.0) for t in texts]


def non_llm_context_precision(contexts: Sequence[str], reference_contexts: Sequence[str],
                              threshold: float = THRESHOLD) -> float:
    """Average precision of the retrieved ``contexts`` (best first), a context relevant when its
    similarity to some reference context is >= ``threshold`` (ragas' text-based context precision)."""
    verdicts = [1 if s >= threshold else 0 for s in _best(contexts, reference_contexts)]
    hits = np.cumsum(verdicts)
    numerator = sum(hits[i] / (i + 1) * v for i, v in enumerate(verdicts))
    return float(numerator / (sum(verdicts) + 1e-10))


def non_llm_context_recall(contexts: Sequence[str], reference_contexts: Sequence[str],
                           threshold: float = THRESHOLD) -> float:
    """Share of the ``reference_contexts`` with a retrieved context of similarity > ``threshold``."""
    if not reference_contexts:
        raise ValueError("non_llm_context_recall needs at least one reference context")
    found = [1 if s > threshold else 0 for s in _best(reference_contexts, contexts)]
    return float(sum(found) / len(found))


def _batch(fn):  # type: ignore[no-untyped-def]
    def scores(contexts: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> np.ndarray:
        if len(contexts) != len(references):
            raise ValueError(f"contexts and reference contexts differ in length ({len(contexts)} vs "
                             f"{len(references)})")
        return np.array([fn(c, r) for c, r in zip(contexts, references, strict=True)], dtype=np.float64)
    return scores


#: The metrics of this module that read the retrieved and the reference contexts:
#: ``(contexts per record, reference contexts per record) -> one value per record``.
CONTEXT_SCORERS = {
    "non_llm_context_precision": _batch(non_llm_context_precision),
    "non_llm_context_recall": _batch(non_llm_context_recall),
}
