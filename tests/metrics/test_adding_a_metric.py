"""Adding a retrieval metric is one spec and one kernel: a metric with parameters, declared in a fixture, is
seen by ``ir-eval``, ``eval --answers``, ``compare``, the targets and the widgets, with no other edit."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragworkbook.cli import main
from ragworkbook.evaluation.report import Report
from ragworkbook.evaluation.targets import apply_targets
from ragworkbook.metrics.ranked import Ranked
from ragworkbook.metrics.registry import Band, MetricSpec, Param, registered
from ragworkbook.workbook.widgets import metrics_at_k


def f_measure(r: Ranked, k: int, beta: float = 1.0) -> np.ndarray:
    """F_beta of Precision@k and Recall@k (0 when both are 0): the kernel of the fixture's metric."""
    hits = r.count_within(r.rq, r.rrank, k)
    p, rec = hits / k, hits / np.where(r.n_rel > 0, r.n_rel, 1)
    b2 = beta * beta
    with np.errstate(invalid="ignore", divide="ignore"):
        f = (1 + b2) * p * rec / (b2 * p + rec)
    return np.where(hits > 0, f, 0.0)


SPEC = MetricSpec("f_measure", "retrieval", "F@k", "F_beta of Precision@k and Recall@k",
                  aliases=("fbeta",), params=(Param("k", int, None, "the cutoff", required=True, low=1),
                                              Param("beta", float, 1.0, "the weight of recall", low=0.0)),
                  needs=frozenset({"relevance"}), all_relevant=True, impl=f_measure,
                  targets=(Band("F@10", 0.7, 0.9, 10),))


@pytest.fixture()
def new_metric():
    with registered(SPEC):
        yield SPEC


def _f(p: float, r: float, beta: float) -> float:
    return (1 + beta**2) * p * r / (beta**2 * p + r) if p + r else 0.0


def test_ir_eval_computes_it_with_its_parameters(new_metric, tmp_path, capsys):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 a 1\nq1 0 b 1\nq1 0 c 1\nq2 0 x 1\n")
    run.write_text("q1 Q0 a 1 3 t\nq1 Q0 z 2 2 t\nq1 Q0 b 3 1 t\nq2 Q0 x 1 1 t\n")
    assert main(["ir-eval", "-q", "--metric", "f_measure@2(beta=2),fbeta@2", str(qrels), str(run)]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    values = {(name.strip(), qid): value for name, qid, value in lines}
    q1 = _f(1 / 2, 1 / 3, 2.0)
    assert values[("f_measure@2(beta=2)", "q1")] == f"{q1:6.4f}"
    assert values[("fbeta@2", "q1")] == f"{_f(1 / 2, 1 / 3, 1.0):6.4f}"
    assert values[("f_measure@2(beta=2)", "all")] == f"{(q1 + _f(1 / 2, 1, 2.0)) / 2:6.4f}"


def _answers(path, order):
    def ctx(docs):
        return [{"id": d, "text": d} for d in docs]

    recs = [{"id": "q1", "question": "Which?", "answer": "a", "contexts": ctx(order),
             "relevant_ids": ["a", "b"]},
            {"id": "q2", "question": "What?", "answer": "b", "contexts": ctx(order[::-1]),
             "relevant_ids": ["c"]}]
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    return path


def test_eval_answers_compare_and_targets_see_it(new_metric, tmp_path, capsys):
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    for file, order in ((a, ["a", "b", "c"]), (b, ["c", "x", "a"])):
        answers = _answers(tmp_path / f"{file.stem}.jsonl", order)
        assert main(["eval", "--answers", str(answers), "--metric", "f_measure@2(beta=0.5)",
                     "--out", str(file), "--no-progress"]) == 0
    capsys.readouterr()
    report = Report.load(a)
    assert report.metrics == ["f_measure@2(beta=0.5)"]
    assert report.rows[0]["metrics"]["f_measure@2(beta=0.5)"] == pytest.approx(_f(1.0, 1.0, 0.5))
    assert report.rows[1]["metrics"]["f_measure@2(beta=0.5)"] == pytest.approx(_f(0.5, 1.0, 0.5))
    # compare: the paired test and the gate read its direction from the spec
    assert main(["compare", str(a), str(b), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [m["metric"] for m in out["metrics"]] == ["f_measure@2(beta=0.5)"]
    assert out["metrics"][0]["mean_a"] == pytest.approx((_f(1.0, 1.0, 0.5) + _f(0.5, 1.0, 0.5)) / 2)
    # targets: the target declared on the spec is applied to the report by its name, at any cutoff
    table = apply_targets(report)
    assert list(table["metric"]) == ["f_measure@2(beta=0.5)"]
    assert table.iloc[0]["band"] == "acceptable" and table.iloc[0]["rating"].startswith("acceptable")
    assert "target is for @10" in table.iloc[0]["note"]


def test_the_widgets_show_it(new_metric):
    got = metrics_at_k(["a", "z", "b"], {"a": 1, "b": 1, "c": 1}, 3, metrics=("precision", "f_measure"))
    assert got == {"precision@3": pytest.approx(2 / 3), "f_measure@3": pytest.approx(_f(2 / 3, 2 / 3, 1.0))}


def test_without_the_fixture_it_is_unknown(capsys, tmp_path):
    qrels = tmp_path / "q"
    qrels.write_text("q1 0 a 1\n")
    assert main(["ir-eval", "--metric", "f_measure@2", str(qrels), str(qrels)]) == 2
    assert "unknown metric 'f_measure@2'" in capsys.readouterr().err
