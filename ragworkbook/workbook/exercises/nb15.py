"""Exercises of notebook 15 (your own RAG system: scoring given outputs) and their solutions."""

from __future__ import annotations

import json

from ragworkbook._types import JSONObject
from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.evaluation.compare import compare_reports
from ragworkbook.evaluation.outputs import evaluate_outputs
from ragworkbook.paths import data_path
from ragworkbook.workbook.exercises import Mistake, Number, Solution, exercise, same_items, solves, yes_no

_QUESTION = "What optimizer was used for training?"
_NAMES = ["precision@3", "recall@3", "mrr@3", "ndcg@3", "hit_rate@3"]


def _records(system: str) -> list[JSONObject]:
    """The records of ``ragworkbook/data/outputs/<system>_ragas.jsonl`` (``dense`` or ``bm25``)."""
    text = data_path("outputs", f"{system}_ragas.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _keyword_only() -> list[str]:
    """The retrieval metrics that keep a value when the dense records carry a keyword, not relevant ids."""
    keywords = {it.question: it.keyword for it in load_eval_set()}
    recs = [{**{k: v for k, v in r.items() if k != "reference_context_ids"},
             "keyword": keywords[r["user_input"]]} for r in _records("dense")]
    rep = evaluate_outputs(recs, metrics=_NAMES, progress=False)
    return [m for m, a in rep.aggregates.items() if a.n > 0]


def _recall_optimizer() -> float:
    rep = evaluate_outputs(_records("dense"), metrics=["recall@3"], progress=False)
    (row,) = [r for r in rep.rows if r["question"] == _QUESTION]
    return float(row["metrics"]["recall@3"])


def _bm25_worse() -> bool:
    a = evaluate_outputs(_records("dense"), metrics=["recall@3"], progress=False)
    b = evaluate_outputs(_records("bm25"), metrics=["recall@3"], progress=False)
    return bool(compare_reports(a, b).worse("recall@3"))


@exercise("15.1", "Recall of one answer, by id",
          "Predict the dense system's Recall@3 on the optimizer question from its retrieved and relevant "
          "context ids, to 3 decimals (or as a fraction), then check it with the report.",
          reveals=[r"code:recall_by_hand", r"code:per_q\["])
def _recall_answer() -> Number:
    (rec,) = [r for r in _records("dense") if r["user_input"] == _QUESTION]
    found = len(set(rec["retrieved_context_ids"][:3]) & set(rec["reference_context_ids"]))
    precision = Mistake(found / 3, "that divides by the 3 retrieved passages (precision); recall divides by "
                                   "the number of relevant ones")
    # a mistake that gives the right number here (3 relevant ids) is no mistake to name
    return Number(_recall_optimizer(), 3, "Recall@3", share=True,
                  mistakes=[precision] if abs(precision.value - _recall_optimizer()) > 5e-4 else [],
                  low="count the relevant ids among the first three retrieved again",
                  high="recall divides by every relevant id of the record, retrieved or not")


@solves("15.1")
def _solve_recall() -> Solution:
    (rec,) = [r for r in _records("dense") if r["user_input"] == _QUESTION]
    found = [c for c in rec["retrieved_context_ids"] if c in rec["reference_context_ids"]]
    value = _recall_optimizer()
    retrieved, relevant = rec["retrieved_context_ids"], rec["reference_context_ids"]
    return Solution(value, f"Retrieved {retrieved}; relevant {relevant}. "
                           f"{len(found)} of the {len(relevant)} relevant chunks "
                           f"({', '.join(found)}) are in the top 3: Recall@3 = {value:.3f}.")


@exercise("15.2", "What a keyword can tell",
          "Replace each record's relevant ids by the question's keyword. Which of precision@3, recall@3, "
          "mrr@3, ndcg@3 and hit_rate@3 still get a value? Give the list.",
          reveals=[r"incomplete_relevance", r"cannot be known while"],
          reveals_value=False)  # the metric names are printed everywhere
def _check_keyword(answer: object) -> tuple[bool, str]:
    return same_items(answer, _keyword_only(), what="the metrics with a value")


@solves("15.2")
def _solve_keyword() -> Solution:
    names = _keyword_only()
    return Solution(names, "A keyword says which retrieved contexts are relevant, so everything computed "
                           f"from the top 3 alone survives ({', '.join(names)}). It cannot say how many "
                           "relevant passages the corpus holds, so recall and NDCG (whose ideal ranking "
                           "needs them all) are undefined, reason 'incomplete_relevance'.")


@exercise("15.3", "Does the gate fail?",
          "Compare BM25 (B) with dense (A) on recall@3 with the paired test. Is B significantly worse at "
          "alpha = 0.05, so that `--fail-if-worse recall@3` fails? Answer True or False.",
          reveals=[r"code:compare_reports\(", r"code:--fail-if-worse", r"the gate passes"])
def _check_gate(answer: object) -> tuple[bool, str]:
    want = _bm25_worse()
    return yes_no(answer, want, right=f"B is {'' if want else 'not '}significantly worse on recall@3",
                  wrong="a lower mean is not yet a significant loss: how small a p-value can a sign-flip "
                        "test on eight paired questions give, and how consistent is the loss?")


@solves("15.3")
def _solve_gate() -> Solution:
    worse = _bm25_worse()
    return Solution(worse, "With eight questions the paired randomisation test needs a large, consistent "
                           "difference to call it significant; "
                           + ("BM25's loss is large and consistent enough: the gate fails." if worse else
                              "BM25's loss is not consistent enough across the eight pairs: the gate "
                              "passes, although the mean is lower. A passing gate is not proof of no "
                              "regression on so few questions."))
