"""Range checks of a saved report: a value its metric cannot take, an interval that is not one.

:meth:`ragworkbook.evaluation.report.Report.load` already refuses stored aggregates that
contradict the rows; a hand-edited report whose rows and aggregates were edited together
(``mrr@3 = 5.0`` on every row and in the mean) would still pass that. :func:`check_ranges`
refuses it: every row value and every stored mean and interval bound must lie in the metric's
range (the registry's ``scale``: ``[0, 1]`` for most, ``[0, 100]`` for BLEU, ``[-1, 1]`` for a
cosine), and an interval must have ``ci_low <= ci_high``. A metric the registry does not know is
checked only for the interval's order.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ragworkbook._types import JSONObject

__all__ = ["check_ranges", "metric_scale"]

#: how far outside its range a value may be through rounding
_SLACK = 1e-9


def metric_scale(name: str) -> tuple[float, float] | None:
    """The range of the metric called ``name`` (the registry's ``scale``), None when unknown."""
    from ragworkbook.metrics.registry import parse_metric

    try:
        return tuple(parse_metric(name).spec.scale)  # type: ignore[return-value]
    except (ValueError, TypeError):
        return None


def _inside(value: float, scale: tuple[float, float]) -> bool:
    lo, hi = scale
    return lo - _SLACK * max(1.0, abs(lo)) <= value <= hi + _SLACK * max(1.0, abs(hi))


def _shown(scale: tuple[float, float]) -> str:
    return f"[{scale[0]:g}, {scale[1]:g}]"


def check_ranges(data: JSONObject, bad: Callable[[str], Exception]) -> None:
    """Raise ``bad(problem)`` for the first value of the report's JSON ``data`` outside its metric's
    range, or an aggregate interval with ``ci_low > ci_high`` (``data`` already checked for shape)."""
    scales = {m: metric_scale(m) for m in data["metrics"]}
    for r in data["rows"]:
        for m, v in r["metrics"].items():
            scale = scales.get(m)
            if v is not None and scale is not None and not _inside(float(v), scale):
                raise bad(
                    f"row {str(r['id'])!r}: {m} = {v} is outside the metric's range {_shown(scale)} "
                    "(the file was edited or corrupted)"
                )
    for m in data["metrics"]:
        a = data["aggregates"][m]
        scale = scales.get(m)
        lo, hi = a.get("ci_low"), a.get("ci_high")
        if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi) and lo > hi:
            raise bad(
                f"aggregate {m!r}: ci_low {lo} is above ci_high {hi}, which is no interval (the file was "
                "edited or corrupted)"
            )
        for key in ("mean", "ci_low", "ci_high"):
            v = a.get(key)
            if v is not None and scale is not None and math.isfinite(v) and not _inside(float(v), scale):
                raise bad(
                    f"aggregate {m!r}: {key} = {v} is outside the metric's range {_shown(scale)} (the "
                    "file was edited or corrupted)"
                )
