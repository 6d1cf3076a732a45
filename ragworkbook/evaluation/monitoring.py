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
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragworkbook.evaluation.report import Report

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["Step", "load_series", "trend", "gate_series", "plot_trend"]


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
        row: dict[str, Any] = {"label": cur.label, "against": base.label, "passed": gate.passed,
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
