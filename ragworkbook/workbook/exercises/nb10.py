"""Exercises of notebook 10 (completeness, utilization, NLI faithfulness, QuestEval) and their solutions."""

from __future__ import annotations

import json

from ragworkbook.judging.coverage import coverage_from_verdicts
from ragworkbook.judging.judge import Judge
from ragworkbook.judging.metrics import evaluate_judged
from ragworkbook.judging.questeval import questeval_from_answers
from ragworkbook.judging.results import JudgeSample
from ragworkbook.llm import get_generator
from ragworkbook.paths import data_path
from ragworkbook.pipeline.answers import load_answers
from ragworkbook.workbook.exercises import Count, Mistake, Number, Numbers, Solution, exercise, solves

_RELEVANT = [1, 1, 0, 0, 0, 0]
_USED = [1, 0, 0, 0, 0, 1]


def _coverage() -> tuple[float, float]:
    cov = coverage_from_verdicts(_RELEVANT, _USED)
    return cov["completeness"], cov["utilization"]


@exercise("10.1", "Completeness and utilization from verdicts",
          "Six context sentences; sentences 1 and 2 are relevant, the answer uses sentences 1 and 6. "
          "Predict (completeness, utilization), each to 3 decimals (or as a fraction), then compute them "
          "with coverage_from_verdicts.",
          reveals=[r"code:coverage_from_verdicts\(\s*\[1,\s*1,\s*0,\s*0,\s*0,\s*0\]"])
def _cov_answer() -> Numbers:
    used_relevant = sum(r and u for r, u in zip(_RELEVANT, _USED, strict=True))
    comp, util = _coverage()
    return Numbers([
        Number(comp, 3, "completeness", share=True, mistakes=[
            Mistake(sum(_USED) / sum(_RELEVANT), "completeness counts only the used sentences that are "
                                                 "relevant (sentence 6 is not)")]),
        Number(util, 3, "utilization", share=True, mistakes=[
            Mistake(used_relevant / len(_USED), "utilization counts every used sentence, relevant or not"),
            Mistake(sum(_USED) / sum(_RELEVANT), "utilization divides by all six sentences, not by the "
                                                 "relevant ones")])])


@solves("10.1")
def _solve_cov() -> Solution:
    comp, util = _coverage()
    return Solution((comp, util), f"Completeness = relevant and used / relevant = 1 / 2 = {comp:.2f}: the "
                                  "answer left out one of the two relevant sentences. Utilization = used / "
                                  f"all = 2 / 6 = {util:.3f}. It is closest to 'leaves relevant facts out' "
                                  "(a generation problem), with one used sentence that does not help with "
                                  "the question.")


def _samples_and_judge() -> tuple[list[JudgeSample], Judge]:
    run = load_answers(data_path("runs", "naive_rag_embedded.json"))
    samples = [JudgeSample(a.question, a.answer, [c.text for c in a.contexts], a.reference, a.id)
               for a in run]
    # replay the notebook's recorded judgments (also while the notebook itself is being recorded)
    generator = get_generator(backend="replay", recording=data_path("recordings", "10_beyond_ragas.json"))
    return samples, Judge(generator, max_concurrency=1)


def _contradictions() -> tuple[int, int, list[str]]:
    samples, judge = _samples_and_judge()
    rep = evaluate_judged(samples, judge, ["nli_faithfulness"], progress=False)
    counts = {r.sample_id: r.detail.get("counts", {}) for r in rep.results["nli_faithfulness"]}
    where = [sid for sid, c in counts.items() if c.get("contradiction")]
    return (sum(c.get("contradiction", 0) for c in counts.values()),
            sum(sum(c.values()) for c in counts.values()), where)


@exercise("10.2", "How often the judge says contradiction",
          "Over the eight answers of notebook 07, predict how many of the judge's NLI labels (on the claims "
          "it extracted itself, scored answers only) are 'contradiction' (a whole number), then count them.",
          reveals=[r"code:[\"']contradicted[\"']\s*:", r"nine contradictions", r"contradicted\s+neutral"])
def _contra_answer() -> Count:
    want, total, _ = _contradictions()
    return Count(want, "the number of contradictions", mistakes=[
        Mistake(total, "that is every label the judge gave; count only the 'contradiction' ones")],
        more="the judge says entailment to most claims",
        fewer="look at each result's detail['counts']: one answer holds several contradictions")


@solves("10.2")
def _solve_contra() -> Solution:
    n, total, where = _contradictions()
    path = data_path("author_labels", "naive_rag_embedded_labels.json")
    faithful = {lab["id"]: lab["faithful"] for lab in json.loads(path.read_text(encoding="utf-8"))["labels"]}
    kind = {1: "faithful", 0: "unfaithful"}
    on = ", ".join(f"{sid} ({kind[faithful[sid]]} for the authors)" for sid in where)
    return Solution(n, f"{n} of the {total} claim labels of the scored answers are 'contradiction', on "
                       f"{on}. The answer the authors found contradicting its own context, q7's 41.0 "
                       "seconds, gets none, and q6's single GPU is not scored at all (the judge found no "
                       "claim in it): the judge's contradictions do not fall where the errors are.")


_EXPECTED = ["8", "64", "the base model"]
_FROM_CONTEXT: list[str | None] = ["8", "512", "base model"]


def _qe() -> float:
    return questeval_from_answers(_EXPECTED, _FROM_CONTEXT)[0]


# 0.667 is also a faithfulness score printed in the notebook's tables: a coincidence
@exercise("10.3", "A QuestEval score by hand",
          "Expected answers '8', '64', 'the base model'; the context's answers '8', '512', 'base model'. "
          "Predict the QuestEval-style score (mean SQuAD token F1), to 3 decimals (or as a fraction), then "
          "compute it with questeval_from_answers.",
          reveals=[r"code:questeval_from_answers\(\s*\[\s*[\"']8[\"']"], reveals_value=False)
def _qe_answer() -> Number:
    strict = sum(float(e == c) for e, c in zip(_EXPECTED, _FROM_CONTEXT, strict=True)) / len(_EXPECTED)
    return Number(_qe(), 3, "the score", share=True, mistakes=[
        Mistake(strict, "that compares the strings exactly; SQuAD normalisation drops the article 'the' "
                        "before comparing tokens")],
        low="SQuAD normalisation drops the article: is 'base model' then the same as 'the base model'?",
        high="'512' and '64' share no token")


@solves("10.3")
def _solve_qe() -> Solution:
    score, f1s = questeval_from_answers(_EXPECTED, _FROM_CONTEXT)
    return Solution(score, f"Per question: '8' = '8' gives {f1s[0]:.0f}; '512' shares no token with '64', "
                           f"{f1s[1]:.0f}; 'base model' against 'the base model' is {f1s[2]:.0f} once the "
                           f"article is removed. Mean = {score:.3f}: the wrong number costs a whole "
                           "question, the missing article nothing.")
