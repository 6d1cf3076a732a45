"""One evaluation report for a whole RAG pipeline, saved, loaded and compared.

:func:`evaluate` runs a pipeline (retrieve, then generate) over an eval set
and scores every question with the retrieval metrics (when relevance
judgements are given), the generation metrics against the reference answer,
and — when a judge is given — the LLM-judged metrics. The result is a
:class:`Report`:

- ``rows``: one dict per question (id, question, reference, answer, the
  retrieved context ids and texts, ``metrics`` name -> value, ``failures``
  name -> error message for every metric that could not be computed);
- ``aggregates``: per metric the mean with a bootstrap confidence interval,
  ``n`` (questions scored) and ``failures`` (questions that could not be
  scored). A failed judgment is never a silent NaN: its value is ``None``,
  its reason is in the row, and it is counted in ``failures``; the mean is
  over the ``n`` scored questions and says so.

Reports are saved as JSON (atomically) and loaded with validation, so a
malformed file fails with its name and the problem. :func:`compare_reports`
pairs two reports question by question and runs a paired test per metric:
the basis of a regression gate (``ragworkbook compare --fail-if-worse``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragworkbook._io import atomic_write_json

__all__ = [
    "REPORT_FORMAT",
    "REPORT_VERSION",
    "LOWER_IS_BETTER",
    "Aggregate",
    "Report",
    "Comparison",
    "aggregate",
    "evaluate",
    "compare_reports",
    "cli_eval",
    "cli_compare",
]

REPORT_FORMAT = "ragworkbook-report"
REPORT_VERSION = 1

#: Metrics where a smaller value is better (everything else: higher is better).
LOWER_IS_BETTER = frozenset({"hallucination", "hallucination_rate", "numeric_issues"})


# ---------------------------------------------------------------------------------------------
# data model
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Aggregate:
    """The aggregate of one metric over the questions of a report.

    ``mean`` is over the ``n`` questions that were scored; ``failures`` counts
    the questions whose score could not be computed (kept out of the mean,
    never silently). ``ci_low``/``ci_high`` are a bootstrap confidence interval
    of the mean (``confidence``, default 95%); with ``n`` = 0 every number is NaN.
    """

    mean: float
    ci_low: float
    ci_high: float
    n: int
    failures: int = 0
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        return {"mean": _num_or_none(self.mean), "ci_low": _num_or_none(self.ci_low),
                "ci_high": _num_or_none(self.ci_high), "n": self.n, "failures": self.failures,
                "confidence": self.confidence}


def _num_or_none(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _nan_if_none(x: Any) -> float:
    return float("nan") if x is None else float(x)


def aggregate(values: Sequence[float | None], *, confidence: float = 0.95, seed: int = 0) -> Aggregate:
    """Aggregate per-question values: ``None`` entries are failures (counted, not averaged).

    The confidence interval is :func:`ragworkbook.stats.bootstrap_ci` over the
    scored values; a single value gives a zero-width interval.
    """
    scored = [float(v) for v in values if v is not None and not _is_nan(v)]
    failures = len(values) - len(scored)
    if not scored:
        nan = float("nan")
        return Aggregate(nan, nan, nan, 0, failures, confidence)
    from ragworkbook.stats import bootstrap_ci

    ci = bootstrap_ci(scored, confidence=confidence, seed=seed)
    return Aggregate(float(ci.mean), float(ci.low), float(ci.high), len(scored), failures, confidence)


def _is_nan(v: Any) -> bool:
    try:
        return math.isnan(float(v))
    except (TypeError, ValueError):
        return False


@dataclass
class Report:
    """Per-question rows, per-metric aggregates and metadata of one evaluation run."""

    rows: list[dict[str, Any]]
    metrics: list[str]
    aggregates: dict[str, Aggregate] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.aggregates:
            self.aggregates = {m: aggregate(self.values(m)) for m in self.metrics}

    # --- access -----------------------------------------------------------------------------
    @property
    def ids(self) -> list[str]:
        """Question ids in report order."""
        return [str(r["id"]) for r in self.rows]

    def values(self, metric: str) -> list[float | None]:
        """Per-question values of ``metric`` in row order (``None`` = failed)."""
        self._check_metric(metric)
        return [r["metrics"].get(metric) for r in self.rows]

    def means(self) -> dict[str, float]:
        """``metric -> mean`` over the scored questions (NaN when none was scored)."""
        return {m: a.mean for m, a in self.aggregates.items()}

    def _check_metric(self, metric: str) -> None:
        if metric not in self.metrics:
            raise ValueError(f"unknown metric {metric!r}; this report has: {', '.join(self.metrics)}")

    def to_pandas(self, *, text: bool = False):
        """Per-question DataFrame indexed by question id: one column per metric (NaN = failed),
        a ``failures`` column naming the metrics that failed, and with ``text=True`` the
        question, answer and reference too."""
        import pandas as pd

        records = []
        for r in self.rows:
            rec: dict[str, Any] = {"id": r["id"]}
            if text:
                rec.update(question=r.get("question", ""), answer=r.get("answer", ""),
                           reference=r.get("reference", ""))
            for m in self.metrics:
                rec[m] = _nan_if_none(r["metrics"].get(m))
            rec["failures"] = ", ".join(sorted(r.get("failures", {})))
            records.append(rec)
        return pd.DataFrame(records).set_index("id")

    def summary(self):
        """Aggregates as a DataFrame: one row per metric with mean, CI, n and failures."""
        import pandas as pd

        df = pd.DataFrame(
            [{"metric": m, "mean": a.mean, "ci_low": a.ci_low, "ci_high": a.ci_high, "n": a.n,
              "failures": a.failures} for m, a in self.aggregates.items()]
        )
        return df.set_index("metric")

    def targets(self, domain: str = "general"):
        """The aggregates rated against the targets table (see :mod:`ragworkbook.targets`)."""
        from ragworkbook.targets import apply_targets

        return apply_targets(self, domain=domain)

    # --- JSON -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        rows = []
        for r in self.rows:
            r2 = dict(r)
            r2["metrics"] = {m: _num_or_none(v) for m, v in r["metrics"].items()}
            rows.append(r2)
        return {
            "format": REPORT_FORMAT,
            "version": REPORT_VERSION,
            "meta": self.meta,
            "metrics": list(self.metrics),
            "aggregates": {m: a.to_dict() for m, a in self.aggregates.items()},
            "rows": rows,
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the report as JSON, atomically (a reader never sees half a file)."""
        return atomic_write_json(path, self.to_dict())

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "report") -> Report:
        """Build a report from its JSON form, validating it (ValueError naming ``source``)."""
        _validate(data, source)
        aggs = {}
        for m, a in data["aggregates"].items():
            aggs[m] = Aggregate(_nan_if_none(a["mean"]), _nan_if_none(a["ci_low"]),
                                _nan_if_none(a["ci_high"]), int(a["n"]), int(a.get("failures", 0)),
                                float(a.get("confidence", 0.95)))
        rows = [dict(r) for r in data["rows"]]
        for r in rows:
            r.setdefault("failures", {})
        return cls(rows=rows, metrics=list(data["metrics"]), aggregates=aggs, meta=dict(data["meta"]))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Report:
        """Load and validate a saved report.

        FileNotFoundError if the file is missing; ValueError naming the file and
        the problem if it is not JSON or not a ragworkbook report.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"report file not found: {path}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                "a report is the file written by Report.save() or `ragworkbook eval --out`"
            ) from None
        except UnicodeDecodeError:
            raise ValueError(f"{path} is not a UTF-8 text file; expected a report JSON") from None
        return cls.from_dict(data, source=str(path))

    def __repr__(self) -> str:
        return (f"<Report {len(self.rows)} questions, {len(self.metrics)} metrics"
                f"{', ' + self.meta['name'] if self.meta.get('name') else ''}>")


def _validate(data: Any, source: str) -> None:
    def bad(problem: str) -> ValueError:
        return ValueError(f"{source} is not a valid ragworkbook report: {problem}")

    if not isinstance(data, dict):
        raise bad(f"expected a JSON object at the top level, got {type(data).__name__}")
    if data.get("format") != REPORT_FORMAT:
        raise bad(f"'format' must be {REPORT_FORMAT!r}, got {data.get('format')!r}")
    if data.get("version") != REPORT_VERSION:
        raise bad(f"unsupported 'version' {data.get('version')!r} (this package reads {REPORT_VERSION})")
    for key, typ in (("meta", dict), ("metrics", list), ("aggregates", dict), ("rows", list)):
        if key not in data:
            raise bad(f"missing key {key!r}")
        if not isinstance(data[key], typ):
            raise bad(f"{key!r} must be a JSON {'object' if typ is dict else 'array'}")
    metrics = data["metrics"]
    if not all(isinstance(m, str) for m in metrics):
        raise bad("'metrics' must be a list of metric names")
    seen: set[str] = set()
    for i, r in enumerate(data["rows"]):
        if not isinstance(r, dict):
            raise bad(f"row {i} is not an object")
        for key in ("id", "question", "metrics"):
            if key not in r:
                raise bad(f"row {i} has no {key!r}")
        rid = str(r["id"])
        if rid in seen:
            raise bad(f"question id {rid!r} appears twice")
        seen.add(rid)
        if not isinstance(r["metrics"], dict):
            raise bad(f"row {rid!r}: 'metrics' must be an object")
        for m, v in r["metrics"].items():
            if m not in metrics:
                raise bad(f"row {rid!r} has metric {m!r} not listed in 'metrics'")
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise bad(f"row {rid!r}: metric {m!r} must be a number or null, got {v!r}")
    for m in metrics:
        a = data["aggregates"].get(m)
        if not isinstance(a, dict):
            raise bad(f"no aggregate for metric {m!r}")
        for key in ("mean", "ci_low", "ci_high", "n"):
            if key not in a:
                raise bad(f"aggregate {m!r} has no {key!r}")


# ---------------------------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------------------------
@dataclass
class Comparison:
    """Two reports compared metric by metric on the same questions.

    ``table`` has one row per metric: ``mean_a, mean_b, diff`` (b - a),
    ``ci_low, ci_high`` (of the paired difference), ``p_value``, ``n`` (pairs
    where both were scored), ``dropped`` (pairs with a failure on either side,
    left out and counted) and ``verdict``: "better", "worse" (b relative to a,
    respecting the metric's direction, significant at ``alpha``) or "no
    significant change".
    """

    table: Any
    alpha: float
    method: str
    name_a: str = "a"
    name_b: str = "b"

    def worse(self, metric: str) -> bool:
        """True when b is significantly worse than a on ``metric``."""
        if metric not in self.table.index:
            raise ValueError(f"unknown metric {metric!r}; compared metrics: {', '.join(self.table.index)}")
        return self.table.loc[metric, "verdict"] == "worse"

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


def compare_reports(a: Report, b: Report, metrics: Iterable[str] | None = None, *,
                    alpha: float = 0.05, method: str = "permutation", seed: int = 0) -> Comparison:
    """Paired comparison of report ``b`` against report ``a`` on the same questions.

    ``metrics`` defaults to every metric present in both. For each metric the
    questions scored in both reports are paired and passed to
    :func:`ragworkbook.stats.paired_test` (``method``); pairs with a failure in
    either report are dropped and counted. Raises ValueError when the question
    ids (or their texts) differ, or when a requested metric is missing.
    """
    import pandas as pd

    from ragworkbook.stats import paired_test

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    _check_same_questions(a, b)
    if metrics is None:
        metrics = [m for m in a.metrics if m in b.metrics]
    else:
        metrics = list(metrics)
        for m in metrics:
            missing = [name for name, r in (("A", a), ("B", b)) if m not in r.metrics]
            if missing:
                common = [x for x in a.metrics if x in b.metrics]
                raise ValueError(f"unknown metric {m!r} (not in report {' and '.join(missing)}); "
                                 f"metrics in both: {', '.join(common)}")
    by_id_b = {str(r["id"]): r for r in b.rows}
    rows = []
    for m in metrics:
        va, vb = [], []
        dropped = 0
        for r in a.rows:
            x = r["metrics"].get(m)
            y = by_id_b[str(r["id"])]["metrics"].get(m)
            if x is None or y is None or _is_nan(x) or _is_nan(y):
                dropped += 1
                continue
            va.append(float(x))
            vb.append(float(y))
        rec: dict[str, Any] = {"metric": m, "mean_a": float("nan"), "mean_b": float("nan"),
                               "diff": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"),
                               "p_value": float("nan"), "n": len(va), "dropped": dropped,
                               "verdict": "not compared (no pairs)"}
        if va:
            res = paired_test(va, vb, method=method, seed=seed)
            rec.update(mean_a=sum(va) / len(va), mean_b=sum(vb) / len(vb), diff=float(res.mean_diff),
                       ci_low=float(res.ci_low), ci_high=float(res.ci_high), p_value=float(res.p_value))
            sign = -1.0 if m in LOWER_IS_BETTER else 1.0
            if res.p_value < alpha and res.mean_diff != 0:
                rec["verdict"] = "better" if sign * res.mean_diff > 0 else "worse"
            else:
                rec["verdict"] = "no significant change"
        rows.append(rec)
    table = pd.DataFrame(rows).set_index("metric")
    return Comparison(table=table, alpha=alpha, method=method,
                      name_a=str(a.meta.get("name", "a")), name_b=str(b.meta.get("name", "b")))
