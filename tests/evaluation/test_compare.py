"""The regression gate (ragworkbook.evaluation.compare): the fewest pairs it judges on, a run that mostly
failed, an interrupted report, and a metric only one report has."""

from __future__ import annotations

import pytest

from ragworkbook.evaluation.compare import compare_reports, min_gate_pairs
from ragworkbook.evaluation.report import Report
from ragworkbook.stats.resampling import paired_test


def _report(values, *, complete=None, not_run=0, metric="recall@3"):
    rows = []
    for i, v in enumerate(values):
        r = {"id": f"q{i}", "question": f"q{i}?", "metrics": {metric: v},
             "unscored": {} if v is not None else {metric: {"outcome": "failed", "reason": "generation_error",
                                                             "message": "HTTP 500"}}}
        if i >= len(values) - not_run:
            r["error"] = {"reason": "not_run", "message": "not asked"}
        rows.append(r)
    meta = {} if complete is None else {"complete": complete}
    return Report(rows=rows, metrics=[metric], meta=meta)


A = [1.0, 0.5, 1.0, 0.5, 1.0, 0.5, 1.0, 0.5]


@pytest.mark.parametrize("alpha,n", [(0.05, 6), (0.01, 8), (0.1, 5), (0.2, 4)])
def test_min_gate_pairs_is_the_fewest_pairs_that_can_reach_significance(alpha, n):
    assert min_gate_pairs(alpha) == n
    worst = [0.0] * n  # every pair worse: the smallest p-value n pairs can give
    assert paired_test(worst, [1.0] * n, method="randomization").p_value < alpha
    assert paired_test(worst[:-1], [1.0] * (n - 1), method="randomization").p_value >= alpha


def test_the_gate_fails_a_metric_compared_on_too_few_pairs():
    gate = compare_reports(_report(A), _report([1.0] + [None] * 7)).gate(["recall@3"])
    assert not gate.passed and gate.worse == []
    assert gate.not_compared["recall@3"].startswith("only 1 pair compared (7 failed, 0 undefined); the gate "
                                                    "needs at least 6 pairs")
    assert compare_reports(_report(A), _report(A[:7] + [None])).gate(["recall@3"]).passed  # 7 of 8: fine


def test_the_gate_fails_when_more_values_failed_than_were_compared():
    a = _report(A * 2)
    b = _report(A[:7] + [None] * 9)  # 7 compared (>= 6), 9 failed
    gate = compare_reports(a, b).gate(["recall@3"])
    assert "more values failed (9) than were compared (7)" in gate.not_compared["recall@3"]
    assert compare_reports(a, b).gate(["recall@3"], min_pairs=1).not_compared  # the share rule stays


def test_undefined_pairs_do_not_count_against_the_gate():
    a = _report(A + [None] * 4)
    rows = a.to_dict()["rows"]
    for r in rows[8:]:
        r["unscored"]["recall@3"] = {"outcome": "undefined", "reason": "no_relevance", "message": ""}
    a = Report(rows=rows, metrics=["recall@3"])
    assert compare_reports(a, a).gate(["recall@3"]).passed  # 8 compared, 4 undefined, none failed


def test_an_interrupted_report_is_refused_unless_allowed():
    b = _report(A[:3] + [None] * 5, complete=False, not_run=5)
    cmp = compare_reports(_report(A, complete=True), b)
    gate = cmp.gate(["recall@3"], min_pairs=3)
    assert list(gate.incomplete) == ["B"] and not gate.passed
    assert gate.incomplete["B"].startswith("it was saved by an interrupted run (complete: false, 5 of 8 "
                                           "questions not run)")
    allowed = cmp.gate(["recall@3"], min_pairs=3, allow_incomplete=True)
    assert allowed.incomplete == {}
    assert "more values failed (5) than were compared (3)" in allowed.not_compared["recall@3"]
    assert compare_reports(_report(A, complete=True), _report(A)).incomplete == {}  # no meta: not interrupted


def test_a_metric_only_one_report_has_is_named_as_such():
    b = _report(A, metric="token_f1")
    with pytest.raises(ValueError, match=r"^report B has no 'recall@3' value, report A has: B was run "
                                         r"without recall@3 \(its metrics: token_f1\)"):
        compare_reports(_report(A), b, ["recall@3"])
    with pytest.raises(ValueError, match=r"^report A has no 'token_f1' value, report B has"):
        compare_reports(_report(A), b, ["token_f1"])
    with pytest.raises(ValueError, match=r"^unknown metric 'bleu': neither report has it"):
        compare_reports(_report(A), b, ["bleu"])
    with pytest.raises(ValueError, match="the reports have no metric in common"):
        compare_reports(_report(A), b)


def test_min_pairs_must_be_positive():
    with pytest.raises(ValueError, match="min_pairs must be >= 1"):
        compare_reports(_report(A), _report(A)).gate(["recall@3"], min_pairs=0)
