"""Exercises of notebook 01 (precision, recall, hit rate) and their solutions."""

from __future__ import annotations

from typing import Any

from ragworkbook.workbook.exercises import Solution, close, exercise, solves


def _carbon() -> tuple[list[str], set[str]]:
    """The carbon-pricing ranking (chunk ids in rank order) and its relevant chunks (grade > 0)."""
    import json

    from ragworkbook.paths import data_path

    data = json.loads(data_path("carbon_pricing.json").read_text(encoding="utf-8"))
    ranking = [c["id"] for c in data["chunks"]]
    return ranking, {c["id"] for c in data["chunks"] if c["grade"] > 0}


@exercise("01.1", "Precision and recall at 4",
          "Predict Precision@4 of the carbon-pricing ranking, then compute it with the package.")
def _check_p4(answer: Any) -> tuple[bool, str]:
    from ragworkbook.metrics.retrieval import precision_at_k

    return close(answer, precision_at_k(*_carbon(), 4), what="Precision@4")


@solves("01.1")
def _solve_p4() -> Solution:
    from ragworkbook.metrics.retrieval import precision_at_k

    value = precision_at_k(*_carbon(), 4)
    return Solution(value, "Three of the first four chunks (ranks 2, 3 and 4) have a grade above 0: "
                           f"Precision@4 = 3 / 4 = {value:.2f}.")
