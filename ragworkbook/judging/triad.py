"""The RAG triad: context relevance, groundedness, answer relevance.

TruLens's three checks, one per edge of the question -> context -> answer triangle:

- **context relevance** (question -> context): is what was retrieved about the
  question? We judge each retrieved chunk against the *question alone* (one call
  per chunk, verdict 0/1) and average the verdicts, as TruLens averages its
  per-chunk scores. We deliberately do not reuse the verdicts of context
  precision without reference: those judge a chunk against the *answer*, so a
  hallucinated answer would make good chunks look irrelevant and the triad could
  no longer tell a retrieval failure from a generation failure.
- **groundedness** (context -> answer): is the answer supported by the context?
  This is :func:`~ragworkbook.judging.metrics.afaithfulness` (same judgments).
- **answer relevance** (answer -> question): does the answer address the question?
  This is :func:`~ragworkbook.judging.metrics.aanswer_relevancy` (same judgments).

Model calls per sample: K (context relevance) + 2 (groundedness; 1 with given
claims) + 1 (answer relevance). With the same :class:`~ragworkbook.judging.judge.Judge`,
judgments already made for the RAGAS metrics come from its cache: no new call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragworkbook.judging.judge import Judge, synced
from ragworkbook.judging.metrics import (
    aanswer_relevancy,
    acontext_relevance,
    afaithfulness,
    context_relevance,
)
from ragworkbook.judging.results import JudgedResult, JudgeSample, aggregate_results
from ragworkbook.outcomes import FAILED, Aggregate

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LEGS", "TriadResult", "acontext_relevance", "context_relevance", "arag_triad", "rag_triad",
           "arag_triad_many", "rag_triad_many", "triad_aggregates", "triad_frame"]

LEGS = ("context_relevance", "groundedness", "answer_relevance")


@dataclass
class TriadResult:
    """The three legs for one sample, each a full :class:`JudgedResult`."""

    sample_id: str
    context_relevance: JudgedResult
    groundedness: JudgedResult
    answer_relevance: JudgedResult

    @property
    def scores(self) -> dict[str, float | None]:
        """Leg name -> score (None when failed or undefined)."""
        return {leg: getattr(self, leg).score for leg in LEGS}

    @property
    def statuses(self) -> dict[str, str]:
        """Leg name -> status (``"ok"``, ``"failed"`` or the undefined case)."""
        return {leg: getattr(self, leg).status for leg in LEGS}

    def diagnosis(self, threshold: float = 0.5) -> str:
        """A one-line reading of what the judge said: which legs fall below ``threshold``, in the
        judge's own verdicts (``the judge rated 1 of 3 chunks relevant``).

        It reports the judge, not the facts: whether retrieval really brought back
        off-topic chunks depends on how well this judge agrees with people
        (``ragworkbook judge-check``), which the triad does not know."""
        notes = []
        for leg in LEGS:
            r: JudgedResult = getattr(self, leg)
            if r.outcome == FAILED:
                notes.append(f"{leg}: judgment failed")
            elif r.score is None:
                notes.append(f"{leg}: undefined ({r.reason})")
            elif r.score < threshold:
                notes.append(f"{leg} {r.score:.2f}: {_what_the_judge_said(leg, r)}")
        return "the judge passes all three legs" if not notes else "; ".join(notes)


def _what_the_judge_said(leg: str, r: JudgedResult) -> str:
    verdicts = [it.get("verdict") for it in r.items if it.get("verdict") is not None]
    if leg == "context_relevance":
        return f"the judge rated {sum(verdicts)} of {len(verdicts)} chunks relevant to the question"
    if leg == "groundedness":
        if r.reason == "noncommittal" or not verdicts:
            return "the judge found the answer unsupported by the context"
        unsupported = len(verdicts) - sum(verdicts)
        return f"the judge found {unsupported} of {len(verdicts)} claims unsupported by the context"
    if r.reason == "noncommittal":
        return "the judge called the answer noncommittal"
    return "the questions the judge wrote back from the answer are far from the question"


async def arag_triad(sample: JudgeSample, judge: Judge, *, claims: Sequence[str] | None = None,
                     strictness: int = 3) -> TriadResult:
    """The three legs for one sample (run concurrently)."""
    cr, gr, ar = await asyncio.gather(
        acontext_relevance(sample, judge),
        afaithfulness(sample, judge, claims=claims),
        aanswer_relevancy(sample, judge, strictness=strictness),
    )
    gr.metric, ar.metric = "groundedness", "answer_relevance"
    return TriadResult(sample.sample_id, cr, gr, ar)


rag_triad = synced(arag_triad)


async def arag_triad_many(samples: Iterable[JudgeSample], judge: Judge, *,
                          progress: bool = True) -> list[TriadResult]:
    """The triad over many samples, concurrently (bounded by the judge), with a progress bar."""
    from tqdm.auto import tqdm

    samples = list(samples)
    bar = tqdm(total=len(samples), desc="triad", disable=not progress)

    async def one(s: JudgeSample) -> TriadResult:
        r = await arag_triad(s, judge)
        bar.update(1)
        return r

    try:
        return list(await asyncio.gather(*[one(s) for s in samples]))
    finally:
        bar.close()


rag_triad_many = synced(arag_triad_many)


def triad_aggregates(results: Sequence[TriadResult]) -> dict[str, Aggregate]:
    """One :class:`~ragworkbook.outcomes.Aggregate` per leg (failed / undefined counted, never NaN)."""
    return {leg: aggregate_results([getattr(r, leg) for r in results]) for leg in LEGS}


def triad_frame(results: Sequence[TriadResult]) -> pd.DataFrame:
    """A DataFrame: one row per sample, the three scores (nullable ``Float64``: a missing
    score shows ``<NA>``), their statuses and the diagnosis."""
    import pandas as pd

    rows = []
    for r in results:
        row: dict[str, Any] = {"sample_id": r.sample_id}
        row.update(r.scores)
        row.update({f"{k}_status": v for k, v in r.statuses.items()})
        row["diagnosis"] = r.diagnosis()
        rows.append(row)
    df = pd.DataFrame(rows).set_index("sample_id")
    return df.astype({leg: "Float64" for leg in LEGS})
