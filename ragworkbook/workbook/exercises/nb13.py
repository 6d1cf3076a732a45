"""Exercises of notebook 13 (monitoring over time; live traffic without references) and their solutions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragworkbook.evaluation.monitoring import Step, gate_series
from ragworkbook.evaluation.report import Report
from ragworkbook.stats.resampling import paired_test
from ragworkbook.workbook.exercises import Count, Mistake, Number, Solution, exercise, solves

if TYPE_CHECKING:
    import pandas as pd


def _p_after_losses(losses: int, n: int = 8) -> float:
    old = [1.0] * n
    new = [0.0] * losses + [1.0] * (n - losses)
    return paired_test(new, old, method="randomization").p_value


def _min_losses(alpha: float = 0.05, n: int = 8) -> int:
    return next(m for m in range(1, n + 1) if _p_after_losses(m, n) < alpha)


@exercise("13.1", "How many lost questions the gate can see",
          "Of eight questions, a new step loses some outright (hit rate 1 -> 0) and leaves the rest. "
          "Predict the smallest number of losses for which the gate (exact randomisation test, alpha 0.05) "
          "calls hit_rate@3 worse (a whole number), then compute it with paired_test.",
          reveals=[r"\b(?:six|6) (?:lost )?questions (?:must|to) (?:flip|be lost)",
                   r"needs (?:six|6) questions", r"p = 2 ?/ ?2\^k"])
def _losses_answer() -> Count:
    return Count(_min_losses(), "the number of lost questions",
                 fewer="with that many losses the gate still passes: how many of the 2^k sign patterns are "
                       "as extreme as k losses all pointing the same way?",
                 more="the gate already fails with fewer losses: compute p for each count from 1 up")


@solves("13.1")
def _solve_losses() -> Solution:
    m = _min_losses()
    listed = ", ".join(f"{k}: {_p_after_losses(k):.3f}" for k in range(1, 9))
    return Solution(m, "Questions that did not change have a difference of 0, and flipping its sign "
                       f"changes nothing, so with k lost questions p = 2 / 2^k ({listed}). Only from {m} "
                       "losses is p below 0.05. A step that loses 5 of 8 questions passes the gate: with "
                       "eight questions it can only stop disasters.")


_RELEASES = [f"r{i}" for i in range(1, 6)]


def _drift_series() -> list[Step]:
    """Five releases over eight questions; each release after the first loses two more of them."""
    steps = []
    for i, label in enumerate(_RELEASES):
        rows = [{"id": f"q{j}", "question": f"question {j}",
                 "metrics": {"hit_rate@3": 0.0 if j <= 2 * i else 1.0}} for j in range(1, 9)]
        steps.append(Step(label, Report(rows=rows, metrics=["hit_rate@3"], meta={"name": label})))
    return steps


def _first_failing() -> tuple[str, pd.DataFrame, pd.DataFrame]:
    steps = _drift_series()
    previous = gate_series(steps, ["hit_rate@3"], against="previous")
    first = gate_series(steps, ["hit_rate@3"], against="first")
    failing = [label for label, ok in first["passed"].items() if not ok]
    return failing[0], previous, first


@exercise("13.2", "Drift that no single step shows",
          "Five releases r1..r5 over eight questions: every release loses two more questions than the one "
          "before (r2 has lost 2, r3 4, r4 6, r5 8). Predict the first release at which the gate against r1 "
          "fails, and whether the gate against the previous release ever fails. Answer with the label of "
          "that first release ('r2'...'r5').",
          reveals=[r"against r1 (?:the gate )?first fails at", r"first failing release is"],
          reveals_value=False)  # the task itself names every label
def _check_drift(answer: object) -> tuple[bool, str]:
    if not isinstance(answer, str):
        return False, f"answer with a release's label, e.g. 'r3', got {type(answer).__name__}"
    want, _, _ = _first_failing()
    label = answer.strip().strip("'\"").lower().replace("release ", "r").replace(" ", "")
    if label in ("never", "none", "no"):
        return False, ("against the previous release no step fails, but the task asks about the gate "
                       "against r1, where the losses add up")
    if label == "r1":
        return False, "r1 is the baseline itself: it is never compared with itself"
    if label not in _RELEASES:
        return False, f"answer with one of the labels r2, r3, r4, r5, got {answer!r}"
    if label == want:
        return True, f"against r1 the gate first fails at {want}"
    if label < want:
        return False, (f"too early: at {label} the gate against r1 still passes; count how many questions "
                       "that release has lost and recall how many the exact test needs (exercise 13.1)")
    return False, "too late: the gate against r1 already fails at an earlier release"


@solves("13.2")
def _solve_drift() -> Solution:
    want, previous, first = _first_failing()
    p_first = ", ".join(f"{lab}: {p:.3f}" for lab, p in first["hit_rate@3 p"].items())
    never = "never fails" if previous["passed"].all() else "fails too"
    return Solution(want, "Against the previous release every change loses two questions (p = 0.5), so that "
                          f"gate {never}. Against r1 the losses add up: p = {p_first}; below 0.05 first at "
                          f"{want}, six lost questions. Gating only against the last step lets a system "
                          "drift unnoticed; keep the baseline in the comparison.")


_WEEKS = 52
_ALPHA = 0.05


@exercise("13.3", "False alerts a year",
          "An alert rule fires when the KS test's p-value is below 0.05 alone. It checks one window of "
          "traffic a week, 52 weeks a year, against the same baseline, and the traffic never changes. "
          "Predict how many false alerts it raises in a year, on average, to 2 decimals.",
          reveals=[r"\d false alerts? (?:a|per) year", r"52 ?[x×*] ?0\.05"])
def _false_alerts_answer() -> Number:
    want = _WEEKS * _ALPHA
    return Number(want, 2, "the expected number of false alerts",
                  mistakes=[Mistake(_ALPHA, "that is the chance of a false alert in one week; the question "
                                            "asks for a year of weekly checks"),
                            Mistake(0.0, "when nothing changed, a test at the 5% level still rejects in 5% "
                                         "of the windows: that is what its level means"),
                            Mistake(_WEEKS * (1 - _ALPHA), "that counts the weeks the rule stays quiet")],
                  low="a p-value below 0.05 happens by chance in one window of twenty",
                  high="a p-value below 0.05 happens by chance in one window of twenty, not more")


@solves("13.3")
def _solve_false_alerts() -> Solution:
    want = _WEEKS * _ALPHA
    return Solution(want, "When the traffic does not change, the KS p-value of a window is (about) uniform "
                          "on [0, 1], so it falls below 0.05 in 5% of the weeks: 52 x 0.05 = "
                          f"{want:.1f} false alerts a year. An alert that fires every few months for "
                          "nothing is soon ignored: lower alpha and require a shift that matters (a PSI bar) "
                          "as well.")
