"""judge-check: the judge measured against human labels, with a scripted judge whose answers we control."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragworkbook.judging.check import DATASETS, judge_check, recording_path, resolve_dataset
from ragworkbook.judging.datasets import load_ragchecker, load_wikieval, round_robin
from ragworkbook.judging.judge import Judge
from ragworkbook.llm.base import Generator


class Oracle(Generator):
    """Knows the WikiEval answers: supports every claim of a good answer, none of a bad one; on RAGChecker
    pairs always says answer 1 (maximal position bias); fails on the pairs listed in ``fail``."""

    backend = "fake"

    def __init__(self, fail=()):
        super().__init__("oracle")
        ff = load_wikieval("faithfulness")
        self.good = {p.good.answer for p in ff}
        self.fail = set(fail)

    def _chat_once(self, messages, options, schema):
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        props = schema["properties"]
        if "statements" in props:
            answer = prompt.split("Answer: ", 1)[1].rsplit("\n\nReply in JSON", 1)[0]
            tag = "good" if answer in self.good else "bad"
            return json.dumps({"statements": [f"{tag} claim one", f"{tag} claim two"]})
        if "verdicts" in props:
            v = int("good claim" in prompt)
            return json.dumps({"verdicts": [{"reason": "r", "verdict": v}] * props["verdicts"]["minItems"]})
        if "better" in props:
            if any(f in prompt for f in self.fail):
                return "not json"
            return json.dumps({"better": "1", "reason": "the first one"})
        raise AssertionError(schema)


def test_dataset_names_and_aliases():
    assert resolve_dataset("ff").name == "wikieval-faithfulness"
    assert resolve_dataset("CR").name == "wikieval-context-relevance"
    assert resolve_dataset("ragchecker-pairs").name == "ragchecker"
    assert recording_path("ar").name == "judge_check_wikieval_answer_relevance.json"
    with pytest.raises(ValueError, match="unknown judge-check dataset 'x'; choose one of: wikieval-faith"):
        resolve_dataset("x")
    assert {d.default_limit for d in DATASETS.values()} <= {8, 10, 20}


def test_a_judge_that_agrees_perfectly_on_wikieval_faithfulness():
    r = judge_check("ff", Judge(Oracle()), limit=6, repeats=2, n_resamples=200)
    s = r.stats
    assert (r.n, r.n_available, r.failures, r.judgments) == (6, 50, 0, 12)
    pa = s["pairwise_accuracy"]
    assert pa.value == 1.0 and (pa.wins, pa.ties) == (6, 0)
    assert s["kappa"].value == 1.0 and s["agreement"].value == 1.0
    assert s["tpr"].value == 1.0 and s["tnr"].value == 1.0
    assert s["majority_baseline"] == {"label": 0, "agreement": 0.5, "kappa": 0.0}
    sc = s["self_consistency"]
    assert (sc["repeats"], sc["pairs"], sc["compared"], sc["flip_rate"].value) == (2, 3, 6, 0.0)
    out = r.to_dict()
    for key in ("dataset", "n", "failures", "pairwise_accuracy", "kappa"):
        assert key in out
    assert out["pairwise_accuracy"]["value"] == 1.0 and out["pairwise_accuracy"]["tie_value"] == 0.5
    assert set(out["kappa"]) >= {"value", "low", "high"}
    assert out["documented"]["pairwise_accuracy"] == 0.95
    assert out["kappa"]["method"] == "percentile bootstrap over pairs (200 resamples, seed 0)"
    assert out["agreement"]["method"] == "Wilson score interval"
    text = r.format()
    assert "pairwise accuracy (a tie counts half; chance 0.500): 1.000" in text
    # the baseline, word overlap, ranks 5 of these 6 grounded answers first and ties one: with 6 pairs
    # the perfect judge is not shown better than it
    base = s["baseline"]
    assert base["name"] == "word overlap" and base["pairwise_accuracy"].value == pytest.approx(5.5 / 6)
    assert base["difference"].value == pytest.approx(0.5 / 6) and base["verdict"] == "not shown different"
    assert "baseline, word overlap" in text and "not shown different from its baseline" in text
    assert [p["baseline"] for p in r.pairs][0][0] > [p["baseline"] for p in r.pairs][0][1]
    card = out["card"]
    assert card["n_pairs"] == 6 and card["baseline"]["verdict"] == "not shown different"
    json.dumps(out)


def test_word_support_is_measured_like_a_judge_on_every_pair():
    r = judge_check("ff", "word-support")
    s = r.stats
    assert (r.n, r.judge, r.metric, r.settings["threshold"]) == (50, "deterministic:word_support",
                                                                  "word_support", 0.9)
    assert s["pairwise_accuracy"].value >= 0.9 and "self_consistency" not in s
    assert s["baseline"]["pairwise_accuracy"].value == 0.95  # the issue's and FINDINGS' figure
    assert "Madres" in r.pairs[4]["bad_unsupported"]  # an invented film title is listed
    assert "self-consistency: deterministic" in r.format()
    with pytest.raises(ValueError, match="word-support measures faithfulness"):
        judge_check("ar", "word-support")
    with pytest.raises(ValueError, match="unknown judge 'rouge'"):
        judge_check("ff", "rouge")


def test_a_constant_judge_is_at_chance(monkeypatch):
    monkeypatch.setattr("ragworkbook.embeddings.encode", lambda texts, **kw: np.ones((len(texts), 3)))
    r = judge_check("ar", Judge(_Constant()), limit=5, repeats=0, n_resamples=100)
    s = r.stats
    assert s["pairwise_accuracy"].value == 0.5 and s["pairwise_accuracy"].ties == 5  # every pair ties
    assert s["kappa"].value == 0.0 and "self_consistency" not in s
    # the constant embedding makes the baseline tie everywhere too: no difference
    assert s["baseline"]["pairwise_accuracy"].value == 0.5 and s["baseline"]["difference"].value == 0.0


def test_fewer_than_five_pairs_give_no_number():
    r = judge_check("ff", Judge(Oracle()), limit=2, repeats=0, n_resamples=100)
    s = r.stats
    assert s["pairwise_accuracy"].too_few and s["kappa"].too_few and s["agreement"].too_few
    assert s["baseline"]["verdict"] == "too few"
    text = r.format()
    assert "pairwise accuracy (a tie counts half; chance 0.500): too few (n = 2)" in text
    assert "Cohen's kappa too few (n = 2)" in text
    assert r.to_dict()["kappa"] == {"value": None, "low": None, "high": None, "n": 2, "confidence": 0.95,
                                    "method": "percentile bootstrap over pairs (100 resamples, seed 0)",
                                    "note": "too few"}


class _Constant(Generator):
    backend = "fake"

    def __init__(self):
        super().__init__("constant")

    def _chat_once(self, messages, options, schema):
        return json.dumps({"questions": ["Why?"] * 3, "noncommittal": 0})


def test_ragchecker_pairs_position_bias_inconsistency_and_failures():
    pairs = round_robin(load_ragchecker(predictions=False).pairs)
    fail_query = pairs[1].query
    r = judge_check("ragchecker", Judge(Oracle(fail=[fail_query])), limit=8, repeats=2, n_resamples=200)
    s = r.stats
    assert (r.n, r.failures, r.metric) == (8, 1, "pairwise")
    assert s["verdict_counts"] == {"A": 0, "tie": 0, "B": 0, "inconsistent": 7, "failed": 1}
    assert s["position_bias"]["rate"].value == 1.0 and s["position_bias"]["decisive"] == 14
    assert s["position_bias"]["rate"].method == "Wilson score interval"
    # an inconsistent verdict is its own rate, not a verdict an annotator could give:
    assert s["inconsistent_rate"].value == 1.0 and s["inconsistent_rate"].n == 7
    assert s["agreement"].too_few and s["kappa"].too_few  # no consistent verdict to compare
    # ... and it counts half in the pairwise accuracy: a judge answering the position is at chance
    pa = s["pairwise_accuracy"]
    assert (pa.value, pa.n, pa.ties) == (0.5, 5, 5)
    assert s["win_rate_judge"].too_few  # no consistent decisive verdict
    assert 0.0 <= s["annotator_agreement"].value <= 1.0
    assert s["baseline"]["name"] == "token-F1 difference" and len(r.pairs[0]["baseline"]) <= 3
    assert r.pairs[1]["outcome"] == "failed" and r.pairs[0]["annotators"] == [
        ("B" if x > 0 else "A" if x < 0 else "tie") for x in pairs[0].labels["overall"]]
    text = r.format()
    assert "position bias: chose the answer shown first in 14 of 14 decisive order-verdicts" in text
    assert "ceiling, annotator 1 vs annotator 2" in text
    assert "a tie or an inconsistent verdict counts half; chance 0.500" in text


def test_ragchecker_half_credit_when_the_judge_cannot_tell():
    from ragworkbook.stats.judge_table import JudgeTable, PairChoice, judge_statistics

    verdicts = ("A", "B", "tie", "inconsistent", None)
    table = JudgeTable((), tuple(PairChoice(i, "A", v) for i, v in enumerate(verdicts)), ("A", "tie", "B"))
    pa = judge_statistics(table, n_resamples=50).pairwise_accuracy
    assert (pa.wins, pa.ties, pa.losses, pa.n) == (1, 2, 1, 4) and pa.too_few


def test_bad_arguments():
    with pytest.raises(ValueError, match="limit must be a non-negative number"):
        judge_check("ff", Judge(Oracle()), limit=-1)
    with pytest.raises(ValueError, match="temperature above 0"):
        judge_check("ff", Judge(Oracle()), temperature=0.0)
    with pytest.raises(ValueError, match="unknown aspect 'style'"):
        judge_check("ragchecker", Judge(Oracle()), aspect="style")
    for bad in (float("nan"), -0.1, 1.5):
        with pytest.raises(ValueError, match="threshold must be a score between 0 and 1"):
            judge_check("ff", Judge(Oracle()), threshold=bad)
