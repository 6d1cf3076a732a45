"""Exercises of notebook 13 (monitoring over time) and their solutions."""

from __future__ import annotations

from typing import Any

from ragworkbook.workbook.exercises import Solution, exercise, solves


def _p_after_losses(losses: int, n: int = 8) -> float:
    from ragworkbook.stats.resampling import paired_test

    old = [1.0] * n
    new = [0.0] * losses + [1.0] * (n - losses)
    return paired_test(new, old, method="randomization").p_value


def _min_losses(alpha: float = 0.05, n: int = 8) -> int:
    return next(m for m in range(1, n + 1) if _p_after_losses(m, n) < alpha)


@exercise("13.1", "How many lost questions the gate can see",
          "Of eight questions, a new step loses some outright (hit rate 1 -> 0) and leaves the rest. "
          "Predict the smallest number of losses for which the gate (exact randomisation test, alpha 0.05) "
          "calls hit_rate@3 worse, then compute it with paired_test.")
def _check_losses(answer: Any) -> tuple[bool, str]:
    if isinstance(answer, bool) or not isinstance(answer, int):
        return False, f"give a number of questions, got {type(answer).__name__}"
    want = _min_losses()
    if answer == want:
        return True, f"{want} of 8 questions must be lost before the gate fails"
    if not 1 <= answer <= 8:
        return False, "the number of lost questions is between 1 and 8"
    p = _p_after_losses(answer)
    verdict = "fails" if p < 0.05 else "still passes"
    return False, f"with {answer} lost questions p = {p:.4f} and the gate {verdict}"


@solves("13.1")
def _solve_losses() -> Solution:
    m = _min_losses()
    listed = ", ".join(f"{k}: {_p_after_losses(k):.3f}" for k in range(1, 9))
    return Solution(m, "Questions that did not change have a difference of 0, and flipping its sign "
                       f"changes nothing, so with k lost questions p = 2 / 2^k ({listed}). Only from {m} "
                       "losses is p below 0.05. A step that loses 5 of 8 questions passes the gate: with "
                       "eight questions it can only stop disasters.")


def _drift_series() -> list[Any]:
    """Five steps over eight questions; each step after the first loses two more of them (hit rate 1 -> 0)."""
    from ragworkbook.evaluation.monitoring import Step
    from ragworkbook.evaluation.report import Report

    steps = []
    for i in range(5):
        rows = [{"id": f"q{j}", "question": f"question {j}",
                 "metrics": {"hit_rate@3": 0.0 if j <= 2 * i else 1.0}} for j in range(1, 9)]
        steps.append(Step(f"v{i + 1}", Report(rows=rows, metrics=["hit_rate@3"], meta={"name": f"v{i + 1}"})))
    return steps


def _first_failing() -> tuple[str, Any, Any]:
    from ragworkbook.evaluation.monitoring import gate_series

    steps = _drift_series()
    previous = gate_series(steps, ["hit_rate@3"], against="previous")
    first = gate_series(steps, ["hit_rate@3"], against="first")
    failing = [label for label, ok in first["passed"].items() if not ok]
    return failing[0], previous, first


@exercise("13.2", "Drift that no single step shows",
          "Five steps over eight questions: every step loses two more questions than the one before (v2 has "
          "lost 2, v3 4, v4 6, v5 8). Predict the first step at which the gate against v1 fails, and "
          "whether the gate against the previous step ever fails. Answer with the label of that first step "
          "('v2'...'v5').")
def _check_drift(answer: Any) -> tuple[bool, str]:
    if not isinstance(answer, str):
        return False, f"answer with a step's label, e.g. 'v3', got {type(answer).__name__}"
    want, _, first = _first_failing()
    label = answer.strip()
    if label == want:
        return True, f"against v1 the gate first fails at {want}"
    if label not in first.index:
        return False, f"the steps compared are {', '.join(first.index)}"
    return False, f"at {label} the gate against v1 gives p = {first.loc[label, 'hit_rate@3 p']:.3f}"


@solves("13.2")
def _solve_drift() -> Solution:
    want, previous, first = _first_failing()
    p_first = ", ".join(f"{lab}: {p:.3f}" for lab, p in first["hit_rate@3 p"].items())
    never = "never fails" if previous["passed"].all() else "fails too"
    return Solution(want, "Against the previous step every change loses two questions (p = 0.5), so that "
                          f"gate {never}. Against v1 the losses add up: p = {p_first}; below 0.05 first at "
                          f"{want}, six lost questions. Gating only against the last step lets a system "
                          "drift unnoticed; keep the baseline in the comparison.")
