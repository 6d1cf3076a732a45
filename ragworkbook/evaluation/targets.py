"""The metric-targets table (Poor / Acceptable / Good) and how it is applied.

The table is the tutorial article's (NUMBERS.md row A5), kept here as data:

=====================  ===========  =================  =========
metric                 poor         acceptable         good
=====================  ===========  =================  =========
Recall@10              < 0.60       0.60 - 0.80        > 0.80
MRR                    < 0.30       0.30 - 0.50        > 0.50
NDCG@10                < 0.50       0.50 - 0.70        > 0.70
faithfulness           < 0.80       0.80 - 0.90        > 0.90
hallucination rate     > 10%        5% - 10%           < 5%
=====================  ===========  =================  =========

For medical or legal work (``domain="strict"``) the article asks for
faithfulness > 0.95 and a hallucination rate < 2%. It gives only those "good"
thresholds, so the strict table keeps the general "poor" thresholds and
widens the acceptable band up to the stricter "good" one (faithfulness
0.80 - 0.95, hallucination rate 2% - 10%).

Conventions:

- The acceptable band is closed: a value exactly on a boundary (Recall@10 =
  0.60 or 0.80) is "acceptable"; "good" and "poor" are strict inequalities,
  as printed.
- Rates are fractions (0.08, not 8).
- A target for ``@10`` is matched to a report metric of the same family at
  any cut-off (``recall@3`` is rated against the Recall@10 row) and the
  mismatch is stated in the ``note`` column, because a small eval set is
  often scored at k = 3 or 5.
- Metric names are resolved through the registry
  (:mod:`ragworkbook.metrics.registry`): ``mrr`` matches ``mrr``, ``mrr@k``,
  ``recip_rank``; ``hallucination_rate`` is the mean of ``hallucination``. The
  direction of a target is the registry's. Metrics with no target are left out
  of the result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Target", "TARGETS", "STRICT_TARGETS", "targets_table", "rate", "apply_targets"]


@dataclass(frozen=True)
class Target:
    """One row of the targets table.

    ``low`` and ``high`` bound the acceptable band (inclusive). For a metric
    where higher is better, ``value > high`` is good and ``value < low`` poor;
    for a lower-is-better metric (hallucination rate) it is the other way round.
    """

    metric: str  # canonical registry name: recall, mrr, ndcg, faithfulness, hallucination
    label: str  # as printed in the source, e.g. "Recall@10"
    low: float
    high: float
    k: int | None = None  # the cut-off the source states, if any

    @property
    def higher_is_better(self) -> bool:
        """The metric's direction, from the registry."""
        from ragworkbook.metrics.registry import get_spec

        return get_spec(self.metric).higher_is_better

    def rate(self, value: float) -> str:
        """``"poor"``, ``"acceptable"`` or ``"good"`` for ``value`` (NaN -> ``"n/a"``)."""
        value = float(value)
        if math.isnan(value):
            return "n/a"
        if self.higher_is_better:
            if value > self.high:
                return "good"
            if value < self.low:
                return "poor"
            return "acceptable"
        if value < self.low:
            return "good"
        if value > self.high:
            return "poor"
        return "acceptable"

    def bands(self) -> tuple[str, str, str]:
        """The three bands as printed: (poor, acceptable, good)."""
        fmt = _pct if self.metric == "hallucination" else _num
        acceptable = f"{fmt(self.low)}-{fmt(self.high)}"
        if self.higher_is_better:
            return f"< {fmt(self.low)}", acceptable, f"> {fmt(self.high)}"
        return f"> {fmt(self.high)}", acceptable, f"< {fmt(self.low)}"


def _num(x: float) -> str:
    return f"{x:.2f}"


def _pct(x: float) -> str:
    return f"{x * 100:g}%"


TARGETS: dict[str, Target] = {
    "recall": Target("recall", "Recall@10", 0.60, 0.80, k=10),
    "mrr": Target("mrr", "MRR", 0.30, 0.50),
    "ndcg": Target("ndcg", "NDCG@10", 0.50, 0.70, k=10),
    "faithfulness": Target("faithfulness", "Faithfulness", 0.80, 0.90),
    "hallucination": Target("hallucination", "Hallucination rate", 0.05, 0.10),
}

STRICT_TARGETS: dict[str, Target] = {
    **TARGETS,
    "faithfulness": Target("faithfulness", "Faithfulness", 0.80, 0.95),
    "hallucination": Target("hallucination", "Hallucination rate", 0.02, 0.10),
}

_DOMAINS = {"general": TARGETS, "strict": STRICT_TARGETS}


def _table(domain: str) -> dict[str, Target]:
    try:
        return _DOMAINS[domain]
    except KeyError:
        raise ValueError(
            f"unknown domain {domain!r}: use 'general', or 'strict' for medical/legal targets"
        ) from None


def targets_table(domain: str = "general") -> pd.DataFrame:
    """The targets table as a pandas DataFrame (one row per metric: poor / acceptable / good)."""
    import pandas as pd

    rows = []
    for t in _table(domain).values():
        poor, acceptable, good = t.bands()
        rows.append({"metric": t.label, "poor": poor, "acceptable": acceptable, "good": good})
    return pd.DataFrame(rows).set_index("metric")


def _family(metric: str) -> tuple[str | None, int | None]:
    from ragworkbook.metrics.registry import parse_metric

    try:
        m = parse_metric(metric)
    except ValueError:
        return None, None
    return m.kind, m.k


def rate(metric: str, value: float, domain: str = "general") -> str:
    """Rate one value: ``rate("recall@10", 0.72) == "acceptable"``.

    Raises ValueError naming the metrics that have targets when ``metric`` has none.
    """
    table = _table(domain)
    family, _ = _family(metric)
    if family not in table:
        raise ValueError(
            f"no target for metric {metric!r}; the targets table covers: "
            + ", ".join(t.label for t in table.values())
        )
    return table[family].rate(value)


def apply_targets(report_or_means: Any, domain: str = "general") -> pd.DataFrame:
    """Rate a report's aggregate means against the targets table.

    ``report_or_means`` is a :class:`ragworkbook.evaluation.report.Report` (its aggregate
    means are used) or a mapping ``metric name -> mean``. Returns a DataFrame
    with one row per rated metric: ``metric, value, target, poor, acceptable,
    good, rating, note``. Metrics without a target are skipped; if none has
    one, the DataFrame is empty (with those columns).
    """
    import pandas as pd

    table = _table(domain)
    if hasattr(report_or_means, "means"):
        means = report_or_means.means()
    elif isinstance(report_or_means, Mapping):
        means = dict(report_or_means)
    else:
        raise TypeError(
            "apply_targets needs a Report or a mapping of metric -> mean, got "
            f"{type(report_or_means).__name__}"
        )
    rows = []
    for metric, value in means.items():
        family, k = _family(str(metric))
        if family not in table:
            continue
        t = table[family]
        note = ""
        if t.k is not None and k != t.k:
            note = f"target is for @{t.k}; applied to {metric}"
        poor, acceptable, good = t.bands()
        value = float("nan") if value is None else float(value)
        rows.append({"metric": metric, "value": value, "target": t.label, "poor": poor,
                     "acceptable": acceptable, "good": good, "rating": t.rate(value), "note": note})
    cols = ["metric", "value", "target", "poor", "acceptable", "good", "rating", "note"]
    return pd.DataFrame(rows, columns=cols)
