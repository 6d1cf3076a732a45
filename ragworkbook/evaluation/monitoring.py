"""Monitoring over time: a series of saved reports, their trend, and the regression gate at every step.

An evaluation is rarely run once. Each change to a RAG system (a new chunker, another
retriever, a prompt edit, a model upgrade) gets a new report; kept in order, the reports are
a time series. This module turns such a series into

- :func:`trend`: one row per (step, metric) with the mean, its bootstrap interval and the
  scored / failed / undefined counts (:class:`~ragworkbook.outcomes.Aggregate`);
- :func:`gate_series`: the regression gate
  (:meth:`ragworkbook.evaluation.compare.Comparison.gate`) applied at every step, against the
  **previous** step (did this change break something?) or against the **first** (has the
  system drifted from the baseline, one harmless-looking step at a time?);
- :func:`plot_trend`: the means with their intervals over the steps, one panel per metric,
  each step marked with the gate's verdict.

A :class:`Step` is a report with a label and a note saying what changed. Steps are compared
with :func:`~ragworkbook.evaluation.compare.compare_reports`, so every step must be on the
same questions (a paired test needs the same eval set).

**Live traffic, without references.** In production there is no eval set: the questions are
the users', nobody wrote their reference answers, and every window of traffic holds different
questions. What can be watched are *reference-free* scores computed for every request (the
retriever's top similarity, a judge's faithfulness, the answer's length, the share of refusals),
and the question becomes whether their distribution in the current window has moved away from
a baseline window's. Two unpaired samples, so two-sample tools:

- :func:`drift`: the Kolmogorov-Smirnov test (:func:`scipy.stats.ks_2samp`: the largest gap
  between the two empirical distribution functions), a permutation test of the difference of
  means (:func:`scipy.stats.permutation_test`), and the **population stability index**
  (:func:`psi`) as a size of the shift, with the conventional bands (below 0.1 stable,
  0.1-0.25 moderate, above 0.25 major);
- the alert rule: ``alert`` when the shift is both significant (KS p below ``alpha``) and large
  (PSI at least ``psi_alert``), ``watch`` when only one holds, ``ok`` otherwise. A test alone
  fires on tiny shifts once windows are large; a size alone fires on noise when they are small;
- :func:`drift_series`: the check for every window of a series against one baseline;
- :func:`false_alarm_rate`: how often the rule fires when nothing changed, measured by drawing
  both windows from the baseline pool; choose ``alpha`` and ``psi_alert`` so that this is rare
  (an alert that fires every week is switched off).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import ks_2samp, permutation_test

from ragworkbook.evaluation.report import Report
from ragworkbook.stats.sample_size import Proportion, proportion

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["Step", "load_series", "trend", "gate_series", "plot_trend", "PSI_BANDS", "psi", "psi_band",
           "psi_shares", "psi_chance_level", "DriftCheck", "drift", "drift_series", "false_alarm_rate"]


@dataclass
class Step:
    """One point of the series: a ``label`` ("v3"), the ``report`` and a ``note`` (what changed)."""

    label: str
    report: Report
    note: str = ""


def load_series(paths: Sequence[str | os.PathLike[str]]) -> list[Step]:
    """Load saved reports in the given order (oldest first) as steps.

    The label is the report's ``meta["name"]`` (else the file name without ``.json``), the note
    its ``meta["change"]`` (else empty). Errors of :meth:`Report.load` (missing file, invalid
    report) propagate with the file's name.
    """
    steps = []
    for p in paths:
        rep = Report.load(p)
        steps.append(Step(str(rep.meta.get("name") or Path(p).stem), rep, str(rep.meta.get("change", ""))))
    _check_steps(steps)
    return steps


def _check_steps(steps: Sequence[Step]) -> None:
    if not steps:
        raise ValueError("a series needs at least one step (a saved report)")
    labels = [s.label for s in steps]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ValueError(f"step labels must be unique, repeated: {', '.join(dup)}")


def _name_in(report: Report, metric: str) -> str:
    """The report's own spelling of ``metric`` (matched by metric and cutoff, like the comparison)."""
    from ragworkbook.metrics.registry import find_metric

    name = find_metric(metric, report.metrics)
    if name is not None:
        return name
    raise ValueError(f"metric {metric!r} is not in report {report.meta.get('name') or ''!r} "
                     f"(it has: {', '.join(report.metrics)})")


def trend(steps: Sequence[Step], metrics: Sequence[str]) -> pd.DataFrame:
    """One row per step and metric: ``step`` (0-based), ``label``, ``metric``, ``mean``, ``ci_low``,
    ``ci_high``, ``n`` (scored), ``failed``, ``undefined``; a metric missing from a report is a
    ValueError naming it."""
    import pandas as pd

    _check_steps(steps)
    rows = []
    for i, s in enumerate(steps):
        for m in metrics:
            a = s.report.aggregates[_name_in(s.report, m)]
            rows.append({"step": i, "label": s.label, "metric": m, "mean": a.mean, "ci_low": a.ci_low,
                         "ci_high": a.ci_high, "n": a.n, "failed": a.failed, "undefined": a.undefined})
    return pd.DataFrame(rows)


def gate_series(steps: Sequence[Step], metrics: Sequence[str], *, against: str = "previous",
                alpha: float = 0.05, method: str = "randomization", seed: int = 0) -> pd.DataFrame:
    """The regression gate at every step after the first, one row per step.

    ``against="previous"`` compares step i with step i - 1, ``"first"`` with step 0. Columns:
    ``label``, ``against`` (the label compared with), ``passed`` (the gate's verdict),
    ``worse`` (metrics significantly worse), ``not_compared`` (metrics without a single pair),
    and per metric ``<metric> diff`` (mean of the paired differences, new - old), ``<metric> p``
    and ``<metric> verdict`` (``better`` / ``worse`` / ``no significant change`` / not compared).
    """
    import pandas as pd

    from ragworkbook.evaluation.compare import compare_reports

    if against not in ("previous", "first"):
        raise ValueError(f"against must be 'previous' or 'first', got {against!r}")
    _check_steps(steps)
    rows = []
    for i in range(1, len(steps)):
        base = steps[i - 1] if against == "previous" else steps[0]
        cur = steps[i]
        comp = compare_reports(base.report, cur.report, metrics, alpha=alpha, method=method, seed=seed)
        gate = comp.gate(list(metrics))
        row: dict[str, str | bool | float] = {
            "label": cur.label, "against": base.label, "passed": gate.passed,
            "worse": ", ".join(gate.worse), "not_compared": ", ".join(gate.not_compared)}
        for m in metrics:
            r = comp.table.loc[m]
            row[f"{m} diff"] = float(r["diff"])
            row[f"{m} p"] = float(r["p_value"])
            row[f"{m} verdict"] = str(r["verdict"])
        rows.append(row)
    return pd.DataFrame(rows).set_index("label") if rows else pd.DataFrame()


def plot_trend(steps: Sequence[Step], metrics: Sequence[str], gates: pd.DataFrame | None = None, *,
               title: str = "") -> Figure:
    """Means and 95% intervals over the steps, one panel per metric (matplotlib ``Figure``).

    With ``gates`` (from :func:`gate_series`), a step whose comparison says a metric is
    significantly worse is marked with a red cross on that metric's panel, and one that is
    significantly better with a green triangle; the x labels show the steps' labels.
    """
    import matplotlib.pyplot as plt

    data = trend(steps, metrics)
    labels = [s.label for s in steps]
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.6 * len(metrics), 3.3), squeeze=False)
    for ax, m in zip(axes[0], metrics, strict=True):
        d = data[data["metric"] == m]
        x = d["step"].to_numpy()
        mean = d["mean"].to_numpy(dtype=float)
        err = [mean - d["ci_low"].to_numpy(dtype=float), d["ci_high"].to_numpy(dtype=float) - mean]
        ax.errorbar(x, mean, yerr=err, marker="o", capsize=3, color="tab:blue", label="mean, 95% CI")
        if gates is not None and f"{m} verdict" in gates.columns:
            for label, verdict in gates[f"{m} verdict"].items():
                i = labels.index(str(label))
                if verdict == "worse":
                    ax.plot(i, mean[i], "x", color="tab:red", markersize=12, mew=3)
                elif verdict == "better":
                    ax.plot(i, mean[i], "^", color="tab:green", markersize=10)
        ax.set_title(m)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=30, ha="right")
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------------------------
# live traffic without references: drift of reference-free scores
# --------------------------------------------------------------------------------------------
#: Conventional reading of the population stability index: (upper bound, label).
PSI_BANDS: tuple[tuple[float, str], ...] = ((0.1, "stable"), (0.25, "moderate shift"),
                                            (math.inf, "major shift"))

#: Floor for a bin's share in :func:`psi`, so that an empty bin does not make the index infinite.
PSI_FLOOR = 1e-4


def _scores(values: Sequence[float], name: str) -> np.ndarray:
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of numbers, not a string")
    arr = np.asarray([np.nan if v is None else v for v in values], dtype=float)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"{name} needs at least 2 scores, got {arr.size}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} has {int(np.isnan(arr).sum())} missing scores (None or NaN): count them "
                         "(a failed judgment is a signal of its own) and drop them before comparing")
    return arr


def psi_shares(baseline: Sequence[float], current: Sequence[float], bins: int = 10
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bin edges and the two windows' shares per bin that :func:`psi` compares: edges at the
    baseline's quantiles (``bins`` equal-count bins; repeated edges of tied scores merged), the
    outer bins open-ended; each share floored at :data:`PSI_FLOOR` and renormalised."""
    b, c = _scores(baseline, "baseline"), _scores(current, "current")
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
        raise ValueError(f"bins must be a whole number >= 2, got {bins!r}")
    inner = np.unique(np.quantile(b, np.linspace(0, 1, bins + 1)[1:-1]))
    edges = np.concatenate([[-np.inf], inner, [np.inf]])

    def shares(x: np.ndarray) -> np.ndarray:
        idx = np.searchsorted(inner, x, side="right")  # bin i holds edges[i] <= x < edges[i + 1]
        counts = np.bincount(idx, minlength=len(inner) + 1).astype(float)
        sh = np.maximum(counts / counts.sum(), PSI_FLOOR)
        return sh / sh.sum()

    return edges, shares(b), shares(c)


def psi(baseline: Sequence[float], current: Sequence[float], bins: int = 10) -> float:
    """Population stability index ``sum_i (c_i - b_i) ln(c_i / b_i)`` over the bins of
    :func:`psi_shares` (b: baseline shares, c: current). It is the symmetric Kullback-Leibler
    divergence ``KL(c || b) + KL(b || c)`` of the binned distributions; 0 when the shares match."""
    _, b, c = psi_shares(baseline, current, bins)
    return float(np.sum((c - b) * np.log(c / b)))


def psi_chance_level(n_baseline: int, n_current: int, bins: int = 10) -> float:
    """The PSI that chance alone gives, on average, when nothing changed: about
    ``(bins - 1) (1 / n_baseline + 1 / n_current)`` (the PSI is, to second order, a chi-square
    statistic over the bins divided by the sample sizes). The conventional bands assume windows of
    thousands; with 40 requests a window and 10 bins chance alone is above 0.25, so use fewer bins or
    a higher bar for small windows."""
    if min(n_baseline, n_current) < 1 or bins < 2:
        raise ValueError(f"need window sizes >= 1 and bins >= 2, got {n_baseline}, {n_current}, {bins}")
    return (bins - 1) * (1 / n_baseline + 1 / n_current)


def psi_band(value: float) -> str:
    """The conventional reading of a PSI value (:data:`PSI_BANDS`)."""
    if math.isnan(value) or value < 0:
        raise ValueError(f"a PSI is a number >= 0, got {value!r}")
    return next(label for bound, label in PSI_BANDS if value < bound)


@dataclass(frozen=True)
class DriftCheck:
    """One window against the baseline: sizes and means, the KS statistic and p-value, the
    permutation p-value of the difference of means (current - baseline), the PSI and its band,
    and the rule's ``status`` (``"alert"``, ``"watch"``, ``"ok"``) with its ``reasons``."""

    n_baseline: int
    n_current: int
    mean_baseline: float
    mean_current: float
    ks_statistic: float
    ks_p: float
    mean_diff_p: float
    psi: float
    psi_band: str
    status: str
    reasons: tuple[str, ...]

    @property
    def mean_diff(self) -> float:
        return self.mean_current - self.mean_baseline


def drift(baseline: Sequence[float], current: Sequence[float], *, alpha: float = 0.01,
          psi_alert: float = 0.25, bins: int = 10, n_resamples: int = 9999, seed: int = 0) -> DriftCheck:
    """Compare a window of reference-free scores with a baseline window (see the module docstring).

    ``alpha``: the KS p-value below which the shift is significant; ``psi_alert``: the PSI from
    which it is large; the permutation test draws ``n_resamples`` relabellings (seeded; 0 skips
    it, and ``mean_diff_p`` is NaN)."""
    b, c = _scores(baseline, "baseline"), _scores(current, "current")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    if not psi_alert > 0:
        raise ValueError(f"psi_alert must be > 0, got {psi_alert!r}")
    ks = ks_2samp(b, c)
    perm_p = math.nan
    if n_resamples:
        perm = permutation_test((c, b), lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
                                permutation_type="independent", vectorized=True, n_resamples=n_resamples,
                                rng=np.random.default_rng(seed))
        perm_p = float(perm.pvalue)
    value = psi(b, c, bins)
    significant = float(ks.pvalue) < alpha
    large = value >= psi_alert
    reasons = []
    if significant:
        reasons.append(f"KS p = {float(ks.pvalue):.2g} < {alpha:g}")
    if large:
        reasons.append(f"PSI {value:.3f} >= {psi_alert:g}")
    status = "alert" if significant and large else "watch" if significant or large else "ok"
    return DriftCheck(n_baseline=b.size, n_current=c.size, mean_baseline=float(b.mean()),
                      mean_current=float(c.mean()), ks_statistic=float(ks.statistic), ks_p=float(ks.pvalue),
                      mean_diff_p=perm_p, psi=value, psi_band=psi_band(value), status=status,
                      reasons=tuple(reasons))


def drift_series(baseline: Sequence[float], windows: Mapping[str, Sequence[float]], **kw: object
                 ) -> pd.DataFrame:
    """:func:`drift` of every window (in the mapping's order) against one baseline, one row per
    window (indexed by its label): n, mean, mean_diff, ks_statistic, ks_p, mean_diff_p, psi,
    psi_band, status, reasons. Keyword arguments go to :func:`drift`."""
    import pandas as pd

    if not windows:
        raise ValueError("no windows to compare with the baseline")
    rows = []
    for label, values in windows.items():
        d = drift(baseline, values, **kw)  # type: ignore[arg-type]
        rows.append({"window": label, "n": d.n_current, "mean": d.mean_current, "mean_diff": d.mean_diff,
                     "ks_statistic": d.ks_statistic, "ks_p": d.ks_p, "mean_diff_p": d.mean_diff_p,
                     "psi": d.psi, "psi_band": d.psi_band, "status": d.status,
                     "reasons": "; ".join(d.reasons)})
    return pd.DataFrame(rows).set_index("window")


def false_alarm_rate(pool: Sequence[float], baseline_size: int, window_size: int, *, trials: int = 200,
                     seed: int = 0, alpha: float = 0.01, psi_alert: float = 0.25, bins: int = 10,
                     fires_on: str = "alert") -> Proportion:
    """How often the rule fires when nothing changed: ``trials`` times, draw a baseline and a
    window of the given sizes from ``pool`` (disjoint, without replacement) and run :func:`drift`;
    the share of trials whose status is ``fires_on`` (``"alert"``, or ``"watch"`` for watch or
    alert), with its Wilson interval."""
    arr = _scores(pool, "pool")
    if baseline_size < 2 or window_size < 2 or baseline_size + window_size > arr.size:
        raise ValueError(f"need baseline_size and window_size >= 2 with their sum at most the pool's "
                         f"{arr.size} scores, got {baseline_size} and {window_size}")
    if fires_on not in ("alert", "watch"):
        raise ValueError(f"fires_on must be 'alert' or 'watch', got {fires_on!r}")
    rng = np.random.default_rng(seed)
    fired = 0
    for _ in range(trials):
        idx = rng.permutation(arr.size)
        d = drift(arr[idx[:baseline_size]], arr[idx[baseline_size:baseline_size + window_size]], alpha=alpha,
                  psi_alert=psi_alert, bins=bins, n_resamples=0)
        fired += d.status == "alert" or (fires_on == "watch" and d.status == "watch")
    return proportion(fired, trials)
