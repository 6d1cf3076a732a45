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
    assert "pairwise accuracy (a tie counts half; chance 0.500): 1.000" in r.format()
    json.dumps(out)


def test_a_constant_judge_is_at_chance(monkeypatch):
    monkeypatch.setattr("ragworkbook.embeddings.encode", lambda texts: np.ones((len(texts), 3)))
    r = judge_check("ar", Judge(_Constant()), limit=5, repeats=0, n_resamples=100)
    s = r.stats
    assert s["pairwise_accuracy"].value == 0.5 and s["pairwise_accuracy"].ties == 5  # every pair ties
    assert s["kappa"].value == 0.0 and "self_consistency" not in s


class _Constant(Generator):
    backend = "fake"

    def __init__(self):
        super().__init__("constant")

    def _chat_once(self, messages, options, schema):
        return json.dumps({"questions": ["Why?"] * 3, "noncommittal": 0})


def test_ragchecker_pairs_position_bias_inconsistency_and_failures():
    pairs = round_robin(load_ragchecker(predictions=False).pairs)
    fail_query = pairs[1].query
    r = judge_check("ragchecker", Judge(Oracle(fail=[fail_query])), limit=6, repeats=2, n_resamples=200)
    s = r.stats
    assert (r.n, r.failures, r.metric) == (6, 1, "pairwise")
    assert s["verdict_counts"] == {"A": 0, "tie": 0, "B": 0, "inconsistent": 5, "failed": 1}
    assert s["position_bias"]["rate"].value == 1.0 and s["position_bias"]["decisive"] == 10
    assert s["inconsistent_rate"].value == 1.0
    assert s["agreement"].value == 0.0  # an inconsistent verdict never agrees with an annotator
    assert np.isnan(s["win_rate_judge"].value)  # no consistent decisive verdict
    assert 0.0 <= s["annotator_agreement"].value <= 1.0
    assert r.pairs[1]["outcome"] == "failed" and r.pairs[0]["annotators"] == [
        ("B" if x > 0 else "A" if x < 0 else "tie") for x in pairs[0].labels["overall"]]
    text = r.format()
    assert "position bias: chose the answer shown first in 10 of 10 decisive verdicts" in text
    assert "ceiling, annotator 1 vs annotator 2" in text


def test_bad_arguments():
    with pytest.raises(ValueError, match="limit must be a non-negative number"):
        judge_check("ff", Judge(Oracle()), limit=-1)
    with pytest.raises(ValueError, match="temperature above 0"):
        judge_check("ff", Judge(Oracle()), temperature=0.0)
    with pytest.raises(ValueError, match="unknown aspect 'style'"):
        judge_check("ragchecker", Judge(Oracle()), aspect="style")
