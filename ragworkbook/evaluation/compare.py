"""Two reports compared question by question: paired tests per metric, and the regression gate.

:func:`compare_reports` pairs report B with report A on the same questions and,
for each metric, runs :func:`ragworkbook.stats.resampling.paired_test` on the
questions scored in both. A pair where either side failed or is undefined is
left out and counted (``failed`` / ``undefined`` columns), never silently.
The direction of each metric comes from the registry: for hallucination a
smaller value is better.

:meth:`Comparison.gate` is the regression gate (``ragworkbook compare
--fail-if-worse``): it fails a metric on which B is significantly worse, and
also one it cannot compare at all (no question scored in both reports), so a
run that could not score the metric never passes the gate. A **judged** metric
is gated only when the judge of both reports was measured reliable
(:func:`ragworkbook.judging.reliability.trusted`, from the reports'
``judge_reliability`` cards); otherwise the gate fails on it and says why,
unless told to trust the judge (``trust_judge=True``, ``--trust-judge``): a
change in a score from an unmeasured judge may be the judge's noise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragworkbook.evaluation.report import Report
from ragworkbook.metrics.registry import find_metric, parse_metric
from ragworkbook.outcomes import FAILED, SCORED
from ragworkbook.stats.resampling import paired_test

__all__ = ["Comparison", "GateResult", "compare_reports", "NOT_COMPARED"]

NOT_COMPARED = "not compared (no pairs)"


@dataclass(frozen=True)
class GateResult:
    """What the gate found: metrics on which B is significantly ``worse``, metrics it
    could ``not_compare`` and judged metrics whose judge it does not trust (``untrusted``),
    each with the reason. ``passed`` when all three are empty."""

    worse: list[str]
    not_compared: dict[str, str]
    untrusted: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when no gated metric is worse, every gated metric could be compared, and every
        gated judged metric has a judge measured reliable (or the judge was trusted)."""
        return not self.worse and not self.not_compared and not self.untrusted


@dataclass
class Comparison:
    """Two reports compared metric by metric on the same questions.

    ``table`` has one row per metric: ``mean_a, mean_b, diff`` (b - a),
    ``ci_low, ci_high`` (the interval of the paired difference that inverts the
    same test at level ``1 - alpha``: it excludes 0 exactly when ``p_value <
    alpha``; ``-inf, inf`` when too few pairs can never reach significance;
    ``ci_method`` names it), ``p_value``, ``n`` (pairs
    scored in both), ``failed`` (pairs with a failure on either side),
    ``undefined`` (pairs undefined on either side and failed on neither), and
    ``verdict``: ``"better"``, ``"worse"`` (b relative to a, respecting the
    metric's direction, significant at ``alpha``), ``"no significant change"`` or
    ``"not compared (no pairs)"``.
    """

    table: Any
    alpha: float
    method: str
    name_a: str = "a"
    name_b: str = "b"
    #: judged metric -> (card of report A, card of report B) (:mod:`ragworkbook.judging.reliability`)
    judge_reliability: dict[str, tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)

    @property
    def ci_method(self) -> str:
        """How the interval is made: the inverted sign-flip (randomization) or bootstrap test."""
        return "inverted sign-flip test" if self.method == "randomization" else "inverted bootstrap test"

    def _row(self, metric: str) -> Any:
        name = find_metric(metric, self.table.index)
        if name is None:
            raise ValueError(f"unknown metric {metric!r}; compared metrics: {', '.join(self.table.index)}")
        return self.table.loc[name]

    def worse(self, metric: str) -> bool:
        """True when b is significantly worse than a on ``metric``."""
        return self._row(metric)["verdict"] == "worse"

    def gate(self, metrics: Sequence[str], *, trust_judge: bool = False,
             min_kappa: float | None = None) -> GateResult:
        """The regression gate over ``metrics``: which are worse, which could not be compared,
        and which are judged by a judge not measured reliable in both reports (unless
        ``trust_judge``; threshold ``min_kappa``, default 0.6)."""
        from ragworkbook.judging.check import RELIABILITY_MIN_KAPPA
        from ragworkbook.judging.reliability import trusted

        worse, not_compared, untrusted = [], {}, {}
        for m in metrics:
            row = self._row(m)
            cards = self.judge_reliability.get(str(row.name))
            if cards is not None and not trust_judge:
                found = []
                for which, card in zip(("A", "B"), cards, strict=True):
                    ok, why = trusted({"metric": str(row.name), **card},
                                      RELIABILITY_MIN_KAPPA if min_kappa is None else min_kappa)
                    if not ok:
                        found.append((which, why))
                if len(found) == 2 and found[0][1] == found[1][1]:
                    found = [("A and B", found[0][1])]
                if found:
                    untrusted[m] = "; ".join(f"in {which}: {why}" for which, why in found) + (
                        " (pass --trust-judge to gate on it anyway)")
            if row["verdict"] == "worse":
                worse.append(m)
            elif row["verdict"] == NOT_COMPARED:
                not_compared[m] = (f"no question has a {m} value in both reports "
                                   f"({int(row['failed'])} pairs failed, {int(row['undefined'])} undefined)")
        return GateResult(worse, not_compared, untrusted)

    def _repr_html_(self) -> str:  # pragma: no cover - notebook display
        return self.table._repr_html_()

    def __repr__(self) -> str:
        return f"Comparison({self.name_a} -> {self.name_b}, alpha={self.alpha}, method={self.method!r})\n" + (
            self.table.to_string(float_format=lambda x: f"{x:.3f}")
        )


def _check_same_questions(a: Report, b: Report) -> None:
    ids_a, ids_b = set(a.ids), set(b.ids)
    if ids_a != ids_b:
        only_a = sorted(ids_a - ids_b)
        only_b = sorted(ids_b - ids_a)
        raise ValueError(
            "the two reports are not on the same questions: "
            + (f"only in A: {', '.join(only_a)}; " if only_a else "")
            + (f"only in B: {', '.join(only_b)}; " if only_b else "")
            + "a paired comparison needs the same eval set in both runs"
        )
    qa = {str(r["id"]): r.get("question") for r in a.rows}
    for r in b.rows:
        if qa[str(r["id"])] != r.get("question"):
            raise ValueError(
                f"question {r['id']!r} differs between the reports ({qa[str(r['id'])]!r} vs "
                f"{r.get('question')!r}); a paired comparison needs the same eval set in both runs"
            )


def _match(report: Report, metric: str, which: str, common: list[str]) -> str:
    """The report's own name for ``metric`` (the same metric may be spelled differently)."""
    name = find_metric(metric, report.metrics)
    if name is not None:
        return name
    raise ValueError(f"unknown metric {metric!r} (not in report {which}); metrics in both: "
                     f"{', '.join(common) or 'none'}")


def compare_reports(a: Report, b: Report, metrics: Iterable[str] | None = None, *,
                    alpha: float = 0.05, method: str = "randomization", seed: int = 0) -> Comparison:
    """Paired comparison of report ``b`` against report ``a`` on the same questions.

    ``metrics`` defaults to every metric present in both (matched by metric and
    cutoff, so ``P@3`` finds ``precision@3``). For each metric the questions
    scored in both reports are paired and passed to
    :func:`ragworkbook.stats.resampling.paired_test` (``method``); the other pairs
    are counted as failed or undefined. Raises ValueError when the question ids
    (or their texts) differ, or when a requested metric is missing.
    """
    import pandas as pd

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    _check_same_questions(a, b)
    common = [m for m in a.metrics if m in b.metrics]
    names = common if metrics is None else list(metrics)
    by_id_b = {str(r["id"]): i for i, r in enumerate(b.rows)}
    rows = []
    reliability: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for m in names:
        ma = _match(a, m, "A", common)
        mb = _match(b, m, "B", common)
        va_all, oa = a.values(ma), a.outcomes(ma)
        vb_all, ob = b.values(mb), b.outcomes(mb)
        va, vb = [], []
        failed = undefined = 0
        for i, r in enumerate(a.rows):
            j = by_id_b[str(r["id"])]
            if oa[i] == SCORED and ob[j] == SCORED:
                va.append(float(va_all[i]))
                vb.append(float(vb_all[j]))
            elif FAILED in (oa[i], ob[j]):
                failed += 1
            else:
                undefined += 1
        nan = math.nan
        rec: dict[str, Any] = {"metric": m, "mean_a": nan, "mean_b": nan, "diff": nan, "ci_low": nan,
                               "ci_high": nan, "p_value": nan, "n": len(va), "failed": failed,
                               "undefined": undefined, "verdict": NOT_COMPARED}
        if va:
            # mean_diff = mean(b - a); the interval inverts the same test at 1 - alpha, so it
            # excludes 0 exactly when p < alpha (the verdict and the interval never disagree)
            res = paired_test(vb, va, method=method, seed=seed, confidence=1 - alpha)
            rec.update(mean_a=sum(va) / len(va), mean_b=sum(vb) / len(vb), diff=float(res.mean_diff),
                       ci_low=float(res.ci_low), ci_high=float(res.ci_high), p_value=float(res.p_value))
            sign = 1.0 if parse_metric(ma).higher_is_better else -1.0
            if res.p_value < alpha and res.mean_diff != 0:
                rec["verdict"] = "better" if sign * res.mean_diff > 0 else "worse"
            else:
                rec["verdict"] = "no significant change"
        rows.append(rec)
        ca, cb = a.reliability(ma), b.reliability(mb)
        if ca is not None or cb is not None:
            reliability[m] = (ca or {}, cb or {})
    table = pd.DataFrame(rows).set_index("metric")
    return Comparison(table=table, alpha=alpha, method=method,
                      name_a=str(a.meta.get("name") or "A"), name_b=str(b.meta.get("name") or "B"),
                      judge_reliability=reliability)

