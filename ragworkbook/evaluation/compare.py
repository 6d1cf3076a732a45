"""Two reports compared question by question: paired tests per metric, and the regression gate.

:func:`compare_reports` pairs report B with report A on the same questions and,
for each metric, runs :func:`ragworkbook.stats.resampling.paired_test` on the
questions scored in both. A pair where either side failed or is undefined is
left out and counted (``failed`` / ``undefined`` columns), never silently.
The direction of each metric comes from the registry: for hallucination a
smaller value is better.

:meth:`Comparison.gate` is the regression gate (``ragworkbook compare
--fail-if-worse``): it fails a metric on which B is significantly worse, and
also one it cannot compare well enough to tell, so a run that mostly failed
never passes the gate:

- **too few pairs**: a gated metric needs at least :func:`min_gate_pairs` pairs
  scored in both reports: **6 at alpha 0.05**, the fewest with which the exact
  sign-flip test can reach p < alpha at all (with 5 pairs its smallest p-value
  is 2/2^5 = 0.0625, so B could never be found worse); and at least half of the
  pairs that are defined (scored or failed; undefined ones, such as no reference,
  are left out) must be compared: when more values failed than were compared
  the gate fails, whatever the test says;
- **an incomplete report**: a report saved by an interrupted run
  (``meta.complete`` false: questions not run) is refused unless told otherwise
  (``allow_incomplete=True``, ``--allow-incomplete``). A **judged** metric
is gated only when the judge of both reports was measured reliable
(:func:`ragworkbook.judging.reliability.trusted`, from the reports'
``judge_reliability`` cards); otherwise the gate fails on it and says why,
unless told to trust the judge (``trust_judge=True``, ``--trust-judge``): a
change in a score from an unmeasured judge may be the judge's noise.

The gate also fails a metric on which B **lost questions** A scored (undefined in B:
no answer, no reference, no contexts), unless ``allow_undefined=True`` (``--allow-undefined``), and one whose
mean dropped by more than a ``max_drop`` (``--max-drop METRIC=DROP``); two reports
scored against other references or relevance are refused
(:mod:`ragworkbook.evaluation.gate`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragworkbook._types import JSONObject
from ragworkbook.evaluation.gate import LostQuestions
from ragworkbook.evaluation.report import Report
from ragworkbook.metrics.registry import find_metric, parse_metric
from ragworkbook.outcomes import FAILED, SCORED
from ragworkbook.stats.resampling import paired_test

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Comparison", "GateResult", "compare_reports", "min_gate_pairs", "NOT_COMPARED"]

NOT_COMPARED = "not compared (no pairs)"


def min_gate_pairs(alpha: float = 0.05) -> int:
    """The fewest compared pairs the gate accepts at ``alpha``: the smallest ``n`` whose exact
    sign-flip test can give ``p < alpha`` (its smallest two-sided p-value is ``2 / 2**n``): 6 at 0.05,
    8 at 0.01."""
    n = 1
    while 2.0 / 2**n >= alpha:
        n += 1
    return n


@dataclass(frozen=True)
class GateResult:
    """What the gate found: metrics on which B is significantly ``worse``, metrics it
    could ``not_compare`` (no pair, too few pairs, or more failed than compared), judged metrics
    whose judge it does not trust (``untrusted``), each with the reason, and the reports it
    refused as ``incomplete`` ("A", "B" -> why). ``passed`` when all four are empty."""

    worse: list[str]
    not_compared: dict[str, str]
    untrusted: dict[str, str] = field(default_factory=dict)
    incomplete: dict[str, str] = field(default_factory=dict)
    #: gated metric -> why: B left undefined questions A scored (unless allow_undefined)
    lost: dict[str, str] = field(default_factory=dict)
    #: metric -> why: B's mean dropped by more than its max_drop
    dropped: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when no gated metric is worse, every gated metric was compared on enough pairs,
        every gated judged metric has a judge measured reliable (or the judge was trusted),
        neither report is an interrupted run (or that was allowed), B lost no question A scored
        (or that was allowed) and no metric dropped by more than its ``max_drop``."""
        return not (self.worse or self.not_compared or self.untrusted or self.incomplete or self.lost
                    or self.dropped)


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

    table: pd.DataFrame
    alpha: float
    method: str
    name_a: str = "a"
    name_b: str = "b"
    #: judged metric -> (card of report A, card of report B) (:mod:`ragworkbook.judging.reliability`)
    judge_reliability: dict[str, tuple[JSONObject, JSONObject]] = field(default_factory=dict)
    #: "A" / "B" -> why that report is incomplete (an interrupted run: ``meta.complete`` false)
    incomplete: dict[str, str] = field(default_factory=dict)
    #: metric -> the questions A scored and B did not (:func:`ragworkbook.evaluation.gate.lost_questions`)
    lost: dict[str, LostQuestions] = field(default_factory=dict)
    n_questions: int = 0

    @property
    def ci_method(self) -> str:
        """How the interval is made: the inverted sign-flip (randomization) or bootstrap test."""
        return "inverted sign-flip test" if self.method == "randomization" else "inverted bootstrap test"

    def _row(self, metric: str) -> pd.Series:
        name = find_metric(metric, self.table.index)
        if name is None:
            raise ValueError(f"unknown metric {metric!r}; compared metrics: {', '.join(self.table.index)}")
        return self.table.loc[name]

    def worse(self, metric: str) -> bool:
        """True when b is significantly worse than a on ``metric``."""
        return self._row(metric)["verdict"] == "worse"

    def gate(self, metrics: Sequence[str], *, trust_judge: bool = False,
             min_kappa: float | None = None, min_pairs: int | None = None,
             allow_incomplete: bool = False, allow_undefined: bool = False,
             max_drop: dict[str, float] | None = None) -> GateResult:
        """The regression gate over ``metrics``: which are worse, which could not be compared on
        enough pairs (at least ``min_pairs``, default :func:`min_gate_pairs` of ``alpha``, and no
        more failed than compared), which are judged by a judge not measured reliable in both
        reports (unless ``trust_judge``; threshold ``min_kappa``, default 0.6), whether a
        report is an interrupted run (refused unless ``allow_incomplete``), on which B left
        undefined questions A scored (unless ``allow_undefined``), and (``max_drop``: metric -> the largest
        drop allowed) which dropped by more than allowed, significant or not."""
        from ragworkbook.evaluation.gate import describe_lost, drops

        need = min_gate_pairs(self.alpha) if min_pairs is None else int(min_pairs)
        if need < 1:
            raise ValueError(f"min_pairs must be >= 1, got {min_pairs}")
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
            n, failed, undefined = int(row["n"]), int(row["failed"]), int(row["undefined"])
            if row["verdict"] == "worse":
                worse.append(m)
            elif row["verdict"] == NOT_COMPARED:
                not_compared[m] = (f"no question has a {m} value in both reports "
                                   f"({failed} pairs failed, {undefined} undefined)")
            elif n < need or failed > n:
                too = (f"only {n} pair{'s' if n != 1 else ''} compared" if n < need else
                       f"more values failed ({failed}) than were compared ({n})")
                fix = ("fix what failed and run again (eval --resume)" if failed else
                       "evaluate on more questions, or lower --min-pairs knowing that the test then cannot "
                       "find B worse")
                not_compared[m] = (f"{too} ({failed} failed, {undefined} undefined); the gate needs at least "
                                   f"{need} pairs scored in both reports (the fewest with which the test can "
                                   f"find a difference at alpha {self.alpha:g}) and no more failed than "
                                   f"compared: {fix}")
        lost = {}
        if not allow_undefined:
            for m in metrics:
                name = str(self._row(m).name)
                got = self.lost.get(name) or self.lost.get(m)
                if got and got.ids:
                    lost[m] = describe_lost(m, got, self.n_questions)
        incomplete = {} if allow_incomplete else dict(self.incomplete)
        return GateResult(worse, not_compared, untrusted, incomplete, lost, drops(self.table, max_drop or {}))

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


def _match(report: Report, other: Report, metric: str, which: str, common: list[str]) -> str:
    """The report's own name for ``metric`` (the same metric may be spelled differently); ValueError
    saying which report lacks it (the other may have it)."""
    name = find_metric(metric, report.metrics)
    if name is not None:
        return name
    both = f"metrics in both: {', '.join(common) or 'none'}"
    if find_metric(metric, other.metrics) is not None:
        has = "A" if which == "B" else "B"
        raise ValueError(f"report {which} has no {metric!r} value, report {has} has: {which} was run without "
                         f"{metric} (its metrics: {', '.join(report.metrics) or 'none'}); run it again with "
                         f"--metric {metric}, or compare the {both}")
    raise ValueError(f"unknown metric {metric!r}: neither report has it; {both}")


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
    from ragworkbook.evaluation.gate import check_same_ground_truth, lost_questions

    _check_same_questions(a, b)
    check_same_ground_truth(a, b)
    common = [m for m in a.metrics if m in b.metrics]
    names = common if metrics is None else list(metrics)
    if not names:
        raise ValueError(f"the reports have no metric in common (A: {', '.join(a.metrics) or 'none'}; B: "
                         f"{', '.join(b.metrics) or 'none'}): nothing to compare")
    by_id_b = {str(r["id"]): i for i, r in enumerate(b.rows)}
    rows = []
    reliability: dict[str, tuple[JSONObject, JSONObject]] = {}
    lost: dict[str, LostQuestions] = {}
    for m in names:
        parse_metric(m)  # an unknown name is an error of its own (the registry lists the known ones)
        ma = _match(a, b, m, "A", common)
        mb = _match(b, a, m, "B", common)
        lost[m] = lost_questions(a, b, ma, mb)
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
        rec: dict[str, str | int | float] = {
            "metric": m, "mean_a": nan, "mean_b": nan, "diff": nan, "ci_low": nan, "ci_high": nan,
            "p_value": nan, "n": len(va), "failed": failed, "undefined": undefined, "verdict": NOT_COMPARED}
        if va:
            # mean_diff = mean(b - a); the interval inverts the same test at 1 - alpha, so it
            # excludes 0 exactly when p < alpha (the verdict and the interval never disagree)
            res = paired_test(vb, va, method=method, seed=seed, confidence=1 - alpha)
            # the inverted bounds are found by search: a bound of zero can come back as -1e-13 (printed
            # -0.000); 12 decimals is far below any difference of scores
            rec.update(mean_a=sum(va) / len(va), mean_b=sum(vb) / len(vb), diff=float(res.mean_diff),
                       ci_low=round(float(res.ci_low), 12) + 0.0, ci_high=round(float(res.ci_high), 12) + 0.0,
                       p_value=float(res.p_value))
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
                      judge_reliability=reliability, lost=lost, n_questions=len(a.rows),
                      incomplete={w: why for w, r in (("A", a), ("B", b)) if (why := _incomplete(r))})


def _incomplete(report: Report) -> str | None:
    """Why ``report`` is not a finished run (``meta.complete`` false), or None."""
    if report.meta.get("complete", True) is not False:
        return None
    not_run = sum(1 for r in report.rows if (r.get("error") or {}).get("reason") == "not_run")
    stopped = report.meta.get("stopped")
    what = f"{not_run} of {len(report.rows)} questions not run" if not_run else "the run stopped"
    return (f"it was saved by an interrupted run (complete: false, {what}"
            + (f": {stopped}" if stopped else "") + "); finish it with `ragworkbook eval ... --resume`, or "
            "pass --allow-incomplete (allow_incomplete=True) to gate on it anyway")

