"""Exercises of notebook 09 (LLM-judged metrics and the RAG triad) and their solutions.

The solutions that need the judge replay notebook 09's recording
(``ragworkbook/data/recordings/09_judge.json``), so they give the notebook's numbers without running a model.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING

from ragworkbook.judging.judge import Judge
from ragworkbook.judging.metrics import (
    context_precision_from_verdicts,
    evaluate_judged,
    simple_context_precision,
)
from ragworkbook.judging.results import JudgeSample
from ragworkbook.llm.replay import ReplayGenerator
from ragworkbook.paths import data_path
from ragworkbook.workbook.exercises import Mistake, Number, Solution, exercise, same_items, solves

if TYPE_CHECKING:
    from ragworkbook.judging.metrics import JudgedReport


def _carbon_verdicts() -> list[int]:
    data = json.loads(data_path("carbon_pricing.json").read_text(encoding="utf-8"))
    chunks = sorted(data["chunks"], key=lambda c: int(c["rank"]))
    return [int(c["grade"] > 0) for c in chunks]


def _moved() -> float:
    v = _carbon_verdicts()
    return context_precision_from_verdicts(v[1:] + v[:1])  # the rank-1 chunk moved to the last rank


@exercise("09.1", "Move the useless chunk",
          "The carbon-pricing ranking has its only irrelevant chunk at rank 1. Predict RAGAS context "
          "precision "
          "when that chunk is moved to the last rank (the other four keep their order), to 3 decimals, then "
          "compute it with context_precision_from_verdicts.",
          reveals=[r"code:\[1:\]\s*\+\s*\w+\[:1\]"],  # the first verdict moved to the end
          reveals_value=False)  # 1.0 is printed for many other things in the notebook
def _moved_answer() -> Number:
    return Number(_moved(), 3, "context precision", share=True, mistakes=[
        Mistake(simple_context_precision(_carbon_verdicts()),
                "that is the chapter's relevant / retrieved, which ignores the order; RAGAS averages "
                "precision@k over the ranks that hold a useful chunk"),
        Mistake(context_precision_from_verdicts(_carbon_verdicts()), "that is the score before the move")],
        low="with the useful chunks at ranks 1-4, what is precision@k at each of those ranks?")


@solves("09.1")
def _solve_moved() -> Solution:
    v = _carbon_verdicts()
    return Solution(_moved(), "With the four useful chunks at ranks 1-4, precision@k is 1 at every useful "
                              f"rank, so the position-weighted mean is {_moved():.1f}, up from "
                              f"{context_precision_from_verdicts(v):.3f}; the chapter's relevant / retrieved "
                              f"stays {simple_context_precision(v):.1f} wherever the chunk sits.")


@lru_cache(maxsize=1)
def _eight() -> JudgedReport:
    """The judged report of notebook 09's eight answers, replayed."""
    run = json.loads(data_path("runs", "naive_rag_embedded.json").read_text(encoding="utf-8"))
    samples = [JudgeSample.from_mapping(a, sample_id=a["id"]) for a in run["answers"]]
    judge = Judge(ReplayGenerator(data_path("recordings", "09_judge.json")), max_concurrency=2)
    return evaluate_judged(samples, judge, ["faithfulness", "context_relevance"], progress=False)


def _mean_faithfulness() -> float:
    return float(_eight().aggregates["faithfulness"].mean)


@exercise("09.2", "A mean that says over how many",
          "One of the eight answers has no faithfulness (its outcome is undefined: the judge found no "
          "claim). "
          "Predict the mean faithfulness the package reports for the eight answers: is it the mean of seven "
          "scores, or of eight with a 0? Give it to 3 decimals, then compute it from the report's aggregate.",
          reveals=[r"code:\.summary\(", r"code:aggregates\["])
def _mean_answer() -> Number:
    agg = _eight().aggregates["faithfulness"]
    return Number(_mean_faithfulness(), 3, "mean faithfulness", share=True, mistakes=[
        Mistake(float(agg.mean) * agg.n / (agg.n + agg.undefined + agg.failed),
                "that averages the undefined answer in as a 0: an undefined score is counted beside the "
                "mean, never inside it")],
        low="average only the scored answers (status ok)", high="average only the scored answers (status ok)")


@solves("09.2")
def _solve_mean() -> Solution:
    agg = _eight().aggregates["faithfulness"]
    return Solution(float(agg.mean), f"The mean is over the {agg.n} scored answers ({agg.failed} failed, "
                                     f"{agg.undefined} undefined are counted beside it, never averaged in as "
                                     "0 "
                                     f"or hidden as NaN): {agg}.")


def _judge_vs_labels() -> list[str]:
    path = data_path("author_labels", "naive_rag_embedded_labels.json")
    labels = json.loads(path.read_text(encoding="utf-8"))
    relevant = {rec["id"]: sum(c["relevant"] for c in rec["chunks"]) for rec in labels["labels"]}
    return sorted(r.sample_id for r in _eight().results["context_relevance"]
                  if r.score == 0.0 and relevant[r.sample_id] > 0)


@exercise("09.3", "The judge against the labels, chunk by chunk",
          "List the answers (ids like 'q2') whose chunks the judge rated all irrelevant to the question "
          "(context relevance 0.0) while the labels written by the project's authors mark at least one of "
          "those chunks relevant.",
          reveals=[r"code:author_labels", r"chunks relevant \(labels\)", r"labels mark two"],
          reveals_value=False)  # the ids are printed everywhere; the labels beside the judge reveal it
def _check_disagree(answer: object) -> tuple[bool, str]:
    return same_items(answer, _judge_vs_labels(), what="the answers")


@solves("09.3")
def _solve_disagree() -> Solution:
    ids = _judge_vs_labels()
    return Solution(ids, f"On {', '.join(ids)} the judge's verdicts say no retrieved chunk is about the "
                         "question, "
                         "yet the labels mark some relevant: the triad's 'context relevance 0.00' there is "
                         "the "
                         "judge's reading, not a fact about the retrieval.")
