"""A contributor adds a judged metric and a generation metric, each with parameters: one spec and one
function each, declared in a fixture. ``eval``, the saved report, ``compare`` and the metric cards show
them, and the parameters given in a name reach the function (none is dropped on the way)."""

from __future__ import annotations

import json

import pytest
from fakes.judges import RuleJudge

from ragworkbook import cli
from ragworkbook.cli import main
from ragworkbook.evaluation.report import Report
from ragworkbook.judging.judge import Judge
from ragworkbook.judging.prompts import PROMPTS, statements_schema, verdicts_schema
from ragworkbook.judging.results import JudgedResult, JudgeSample, failed, scored, undefined
from ragworkbook.metrics.cards import card
from ragworkbook.metrics.generation import token_f1
from ragworkbook.metrics.registry import MetricSpec, Param, registered


# --- the judged metric: RAGAS-style answer correctness --------------------------------------------------
async def answer_correctness(sample: JudgeSample, judge: Judge, *, weight: float = 0.75,
                             beta: float = 1.0) -> JudgedResult:
    """``weight`` x factual F_beta + (1 - weight) x token F1 of the answer against the reference. The
    factual part: the answer's claims judged against the reference (supported: true positives, else false
    positives) and the reference's sentences judged against the answer (unsupported: false negatives)."""
    m = "answer_correctness"
    if not (sample.reference or "").strip():
        return undefined(m, sample, "empty_reference")
    c = await judge.acall("statements", PROMPTS["statements"].format(question=sample.question,
                                                                      answer=sample.answer),
                          statements_schema())
    if not c.ok:
        return failed(m, sample, c)
    claims = [s for s in c.data["statements"] if s.strip()]
    truths = [s.strip() for s in sample.reference.split(". ") if s.strip()]
    verdicts = []
    for statements, against in ((claims, sample.reference), (truths, sample.answer)):
        v = await judge.acall("faithfulness", PROMPTS["faithfulness"].format(
            context=against, statements="\n".join(f"{i}. {s}" for i, s in enumerate(statements, 1)),
            n=len(statements)), verdicts_schema(len(statements)))
        if not v.ok:
            return failed(m, sample, v)
        verdicts.append([int(x["verdict"]) for x in v.data["verdicts"]])
    tp, fp, fn = sum(verdicts[0]), verdicts[0].count(0), verdicts[1].count(0)
    b2 = beta * beta
    factual = (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp) if tp else 0.0
    similarity = token_f1(sample.answer, sample.reference)
    return scored(m, sample, weight * factual + (1 - weight) * similarity,
                  detail={"tp": tp, "fp": fp, "fn": fn, "factual": factual, "similarity": similarity})


JUDGED = MetricSpec(
    "answer_correctness", "judged", "answer correctness",
    "weight x F_beta of the answer's claims against the reference + (1 - weight) x token F1",
    params=(Param("weight", float, 0.75, "the share of the factual part", low=0.0, high=1.0),
            Param("beta", float, 1.0, "the weight of recall in the factual F-score", low=0.0)),
    needs=frozenset({"judge", "reference"}), impl=answer_correctness)


# --- the generation metric: a character n-gram F-score -----------------------------------------------------
def char_f(answer: str, reference: str, n: int = 3, beta: float = 2.0) -> float:
    """chrF-like: F_beta of the answer's and the reference's character n-grams (spaces removed)."""
    def grams(text: str) -> list[str]:
        t = "".join(text.lower().split())
        return [t[i:i + n] for i in range(len(t) - n + 1)]

    a, r = grams(answer), grams(reference)
    common = sum(min(a.count(g), r.count(g)) for g in set(a))
    if not common:
        return 0.0
    p, rec = common / len(a), common / len(r)
    return (1 + beta**2) * p * rec / (beta**2 * p + rec)


GENERATION = MetricSpec(
    "char_f", "generation", "character n-gram F", "F_beta of the character n-grams of answer and reference",
    params=(Param("n", int, 3, "the n-gram length", low=1), Param("beta", float, 2.0, "recall's weight",
                                                                  low=0.0)),
    needs=frozenset({"reference"}), impl=char_f)


@pytest.fixture()
def new_metrics():
    with registered(JUDGED), registered(GENERATION):
        yield


RECORDS = [
    {"id": "q1", "question": "Which mechanism did Canada introduce in 2023?",
     "answer": "Canada introduced carbon contracts for difference in 2023. They guarantee carbon prices.",
     "reference": "Canada introduced carbon contracts for difference in 2023. They stabilise revenue for "
                  "heavy industry.", "contexts": ["Canada introduced carbon contracts for difference."]},
    {"id": "q2", "question": "How many heads?", "answer": "The model uses eight attention heads.",
     "reference": "It uses 8 heads. Each head has 64 dimensions.", "contexts": ["8 heads of 64."]},
]


def _answers(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _eval(tmp_path, name, records, metrics, monkeypatch):
    monkeypatch.setattr(cli._common, "generator", lambda args, announce: RuleJudge())
    out = tmp_path / f"{name}.json"
    argv = ["eval", "--answers", str(_answers(tmp_path / f"{name}.jsonl", records)), "--judge",
            "--metric", metrics, "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    return Report.load(out)


def _direct(metric_name: str, record: dict) -> float:
    from ragworkbook.judging.judge import run_sync
    from ragworkbook.metrics.registry import parse_metric

    sample = JudgeSample(question=record["question"], answer=record["answer"], contexts=record["contexts"],
                         reference=record["reference"], sample_id=record["id"])
    return run_sync(parse_metric(metric_name).compute(sample, Judge(RuleJudge()))).score


def test_eval_passes_each_metrics_parameters_to_its_function(new_metrics, tmp_path, capsys, monkeypatch):
    names = "answer_correctness,answer_correctness(weight=0.25,beta=2),char_f,char_f(n=2,beta=1)"
    rep = _eval(tmp_path, "a", RECORDS, names, monkeypatch)
    assert "answer_correctness(weight=0.25,beta=2)" in capsys.readouterr().out  # eval's table shows it
    assert rep.metrics == ["answer_correctness", "answer_correctness(weight=0.25,beta=2)", "char_f",
                           "char_f(n=2,beta=1)"]
    for row, rec in zip(rep.rows, RECORDS, strict=True):
        got = row["metrics"]
        assert got["char_f"] == pytest.approx(char_f(rec["answer"], rec["reference"]))
        assert got["char_f(n=2,beta=1)"] == pytest.approx(char_f(rec["answer"], rec["reference"], 2, 1.0))
        assert got["char_f"] != got["char_f(n=2,beta=1)"]
        assert got["answer_correctness"] == pytest.approx(_direct("answer_correctness", rec))
        custom = _direct("answer_correctness(weight=0.25,beta=2)", rec)
        assert got["answer_correctness(weight=0.25,beta=2)"] == pytest.approx(custom)
        assert got["answer_correctness"] != pytest.approx(custom)
    # weight is the share of the factual part: at 0 only the token F1 is left
    sim = [token_f1(r["answer"], r["reference"]) for r in RECORDS]
    assert [_direct("answer_correctness(weight=0)", r) for r in RECORDS] == pytest.approx(sim)


def test_the_report_and_compare_show_them(new_metrics, tmp_path, capsys, monkeypatch):
    names = "answer_correctness(beta=2),char_f(n=2)"
    worse = [{**r, "answer": "I do not know."} for r in RECORDS]
    a = _eval(tmp_path, "a", RECORDS, names, monkeypatch)
    _eval(tmp_path, "b", worse, names, monkeypatch)
    assert list(a.summary().index) == ["answer_correctness(beta=2)", "char_f(n=2)"]
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    got = {m["metric"]: m for m in out["metrics"]}
    assert set(got) == {"answer_correctness(beta=2)", "char_f(n=2)"}
    assert got["char_f(n=2)"]["mean_a"] == pytest.approx(
        sum(char_f(r["answer"], r["reference"], 2) for r in RECORDS) / 2)
    assert got["char_f(n=2)"]["mean_b"] < got["char_f(n=2)"]["mean_a"]


def test_their_cards_come_from_their_specs(new_metrics, capsys):
    assert main(["metrics", "answer_correctness", "char_f"]) == 0
    out = capsys.readouterr().out
    assert out == card(JUDGED) + "\n\n" + card(GENERATION) + "\n"
    assert "parameter weight (number, 0 <= weight <= 1, default 0.75): the share of the factual part" in out
    assert "parameter n (whole number, 1 <= n, default 3): the n-gram length" in out
    assert "needs: an LLM judge, a reference answer" in out


def test_without_the_fixture_they_are_unknown(capsys):
    assert main(["metrics", "char_f"]) == 2
    assert "unknown metric 'char_f'" in capsys.readouterr().err
