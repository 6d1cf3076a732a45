"""NLI-style faithfulness: a three-way verdict per claim — entailment, contradiction or neutral.

RAGAS-style faithfulness (:func:`ragworkbook.judging.metrics.afaithfulness`) gives each claim
of the answer one bit: supported or not. That bit merges two different failures: a claim the
context **does not mention** (unsupported: the model added something) and a claim the context
**contradicts** (the model got it wrong against its own evidence). Natural-language inference
(NLI) keeps them apart: with the retrieved context as the premise and each claim as the
hypothesis, the verdict is

- ``entailment``: the context states or implies the claim;
- ``contradiction``: the context states something incompatible with the claim;
- ``neutral``: the context neither supports nor contradicts it.

An NLI classifier model would give these verdicts; no PyPI package ships one, so the local
LLM judge gives them here, one schema-constrained call per claim (premise, hypothesis, label),
run concurrently. Claims are extracted with the same prompt and schema as faithfulness
(:data:`ragworkbook.judging.prompts.PROMPTS` ``["statements"]``), so a run that asks for both
reuses the extraction from the judge's cache.

Two metrics from the same verdicts (:func:`nli_from_labels`):

- ``nli_faithfulness`` = entailed claims / claims (higher is better);
- ``nli_contradiction`` = contradicted claims / claims (lower is better): the share of the
  answer that its own context refutes, reported apart from the merely unsupported
  (``neutral``) share, which ``detail`` also gives.

Outcomes: an empty answer is undefined (``"empty_answer"``), an answer without claims too
(``"no_claims"``); no context makes every claim neutral without a call (scored, reason
``"empty_context"``); any failed call makes the sample ``failed``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ragworkbook._types import JSONObject
from ragworkbook.judging.judge import Judge, JudgeCall, synced
from ragworkbook.judging.results import JudgedResult, JudgeSample, failed, scored, undefined

__all__ = ["LABELS", "NLI_PROMPT", "nli_schema", "nli_from_labels", "aclaims", "anli_verdicts",
           "anli_faithfulness", "anli_contradiction", "nli_faithfulness", "nli_contradiction"]

#: The three NLI labels.
LABELS = ("entailment", "contradiction", "neutral")

#: What the judge is asked for one claim (``str.format`` fields in braces).
NLI_PROMPT = (
    "Premise (retrieved context):\n{context}\n\n"
    "Hypothesis: {claim}\n\n"
    "Decide how the premise relates to the hypothesis:\n"
    "- entailment: the premise states or clearly implies the hypothesis;\n"
    "- contradiction: the premise states something that makes the hypothesis false;\n"
    "- neutral: the premise does not say whether the hypothesis is true.\n\n"
    "Reply in JSON with the keys \"reason\" (one short sentence) and \"label\" "
    "(\"entailment\", \"contradiction\" or \"neutral\")."
)


def nli_schema() -> JSONObject:
    """Schema of one NLI verdict: ``{"reason": str, "label": "entailment"|"contradiction"|"neutral"}``."""
    return {"type": "object",
            "properties": {"reason": {"type": "string"}, "label": {"type": "string", "enum": list(LABELS)}},
            "required": ["reason", "label"]}


def nli_from_labels(labels: Sequence[str]) -> dict[str, Any]:
    """Scores from per-claim labels: ``nli_faithfulness`` (entailed share), ``nli_contradiction``
    (contradicted share), ``neutral`` (neither), and the ``counts`` of each label.

    ValueError for an empty list or a label outside :data:`LABELS`.
    """
    labels = list(labels)
    if not labels:
        raise ValueError("no claim to score: nli scores need at least one label")
    bad = [x for x in labels if x not in LABELS]
    if bad:
        raise ValueError(f"unknown NLI label(s) {bad}; the labels are {', '.join(LABELS)}")
    n = len(labels)
    counts = {lab: labels.count(lab) for lab in LABELS}
    return {"nli_faithfulness": counts["entailment"] / n, "nli_contradiction": counts["contradiction"] / n,
            "neutral": counts["neutral"] / n, "counts": counts, "n_claims": n}


def _context_block(contexts: Sequence[str]) -> str:
    return "\n".join(f"[{i}] {c}" for i, c in enumerate(contexts, start=1))


async def aclaims(sample: JudgeSample, judge: Judge, max_statements: int = 10) -> JudgeCall:
    """The claim extraction of faithfulness (same prompt and schema, so it shares the judge's cache)."""
    from ragworkbook.judging.prompts import PROMPTS, statements_schema

    return await judge.acall("statements", PROMPTS["statements"].format(
        question=sample.question, answer=sample.answer), statements_schema(max_statements))


async def anli_verdicts(sample: JudgeSample, judge: Judge, *, claims: Sequence[str] | None = None,
                        max_statements: int = 10) -> tuple[str, list[dict[str, Any]], list[JudgeCall],
                                                           JudgeCall | None]:
    """Extract the claims (unless given) and judge each against the context.

    Returns ``(status, items, calls, first_failed_call)``; ``status`` is ``"ok"``,
    ``"empty_answer"``, ``"no_claims"``, ``"empty_context"`` or ``"failed"``; ``items`` one dict
    per claim: ``claim``, ``label`` and ``reason`` (None where the call failed).
    """
    if not sample.answer.strip():
        return "empty_answer", [], [], None
    calls: list[JudgeCall] = []
    if claims is None:
        c = await aclaims(sample, judge, max_statements)
        calls.append(c)
        if not c.ok:
            return "failed", [], calls, c
        claims = [s.strip() for s in c.data["statements"] if s.strip()]
    else:
        claims = [str(s).strip() for s in claims if str(s).strip()]
    if not claims:
        return "no_claims", [], calls, None
    if not any(ctx.strip() for ctx in sample.contexts):
        items = [{"claim": s, "label": "neutral", "reason": "no context was retrieved"} for s in claims]
        return "empty_context", items, calls, None
    context = _context_block(sample.contexts)
    verdicts = await asyncio.gather(*[
        judge.acall("nli", NLI_PROMPT.format(context=context, claim=s), nli_schema()) for s in claims])
    calls.extend(verdicts)
    items = [{"claim": s, "label": v.data["label"] if v.ok else None,
              "reason": v.data["reason"] if v.ok else None} for s, v in zip(claims, verdicts, strict=True)]
    bad = next((v for v in verdicts if not v.ok), None)
    return ("failed" if bad else "ok"), items, calls, bad


async def _nli_metric(metric: str, sample: JudgeSample, judge: Judge, claims: Sequence[str] | None,
                      max_statements: int) -> JudgedResult:
    status, items, calls, bad = await anli_verdicts(sample, judge, claims=claims,
                                                    max_statements=max_statements)
    if status in ("empty_answer", "no_claims"):
        return undefined(metric, sample, status, calls=calls)
    if status == "failed":
        assert bad is not None
        return failed(metric, sample, bad, items=items, calls=calls)
    scores = nli_from_labels([it["label"] for it in items])
    detail = {k: v for k, v in scores.items() if k != metric}
    return scored(metric, sample, scores[metric], None if status == "ok" else status, items=items,
                  calls=calls, detail=detail)


async def anli_faithfulness(sample: JudgeSample, judge: Judge, *, claims: Sequence[str] | None = None,
                            max_statements: int = 10) -> JudgedResult:
    """NLI faithfulness: claims the context entails / claims. Model calls: 1 extraction (skipped when
    ``claims=`` are given; shared with faithfulness through the cache) + 1 per claim."""
    return await _nli_metric("nli_faithfulness", sample, judge, claims, max_statements)


async def anli_contradiction(sample: JudgeSample, judge: Judge, *, claims: Sequence[str] | None = None,
                             max_statements: int = 10) -> JudgedResult:
    """NLI contradiction rate: claims the context contradicts / claims (lower is better). Same calls
    as :func:`anli_faithfulness` (cached)."""
    return await _nli_metric("nli_contradiction", sample, judge, claims, max_statements)


nli_faithfulness = synced(anli_faithfulness)
nli_contradiction = synced(anli_contradiction)
