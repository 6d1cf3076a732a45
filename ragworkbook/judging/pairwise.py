"""A pairwise judge: both answers in one prompt, asked in both orders.

Scoring two answers separately and comparing the numbers is not a pairwise
judgment: the judge never sees the answers side by side, and the order in which
it sees them cannot be varied. :func:`apairwise` asks one question that shows
the question, the reference answer (or the retrieved context) and both answers,
and asks which is better (``"1"``, ``"2"`` or ``"tie"``). It asks **twice**: once
with answer A shown first, once with answer B shown first
(:data:`~ragworkbook.judging.prompts.PROMPTS` ``"pairwise_with_reference"`` /
``"pairwise_with_context"``, schema :func:`~ragworkbook.judging.prompts.pairwise_schema`).

Each order's verdict is mapped back to the answers (``"A"``, ``"B"``, ``"tie"``).
The pair's verdict is

- ``"A"``, ``"B"`` or ``"tie"`` when both orders give the same one (*consistent*);
- ``"inconsistent"`` otherwise: the verdict changed with the order (A in one
  order, B in the other; or a preference in one order and a tie in the other).
  An inconsistent pair is a judging error of its own, never silently read as a
  tie;
- ``None`` with ``outcome == "failed"`` when either order's call failed (the
  error is kept; the other order's verdict too).

Model calls per pair: 2 (run concurrently; a cached request makes none).
Position bias shows as a judge choosing the answer shown first (or second) more
often than the other: :func:`position_bias` counts it over many pairs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragworkbook.judging.datasets import PairwiseInput
from ragworkbook.judging.judge import Judge, JudgeCall, synced
from ragworkbook.judging.prompts import PROMPTS, pairwise_schema
from ragworkbook.outcomes import FAILED, SCORED

__all__ = ["PairwiseResult", "apairwise", "pairwise", "apairwise_many", "pairwise_many", "position_bias",
           "VERDICTS"]

#: Verdicts of a pair: a consistent preference, a consistent tie, or a verdict that changed with the order.
VERDICTS = ("A", "B", "tie", "inconsistent")


@dataclass
class PairwiseResult:
    """The pairwise judgment of one pair of answers.

    ``forward`` is the verdict with A shown first, ``backward`` with B shown first, both
    mapped back to ``"A"``/``"B"``/``"tie"`` (None where that call failed); ``verdict``
    combines them (see the module docstring); ``outcome`` is ``"scored"`` or ``"failed"``
    (``error`` then says why). ``reasons`` holds each order's reason.
    """

    pair_id: str
    forward: str | None
    backward: str | None
    verdict: str | None
    outcome: str = SCORED
    error: str | None = None
    reasons: dict[str, str] = field(default_factory=dict)
    calls: list[JudgeCall] = field(default_factory=list)

    @property
    def consistent(self) -> bool | None:
        """True when both orders gave the same verdict, False when it flipped, None when a call failed."""
        if self.verdict is None:
            return None
        return self.verdict != "inconsistent"

    @property
    def first_shown_chosen(self) -> list[bool]:
        """For each order with a decisive verdict: did the judge choose the answer shown first?"""
        out = []
        if self.forward in ("A", "B"):
            out.append(self.forward == "A")
        if self.backward in ("A", "B"):
            out.append(self.backward == "B")
        return out


def _mapped(call: JudgeCall, first_is: str) -> str | None:
    """The verdict of one order in terms of the answers (``first_is`` = the answer shown as 1)."""
    if not call.ok:
        return None
    v = call.data["better"]
    if v == "tie":
        return "tie"
    other = "B" if first_is == "A" else "A"
    return first_is if v == "1" else other


async def apairwise(question: str, answer_a: str, answer_b: str, judge: Judge, *,
                    reference: str | None = None, context: str | None = None,
                    pair_id: str = "0") -> PairwiseResult:
    """Judge answer A against answer B for ``question``, in both orders (2 calls).

    Give the ``reference`` answer (prompt ``pairwise_with_reference``) or the retrieved
    ``context`` (``pairwise_with_context``), not both.
    """
    if (reference is None) == (context is None):
        raise ValueError("give exactly one of reference= (a reference answer) or context= (retrieved text)")
    name = "pairwise_with_reference" if reference is not None else "pairwise_with_context"
    evidence = {"reference": reference} if reference is not None else {"context": context}
    schema = pairwise_schema()
    template = PROMPTS[name]
    forward_prompt = template.format(question=question, first=answer_a, second=answer_b, **evidence)
    backward_prompt = template.format(question=question, first=answer_b, second=answer_a, **evidence)
    fwd, bwd = await asyncio.gather(judge.acall(name, forward_prompt, schema),
                                    judge.acall(name, backward_prompt, schema))
    forward, backward = _mapped(fwd, "A"), _mapped(bwd, "B")
    reasons = {order: c.data["reason"] for order, c in (("forward", fwd), ("backward", bwd)) if c.ok}
    calls = [fwd, bwd]
    bad = [c for c in calls if not c.ok]
    if bad:
        return PairwiseResult(pair_id, forward, backward, None, FAILED, f"{bad[0].prompt}: {bad[0].error}",
                              reasons, calls)
    verdict = forward if forward == backward else "inconsistent"
    return PairwiseResult(pair_id, forward, backward, verdict, SCORED, None, reasons, calls)


pairwise = synced(apairwise)


async def apairwise_many(pairs: Sequence[PairwiseInput], judge: Judge, *,
                         progress: bool = True) -> list[PairwiseResult]:
    """:func:`apairwise` over many pairs, concurrently (bounded by the judge), with a progress bar.

    Each pair is a dict with ``question``, ``answer_a``, ``answer_b``, ``reference`` or
    ``context``, and optionally ``pair_id``.
    """
    from tqdm.auto import tqdm

    bar = tqdm(total=len(pairs), desc="pairwise", disable=not progress)

    async def one(i: int, p: PairwiseInput) -> PairwiseResult:
        r = await apairwise(p["question"], p["answer_a"], p["answer_b"], judge, reference=p.get("reference"),
                            context=p.get("context"), pair_id=str(p.get("pair_id", i)))
        bar.update(1)
        return r

    try:
        return list(await asyncio.gather(*[one(i, p) for i, p in enumerate(pairs)]))
    finally:
        bar.close()


pairwise_many = synced(apairwise_many)


def position_bias(results: Sequence[PairwiseResult]) -> tuple[int, int]:
    """``(chose the answer shown first, decisive order-verdicts)`` over ``results``.

    Only order-verdicts that prefer an answer count (ties and failed calls do not).
    A judge without position bias chooses the first-shown answer about half the time.
    """
    chosen = [c for r in results for c in r.first_shown_chosen]
    return sum(chosen), len(chosen)
