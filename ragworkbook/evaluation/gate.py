"""What the regression gate checks beside the paired test: lost questions, the ground truth, drops.

:func:`ragworkbook.evaluation.compare.compare_reports` pairs two reports question by
question; a pair that one side could not score used to be left out, so a B that gave
up on most questions ("I do not know.", no contexts, no reference: every value undefined)
was compared on the few it kept and passed. Here:

- :func:`lost_questions`: the questions A scored and B left undefined, counted by reason
  (failed values have their own rule: no more failed than compared). The gate counts them as
  what they are: a question B lost is a regression, unless told that undefined values are
  expected (``allow_undefined=True``, ``compare --allow-undefined``).
- :func:`check_same_ground_truth`: both reports must score against the same ground truth:
  the same reference answer for every question (where both give one) and the same
  relevance (each row's ``relevance_key``, a fingerprint of its relevant ids, qrels or
  keyword; for pipeline runs on one corpus the fingerprint of the qrels in ``meta.settings``). A B whose
  references or relevant ids were rewritten is refused, naming the first question that
  differs: its "better" recall would measure the edit.
- :func:`parse_max_drop` / :func:`drops`: ``--max-drop METRIC=DROP`` fails the gate when B's
  mean on the paired questions is worse than A's by more than ``DROP`` (in the metric's
  direction), significant or not: a floor for changes too small a sample cannot call.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragworkbook._types import JSON, JSONObject
from ragworkbook.outcomes import SCORED, UNDEFINED

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ragworkbook.evaluation.report import Report

__all__ = ["LostQuestions", "check_same_ground_truth", "drops", "lost_questions", "parse_max_drop"]


@dataclass(frozen=True)
class LostQuestions:
    """The questions A scored and B left undefined on one metric: their ``ids`` and how many per
    reason (``{"undefined (no_reference)": n, ...}``)."""

    ids: list[str] = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=dict)


def lost_questions(a: Report, b: Report, metric_a: str, metric_b: str) -> LostQuestions:
    """The questions ``a`` scored on ``metric_a`` and ``b`` left undefined on ``metric_b`` (no answer, no
    reference, no contexts...). (Failed values are the gate's other rule: no more failed than compared.)"""
    unscored_b = b.unscored(metric_b)
    ids: list[str] = []
    reasons: dict[str, int] = {}
    for qid, outcome in zip(a.ids, a.outcomes(metric_a), strict=True):
        why = unscored_b.get(qid)
        if outcome == SCORED and why is not None and why.outcome == UNDEFINED:
            ids.append(qid)
            key = f"{why.outcome} ({why.reason})"
            reasons[key] = reasons.get(key, 0) + 1
    return LostQuestions(ids, reasons)


def describe_lost(metric: str, lost: LostQuestions, n_questions: int) -> str:
    """Why the gate fails ``metric`` for the questions B lost."""
    n = len(lost.ids)
    how = ", ".join(f"{v} {k}" for k, v in lost.reasons.items())
    first = ", ".join(lost.ids[:5]) + (", ..." if n > 5 else "")
    return (
        f"B has no {metric} value for {n} of {n_questions} questions that A scored ({how}; {first}): a "
        "question B lost is a regression; fix B, or pass --allow-undefined (allow_undefined=True) to "
        "compare only the questions both scored"
    )


def _rows(report: Report) -> dict[str, JSONObject]:
    return {str(r["id"]): r for r in report.rows}


def _given(value: JSON) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def check_same_ground_truth(a: Report, b: Report) -> None:
    """ValueError naming the first question (in A's order) whose reference answer or relevance differs
    between the reports (a side without one is not compared: that question is lost, not rewritten)."""
    sa, sb = a.meta.get("settings"), b.meta.get("settings")
    if (isinstance(sa, dict) and isinstance(sb, dict) and sa.get("corpus_chunks") is not None
            and sa.get("corpus_chunks") == sb.get("corpus_chunks")):
        # on one corpus the relevance judgements are the same unless rewritten (another corpus, or
        # another chunking of it, has other chunk ids: its qrels differ of necessity; a report that does
        # not say which chunks it ran on is not held to this)
        for key in ("qrels", "unjudged"):
            if sa.get(key) is not None and sb.get(key) is not None and sa[key] != sb[key]:
                raise ValueError(
                    f"the relevance judgements differ between the reports (meta.settings.{key}: "
                    f"{sa[key]} in A, {sb[key]} in B): retrieval metrics on other qrels are not "
                    "comparable; evaluate both runs with the same qrels and eval set"
                )
    rows_b = _rows(b)
    for qid, ra in _rows(a).items():
        rb = rows_b.get(qid)
        if rb is None:
            continue
        ref_a, ref_b = ra.get("reference"), rb.get("reference")
        if _given(ref_a) and _given(ref_b) and ref_a != ref_b:
            raise ValueError(
                f"question {qid!r} has another reference answer in B ({_short(ref_b)}) than in A "
                f"({_short(ref_a)}): scores against a rewritten reference are not comparable; "
                "evaluate both runs on the same eval set"
            )
        key_a, key_b = ra.get("relevance_key"), rb.get("relevance_key")
        if key_a is not None and key_b is not None and key_a != key_b:
            raise ValueError(
                f"question {qid!r} has other relevance judgements in B (relevant ids, qrels or "
                f"keyword; {rb.get('relevance')}) than in A ({ra.get('relevance')}): retrieval "
                "metrics against rewritten relevance are not comparable; give both runs the same "
                "relevance"
            )


def _short(text: JSON, n: int = 60) -> str:
    s = str(text)
    return repr(s if len(s) <= n else s[:n] + "...")


def parse_max_drop(values: Iterable[str] | None) -> dict[str, float]:
    """``["token_f1=0.05", ...]`` -> ``{"token_f1": 0.05}`` (ValueError naming a malformed one)."""
    out: dict[str, float] = {}
    for raw in values or []:
        for item in str(raw).split(","):
            if not item.strip():
                continue
            name, sep, drop = item.partition("=")
            try:
                value = float(drop)
            except ValueError:
                value = math.nan
            if not sep or not name.strip() or not math.isfinite(value) or value < 0:
                raise ValueError(
                    f"--max-drop takes METRIC=DROP with DROP a number >= 0 (e.g. token_f1=0.05), "
                    f"got {item.strip()!r}"
                )
            out[name.strip()] = value
    return out


def drops(table: pd.DataFrame, max_drop: Mapping[str, float]) -> dict[str, str]:
    """The metrics of ``max_drop`` on which B's paired mean is worse than A's by more than allowed
    (``table``: :attr:`Comparison.table`), each with the reason."""
    from ragworkbook.metrics.registry import find_metric, parse_metric

    out = {}
    for metric, allowed in max_drop.items():
        name = find_metric(metric, table.index)
        if name is None:
            raise ValueError(
                f"--max-drop {metric}: not compared (compared metrics: {', '.join(table.index)})"
            )
        row = table.loc[name]
        diff = float(row["diff"])
        if math.isnan(diff):
            out[metric] = f"no question has a {metric} value in both reports: the drop cannot be measured"
            continue
        drop = -diff if parse_metric(str(name)).higher_is_better else diff
        if drop > allowed + 1e-12:
            out[metric] = (
                f"B is worse than A by {drop:.4f} on the {int(row['n'])} questions both scored "
                f"(mean {float(row['mean_a']):.4f} -> {float(row['mean_b']):.4f}), more than "
                f"--max-drop {allowed:g}"
            )
    return out
