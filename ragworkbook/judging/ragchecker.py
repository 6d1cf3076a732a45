"""RAGChecker's documented numbers, recomputed from what RAGChecker ships.

Two computations, written from RAGChecker's definitions (amazon-science/RAGChecker,
arXiv:2408.08067) and checked against its printed figures (NUMBERS.md, rows D):

- :func:`meta_eval_correlations` - the correlation of RAGChecker's scores with
  the human preferences (the paper's meta-evaluation), following its
  ``meta_eval.py`` step by step: for each aspect the prediction is RAGChecker's
  score of the second answer minus that of the first; a missing prediction is
  replaced by the median of the others; the differences are rescaled linearly
  to [-2, 2] (``((d - min) / (max - min) - 0.5) * 4``, which leaves Pearson and
  Spearman unchanged); each pair's prediction is repeated once per annotator, so
  the 280 predictions are compared with all 560 human labels; Pearson's and
  Spearman's coefficients (scipy) are multiplied by 100 and rounded to 2
  decimals. The annotators' agreement with each other is the same correlation
  between annotator 1's 280 labels and annotator 2's.
- :func:`checking_metrics` / :func:`example_metrics` - RAGChecker's metrics of one
  checked RAG result from its claim-level entailment labels, and their mean over
  a results file, multiplied by 100 and rounded to 1 decimal as RAGChecker
  prints them. With ``c_i`` the response's claims and ``g_j`` the ground-truth
  answer's claims:

  - precision: share of response claims entailed by the ground-truth answer
    (``answer2response``); recall: share of ground-truth claims entailed by the
    response (``response2answer``); F1 their harmonic mean (0 when either is 0);
  - claim recall: share of ground-truth claims entailed by some retrieved chunk;
    context precision: share of retrieved chunks that entail some ground-truth
    claim (``retrieved2answer``);
  - context utilization: of the ground-truth claims some chunk entails, the share
    the response also states;
  - faithfulness: share of response claims some chunk entails
    (``retrieved2response``); hallucination: share neither entailed by a chunk nor
    correct; self-knowledge: share not entailed by a chunk but correct;
  - noise sensitivity in relevant (irrelevant) chunks: share of response claims
    that are incorrect and entailed by a relevant (only by an irrelevant) chunk,
    a chunk being relevant when it entails some ground-truth claim.

  "Entailed" means the label ``"Entailment"``; ``"Neutral"`` and
  ``"Contradiction"`` both count as not entailed. An empty list of claims or
  chunks gives 0, as RAGChecker does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragworkbook._types import JSON

if TYPE_CHECKING:
    from ragworkbook.judging.datasets import RagCheckerMeta

__all__ = ["meta_eval_correlations", "human_agreement", "correlation", "normalised_delta", "checking_metrics",
           "example_metrics", "METRIC_GROUPS"]

#: How RAGChecker groups its printed metrics.
METRIC_GROUPS = {
    "overall": ("precision", "recall", "f1"),
    "retriever": ("claim_recall", "context_precision"),
    "generator": ("context_utilization", "noise_sensitivity_in_relevant", "noise_sensitivity_in_irrelevant",
                  "hallucination", "self_knowledge", "faithfulness"),
}


def correlation(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Pearson's and Spearman's coefficients (scipy) x 100, rounded to 2 decimals, as meta_eval.py prints."""
    from scipy import stats

    return (round(float(stats.pearsonr(a, b)[0]) * 100, 2), round(float(stats.spearmanr(a, b)[0]) * 100, 2))


def normalised_delta(pred: Sequence[tuple[float | None, float | None]]) -> np.ndarray:
    """Second answer's score minus the first's; NaN -> median; rescaled to [-2, 2] (as meta_eval.py)."""
    delta = np.asarray([np.nan if a is None or b is None else b - a for a, b in pred], dtype=float)
    lo, hi, med = np.nanmin(delta), np.nanmax(delta), np.nanmedian(delta)
    delta = np.where(np.isnan(delta), med, delta)
    return ((delta - lo) / (hi - lo) - 0.5) * 4 if hi - lo != 0 else delta


def meta_eval_correlations(meta: RagCheckerMeta | None = None) -> dict[str, dict[str, tuple[float, float]]]:
    """RAGChecker-vs-human and human-vs-human correlations (Pearson, Spearman, x 100, 2 decimals)
    per aspect -> ``{aspect: {"ragchecker": (p, s), "human": (p, s)}}``.

    ``meta`` is a :class:`~ragworkbook.judging.datasets.RagCheckerMeta` with predictions
    (default: the bundled files).
    """
    from ragworkbook.judging.datasets import ASPECTS, load_ragchecker

    meta = meta if meta is not None else load_ragchecker()
    out = {}
    for aspect in ASPECTS:
        if not all(aspect in p.predictions for p in meta.pairs):
            raise ValueError("the pairs carry no RAGChecker predictions: load them with load_ragchecker() "
                             "(predictions=True)")
        human = np.asarray([x for p in meta.pairs for x in p.labels[aspect]], dtype=float)
        pred = np.repeat(normalised_delta([p.predictions[aspect] for p in meta.pairs]), 2)
        out[aspect] = {"ragchecker": correlation(pred, human), "human": human_agreement(meta, aspect)}
    return out


def human_agreement(meta: RagCheckerMeta, aspect: str) -> tuple[float, float]:
    """Pearson and Spearman (x 100, 2 decimals) between the two annotators' labels on ``aspect``."""
    a1 = np.asarray([p.labels[aspect][0] for p in meta.pairs], dtype=float)
    a2 = np.asarray([p.labels[aspect][1] for p in meta.pairs], dtype=float)
    return correlation(a1, a2)


def _entailed(x: JSON) -> bool | np.ndarray:
    if isinstance(x, str):
        return x == "Entailment"
    return np.asarray([_entailed(v) for v in x], dtype=bool)


def _mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if x.size else 0.0


def checking_metrics(result: Mapping[str, JSON]) -> dict[str, float]:
    """RAGChecker's metrics (fractions) of one checked result from its claim-level labels
    (``answer2response``, ``response2answer``, ``retrieved2answer``, ``retrieved2response``;
    the two ``retrieved2*`` are per claim, one label per retrieved chunk)."""
    a2r = _entailed(result["answer2response"])  # per response claim: correct (entailed by the gt answer)
    r2a = _entailed(result["response2answer"])  # per gt claim: stated by the response
    ret2a = _entailed(result["retrieved2answer"])  # gt claims x chunks
    ret2r = _entailed(result["retrieved2response"])  # response claims x chunks
    precision, recall = _mean(a2r), _mean(r2a)
    m = {"precision": precision, "recall": recall,
         "f1": 2 * precision * recall / (precision + recall) if precision > 0 and recall > 0 else 0.0}
    if ret2a.ndim == 2 and ret2a.size:
        recalled = ret2a.any(axis=1)
        relevant_chunk = ret2a.any(axis=0)
        m["claim_recall"] = _mean(recalled)
        m["context_precision"] = _mean(relevant_chunk)
        m["context_utilization"] = (float((recalled & r2a).sum() / recalled.sum()) if recalled.sum() else 0.0)
    else:
        relevant_chunk = np.zeros(0, dtype=bool)
        m.update(claim_recall=0.0, context_precision=0.0, context_utilization=0.0)
    if ret2r.ndim == 2 and ret2r.size and a2r.size:
        faithful = ret2r.any(axis=1)
        m["faithfulness"] = _mean(faithful)
        m["hallucination"] = _mean(~faithful & ~a2r)
        m["self_knowledge"] = _mean(~faithful & a2r)
        rel = (relevant_chunk if relevant_chunk.size == ret2r.shape[1]
               else np.zeros(ret2r.shape[1], dtype=bool))
        in_relevant = (ret2r & rel[None, :]).any(axis=1)
        in_irrelevant = (ret2r & ~rel[None, :]).any(axis=1) & ~in_relevant
        m["noise_sensitivity_in_relevant"] = _mean(in_relevant & ~a2r)
        m["noise_sensitivity_in_irrelevant"] = _mean(in_irrelevant & ~a2r)
    else:
        m.update(faithfulness=0.0, hallucination=0.0, self_knowledge=0.0, noise_sensitivity_in_relevant=0.0,
                 noise_sensitivity_in_irrelevant=0.0)
    return m


def example_metrics(results: Sequence[Mapping[str, JSON]] | None = None) -> dict[str, dict[str, float]]:
    """RAGChecker's printed metrics of a checked results file: the mean over the results of
    :func:`checking_metrics`, x 100, rounded to 1 decimal, grouped as RAGChecker prints them.

    ``results`` defaults to the ``results`` of RAGChecker's ``example_checking_outputs.json`` (data set
    ``ragchecker``, :mod:`ragworkbook.datasets`).
    """
    if results is None:
        import json

        from ragworkbook.datasets import dataset_file

        path = dataset_file("ragchecker", "example_checking_outputs.json")
        results = json.loads(path.read_text(encoding="utf-8"))["results"]
    per = [checking_metrics(r) for r in results]
    if not per:
        raise ValueError("no checked result to average")
    return {group: {m: round(float(np.mean([p[m] for p in per])) * 100, 1) for m in names}
            for group, names in METRIC_GROUPS.items()}
