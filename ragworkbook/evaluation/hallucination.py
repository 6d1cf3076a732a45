"""Faithfulness and the hallucination rate: two summaries of the same claim verdicts.

Faithfulness judges an answer claim by claim: each claim is supported by the retrieved context
or not. Three numbers summarise a set of answers, and they answer different questions:

- **faithfulness** (the RAGAS metric, the mean over answers of *supported claims / claims*):
  how much of a typical answer can be trusted;
- **hallucination rate** (the share of answers with *at least one* unsupported claim; the
  registry's ``hallucination``, the mean of :func:`ragworkbook.judging.metrics.hallucination`):
  how often a reader meets something made up. An answer with one wrong claim in ten has
  faithfulness 0.9 and counts fully as a hallucination;
- **claim support** (supported claims / all claims, pooled over answers): weights each answer
  by its number of claims, so a long answer counts more.

A system whose answers each carry one unsupported claim in five has faithfulness 0.8 and a
hallucination rate of 1.0; one that makes up one answer in five entirely and gets the rest
right also has faithfulness 0.8, and a hallucination rate of 0.2. Report the rate with its
interval (a proportion: the Wilson interval, :func:`ragworkbook.stats.sample_size.proportion`).

Answers without a score are counted, never read as "no hallucination": ``undefined`` (no claim
to check, e.g. an empty answer or a refusal) and ``failed`` (the judge's output could not be
parsed) are left out of every figure and reported beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ragworkbook.judging.results import JudgedResult
from ragworkbook.outcomes import FAILED, SCORED, UNDEFINED
from ragworkbook.stats.sample_size import Proportion, proportion

__all__ = ["HallucinationSummary", "summarize_claims", "summarize_faithfulness"]


@dataclass(frozen=True)
class HallucinationSummary:
    """The three summaries of a set of answers' claim verdicts (see the module docstring).

    ``faithfulness``: mean per-answer share of supported claims; ``rate``: answers with an
    unsupported claim, a :class:`~ragworkbook.stats.sample_size.Proportion` with its Wilson
    interval; ``claim_support``: supported claims of all claims (None when the claim counts are
    not known, e.g. from scores alone); ``scored`` / ``undefined`` / ``failed``: answers of each
    outcome."""

    faithfulness: float
    rate: Proportion
    claim_support: Proportion | None
    scored: int
    undefined: int = 0
    failed: int = 0

    @property
    def total(self) -> int:
        return self.scored + self.undefined + self.failed

    def __str__(self) -> str:
        parts = [f"faithfulness {self.faithfulness:.3f}", f"hallucination rate {self.rate}"]
        if self.claim_support is not None:
            parts.append(f"claim support {self.claim_support.value:.3f} "
                         f"({self.claim_support.k} of {self.claim_support.n} claims)")
        unscored = (f"; {self.undefined} undefined, {self.failed} failed" if self.undefined or self.failed
                    else "")
        return f"{self.scored} answers scored{unscored}: " + ", ".join(parts)


def summarize_claims(verdicts: Sequence[Sequence[int | bool] | None], confidence: float = 0.95
                     ) -> HallucinationSummary:
    """Summarise per-answer claim verdicts (1 = supported): one list per answer; an empty list or
    None is an answer with no claim to check (``undefined``)."""
    per_answer: list[tuple[int, int]] = []  # (supported, claims)
    undefined = 0
    for i, vs in enumerate(verdicts):
        if vs is None or len(vs) == 0:
            undefined += 1
            continue
        if isinstance(vs, (str, bytes)):
            raise TypeError(f"answer {i}: the verdicts must be a list of 0/1, got a string")
        bad = [v for v in vs if isinstance(v, float) and math.isnan(v) or v not in (0, 1)]
        if bad:
            raise ValueError(f"answer {i}: a claim verdict is 1 (supported) or 0 (not), got {bad[0]!r}")
        per_answer.append((sum(int(v) for v in vs), len(vs)))
    return _summary(per_answer, undefined, 0, confidence)


def summarize_faithfulness(results: Sequence[JudgedResult | float | None], confidence: float = 0.95
                           ) -> HallucinationSummary:
    """Summarise judged faithfulness: :class:`~ragworkbook.judging.results.JudgedResult` objects
    (their outcome and, when kept, their per-claim ``items``) or plain scores (None = no score,
    counted as undefined; claim support is then unknown)."""
    per_answer: list[tuple[int, int]] = []
    scores: list[float] = []
    undefined = failed = 0
    claims_known = True
    for i, r in enumerate(results):
        if isinstance(r, JudgedResult):
            if r.metric != "faithfulness":
                raise ValueError(f"result {i} is {r.metric!r}, not faithfulness")
            if r.outcome == FAILED:
                failed += 1
                continue
            if r.outcome == UNDEFINED or r.score is None:
                undefined += 1
                continue
            assert r.outcome == SCORED
            verdicts = [it.get("verdict") for it in (r.items or [])]
            if verdicts and all(v in (0, 1) for v in verdicts):
                per_answer.append((sum(verdicts), len(verdicts)))
            else:
                claims_known = False
            scores.append(float(r.score))
        elif r is None or (isinstance(r, float) and math.isnan(r)):
            undefined += 1
        elif isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 <= r <= 1:
            raise ValueError(f"result {i}: a faithfulness score is a number from 0 to 1, got {r!r}")
        else:
            scores.append(float(r))
            claims_known = False
    if claims_known and len(per_answer) == len(scores):
        return _summary(per_answer, undefined, failed, confidence)
    n = len(scores)
    rate = proportion(sum(s < 1.0 for s in scores), n, confidence)
    return HallucinationSummary(sum(scores) / n if n else math.nan, rate, None, n, undefined, failed)


def _summary(per_answer: list[tuple[int, int]], undefined: int, failed: int, confidence: float
             ) -> HallucinationSummary:
    n = len(per_answer)
    faith = sum(s / c for s, c in per_answer) / n if n else math.nan
    rate = proportion(sum(s < c for s, c in per_answer), n, confidence)
    claims = proportion(sum(s for s, _ in per_answer), sum(c for _, c in per_answer), confidence)
    return HallucinationSummary(faith, rate, claims, n, undefined, failed)
