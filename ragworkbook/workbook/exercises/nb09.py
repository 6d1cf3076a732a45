"""Exercises of notebook 09 (LLM-judged metrics and the RAG triad) and their solutions.

The solutions that need the judge replay notebook 09's recording
(``ragworkbook/data/recordings/09_judge.json``), so they give the notebook's numbers without running a model.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ragworkbook.workbook.exercises import Solution, close, exercise, same_items, solves


def _carbon_verdicts() -> list[int]:
    import json

    from ragworkbook.paths import data_path

    data = json.loads(data_path("carbon_pricing.json").read_text(encoding="utf-8"))
    chunks = sorted(data["chunks"], key=lambda c: int(c["rank"]))
    return [int(c["grade"] > 0) for c in chunks]


def _moved() -> float:
    from ragworkbook.judging.metrics import context_precision_from_verdicts

    v = _carbon_verdicts()
    return context_precision_from_verdicts(v[1:] + v[:1])  # the rank-1 chunk moved to the last rank


@exercise("09.1", "Move the useless chunk",
          "The carbon-pricing ranking has its only irrelevant chunk at rank 1. Predict RAGAS context "
          "precision "
          "when that chunk is moved to the last rank (the other four keep their order), then compute it with "
          "context_precision_from_verdicts.")
def _check_moved(answer: Any) -> tuple[bool, str]:
    return close(answer, _moved(), what="context precision")


@solves("09.1")
def _solve_moved() -> Solution:
    return Solution(_moved(), "With the four useful chunks at ranks 1-4, precision@k is 1 at every useful "
                              "rank, "
                              "so the position-weighted mean is 1.0 (the chapter's relevant / retrieved "
                              "stays 0.8).")


@lru_cache(maxsize=1)
def _eight() -> Any:
    """The judged report of notebook 09's eight answers, replayed."""
    import json

    from ragworkbook.judging.judge import Judge
    from ragworkbook.judging.metrics import evaluate_judged
    from ragworkbook.judging.results import JudgeSample
    from ragworkbook.llm.replay import ReplayGenerator
    from ragworkbook.paths import data_path

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
          "scores, or of eight with a 0? Compute it from the report's aggregate.")
def _check_mean(answer: Any) -> tuple[bool, str]:
    return close(answer, _mean_faithfulness(), what="mean faithfulness")


@solves("09.2")
def _solve_mean() -> Solution:
    agg = _eight().aggregates["faithfulness"]
    return Solution(float(agg.mean), f"The mean is over the {agg.n} scored answers ({agg.failed} failed, "
                                     f"{agg.undefined} undefined are counted beside it, never averaged in as "
                                     "0 "
                                     f"or hidden as NaN): {agg}.")


def _judge_vs_labels() -> list[str]:
    import json

    from ragworkbook.paths import data_path

    path = data_path("author_labels", "naive_rag_embedded_labels.json")
    labels = json.loads(path.read_text(encoding="utf-8"))
    relevant = {rec["id"]: sum(c["relevant"] for c in rec["chunks"]) for rec in labels["labels"]}
    return sorted(r.sample_id for r in _eight().results["context_relevance"]
                  if r.score == 0.0 and relevant[r.sample_id] > 0)


@exercise("09.3", "The judge against the labels, chunk by chunk",
          "List the answers (ids like 'q2') whose chunks the judge rated all irrelevant to the question "
          "(context relevance 0.0) while the labels written by the project's authors mark at least one of "
          "those chunks relevant.")
def _check_disagree(answer: Any) -> tuple[bool, str]:
    return same_items(answer, _judge_vs_labels(), what="the answers")


@solves("09.3")
def _solve_disagree() -> Solution:
    ids = _judge_vs_labels()
    return Solution(ids, f"On {', '.join(ids)} the judge's verdicts say no retrieved chunk is about the "
                         "question, "
                         "yet the labels mark some relevant: the triad's 'context relevance 0.00' there is "
                         "the "
                         "judge's reading, not a fact about the retrieval.")
