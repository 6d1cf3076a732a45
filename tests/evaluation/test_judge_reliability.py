"""Reliability travels with judged scores: the targets view never rates an unmeasured or unreliable judge,
and the regression gate refuses to gate on one unless told to trust it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from fakes.judges import RuleJudge

from ragworkbook.cli import format_summary, main
from ragworkbook.corpus.eval_set import eval_set_from_records
from ragworkbook.evaluation.compare import compare_reports
from ragworkbook.evaluation.evaluate import evaluate
from ragworkbook.evaluation.report import Report
from ragworkbook.evaluation.targets import NOT_RATED, apply_targets

EVAL = eval_set_from_records([
    {"id": f"q{i}", "question": f"Which optimizer did run {i} use?", "keyword": "Adam",
     "reference": "The optimizer was Adam."} for i in range(1, 5)])
CONTEXT = ["The optimizer was Adam with beta2 0.98.", "Training used eight P100 GPUs."]


@dataclass
class _Answer:
    answer: str
    contexts: list


class Pipeline:
    def __init__(self, answer: str):
        self.text = answer

    def answer(self, question):
        return _Answer(self.text, CONTEXT)


def _card(kappa: float, model: str = "rule-judge", pairs: int = 50, difference: float = 0.2) -> dict:
    """A measured card: kappa with a +-0.1 interval, on ``pairs`` labelled pairs, beating its baseline by
    ``difference`` (interval +-0.1)."""
    return {"status": "measured", "judge": f"fake:{model}", "model": model, "metric": "faithfulness",
            "dataset": "wikieval-faithfulness", "n": pairs, "n_pairs": pairs,
            "kappa": {"value": kappa, "low": kappa - 0.1, "high": kappa + 0.1, "n": 2 * pairs,
                      "confidence": 0.95},
            "pairwise_accuracy": {"value": 0.9, "low": 0.8, "high": 1.0, "n": pairs},
            "baseline": {"name": "word overlap", "pairwise_accuracy": {"value": 0.7, "n": pairs},
                         "difference": {"value": difference, "low": difference - 0.1,
                                        "high": difference + 0.1, "n": pairs},
                         "p_value": 0.01, "verdict": "better" if difference > 0.1 else "not shown different"}}


def _report(card=None, answer="The optimizer was Adam.", name="a"):
    return evaluate(Pipeline(answer), EVAL, judge=RuleJudge(),
                    metrics=["faithfulness", "hallucination", "bleu"], progress=False, name=name,
                    judge_reliability=card)


def test_an_unmeasured_judge_is_never_rated_acceptable_or_good():
    rep = _report()
    assert rep.aggregates["faithfulness"].mean == 1.0  # a perfect-looking score ...
    assert rep.reliability("faithfulness")["status"] == "unmeasured"
    assert rep.reliability("hallucination")["status"] == "unmeasured"
    assert rep.reliability("bleu") is None
    for domain in ("general", "strict"):
        t = apply_targets(rep, domain)
        assert list(t["metric"]) == ["faithfulness", "hallucination"]
        assert set(t["rating"]) == {NOT_RATED}  # ... is not "good": its judge was never checked
        assert not set(t["rating"]) & {"acceptable", "good", "poor"}
        assert all("judge reliability unmeasured" in n for n in t["note"])
        assert "judge-check --dataset wikieval-faithfulness" in t["note"][0]
        assert list(t["judge"]) == ["unmeasured", "unmeasured"]
    summary = format_summary(rep)
    assert "acceptable" not in summary and "good" not in summary and NOT_RATED in summary
    # a mapping of means without reliability is treated the same way
    assert apply_targets({"faithfulness": 0.95, "recall@10": 0.9})["rating"].tolist() == [NOT_RATED, "good"]


def test_a_judge_below_the_agreement_threshold_is_not_rated_and_says_why():
    t = apply_targets(_report(_card(0.3)))
    assert set(t["rating"]) == {NOT_RATED}
    assert ("Cohen's kappa 0.30 [0.20, 0.40] on wikieval-faithfulness (n = 50 pairs); its lower bound must "
            "be above 0.60") in t["note"][0]
    assert t["judge"][0] == ("kappa 0.30 [0.20, 0.40], pairwise accuracy 0.90 (baseline word overlap 0.70) "
                             "(wikieval-faithfulness, n = 50)")
    # the threshold is stated and can be moved
    assert apply_targets(_report(_card(0.3)), min_kappa=0.15)["rating"].tolist() == ["good", "good"]
    # a kappa of 0.65 is above 0.6, but its interval is not: luck could have given it
    assert set(apply_targets(_report(_card(0.65)))["rating"]) == {NOT_RATED}


def test_a_two_pair_card_with_perfect_kappa_is_refused():
    from ragworkbook.judging.reliability import trusted

    lucky = _card(1.0, pairs=2)
    lucky["kappa"].update(low=1.0, high=1.0)
    ok, why = trusted(lucky)
    assert not ok and "too few labelled pairs to trust the judge: 2 scored pairs" in why
    assert "fewer than 30" in why
    t = apply_targets(_report(lucky))
    assert set(t["rating"]) == {NOT_RATED} and "too few labelled pairs" in t["note"][0]


def test_a_judge_no_better_than_its_baseline_is_refused():
    from ragworkbook.judging.reliability import trusted

    ok, why = trusted(_card(0.9, difference=0.05))
    assert not ok
    assert ("not shown better than its baseline (word overlap): pairwise accuracy difference +0.05 "
            "[-0.05, +0.15]") in why
    no_baseline = _card(0.9)
    del no_baseline["baseline"]
    ok, why = trusted(no_baseline)
    assert not ok and "no baseline comparison" in why
    too_few = _card(0.9)
    too_few["kappa"] = {"value": None, "low": None, "high": None, "n": 4, "note": "too few"}
    assert trusted(too_few) == (False,
                                "the judge's kappa on wikieval-faithfulness is too few items; not rated")
    assert trusted(_card(0.9)) == (True, "")


def test_a_measured_reliable_judge_is_rated():
    rep = _report(_card(0.8))
    t = apply_targets(rep)
    assert t["rating"].tolist() == ["good", "good"] and t["note"].tolist() == ["", ""]
    assert rep.reliability("hallucination")["dataset"] == "wikieval-faithfulness"  # same judgments


def test_a_card_from_another_judge_does_not_count():
    rep = _report(_card(0.9, model="qwen3:4b"))
    assert rep.reliability("faithfulness")["status"] == "other_judge"
    t = apply_targets(rep)
    assert set(t["rating"]) == {NOT_RATED} and "measured on another judge" in t["note"][0]


def test_the_card_survives_save_and_load(tmp_path):
    rep = _report(_card(0.8))
    back = Report.load(rep.save(tmp_path / "r.json"))
    assert back.reliability("faithfulness") == rep.reliability("faithfulness")


def test_the_gate_refuses_an_unmeasured_judge_unless_trusted(tmp_path):
    a, b = _report(name="a"), _report(answer="The optimizer was SGD.", name="b")
    cmp = compare_reports(a, b)
    gate = cmp.gate(["faithfulness"])
    assert not gate.passed and list(gate.untrusted) == ["faithfulness"]
    assert "in A and B: judge reliability unmeasured" in gate.untrusted["faithfulness"]
    assert "--trust-judge" in gate.untrusted["faithfulness"]
    assert cmp.gate(["bleu"]).untrusted == {}  # not judged: nothing to trust
    trusted = cmp.gate(["faithfulness"], trust_judge=True)
    assert trusted.untrusted == {} and trusted.worse == []  # 4 questions: no significant change
    measured = compare_reports(_report(_card(0.8)), _report(_card(0.8), answer="The optimizer was SGD."))
    assert measured.gate(["faithfulness"], min_pairs=1).passed  # four questions: the minimum is lowered


def test_compare_command_exits_non_zero_on_an_untrusted_judge(tmp_path, capsys):
    pa = _report(name="a").save(tmp_path / "a.json")
    pb = _report(answer="The optimizer was SGD.", name="b").save(tmp_path / "b.json")
    assert main(["compare", str(pa), str(pb), "--fail-if-worse", "hallucination"]) == 1
    err = capsys.readouterr().err
    assert "GATE FAILED: hallucination is judged by an LLM whose reliability is not established" in err
    assert main(["compare", str(pa), str(pb), "--fail-if-worse", "hallucination", "--trust-judge",
                 "--min-pairs", "1"]) == 0  # four questions: the minimum is lowered
    assert main(["compare", str(pa), str(pb), "--fail-if-worse", "bleu", "--min-pairs", "1"]) == 0


def test_eval_attaches_a_saved_judge_check_and_compare_reads_it(tmp_path, capsys, monkeypatch):
    """judge-check --out FILE, then eval --judge-check FILE: the report carries the card, and the gate
    refuses the word support (kappa 0.70 [0.58, 0.82]: its lower bound is not above 0.6)."""
    from ragworkbook.paths import data_path

    for name in ("RAGWORKBOOK_BACKEND", "RAGWORKBOOK_RECORD"):
        monkeypatch.delenv(name, raising=False)
    card = tmp_path / "ws.json"
    assert main(["judge-check", "--dataset", "ff", "--judge", "word-support", "--out", str(card),
                 "--no-progress"]) == 0
    reports = []
    for name in ("dense_ragas", "bm25_ragas"):
        out = tmp_path / f"{name}.json"
        assert main(["eval", "--answers", str(data_path("outputs", f"{name}.jsonl")), "--metric",
                     "word_support", "--judge-check", str(card), "--out", str(out), "--no-progress"]) == 0
        reports.append(out)
    capsys.readouterr()
    rep = Report.load(reports[0])
    got = rep.reliability("word_support")
    assert got["status"] == "measured" and got["metric"] == "word_support" and got["n_pairs"] == 50
    assert got["baseline"]["name"] == "word overlap"
    assert main(["compare", *map(str, reports), "--fail-if-worse", "word_support"]) == 1
    err = capsys.readouterr().err
    assert "GATE FAILED: word_support is judged by a rule whose reliability is not established" in err
    assert "its lower bound must be above 0.60" in err
    # a file that is not a judge-check, and a card without a judge to describe
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    assert main(["eval", "--answers", str(data_path("outputs", "dense_ragas.jsonl")), "--metric",
                 "word_support", "--judge-check", str(bad), "--no-progress"]) == 2
    assert "not a judge-check result" in capsys.readouterr().err
    assert main(["eval", "--answers", str(data_path("outputs", "dense_ragas.jsonl")), "--metric", "bleu",
                 "--judge-check", str(card), "--no-progress"]) == 2
    assert "--judge-check describes the judge of the judged metrics: add --judge" in capsys.readouterr().err


def test_bad_reliability_input():
    with pytest.raises(TypeError, match="a JudgeCheck or its JSON"):
        _report(card=0.8)
    with pytest.raises(ValueError, match="needs 'metric' and 'dataset'"):
        _report(card={"kappa": 0.8})


def test_a_resumed_run_that_judges_nothing_new_keeps_the_cards(tmp_path):
    out = tmp_path / "r.json"
    first = evaluate(Pipeline("The optimizer was Adam."), EVAL, judge=RuleJudge(),
                     metrics=["faithfulness", "bleu"], progress=False, out=out, judge_reliability=_card(0.8))
    again = evaluate(Pipeline("The optimizer was Adam."), EVAL, judge=RuleJudge(),
                     metrics=["faithfulness", "bleu"], progress=False, out=out, resume=True,
                     judge_reliability=_card(0.8))
    assert again.meta["resumed"] == len(EVAL) and again.meta["judge_model_calls"] == 0  # nothing re-judged
    assert again.reliability("faithfulness") == first.reliability("faithfulness")
    assert again.reliability("faithfulness")["status"] == "measured"
