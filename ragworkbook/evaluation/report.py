"""The report of one evaluation run: per-question rows, per-metric aggregates, saved and loaded.

A :class:`Report` holds

- ``rows``: one dict per question — ``id``, ``question``, ``reference``,
  ``answer``, the retrieved ``context_ids`` and ``contexts``, ``metrics``
  (metric name -> value or ``None``), ``unscored`` (metric name ->
  ``{"outcome": "failed" | "undefined", "reason", "message"}`` for every
  ``None``) and, for judged metrics, ``judgments`` (the judge's intermediates);
- ``metrics``: the metric names, as they were asked for;
- ``aggregates``: per metric an :class:`~ragworkbook.outcomes.Aggregate` (mean
  with a bootstrap CI over the scored questions, failed and undefined
  counted), always computed from the rows;
- ``meta``: how the run was made (backend, model, retriever, k, ...), and for
  the judged metrics ``judge_reliability``: metric -> the reliability card of its
  judge (:mod:`ragworkbook.judging.reliability`; ``"unmeasured"`` unless a
  ``judge-check`` result was given to ``evaluate``). :meth:`Report.reliability`
  reads it; the targets view and the regression gate act on it.
  ``judge_ledger`` says what the judging cost per metric (requests, model calls,
  failures, cache hits, tokens, seconds: :mod:`ragworkbook.judging.ledger`).

Values follow the package's vocabulary of outcomes (:mod:`ragworkbook.outcomes`):
a failed or undefined value is ``None`` with its reason, counted, never a
silent NaN. Reports are saved as JSON atomically and loaded with validation:
a malformed file, or stored aggregates that contradict the rows, fail with
the file's name and the problem.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ragworkbook._io import atomic_write_json, read_input
from ragworkbook._types import JSON, JSONObject
from ragworkbook.corpus.eval_set import EvalItem, EvalSet, as_items
from ragworkbook.metrics.registry import parse_metric
from ragworkbook.outcomes import FAILED, SCORED, Aggregate, Unscored, aggregate

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["REPORT_FORMAT", "REPORT_VERSION", "Report"]

REPORT_FORMAT = "ragworkbook-report"
REPORT_VERSION = 2


@dataclass
class Report:
    """Per-question rows, per-metric aggregates (computed from the rows) and metadata of one run."""

    rows: list[JSONObject]
    metrics: list[str]
    meta: JSONObject = field(default_factory=dict)
    aggregates: dict[str, Aggregate] = field(init=False)

    def __post_init__(self) -> None:
        for r in self.rows:
            r.setdefault("unscored", {})
        self.aggregates = {m: aggregate(self.values(m), self.outcomes(m)) for m in self.metrics}

    # --- access -----------------------------------------------------------------------------
    @property
    def ids(self) -> list[str]:
        """Question ids in report order."""
        return [str(r["id"]) for r in self.rows]

    def values(self, metric: str) -> list[float | None]:
        """Per-question values of ``metric`` in row order (``None`` = failed or undefined)."""
        self._check_metric(metric)
        return [r["metrics"].get(metric) for r in self.rows]

    def outcomes(self, metric: str) -> list[str]:
        """Per-question outcome of ``metric``: ``"scored"``, ``"failed"`` or ``"undefined"``."""
        self._check_metric(metric)
        out = []
        for r in self.rows:
            if r["metrics"].get(metric) is not None:
                out.append(SCORED)
            else:
                why = r.get("unscored", {}).get(metric)
                out.append(why["outcome"] if isinstance(why, Mapping) else FAILED)
        return out

    def unscored(self, metric: str) -> dict[str, Unscored]:
        """``question id -> Unscored`` for every question where ``metric`` has no value."""
        self._check_metric(metric)
        out = {}
        for r in self.rows:
            if r["metrics"].get(metric) is None:
                why = r.get("unscored", {}).get(metric) or {"outcome": FAILED, "reason": "missing"}
                out[str(r["id"])] = Unscored.from_dict(dict(why), f"row {r['id']!r}")
        return out

    def reliability(self, metric: str) -> JSONObject | None:
        """The reliability card of the judge behind ``metric`` (None for a metric no judge
        scored; ``{"status": "unmeasured", ...}`` for a judged metric without a card)."""
        self._check_metric(metric)
        try:
            judged = parse_metric(metric).family == "judged"
        except ValueError:
            judged = False
        if not judged:
            return None
        card = (self.meta.get("judge_reliability") or {}).get(metric)
        if card is None:
            from ragworkbook.judging.reliability import unmeasured

            judge = str(self.meta.get("judge", ""))
            card = unmeasured(judge, judge.split(":", 1)[-1])
        return dict(card)

    def means(self) -> dict[str, float]:
        """``metric -> mean`` over the scored questions (NaN when none was scored)."""
        return {m: a.mean for m, a in self.aggregates.items()}

    def _check_metric(self, metric: str) -> None:
        if metric not in self.metrics:
            raise ValueError(f"unknown metric {metric!r}; this report has: {', '.join(self.metrics)}")

    def to_pandas(self, *, text: bool = False) -> pd.DataFrame:
        """Per-question DataFrame indexed by question id: one nullable ``Float64`` column per
        metric (``<NA>`` where not scored), an ``unscored`` column saying which metrics have no
        value and why, and with ``text=True`` the question, answer and reference too."""
        import pandas as pd

        records = []
        for r in self.rows:
            rec: dict[str, JSON] = {"id": r["id"]}
            if text:
                rec.update(question=r.get("question", ""), answer=r.get("answer", ""),
                           reference=r.get("reference", ""))
            for m in self.metrics:
                rec[m] = r["metrics"].get(m)
            rec["unscored"] = "; ".join(f"{m}: {u['outcome']} ({u['reason']})"
                                        for m, u in r.get("unscored", {}).items())
            records.append(rec)
        df = pd.DataFrame(records).set_index("id")
        return df.astype({m: "Float64" for m in self.metrics})

    def summary(self) -> pd.DataFrame:
        """Aggregates as a DataFrame: one row per metric with mean, CI, n (scored), failed, undefined."""
        import pandas as pd

        df = pd.DataFrame(
            [{"metric": m, "mean": a.mean, "ci_low": a.ci_low, "ci_high": a.ci_high, "n": a.n,
              "failed": a.failed, "undefined": a.undefined} for m, a in self.aggregates.items()]
        )
        return df.set_index("metric")

    def check_eval_set(self, eval_set: EvalSet | Iterable[EvalItem | Mapping[str, JSON]]) -> None:
        """Raise ValueError unless the report's questions are exactly ``eval_set``'s (ids and texts)."""
        items = {it.id: it.question for it in as_items(eval_set)}
        mine = {str(r["id"]): r.get("question") for r in self.rows}
        name = self.meta.get("name") or "the report"
        only_r, only_e = sorted(set(mine) - set(items)), sorted(set(items) - set(mine))
        if only_r or only_e:
            raise ValueError(
                f"{name} does not match the eval set: "
                + (f"questions only in the report: {', '.join(only_r)}; " if only_r else "")
                + (f"questions only in the eval set: {', '.join(only_e)}; " if only_e else "")
                + "re-run the evaluation on this eval set"
            )
        changed = [i for i in items if items[i] != mine[i]]
        if changed:
            raise ValueError(f"{name} does not match the eval set: the text of question(s) "
                             f"{', '.join(changed)} differs; re-run the evaluation on this eval set")

    def targets(self, domain: str = "general") -> pd.DataFrame:
        """The aggregates rated against the targets table (see :mod:`ragworkbook.evaluation.targets`)."""
        from ragworkbook.evaluation.targets import apply_targets

        return apply_targets(self, domain=domain)

    # --- JSON -------------------------------------------------------------------------------
    def to_dict(self) -> JSONObject:
        """The JSON form written by :meth:`save` and read by :meth:`from_dict`."""
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
    def from_dict(cls, data: JSON, *, source: str = "report") -> Report:
        """Build a report from its JSON form, validating it (ValueError naming ``source``).

        The aggregates are recomputed from the rows; stored aggregates that disagree
        with them (another mean, another count) are refused.
        """
        _validate(data, source)
        rows = [dict(r) for r in data["rows"]]
        report = cls(rows=rows, metrics=list(data["metrics"]), meta=dict(data["meta"]))
        for m, a in report.aggregates.items():
            _check_stored(data["aggregates"][m], a, m, source)
        return report

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Report:
        """Load and validate a saved report.

        FileNotFoundError if the file is missing; ValueError naming the file and
        the problem if it is not JSON, not a ragworkbook report, or inconsistent.
        """
        path = Path(path)
        if path.is_dir():
            raise IsADirectoryError(f"{path} is a folder; give the path of a report file")
        if not path.exists():
            raise FileNotFoundError(f"report file not found: {path}")
        try:
            data = json.loads(read_input(path, "report file").decode("utf-8-sig"))  # a BOM is skipped
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                "a report is the file written by Report.save() or `ragworkbook eval --out`"
            ) from None
        except UnicodeDecodeError:
            raise ValueError(f"{path} is not a UTF-8 text file; expected a report JSON") from None
        except RecursionError:
            raise ValueError(f"{path} is not a valid ragworkbook report: JSON nested too deeply (over "
                             f"{sys.getrecursionlimit()} levels)") from None
        return cls.from_dict(data, source=str(path))

    def __repr__(self) -> str:
        return (f"<Report {len(self.rows)} questions, {len(self.metrics)} metrics"
                f"{', ' + self.meta['name'] if self.meta.get('name') else ''}>")


def _num_or_none(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _is_number(v: JSON) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _validate(data: JSON, source: str) -> None:
    def bad(problem: str) -> ValueError:
        return ValueError(f"{source} is not a valid ragworkbook report: {problem}")

    if not isinstance(data, dict):
        raise bad(f"expected a JSON object at the top level, got {type(data).__name__}")
    if data.get("format") != REPORT_FORMAT:
        raise bad(f"'format' must be {REPORT_FORMAT!r}, got {data.get('format')!r}")
    if data.get("version") != REPORT_VERSION:
        raise bad(f"unsupported 'version' {data.get('version')!r} (this package reads version "
                  f"{REPORT_VERSION}; re-run `ragworkbook eval` to write the report again)")
    for key, typ in (("meta", dict), ("metrics", list), ("aggregates", dict), ("rows", list)):
        if key not in data:
            raise bad(f"missing key {key!r}")
        if not isinstance(data[key], typ):
            raise bad(f"{key!r} must be a JSON {'object' if typ is dict else 'array'}")
    metrics = data["metrics"]
    if not all(isinstance(m, str) for m in metrics):
        raise bad("'metrics' must be a list of metric names")
    _validate_meta(data["meta"], bad)
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
        unscored = r.get("unscored", {})
        if not isinstance(unscored, dict):
            raise bad(f"row {rid!r}: 'unscored' must be an object")
        for m, v in r["metrics"].items():
            if m not in metrics:
                raise bad(f"row {rid!r} has metric {m!r} not listed in 'metrics'")
            if v is not None and (not _is_number(v) or not math.isfinite(v)):
                raise bad(f"row {rid!r}: metric {m!r} must be a finite number or null, got {v!r}")
            if v is None:
                why = unscored.get(m)
                try:
                    Unscored.from_dict(why, f"row {rid!r}, metric {m!r}")
                except ValueError as exc:
                    raise bad(f"{exc} (a null value needs its reason under 'unscored')") from None
            elif m in unscored:
                raise bad(f"row {rid!r}: metric {m!r} has a value and an 'unscored' entry")
    for m in metrics:
        a = data["aggregates"].get(m)
        if not isinstance(a, dict):
            raise bad(f"no aggregate for metric {m!r}")
        for key in ("mean", "ci_low", "ci_high", "n", "failed", "undefined"):
            if key not in a:
                raise bad(f"aggregate {m!r} has no {key!r}")
        for key in ("n", "failed", "undefined"):
            if not isinstance(a[key], int) or isinstance(a[key], bool) or a[key] < 0:
                raise bad(f"aggregate {m!r}: {key!r} must be a non-negative integer, got {a[key]!r}")
        for key in ("mean", "ci_low", "ci_high"):
            if a[key] is not None and not _is_number(a[key]):
                raise bad(f"aggregate {m!r}: {key!r} must be a number or null, got {a[key]!r}")
    from ragworkbook.evaluation.report_checks import check_ranges

    check_ranges(data, bad)  # values in their metric's range, intervals that are intervals


#: meta members the package reads, and the JSON type each must have when present
_META_TYPES: dict[str, tuple[type, ...]] = {"name": (str,), "complete": (bool,), "judge": (str,),
                                            "settings": (dict,), "stopped": (str,), "judge_stopped": (str,),
                                            "failed_questions": (int,), "resumed": (int,),
                                            "judge_ledger": (dict,)}


def _validate_meta(meta: JSONObject, bad: Callable[[str], ValueError]) -> None:
    """The meta members that the package reads have their types; ``judge_reliability`` maps metric
    names to reliability cards (objects)."""
    for key, types in _META_TYPES.items():
        value = meta.get(key)
        if value is not None and (not isinstance(value, types) or (int in types and isinstance(value, bool)
                                                                   and bool not in types)):
            raise bad(f"meta {key!r} must be {_TYPE_NAMES[types[0]]}, got {_json_name(value)}")
    cards = meta.get("judge_reliability")
    if cards is None:
        return
    if not isinstance(cards, dict):
        raise bad("meta 'judge_reliability' must be an object (metric -> the reliability card of its judge), "
                  f"got {_json_name(cards)}")
    for metric, card in cards.items():
        if not isinstance(card, dict):
            raise bad(f"meta 'judge_reliability' of {metric!r} must be an object (a reliability card), got "
                      f"{_json_name(card)}")


_TYPE_NAMES = {str: "a string", bool: "true or false", int: "an integer", dict: "an object"}


def _json_name(value: JSON) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "true/false", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _check_stored(stored: JSONObject, computed: Aggregate, metric: str, source: str) -> None:
    problems = [f"{key} = {stored[key]} but the rows give {getattr(computed, key)}"
                for key in ("n", "failed", "undefined") if stored[key] != getattr(computed, key)]
    mean = stored["mean"]
    if (mean is None) != math.isnan(computed.mean) or (
            mean is not None and not math.isclose(mean, computed.mean, rel_tol=1e-9, abs_tol=1e-12)):
        problems.append(f"mean = {mean} but the rows give {_num_or_none(computed.mean)}")
    if problems:
        raise ValueError(f"{source}: the stored aggregate of {metric!r} contradicts the rows "
                         f"({'; '.join(problems)}); the file was edited or corrupted")
