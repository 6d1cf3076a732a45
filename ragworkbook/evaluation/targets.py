"""The metric-targets table (Poor / Acceptable / Good) and how it is applied.

The table is the tutorial article's (NUMBERS.md row A5), declared on each metric's spec
(``targets=``, :class:`ragworkbook.metrics.registry.Band`) and read here:

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
- **The interval is rated too.** A mean from a few questions is uncertain: when
  its confidence interval reaches another band, the rating says so ("good, but
  the interval reaches acceptable"; "acceptable, but the interval spans poor to
  good"). The band of the mean alone is in the ``band`` column; ``rating`` is
  the whole phrase (:meth:`Target.rate_interval`).
- A target for ``@10`` is matched to a report metric of the same family at
  any cut-off (``recall@3`` is rated against the Recall@10 row) and the
  mismatch is stated in the ``note`` column, because a small eval set is
  often scored at k = 3 or 5.
- Metric names are resolved through the registry
  (:mod:`ragworkbook.metrics.registry`): ``mrr`` matches ``mrr``, ``mrr@k``,
  ``recip_rank``; ``hallucination_rate`` is the mean of ``hallucination``. The
  direction of a target is the registry's. Metrics with no target are left out
  of the result.
- **A judged metric is rated only when its judge was measured and found
  reliable** (:func:`ragworkbook.judging.reliability.trusted`): the report's
  reliability card for it (from ``ragworkbook judge-check --out FILE``, attached
  with ``eval --judge-check FILE``) was measured on the same judge model, on at
  least 30 labelled pairs, with the lower bound of the judge's Cohen's kappa
  interval above ``min_kappa`` (default 0.6: "substantial" agreement or better)
  and a judge-minus-baseline difference whose interval lies above 0. Otherwise
  the rating is ``"not rated"`` and the ``note`` says why (unmeasured, measured on
  another judge, too few pairs, the kappa and the threshold, or the baseline).
  A 0.85 faithfulness from a judge that agrees with people at chance level is
  not "acceptable": it is unknown. The
  ``judge`` column shows the judge's measured agreement beside every judged
  value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragworkbook._types import JSONObject
from ragworkbook.judging.check import RELIABILITY_MIN_KAPPA
from ragworkbook.judging.reliability import describe, trusted, unmeasured
from ragworkbook.metrics.registry import get_spec, parse_metric, specs

if TYPE_CHECKING:
    import pandas as pd

    from ragworkbook.evaluation.report import Report

__all__ = ["Target", "DOMAINS", "targets_of", "NOT_RATED", "BANDS", "targets_table", "rate",
           "apply_targets"]

#: the bands from worst to best
BANDS = ("poor", "acceptable", "good")


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

    def rate_interval(self, value: float, ci_low: float | None, ci_high: float | None) -> str:
        """The band of ``value``, and the bands its interval ``[ci_low, ci_high]`` reaches besides.

        ``"good"`` when the whole interval is good; ``"good, but the interval reaches acceptable"`` when
        it reaches one other band; ``"acceptable, but the interval spans poor to good"`` (or ``"good, but
        the interval spans poor to good"``) when it reaches both others. Without an interval (None or
        NaN ends) it is :meth:`rate`.
        """
        band = self.rate(value)
        ends = [float(x) for x in (ci_low, ci_high) if x is not None and not math.isnan(float(x))]
        if band == "n/a" or len(ends) != 2:
            return band
        idx = sorted(BANDS.index(self.rate(x)) for x in ends + [float(value)])
        others = [b for b in BANDS[idx[0]:idx[-1] + 1] if b != band]  # an interval crosses the bands between
        if not others:
            return band
        if len(others) == 1:
            return f"{band}, but the interval reaches {others[0]}"
        return f"{band}, but the interval spans {BANDS[0]} to {BANDS[-1]}"

    def bands(self) -> tuple[str, str, str]:
        """The three bands as printed: (poor, acceptable, good)."""
        fmt = _pct if self.metric == "hallucination" else _two_decimals
        acceptable = f"{fmt(self.low)}-{fmt(self.high)}"
        if self.higher_is_better:
            return f"< {fmt(self.low)}", acceptable, f"> {fmt(self.high)}"
        return f"> {fmt(self.high)}", acceptable, f"< {fmt(self.low)}"


def _two_decimals(x: float) -> str:
    return f"{x:.2f}"


def _pct(x: float) -> str:
    return f"{x * 100:g}%"


#: The targets tables: the general one, and the stricter one for medical or legal work.
DOMAINS = ("general", "strict")


def targets_of(domain: str = "general") -> dict[str, Target]:
    """The targets table of ``domain``: every metric whose spec has a row (its ``targets``,
    :class:`ragworkbook.metrics.registry.Band`) by canonical name; the strict table falls back to a
    metric's general row."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}: use 'general', or 'strict' for medical/legal targets")
    out = {}
    for spec in specs():
        band = spec.target(domain)
        if band is not None:
            out[spec.name] = Target(spec.name, band.label, band.low, band.high, band.k)
    return out


def targets_table(domain: str = "general") -> pd.DataFrame:
    """The targets table as a pandas DataFrame (one row per metric: poor / acceptable / good)."""
    import pandas as pd

    rows = []
    for t in targets_of(domain).values():
        poor, acceptable, good = t.bands()
        rows.append({"metric": t.label, "poor": poor, "acceptable": acceptable, "good": good})
    return pd.DataFrame(rows).set_index("metric")


def _family(metric: str) -> tuple[str | None, int | None]:
    try:
        m = parse_metric(metric)
    except ValueError:
        return None, None
    return m.kind, m.k


def rate(metric: str, value: float, domain: str = "general", *,
         ci: tuple[float, float] | None = None) -> str:
    """Rate one value: ``rate("recall@10", 0.72) == "acceptable"``; with its interval ``ci`` the rating
    says which other bands the interval reaches (:meth:`Target.rate_interval`).

    This is the table's band for the number alone: it knows nothing of the judge
    behind a judged value. Rate a report with :func:`apply_targets`, which refuses
    to rate a judged metric whose judge was not measured reliable. Raises
    ValueError naming the metrics that have targets when ``metric`` has none.
    """
    table = targets_of(domain)
    family, _ = _family(metric)
    if family not in table:
        raise ValueError(
            f"no target for metric {metric!r}; the targets table covers: "
            + ", ".join(t.label for t in table.values())
        )
    if ci is None:
        return table[family].rate(value)
    return table[family].rate_interval(value, *ci)


NOT_RATED = "not rated"


def apply_targets(report_or_means: Report | Mapping[str, float], domain: str = "general", *,
                  reliability: Mapping[str, JSONObject] | None = None,
                  min_kappa: float | None = None,
                  intervals: Mapping[str, tuple[float, float]] | None = None) -> pd.DataFrame:
    """Rate a report's aggregate means, and their intervals, against the targets table.

    ``report_or_means`` is a :class:`ragworkbook.evaluation.report.Report` (its aggregate
    means, their confidence intervals and its judges' reliability cards are used) or a
    mapping ``metric name -> mean`` (with ``intervals``: metric -> (low, high), and
    ``reliability``: metric -> card, else every judged metric is unmeasured). Returns a
    DataFrame with one row per metric that has a target: ``metric, value, ci_low, ci_high,
    target, poor, acceptable, good, band, rating, note, judge``; ``band`` is the mean's band,
    ``rating`` adds the bands the interval reaches ("good, but the interval reaches
    acceptable"). A judged metric whose judge is unmeasured or fails the reliability gate
    (kappa threshold ``min_kappa``, default
    :data:`~ragworkbook.judging.check.RELIABILITY_MIN_KAPPA`) gets the rating
    ``"not rated"`` and the reason in ``note``; ``judge`` describes the judge's measured
    agreement (empty for metrics no judge scored). If no metric has a target, the
    DataFrame is empty (with those columns).
    """
    import pandas as pd

    table = targets_of(domain)
    min_kappa = RELIABILITY_MIN_KAPPA if min_kappa is None else float(min_kappa)
    cards: dict[str, JSONObject | None] = dict(reliability or {})
    cis: dict[str, tuple[float, float]] = {str(m): (float(lo), float(hi)) for m, (lo, hi) in
                                           (intervals or {}).items()}
    if hasattr(report_or_means, "means"):
        means = report_or_means.means()
        for m, agg in getattr(report_or_means, "aggregates", {}).items():
            if getattr(agg, "n", 0):
                cis.setdefault(str(m), (agg.ci_low, agg.ci_high))
        if hasattr(report_or_means, "reliability"):
            for m in means:
                card = report_or_means.reliability(m)
                if card is not None:
                    cards.setdefault(m, card)
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
        lo, hi = cis.get(str(metric), (float("nan"), float("nan")))
        band = t.rate(value)
        rating = t.rate_interval(value, lo, hi)
        judge = ""
        if _is_judged(str(metric)):
            card = cards.get(metric) or unmeasured()
            card = {"metric": str(metric), **card}
            judge = describe(card)
            ok, why = trusted(card, min_kappa)
            if not ok and rating != "n/a":
                band = rating = NOT_RATED
                note = "; ".join(x for x in (note, why) if x)
        rows.append({"metric": metric, "value": value, "ci_low": lo, "ci_high": hi, "target": t.label,
                     "poor": poor, "acceptable": acceptable, "good": good, "band": band, "rating": rating,
                     "note": note, "judge": judge})
    cols = ["metric", "value", "ci_low", "ci_high", "target", "poor", "acceptable", "good", "band", "rating",
            "note", "judge"]
    return pd.DataFrame(rows, columns=cols)


def _is_judged(metric: str) -> bool:
    try:
        return parse_metric(metric).family == "judged"
    except ValueError:
        return False
