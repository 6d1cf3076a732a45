"""Exercises of notebook 10 (completeness, utilization, NLI faithfulness, QuestEval) and their solutions."""

from __future__ import annotations

from typing import Any

from ragworkbook.workbook.exercises import Solution, close, close_each, exercise, solves

_RELEVANT = [1, 1, 0, 0, 0, 0]
_USED = [1, 0, 0, 0, 0, 1]


def _coverage() -> tuple[float, float]:
    from ragworkbook.judging.coverage import coverage_from_verdicts

    cov = coverage_from_verdicts(_RELEVANT, _USED)
    return cov["completeness"], cov["utilization"]


@exercise("10.1", "Completeness and utilization from verdicts",
          "Six context sentences; sentences 1 and 2 are relevant, the answer uses sentences 1 and 6. "
          "Predict (completeness, utilization), then compute them with coverage_from_verdicts.")
def _check_cov(answer: Any) -> tuple[bool, str]:
    return close_each(answer, _coverage(), ("completeness", "utilization"))


@solves("10.1")
def _solve_cov() -> Solution:
    comp, util = _coverage()
    return Solution((comp, util), f"Completeness = relevant and used / relevant = 1 / 2 = {comp:.2f}: the "
                                  "answer left out one of the two relevant sentences. Utilization = used / "
                                  f"all = 2 / 6 = {util:.3f}. It is closest to 'leaves relevant facts out' "
                                  "(a generation problem), with one used sentence that does not help with "
                                  "the question.")


def _samples_and_judge() -> tuple[list[Any], Any]:
    from ragworkbook.judging.judge import Judge
    from ragworkbook.judging.results import JudgeSample
    from ragworkbook.llm import get_generator
    from ragworkbook.paths import data_path
    from ragworkbook.pipeline.answers import load_answers

    run = load_answers(data_path("runs", "naive_rag_embedded.json"))
    samples = [JudgeSample(a.question, a.answer, [c.text for c in a.contexts], a.reference, a.id)
               for a in run]
    # replay the notebook's recorded judgments (also while the notebook itself is being recorded)
    generator = get_generator(backend="replay", recording=data_path("recordings", "10_beyond_ragas.json"))
    judge = Judge(generator, max_concurrency=1)
    return samples, judge


def _contradictions() -> tuple[int, int, list[str]]:
    from ragworkbook.judging.metrics import evaluate_judged

    samples, judge = _samples_and_judge()
    rep = evaluate_judged(samples, judge, ["nli_faithfulness"], progress=False)
    counts = {r.sample_id: r.detail.get("counts", {}) for r in rep.results["nli_faithfulness"]}
    where = [sid for sid, c in counts.items() if c.get("contradiction")]
    return (sum(c.get("contradiction", 0) for c in counts.values()),
            sum(sum(c.values()) for c in counts.values()), where)


@exercise("10.2", "How often the judge says contradiction",
          "Over the eight answers of notebook 07, predict how many of the judge's NLI labels (on the claims "
          "it extracted itself, scored answers only) are 'contradiction', then count them.")
def _check_contra(answer: Any) -> tuple[bool, str]:
    if isinstance(answer, bool) or not isinstance(answer, int):
        return False, f"give a count (a whole number), got {type(answer).__name__}"
    want, total, _ = _contradictions()
    if answer == want:
        return True, f"{want} of the {total} labels are contradictions"
    return False, f"{answer} is too {'many' if answer > want else 'few'}"


@solves("10.2")
def _solve_contra() -> Solution:
    from ragworkbook.paths import data_path

    n, total, where = _contradictions()
    import json

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
    from ragworkbook.judging.questeval import questeval_from_answers

    return questeval_from_answers(_EXPECTED, _FROM_CONTEXT)[0]


@exercise("10.3", "A QuestEval score by hand",
          "Expected answers '8', '64', 'the base model'; the context's answers '8', '512', 'base model'. "
          "Predict the QuestEval-style score (mean SQuAD token F1), then compute it with "
          "questeval_from_answers.")
def _check_qe(answer: Any) -> tuple[bool, str]:
    return close(answer, _qe(), what="the score")


@solves("10.3")
def _solve_qe() -> Solution:
    from ragworkbook.judging.questeval import questeval_from_answers

    score, f1s = questeval_from_answers(_EXPECTED, _FROM_CONTEXT)
    return Solution(score, f"Per question: '8' = '8' gives {f1s[0]:.0f}; '512' shares no token with '64', "
                           f"{f1s[1]:.0f}; 'base model' against 'the base model' is {f1s[2]:.0f} once the "
                           f"article is removed. Mean = {score:.3f}: the wrong number costs a whole "
                           "question, the missing article nothing.")
