"""ragworkbook.judging.judge and ragworkbook.judging.metrics: fake judges, and one real-backend test."""

from __future__ import annotations

import asyncio
import json
import math
import re

import numpy as np
import pytest
from fakes.judges import CARBON, CHUNKS, BlockingJudge, EmptyClaimsJudge, GarbageJudge, RuleJudge, bag_embed
from hypothesis import given
from hypothesis import strategies as st

from ragworkbook.judging.judge import Judge, run_sync
from ragworkbook.judging.metrics import (
    aanswer_relevancy,
    acontext_precision,
    afaithfulness,
    answer_relevancy,
    answer_relevancy_from_questions,
    context_precision,
    context_precision_from_verdicts,
    context_recall,
    context_relevance,
    evaluate_judged,
    faithfulness,
    faithfulness_from_verdicts,
    simple_context_precision,
    split_statements,
)
from ragworkbook.judging.prompts import verdicts_schema
from ragworkbook.judging.results import JudgedResult, JudgeSample, aggregate_results
from ragworkbook.outcomes import Unscored


def ragas_average_precision(verdicts):
    """RAGAS's formula, transcribed from _context_precision.py (_calculate_average_precision)."""
    denominator = sum(verdicts) + 1e-10
    numerator = sum((sum(verdicts[: i + 1]) / (i + 1)) * verdicts[i] for i in range(len(verdicts)))
    return numerator / denominator


# --- pure scoring functions --------------------------------------------------------------
def test_documented_context_precision_b6():
    v = [0, 1, 1, 1, 1]
    assert simple_context_precision(v) == pytest.approx(0.8)
    assert round(context_precision_from_verdicts(v), 3) == 0.679
    assert context_precision_from_verdicts(v) == pytest.approx((1 / 2 + 2 / 3 + 3 / 4 + 4 / 5) / 4)


@given(st.lists(st.integers(0, 1), min_size=1, max_size=20))
def test_context_precision_matches_ragas_formula(v):
    assert context_precision_from_verdicts(v) == pytest.approx(ragas_average_precision(v), abs=1e-8)


def test_context_precision_edge_cases():
    assert context_precision_from_verdicts([0, 0, 0]) == 0.0
    assert context_precision_from_verdicts([True, False]) == 1.0
    with pytest.raises(ValueError, match="no chunk was retrieved"):
        context_precision_from_verdicts([])
    with pytest.raises(ValueError, match="verdict must be 0/1"):
        context_precision_from_verdicts([2])


def test_faithfulness_from_verdicts_b5_and_no_claims():
    assert faithfulness_from_verdicts([1, 1, 1]) == 1.0
    assert faithfulness_from_verdicts([1, 0]) == 0.5
    assert faithfulness_from_verdicts([]) is None


def test_answer_relevancy_from_questions_rule():
    q = "how many heads"
    same = answer_relevancy_from_questions(q, ["how many heads"], False, embed=bag_embed)
    assert same == pytest.approx(1.0)
    assert answer_relevancy_from_questions(q, ["how many heads"], True, embed=bag_embed) == 0.0
    with pytest.raises(ValueError, match="every generation was empty"):
        answer_relevancy_from_questions(q, ["", "  "], False, embed=bag_embed)


def test_split_statements():
    assert split_statements("It uses 8 heads. The model dimension is 512! Why? 2019 was earlier.") == [
        "It uses 8 heads.", "The model dimension is 512!", "Why?", "2019 was earlier."]
    assert split_statements("BLEU was 28.4 on En-De.") == ["BLEU was 28.4 on En-De."]


# --- metrics with a rule-based fake judge ---------------------------------------------------
def test_four_metrics_on_carbon_example_with_rule_judge():
    judge = Judge(RuleJudge())
    f = faithfulness(CARBON, judge)
    assert f.status == "ok" and f.score == 1.0
    assert [it["verdict"] for it in f.items] == [1, 1] and f.items[0]["statement"].startswith("Canada")
    cp = context_precision(CARBON, judge)
    assert [it["verdict"] for it in cp.items] == [0, 1, 1, 1, 1]
    assert cp.score == pytest.approx(0.6791666666)
    assert cp.detail["relevant_over_retrieved"] == pytest.approx(0.8)
    assert cp.detail["precision_at_k"] == pytest.approx([0, 0.5, 2 / 3, 0.75, 0.8])
    cr = context_recall(CARBON, judge)
    assert cr.status == "ok" and cr.score == 0.5  # the second reference sentence is not in the chunks
    ar = answer_relevancy(CARBON, judge, embed=bag_embed)
    # the rule judge asks "What about <answer>" three times: the score is that question's cosine
    # with the original question, worked out here on the same bag-of-words embedding
    q, g = bag_embed([CARBON.question, f"What about {CARBON.answer}"])
    cosine = float(q @ g / (np.linalg.norm(q) * np.linalg.norm(g)))
    assert 0.1 < cosine < 0.9  # a partial overlap: neither 0 nor 1 by construction
    assert ar.status == "ok" and [it["question"] for it in ar.items] == [f"What about {CARBON.answer}"] * 3
    assert ar.score == pytest.approx(cosine) and ar.detail["mean_cosine"] == pytest.approx(cosine)
    assert ar.detail["noncommittal"] is False


def test_calls_per_sample_match_the_docstrings_and_ragas():
    gen = RuleJudge()
    judge = Judge(gen)
    assert faithfulness(CARBON, judge).n_model_calls == 2  # RAGAS: 2
    assert answer_relevancy(CARBON, judge, embed=bag_embed).n_model_calls == 1  # RAGAS: 3
    assert context_precision(CARBON, judge).n_model_calls == len(CHUNKS)  # RAGAS: K
    assert context_recall(CARBON, judge).n_model_calls == 1  # RAGAS: 1
    assert gen.calls == 2 + 1 + len(CHUNKS) + 1
    claims = faithfulness(CARBON, Judge(RuleJudge()), claims=["Canada introduced contracts in 2023."])
    assert claims.n_model_calls == 1 and claims.detail["statements_from"] == "given"


def test_unchanged_rerun_makes_zero_model_calls():
    gen = RuleJudge()
    judge = Judge(gen)
    samples = [CARBON, JudgeSample(CARBON.question, "Canada uses a tax.", CHUNKS[:2], "A tax.", "b")]
    first = evaluate_judged(samples, judge, progress=False, embed=bag_embed)
    n = gen.calls
    assert n > 0 and first.n_model_calls == n
    second = evaluate_judged(samples, judge, progress=False, embed=bag_embed)
    assert gen.calls == n and second.n_model_calls == 0
    assert second.to_frame().equals(first.to_frame())
    assert all(c.cached for rs in second.results.values() for r in rs for c in r.calls)


def test_disk_cache_survives_a_new_judge(tmp_path):
    path = tmp_path / "judge_cache.json"
    gen = RuleJudge()
    a = faithfulness(CARBON, Judge(gen, cache_path=path))
    assert path.is_file() and gen.calls == 2
    gen2 = RuleJudge()
    b = faithfulness(CARBON, Judge(gen2, cache_path=path))
    assert gen2.calls == 0 and b.score == a.score and b.items == a.items
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="delete it"):
        Judge(gen2, cache_path=path)
    path.write_text("[1, 2]", encoding="utf-8")  # valid JSON, but not a judge cache
    with pytest.raises(ValueError, match="is not a judge cache.*delete it"):
        Judge(gen2, cache_path=path)


def test_cache_key_depends_on_model_and_options():
    j1, j2 = Judge(RuleJudge("m1")), Judge(RuleJudge("m2"))
    s = verdicts_schema(1)
    assert j1.cache_key("p", s) != j2.cache_key("p", s)
    assert j1.cache_key("p", s) != Judge(RuleJudge("m1"), options={"seed": 1}).cache_key("p", s)
    assert j1.cache_key("p", s) == Judge(RuleJudge("m1")).cache_key("p", s)


def _reworded(template: str) -> str:
    """The same data fields under instructions of other words: every paragraph without a field is
    replaced, and the field paragraphs come in reverse order."""
    data = [p for p in template.split("\n\n") if re.fullmatch(r"(?:[A-Z][A-Za-z ]*:\s?\{\w+\}\n?)+", p)]
    assert data, template
    return "Judge this.\n\n" + "\n\n".join(reversed(data)) + "\n\nJSON only."


def test_the_rule_judge_reads_the_data_not_the_instructions(monkeypatch):
    """The fake judge tells requests apart by their schema: reworded prompts change no result."""
    from ragworkbook.judging import prompts

    def run():
        gen = RuleJudge()
        judge = Judge(gen)
        out = [faithfulness(CARBON, judge), context_precision(CARBON, judge),
               context_precision(CARBON, judge, with_reference=False), context_recall(CARBON, judge),
               answer_relevancy(CARBON, judge, embed=bag_embed), context_relevance(CARBON, judge)]
        return [(r.score, r.status, r.items) for r in out], set(gen.prompts)

    before, asked_before = run()
    for name, template in list(prompts.PROMPTS.items()):
        monkeypatch.setitem(prompts.PROMPTS, name, _reworded(template))
    after, asked_after = run()
    assert len(asked_after) == len(asked_before) > 10 and asked_after.isdisjoint(asked_before)
    assert after == before
    assert [score for score, _, _ in before][:4] == pytest.approx([1.0, 0.6791666666, 0.6791666666, 0.5])


# --- edge cases with defined results -----------------------------------------------------------
def test_empty_answer_no_claims_empty_context():
    gen = RuleJudge()
    judge = Judge(gen)
    empty = JudgeSample(CARBON.question, "   ", CHUNKS, CARBON.reference, "e")
    r = faithfulness(empty, judge)
    assert (r.score, r.status, r.n_model_calls) == (None, "empty_answer", 0)
    r = answer_relevancy(empty, judge, embed=bag_embed)
    assert (r.score, r.status) == (0.0, "empty_answer")
    r = context_precision(empty, judge, with_reference=False)
    assert (r.score, r.status) == (None, "empty_answer")

    idk = JudgeSample(CARBON.question, "I don't know which carbon pricing mechanism Canada chose.", CHUNKS,
                      None, "idk")
    r = faithfulness(idk, judge)
    assert (r.score, r.status) == (None, "no_claims")
    r = answer_relevancy(idk, judge, embed=bag_embed)
    # the generated question is close to the original; the noncommittal flag alone makes the score 0
    q, g = bag_embed([CARBON.question, f"What about {idk.answer}"])
    cosine = float(q @ g / (np.linalg.norm(q) * np.linalg.norm(g)))
    assert cosine > 0.4 and r.detail["mean_cosine"] == pytest.approx(cosine)
    assert (r.score, r.status) == (0.0, "noncommittal")
    r = context_recall(idk, judge)
    assert (r.score, r.status) == (None, "empty_reference")

    noctx = JudgeSample(CARBON.question, CARBON.answer, [], CARBON.reference, "n")
    r = faithfulness(noctx, judge)
    assert (r.score, r.status) == (0.0, "empty_context") and all(it["verdict"] == 0 for it in r.items)
    assert context_precision(noctx, judge).status == "empty_context"
    assert context_precision(noctx, judge).score is None
    r = context_recall(noctx, judge)
    assert (r.score, r.status, r.n_model_calls) == (0.0, "empty_context", 0)


def test_empty_claim_list_is_counted_separately_not_nan():
    judge = Judge(EmptyClaimsJudge())
    samples = [JudgeSample("q?", "An answer.", ["ctx"], None, str(i)) for i in range(3)]
    rep = evaluate_judged(samples, judge, metrics=["faithfulness"], progress=False)
    agg = rep.aggregates["faithfulness"]
    assert math.isnan(agg.mean) and (agg.n, agg.undefined, agg.failed) == (0, 3, 0)
    assert [r.reason for r in rep.results["faithfulness"]] == ["no_claims"] * 3
    assert "n/a over 0/3" in str(agg)


# --- failures ----------------------------------------------------------------------------------
def test_garbage_judge_is_counted_as_failed_with_raw_outputs():
    gen = GarbageJudge()
    judge = Judge(gen)
    r = faithfulness(CARBON, judge)
    assert r.status == "failed" and r.score is None
    assert "output_parse_error" in r.error and "not valid JSON" in r.error
    assert r.raw_outputs == ["Sure! Here is my verdict: yes"] * (1 + gen.max_retries)
    assert gen.calls == 1 + gen.max_retries  # bounded retries
    assert (r.outcome, r.reason) == ("failed", "output_parse_error")
    rep = evaluate_judged([CARBON], judge, progress=False, embed=bag_embed)
    for agg in rep.aggregates.values():
        assert math.isnan(agg.mean) and (agg.n, agg.failed, agg.undefined) == (0, 1, 0)
    df = rep.summary()
    assert not df["mean"].notna().any() and (df["failed"] == 1).all()


def test_mixed_failures_mean_is_over_scored_samples_only():
    results = [JudgedResult("faithfulness", "a", 1.0), JudgedResult("faithfulness", "b", 0.5),
               JudgedResult("faithfulness", "c", None, "failed", "timeout", error="x"),
               JudgedResult("faithfulness", "d", None, "undefined", "no_claims")]
    agg = aggregate_results(results)
    assert (agg.mean, agg.n, agg.failed, agg.undefined, agg.total) == (0.75, 2, 1, 1, 4)
    assert [r.unscored for r in results][2:] == [Unscored("failed", "timeout", "x"),
                                                 Unscored("undefined", "no_claims", "")]
    with pytest.raises(ValueError, match="NaN value"):
        aggregate_results([JudgedResult("m", "z", math.nan)])


def test_timeout_is_a_counted_failure_and_not_cached():
    gen = BlockingJudge()
    judge = Judge(gen, timeout=0.05)
    try:
        r = context_precision(JudgeSample("q?", "a", ["c1"], "ref", "t"), judge)
    finally:
        gen.release.set()
    assert (r.outcome, r.reason) == ("failed", "timeout") and "no answer within 0.05 s" in r.error
    assert judge._cache == {}


def test_a_request_error_is_a_counted_failure_and_not_cached():
    """A server error on one request (mid-stream crash, prompt too long) fails that sample only."""
    from ragworkbook.llm.base import Generator, LLMError

    class Flaky(Generator):
        backend = "fake"

        def _chat_once(self, messages, options, schema):
            raise LLMError("the Ollama server returned an error (mid-stream): runner crashed")

    judge = Judge(Flaky("x"))
    r = faithfulness(CARBON, judge)
    assert r.status == "failed" and r.score is None and "llm_error: " in r.error and "mid-stream" in r.error
    assert judge._cache == {}
    rep = evaluate_judged([CARBON], judge, metrics=["faithfulness", "context_recall"], progress=False)
    assert all(a.failed == 1 and math.isnan(a.mean) for a in rep.aggregates.values())
    assert {r[0].reason for r in rep.results.values()} == {"llm_error"}
    assert judge.n_model_calls == 3  # nothing cached: every request reached the model again


def test_setup_errors_propagate_rather_than_count():
    from ragworkbook.llm.base import BackendUnavailable, Generator

    class Down(Generator):
        backend = "fake"

        def _chat_once(self, messages, options, schema):
            raise BackendUnavailable("no server")

    with pytest.raises(BackendUnavailable):
        faithfulness(CARBON, Judge(Down("x")))
    with pytest.raises(BackendUnavailable):
        Judge(Down("x")).call("statements", "p", verdicts_schema(1))


def test_bad_arguments_have_clear_errors():
    with pytest.raises(TypeError, match="get_generator"):
        Judge(object())
    with pytest.raises(ValueError, match="max_concurrency"):
        Judge(RuleJudge(), max_concurrency=0)
    with pytest.raises(TypeError, match="list of chunk texts"):
        JudgeSample("q", "a", "one string")
    with pytest.raises(ValueError, match="'bleu' is a generation metric; only judged metrics apply"):
        evaluate_judged([CARBON], Judge(RuleJudge()), metrics=["bleu"], progress=False)
    with pytest.raises(ValueError, match="unique"):
        evaluate_judged([CARBON, CARBON], Judge(RuleJudge()), progress=False)
    with pytest.raises(ValueError, match="strictness"):
        answer_relevancy(CARBON, Judge(RuleJudge()), strictness=0)


# --- concurrency and the sync wrappers -------------------------------------------------------------
def test_concurrency_is_bounded():
    import threading
    import time

    from ragworkbook.llm.base import Generator

    class Counting(Generator):
        backend = "fake"

        def __init__(self):
            super().__init__("counting")
            self.active = 0
            self.peak = 0
            self.lock = threading.Lock()

        def _chat_once(self, messages, options, schema):
            with self.lock:
                self.active += 1
                self.peak = max(self.peak, self.active)
            time.sleep(0.01)
            with self.lock:
                self.active -= 1
            return json.dumps({"reason": "r", "verdict": 1})

    gen = Counting()
    sample = JudgeSample("q?", "a", [f"chunk {i}" for i in range(8)], "ref", "s")
    r = context_precision(sample, Judge(gen, max_concurrency=2))
    assert r.score == 1.0 and gen.peak == 2  # 8 calls of 10 ms each: two do run at once, never three
    gen2 = Counting()
    context_precision(sample, Judge(gen2, max_concurrency=1))
    assert gen2.peak == 1


def test_sync_wrappers_work_inside_a_running_event_loop():
    judge = Judge(RuleJudge())

    async def inside_loop():
        # as in a Jupyter cell: a loop is running, asyncio.run would raise here
        return faithfulness(CARBON, judge)

    assert asyncio.run(inside_loop()).score == 1.0
    assert run_sync(afaithfulness(CARBON, judge)).score == 1.0  # outside a loop


def test_async_api_directly():
    judge = Judge(RuleJudge())

    async def main():
        return await asyncio.gather(afaithfulness(CARBON, judge), acontext_precision(CARBON, judge),
                                    aanswer_relevancy(CARBON, judge, embed=bag_embed))

    f, cp, ar = asyncio.run(main())
    assert f.score == 1.0 and round(cp.score, 3) == 0.679
    assert ar.status == "ok"
    assert ar.score == answer_relevancy(CARBON, Judge(RuleJudge()), embed=bag_embed).score


def test_report_frame_columns():
    rep = evaluate_judged([CARBON], Judge(RuleJudge()), metrics=["faithfulness", "context_recall"],
                          progress=False)
    df = rep.to_frame()
    assert list(df.columns) == ["faithfulness", "faithfulness_status",
                                "context_recall", "context_recall_status"]
    assert df.loc["carbon", "faithfulness"] == 1.0


def test_sample_from_mapping():
    s = JudgeSample.from_mapping({"question": "q", "answer": "a", "reference": "r",
                                  "chunks": [{"rank": 1, "text": "t1"}, {"rank": 2, "text": "t2"}]}, "x")
    assert s.contexts == ["t1", "t2"] and s.sample_id == "x" and s.reference == "r"
    with pytest.raises(ValueError, match="contexts"):
        JudgeSample.from_mapping({"question": "q", "answer": "a"})
    with pytest.raises(ValueError, match="no 'question' field \\(it has: query, answer\\)"):
        JudgeSample.from_mapping({"query": "q", "answer": "a"})


@pytest.mark.model
def test_answer_relevancy_with_real_minilm(sentence_transformer):
    """The default embedding is the local MiniLM: the score is the cosine sentence-transformers itself
    gives the question and the judge's question."""
    r = answer_relevancy(CARBON, Judge(RuleJudge()))
    q, g = sentence_transformer.encode([CARBON.question, f"What about {CARBON.answer}"],
                                       normalize_embeddings=True)
    expected = float(np.dot(q, g))
    assert r.status == "ok" and r.score == pytest.approx(expected, abs=1e-5)
    assert [it["cosine"] for it in r.items] == pytest.approx([expected] * 3, abs=1e-5)
    assert r.score != pytest.approx(answer_relevancy(CARBON, Judge(RuleJudge()), embed=bag_embed).score)


@pytest.mark.model
def test_schemas_work_with_the_embedded_backend():
    """llama.cpp's grammar holds the tiny model to the verdict schema: the answer parses, first time.

    Whether the verdict is right is not asserted (a 135M model is often wrong), but a
    schema-constrained answer with room to finish must be valid JSON of that schema, the score
    must be the verdict it gave, and greedy decoding gives the same answer again.
    """
    import jsonschema

    from ragworkbook.judging.prompts import verdict_schema
    from ragworkbook.llm import get_generator

    gen = get_generator(backend="embedded", announce=False)
    sample = JudgeSample(CARBON.question, CARBON.answer, CHUNKS[:1], CARBON.reference)
    r = context_precision(sample, Judge(gen, options={"num_predict": 256}))
    assert r.outcome == "scored", r.error
    (call,) = r.calls
    assert call.attempts == 1 and len(call.raw_outputs) == 1  # no retry was needed
    answer = json.loads(call.raw_outputs[0])
    jsonschema.validate(answer, verdict_schema())
    assert r.items[0]["verdict"] == answer["verdict"] and r.items[0]["reason"] == answer["reason"]
    assert r.score == float(answer["verdict"])
    again = context_precision(sample, Judge(gen, options={"num_predict": 256}))  # a fresh cache
    assert again.calls[0].raw_outputs == call.raw_outputs


def test_synced_is_the_blocking_twin_with_the_same_signature_and_works_inside_a_running_loop():
    import asyncio
    import inspect

    from ragworkbook.judging.judge import synced
    from ragworkbook.judging.metrics import afaithfulness, faithfulness

    async def adouble(x: int, *, by: int = 2) -> int:
        """Double ``x``."""
        await asyncio.sleep(0)
        return x * by

    double = synced(adouble)
    assert double(3) == 6 and double(3, by=3) == 9
    assert double.__name__ == "double" and not inspect.iscoroutinefunction(double)
    assert inspect.signature(double) == inspect.signature(adouble)
    assert double.__doc__.startswith("Sync :func:`adouble`") and "Double ``x``." in double.__doc__

    async def in_a_notebook_cell() -> int:  # Jupyter runs cells inside a live loop
        return double(5)

    assert asyncio.run(in_a_notebook_cell()) == 10
    assert faithfulness.__name__ == "faithfulness"
    assert inspect.signature(faithfulness) == inspect.signature(afaithfulness)
