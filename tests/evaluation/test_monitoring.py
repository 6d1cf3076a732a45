"""Monitoring: a series of reports, the trend table, the gate at every step, the plot."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest

from ragworkbook.evaluation.monitoring import Step, gate_series, load_series, plot_trend, trend
from ragworkbook.evaluation.report import Report


def _report(name, hits, f1s):
    rows = [{"id": f"q{i}", "question": f"question {i}", "reference": "", "answer": "", "context_ids": [],
             "contexts": [], "metrics": {"hit_rate@3": h, "token_f1": f}, "unscored": {}}
            for i, (h, f) in enumerate(zip(hits, f1s, strict=True), start=1)]
    for r in rows:
        if r["metrics"]["token_f1"] is None:
            r["unscored"]["token_f1"] = {"outcome": "failed", "reason": "llm_error", "message": "down"}
    meta = {"name": name, "change": f"change {name}"}
    return Report(rows=rows, metrics=["hit_rate@3", "token_f1"], meta=meta)


SERIES = [
    Step("v1", _report("v1", [1.0] * 8, [0.5] * 8)),
    Step("v2", _report("v2", [1.0] * 7 + [0.0], [0.5] * 8)),            # one question lost
    Step("v3", _report("v3", [1.0] * 2 + [0.0] * 6, [0.5] * 7 + [None])),  # five more lost
]


def test_trend_table():
    t = trend(SERIES, ["hit_rate@3", "success@3", "token_f1"])
    assert list(t.columns) == ["step", "label", "metric", "mean", "ci_low", "ci_high", "n", "failed",
                               "undefined"]
    hr = t[t.metric == "hit_rate@3"]
    assert hr["mean"].tolist() == [1.0, 0.875, 0.25]
    assert t[t.metric == "success@3"]["mean"].tolist() == [1.0, 0.875, 0.25]  # an alias finds the metric
    assert t[(t.metric == "token_f1") & (t.label == "v3")][["n", "failed"]].values.tolist() == [[7, 1]]
    with pytest.raises(ValueError, match="metric 'bleu' is not in report 'v1'"):
        trend(SERIES, ["bleu"])


def test_gate_against_previous_and_first():
    g = gate_series(SERIES, ["hit_rate@3", "token_f1"])
    assert list(g.index) == ["v2", "v3"] and list(g["against"]) == ["v1", "v2"]
    assert g.loc["v2", "passed"] and g.loc["v2", "hit_rate@3 verdict"] == "no significant change"
    assert g.loc["v2", "hit_rate@3 p"] == 1.0
    # five flips of eight: p = 2 / 2**5, not below 0.05; each step passes against the one before
    assert g.loc["v3", "passed"] and g.loc["v3", "hit_rate@3 diff"] == pytest.approx(-5 / 8)
    assert g.loc["v3", "hit_rate@3 p"] == pytest.approx(2 / 32)
    # against the first step the six flips add up: p = 2 / 2**6 and the gate fails (drift)
    first = gate_series(SERIES, ["hit_rate@3"], against="first")
    assert list(first["against"]) == ["v1", "v1"]
    assert first.loc["v3", "hit_rate@3 p"] == pytest.approx(2 / 64)
    assert not first.loc["v3", "passed"] and first.loc["v3", "worse"] == "hit_rate@3"
    with pytest.raises(ValueError, match="against must be"):
        gate_series(SERIES, ["hit_rate@3"], against="last")
    assert gate_series(SERIES[:1], ["hit_rate@3"]).empty


def test_a_metric_nobody_scored_fails_the_gate():
    a = _report("a", [1.0] * 3, [None] * 3)
    b = _report("b", [1.0] * 3, [None] * 3)
    g = gate_series([Step("a", a), Step("b", b)], ["token_f1"])
    assert not g.loc["b", "passed"] and "token_f1" in g.loc["b", "not_compared"]


def test_load_series_from_saved_reports(tmp_path):
    paths = [s.report.save(tmp_path / f"{s.label}.json") for s in SERIES]
    steps = load_series(paths)
    assert [(s.label, s.note) for s in steps] == [(f"v{i}", f"change v{i}") for i in (1, 2, 3)]
    assert steps[2].report.aggregates["hit_rate@3"].mean == 0.25
    with pytest.raises(ValueError, match="labels must be unique, repeated: v1"):
        load_series([paths[0], paths[0]])
    with pytest.raises(ValueError, match="at least one step"):
        trend([], ["hit_rate@3"])


def test_plot_marks_the_failing_step():
    g = gate_series(SERIES, ["hit_rate@3", "token_f1"], against="first")
    fig = plot_trend(SERIES, ["hit_rate@3", "token_f1"], g, title="t")
    ax_hit, ax_f1 = fig.axes
    crosses = [ln for ln in ax_hit.lines if ln.get_marker() == "x"]
    assert len(crosses) == 1 and list(crosses[0].get_xdata()) == [2]
    assert not [ln for ln in ax_f1.lines if ln.get_marker() == "x"]
    assert [t.get_text() for t in ax_hit.get_xticklabels()] == ["v1", "v2", "v3"]
