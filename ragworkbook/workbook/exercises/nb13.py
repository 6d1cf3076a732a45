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
