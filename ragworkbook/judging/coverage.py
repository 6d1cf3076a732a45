"""Completeness and utilization: how much of the retrieved context the answer uses.

Groundedness (faithfulness) asks whether what the answer says is in the context. Two more
questions look the other way, from the context to the answer (the groundedness / completeness /
utilization framing of RAG diagnostics, as in RAGBench's TRACe):

- **utilization** = context sentences the answer uses / all context sentences;
- **completeness** = relevant context sentences the answer uses / relevant context sentences.

The context is split into sentences (:func:`context_units`); for every sentence the judge
says whether it is **relevant** to the question and whether the answer **uses** it (states
information taken from it). One judge call per retrieved chunk (its sentences numbered), run
concurrently; both metrics are computed from the same verdicts (:func:`coverage_from_verdicts`),
so asking for both costs the calls of one (the judge caches them).

Reading the two together:

- low completeness: the context held relevant information the answer left out — a
  *generation* problem (the model ignored or missed it);
- low utilization with high completeness: the answer used what mattered, but most of the
  context was never needed — *padding* (too many or too long chunks; a retrieval and cost
  problem, not a wrong answer);
- low utilization and low completeness: both at once.

Outcomes (:mod:`ragworkbook.outcomes`): an empty answer uses nothing, so utilization is
scored 0.0 (reason ``"empty_answer"``, no call) and completeness is undefined
(``"empty_answer"``: relevance was not judged); no context is undefined for both
(``"empty_context"``); a context with no relevant sentence leaves completeness undefined
(``"no_relevant_context"``) and utilization scored. A failed judge call, or a reply with the
wrong number of verdicts (``"wrong_verdict_count"``), makes the sample ``failed``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from ragworkbook._types import JSON, JSONObject
from ragworkbook.judging.judge import Judge, JudgeCall, synced
from ragworkbook.judging.results import JudgedResult, JudgeSample, failed, scored, undefined

__all__ = [
    "COVERAGE_PROMPT",
    "coverage_schema",
    "context_units",
    "coverage_from_verdicts",
    "acoverage",
    "acompleteness",
    "autilization",
    "completeness",
    "utilization",
]

#: What the judge is asked for one chunk (``str.format`` fields in braces).
COVERAGE_PROMPT = (
    "A question, an answer to it, and numbered sentences from one retrieved passage.\n\n"
    "Question: {question}\nAnswer: {answer}\n\n"
    "Sentences:\n{units}\n\n"
    "For each sentence give two verdicts:\n"
    "- relevant: 1 if the sentence contains information that helps answer the question, else 0;\n"
    "- used: 1 if the answer states information taken from this sentence, else 0.\n\n"
    "Reply in JSON with the key \"sentences\": a list of exactly {n} objects with keys "
    "\"relevant\" and \"used\" (0 or 1), in the order of the sentences."
)

_BIT = {"type": "integer", "enum": [0, 1]}


def coverage_schema(n: int) -> JSONObject:
    """Schema of one chunk's verdicts: ``{"sentences": [{"relevant": 0|1, "used": 0|1}] * n}``."""
    if n < 1:
        raise ValueError(f"coverage_schema needs n >= 1, got {n}")
    return {
        "type": "object",
        "properties": {
            "sentences": {
                "type": "array",
                "items": {"type": "object", "properties": {"relevant": _BIT, "used": _BIT},
                          "required": ["relevant", "used"]},
                "minItems": n,
                "maxItems": n,
            }
        },
        "required": ["sentences"],
    }


_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")


def context_units(text: str, min_chars: int = 25) -> list[str]:
    """Split a chunk into the units the judge rates: sentences and lines.

    Breaks at ``.``, ``!`` or ``?`` followed by white space, and at line breaks; whitespace
    inside a unit is collapsed. A piece shorter than ``min_chars`` (a fragment cut by the
    chunk's window, a bullet like ``"- 8"``) is joined to the next piece (to the previous
    one at the end), so every unit says something. An empty text has no unit.
    """
    pieces = [" ".join(p.split()) for p in _BREAK.split(text or "")]
    pieces = [p for p in pieces if p]
    units: list[str] = []
    carry = ""
    for p in pieces:
        p = f"{carry} {p}".strip() if carry else p
        if len(p) < min_chars:
            carry = p
            continue
        units.append(p)
        carry = ""
    if carry:
        if units:
            units[-1] = f"{units[-1]} {carry}"
        else:
            units.append(carry)
    return units


def _bit(x: JSON) -> int:
    if isinstance(x, bool) or x in (0, 1):
        return int(x)
    raise ValueError(f"a verdict must be 0/1 or a bool, got {x!r}")


def coverage_from_verdicts(relevant: Sequence[int | bool], used: Sequence[int | bool]) -> dict[str, Any]:
    """Utilization, completeness and relevance from per-sentence 0/1 verdicts (same order, same length).

    ``utilization = sum(used) / n``; ``completeness = sum(relevant and used) / sum(relevant)``
    (None when no sentence is relevant); ``relevance = sum(relevant) / n``. Also the counts
    ``n``, ``n_relevant``, ``n_used``, ``n_relevant_used`` and ``n_used_irrelevant``.
    ValueError for no sentence or lists of different lengths.
    """
    r = [_bit(x) for x in relevant]
    u = [_bit(x) for x in used]
    if len(r) != len(u):
        raise ValueError(f"{len(r)} relevance verdicts but {len(u)} use verdicts")
    if not r:
        raise ValueError("no sentence to score: the context is empty")
    n, n_rel, n_used = len(r), sum(r), sum(u)
    both = sum(a and b for a, b in zip(r, u, strict=True))
    return {"utilization": n_used / n, "completeness": (both / n_rel) if n_rel else None,
            "relevance": n_rel / n, "n": n, "n_relevant": n_rel, "n_used": n_used,
            "n_relevant_used": both, "n_used_irrelevant": n_used - both}


async def acoverage(sample: JudgeSample, judge: Judge, *,
                    min_chars: int = 25) -> tuple[list[dict[str, Any]], list[JudgeCall], JudgeCall | None]:
    """Judge every context sentence of ``sample``: ``(items, calls, first_failed_call)``.

    ``items`` has one dict per sentence: ``rank`` (of its chunk), ``unit`` (its text),
    ``relevant`` and ``used`` (None when that chunk's call failed). One call per non-empty
    chunk, concurrently. A reply with the wrong number of verdicts counts as a failed call
    (its ``error`` says ``wrong_verdict_count``).
    """
    per_chunk = [(rank, context_units(ctx, min_chars)) for rank, ctx in enumerate(sample.contexts, start=1)]
    per_chunk = [(rank, units) for rank, units in per_chunk if units]

    async def one(units: list[str]) -> JudgeCall:
        numbered = "\n".join(f"{i}. {u}" for i, u in enumerate(units, start=1))
        prompt = COVERAGE_PROMPT.format(question=sample.question, answer=sample.answer, units=numbered,
                                        n=len(units))
        call = await judge.acall("coverage", prompt, coverage_schema(len(units)))
        if call.ok and len(call.data["sentences"]) != len(units):
            call.error = (f"wrong_verdict_count: expected {len(units)} verdicts, "
                          f"got {len(call.data['sentences'])}")
        return call

    calls = list(await asyncio.gather(*[one(units) for _, units in per_chunk]))
    items: list[dict[str, Any]] = []
    for (rank, units), call in zip(per_chunk, calls, strict=True):
        verdicts = call.data["sentences"] if call.ok else [None] * len(units)
        for unit, v in zip(units, verdicts, strict=True):
            items.append({"rank": rank, "unit": unit,
                          "relevant": None if v is None else int(v["relevant"]),
                          "used": None if v is None else int(v["used"])})
    bad = next((c for c in calls if not c.ok), None)
    return items, calls, bad


async def _coverage_metric(metric: str, sample: JudgeSample, judge: Judge, min_chars: int) -> JudgedResult:
    if not any(c.strip() for c in sample.contexts):
        return undefined(metric, sample, "empty_context")
    if not sample.answer.strip():
        if metric == "utilization":
            return scored(metric, sample, 0.0, "empty_answer")
        return undefined(metric, sample, "empty_answer")
    items, calls, bad = await acoverage(sample, judge, min_chars=min_chars)
    if bad is not None:
        return failed(metric, sample, bad, items=items, calls=calls)
    cov = coverage_from_verdicts([it["relevant"] for it in items], [it["used"] for it in items])
    detail = {k: v for k, v in cov.items() if k != metric}
    value = cov[metric]
    if value is None:
        return undefined(metric, sample, "no_relevant_context", items=items, calls=calls, detail=detail)
    return scored(metric, sample, value, items=items, calls=calls, detail=detail)


async def acompleteness(sample: JudgeSample, judge: Judge, *, min_chars: int = 25) -> JudgedResult:
    """Completeness: relevant context sentences the answer uses / relevant context sentences.

    Model calls: one per retrieved chunk (shared with :func:`autilization`); none for an
    empty answer or context. Undefined when the judge finds no relevant sentence.
    """
    return await _coverage_metric("completeness", sample, judge, min_chars)


async def autilization(sample: JudgeSample, judge: Judge, *, min_chars: int = 25) -> JudgedResult:
    """Utilization: context sentences the answer uses / all context sentences.

    Model calls: one per retrieved chunk (shared with :func:`acompleteness`); none for an
    empty answer (scored 0.0) or an empty context (undefined).
    """
    return await _coverage_metric("utilization", sample, judge, min_chars)


completeness = synced(acompleteness)
utilization = synced(autilization)
