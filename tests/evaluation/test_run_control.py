"""Run control: failures are named by reason; a failed row fails every metric; a kept row keeps its
scored and undefined values and drops its failed ones (computed again on resume)."""

from __future__ import annotations

from dataclasses import dataclass, field

from fakes.pipelines import FakeChunk, FakeHit

from ragworkbook.corpus.eval_set import EvalItem
from ragworkbook.evaluation.evaluate import resolve_metrics
from ragworkbook.evaluation.rows import ScoredQuestion
from ragworkbook.evaluation.run_control import _kept, answer_row, failed_row, failure_message, failure_reason
from ragworkbook.llm import LLMError, ModelNotFound, ReplayMissError
from ragworkbook.outcomes import FAILED, UNDEFINED, Unscored

ITEM = EvalItem(id="q1", question="What colour?", keyword=None, reference="Red.")
WANTED = resolve_metrics(["recall@2", "token_f1"], k=2, have_qrels=True, have_judge=False)


def test_failures_are_named_by_reason():
    assert failure_reason(ModelNotFound("pull it")) == "model_not_found"
    assert failure_reason(ReplayMissError("miss")) == "replay_miss"
    assert failure_reason(RuntimeError("boom")) == "generation_error"
    assert failure_message(RuntimeError("boom")) == "RuntimeError: boom"
    assert failure_message(LLMError("the server said no")) == "the server said no"


def test_a_failed_row_fails_every_metric_with_its_reason():
    row = failed_row(ITEM, WANTED, "backend_unavailable", "no server")
    assert row.metrics == {"recall@2": None, "token_f1": None} and row.error.reason == "backend_unavailable"
    assert {u.reason for u in row.unscored.values()} == {"backend_unavailable"}


class _Boom:
    def answer(self, question):
        raise ModelNotFound("model 'x' not found: ollama pull x")


@dataclass
class _DeepAnswer:
    answer: str
    contexts: list
    retrieved: list = field(default_factory=list)


class _Deep:
    def answer(self, question):
        hits = [FakeHit(FakeChunk("c1", "It is red."))]
        return _DeepAnswer("Red.", hits, hits + [FakeHit(FakeChunk("c2", "no"))])


def test_an_answer_row_keeps_a_deeper_ranking_and_a_failure_becomes_a_failed_row():
    assert answer_row(_Boom(), ITEM, WANTED).error.reason == "model_not_found"
    row = answer_row(_Deep(), ITEM, WANTED)
    assert row.context_ids == ["c1"] and row.ranking == ["c1", "c2"] and row.metrics == {}


def test_a_kept_row_keeps_scored_and_undefined_values_only():
    was = ScoredQuestion(id="q1", question="q", reference="r", answer="a",
                         metrics={"recall@2": 1.0, "token_f1": None, "bleu": None},
                         unscored={"token_f1": Unscored(UNDEFINED, "no_reference", ""),
                                   "bleu": Unscored(FAILED, "not_scored", "")})
    kept = _kept(was)
    assert kept.metrics == {"recall@2": 1.0, "token_f1": None} and list(kept.unscored) == ["token_f1"]
