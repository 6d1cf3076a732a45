"""QuestEval-style precision: questions from the answer, answered from the context, compared by token F1."""

from __future__ import annotations

import json

import pytest
from fakes.context_judges import ContextRuleJudge
from fakes.judges import GarbageJudge

from ragworkbook.judging.judge import Judge
from ragworkbook.judging.metrics import evaluate_judged
from ragworkbook.judging.questeval import qg_schema, questeval, questeval_from_answers
from ragworkbook.judging.results import JudgeSample

SAMPLE = JudgeSample(
    question="Which carbon pricing mechanism did Canada introduce?",
    answer="Canada introduced carbon contracts for difference in 2023. The program started in 2021.",
    contexts=["Canada introduced carbon contracts for difference in 2023 for industrial emitters."],
    sample_id="carbon",
)


def test_questeval_from_answers():
    score, f1s = questeval_from_answers(["2023", "the Adam optimizer"], ["2023", None])
    assert f1s == [1.0, 0.0] and score == 0.5
    score, f1s = questeval_from_answers(["the Adam optimizer"], ["Adam"])
    assert f1s == [pytest.approx(2 / 3)]  # SQuAD F1: "adam" vs "adam optimizer" (articles dropped)
    with pytest.raises(ValueError, match="no question"):
        questeval_from_answers([], [])
    with pytest.raises(ValueError, match="2 expected answers but 1"):
        questeval_from_answers(["a", "b"], ["a"])
    assert qg_schema(3)["properties"]["questions"]["maxItems"] == 3


def test_score_items_and_calls():
    judge = Judge(ContextRuleJudge(), max_concurrency=1)
    r = questeval(SAMPLE, judge)
    assert [(it["expected"], it["from_context"], it["f1"]) for it in r.items] == [("2023", "2023", 1.0),
                                                                               ("2021", None, 0.0)]
    assert r.score == 0.5 and r.detail == {"n_questions": 2, "n_answered": 1, "flag_conflicts": 0}
    assert r.n_model_calls == 3  # generation + one answer per question


def test_outcomes():
    judge = Judge(ContextRuleJudge())
    r = questeval(JudgeSample(SAMPLE.question, " ", SAMPLE.contexts), judge)
    assert (r.outcome, r.reason) == ("undefined", "empty_answer")
    r = questeval(JudgeSample(SAMPLE.question, SAMPLE.answer, []), judge)
    assert (r.outcome, r.reason, r.score) == ("scored", "empty_context", 0.0) and len(r.items) == 2
    bad = questeval(SAMPLE, Judge(GarbageJudge()))
    assert bad.outcome == "failed" and bad.reason == "output_parse_error"
    rep = evaluate_judged([SAMPLE], Judge(GarbageJudge()), ["questeval_precision"], progress=False)
    assert rep.aggregates["questeval_precision"].failed == 1 and rep.aggregates["questeval_precision"].n == 0


class FlagsEverythingUnanswerable(ContextRuleJudge):
    """Answers as the rule judge does, but always sets answerable = 0 (as the small model often does)."""

    def _chat_once(self, messages, options, schema):
        out = super()._chat_once(messages, options, schema)
        if "answerable" in schema["properties"]:
            data = json.loads(out)
            data["answerable"] = 0
            out = json.dumps(data)
        return out


def test_the_answer_decides_not_the_flag():
    r = questeval(SAMPLE, Judge(FlagsEverythingUnanswerable()))
    assert r.score == 0.5  # "2023" is still compared (and right); the empty answer still scores 0
    assert r.detail["flag_conflicts"] == 1 and [it["answerable"] for it in r.items] == [0, 0]
