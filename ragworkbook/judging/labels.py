"""``judge-check --labels FILE``: a judged metric measured against labels you give.

The file (JSONL, a JSON array, or CSV) has one record per judged item: ``id``,
``question``, ``answer``, ``contexts`` (a list; in CSV a JSON list, or one text),
``reference`` (optional) and ``label``, your score of the item (a number, on any
scale: a rubric's 1-5, or 0/1). :func:`label_check` runs the metric on every record
and reports, beside the **cheapest baseline** on the same items:

- Spearman's rank correlation of the metric's values with the labels, with a
  percentile bootstrap interval over items (the agreement that does not care about
  the scale: a 1-5 label and a 0-1 normalised score compare directly);
- for a rubric metric whose labels are whole numbers on its scale: exact agreement of
  the judge's rating with the label (Wilson interval) and Cohen's kappa (bootstrap);
- the baseline: a deterministic score with no model, token F1 of the answer against
  the reference when every record has one, else the word support of the answer by its
  contexts, else the word overlap of question and answer; its Spearman correlation and
  the judge-minus-baseline difference of the two correlations (bootstrap over items: the
  judge is ``"better"`` only when the interval lies above 0).

Failed and undefined judgments are counted and their items left out. From fewer than 5
items there is no number ("too few").
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragworkbook._types import JSON, JSONObject
from ragworkbook.judging.judge import Judge
from ragworkbook.judging.results import JudgeSample
from ragworkbook.outcomes import FAILED, SCORED, UNDEFINED
from ragworkbook.stats.resampling import MIN_ITEMS, Estimate, bootstrap_statistic, too_few

if TYPE_CHECKING:
    from ragworkbook.judging.check_report import FailureReason

__all__ = ["LabelledItem", "read_labels", "LabelCheck", "label_check"]

_REQUIRED = ("id", "question", "answer", "label")


@dataclass(frozen=True)
class LabelledItem:
    """One record of a label file: the sample judged and the label given to it."""

    sample: JudgeSample
    label: float


def _contexts(value: JSON, where: str) -> list[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: contexts looks like a JSON list but is not one ({exc.msg})") \
                    from None
        else:
            return [text] if text else []
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{where}: contexts must be a list of texts, got {type(value).__name__}")
    return [c["text"] if isinstance(c, Mapping) else str(c) for c in value]


def _records(path: Path) -> list[tuple[str, Mapping[str, JSON]]]:
    """``(where, record)`` for each record: where is ``FILE:LINE`` (JSONL, CSV) or ``FILE[i]``."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        import pandas as pd

        frame = pd.read_csv(path, dtype={"id": str}, keep_default_na=False)
        return [(f"{path}:{i + 2}", row) for i, row in enumerate(frame.to_dict("records"))]
    text = path.read_text(encoding="utf-8")
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not JSON (line {exc.lineno}: {exc.msg})") from None
        if not isinstance(data, list):
            raise ValueError(f"{path}: a .json label file is a JSON array of records")
        return [(f"{path}[{i}]", r) for i, r in enumerate(data)]
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((f"{path}:{n}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not a JSON object ({exc.msg}); a .jsonl label file has one "
                             "record per line") from None
    return out


def read_labels(path: str | Path) -> list[LabelledItem]:
    """The records of a label file (see the module docstring); ValueError naming the file, the line and
    the field of the first bad record."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such label file")
    items: list[LabelledItem] = []
    seen: set[str] = set()
    for where, rec in _records(p):
        if not isinstance(rec, Mapping):
            raise ValueError(f"{where}: a record is an object with {', '.join(_REQUIRED)}")
        missing = [k for k in _REQUIRED if k not in rec or rec[k] is None or str(rec[k]).strip() == ""]
        if missing:
            raise ValueError(f"{where}: missing field {missing[0]!r} (a record has {', '.join(_REQUIRED)}, "
                             "and optionally contexts and reference)")
        try:
            label = float(rec["label"])
        except (TypeError, ValueError):
            label = math.nan
        if not math.isfinite(label):
            raise ValueError(f"{where}: label must be a number (your score of the item), got "
                             f"{rec['label']!r}")
        sid = str(rec["id"]).strip()
        if sid in seen:
            raise ValueError(f"{where}: id {sid!r} is repeated; ids must be unique")
        seen.add(sid)
        reference = rec.get("reference")
        reference = None if reference is None or str(reference).strip() == "" else str(reference)
        sample = JudgeSample(question=str(rec["question"]), answer=str(rec["answer"]),
                             contexts=_contexts(rec.get("contexts"), where), reference=reference,
                             sample_id=sid)
        items.append(LabelledItem(sample, label))
    if not items:
        raise ValueError(f"{p}: no records")
    return items


def _spearman(x: np.ndarray, y: np.ndarray) -> float | None:
    """Spearman's rho: the Pearson correlation of the ranks (ties get their mean rank, as scipy's
    ``spearmanr``); None for a constant."""
    from scipy.stats import rankdata

    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None  # a constant has no rank correlation
    rx, ry = rankdata(x) - (len(x) + 1) / 2, rankdata(y) - (len(y) + 1) / 2
    return float(np.dot(rx, ry) / np.sqrt(np.dot(rx, rx) * np.dot(ry, ry)))


def _rho(x: Sequence[float], y: Sequence[float], n_resamples: int, seed: int) -> Estimate:
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) < MIN_ITEMS:
        return too_few(len(a))
    return bootstrap_statistic(lambda idx: _spearman(a[idx], b[idx]), len(a), n_resamples=n_resamples,
                               seed=seed, unit="items")


def _baseline(items: Sequence[LabelledItem]) -> tuple[str, str, list[float | None]]:
    """The cheapest score with no model: name, definition, one value per item (None: undefined)."""
    from ragworkbook.judging.baselines import word_overlap
    from ragworkbook.metrics.generation import token_f1
    from ragworkbook.metrics.support import word_support

    samples = [it.sample for it in items]
    if all(s.reference for s in samples):
        return ("token F1", "token F1 of the answer against the reference",
                [token_f1(s.answer, s.reference or "") for s in samples])
    if all(s.contexts for s in samples):
        return ("word support", "content words of the answer found in its contexts / content words",
                [word_support(s.answer, s.contexts).score for s in samples])
    return ("question-answer word overlap", "words of the answer found in the question / words of the answer",
            [word_overlap(s.answer, s.question) for s in samples])


@dataclass
class LabelCheck:
    """What :func:`label_check` measured (``judge-check --labels FILE``); :meth:`to_dict` is its JSON."""

    labels: str
    metric: str
    judge: str
    n: int
    failures: int
    undefined: int
    stats: dict[str, Any] = field(default_factory=dict)
    items: list[dict[str, Any]] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    #: why judgments failed: reason -> ``{"count", "example"}`` (as ``judge-check --dataset`` reports them)
    failure_reasons: dict[str, FailureReason] = field(default_factory=dict)

    def to_dict(self) -> JSONObject:
        from ragworkbook.judging.check_report import figure_json

        return {"labels": self.labels, "metric": self.metric, "judge": self.judge, "n": self.n,
                "failures": self.failures, "undefined": self.undefined,
                "failure_reasons": self.failure_reasons,
                **{k: figure_json(v) for k, v in self.stats.items()}, "settings": dict(self.settings),
                "items": self.items}

    def format(self) -> str:
        """The plain-text report ``judge-check --labels`` prints."""
        from ragworkbook.judging.check_report import _signed, _verdict_text

        s = self.stats
        lines = [f"judge-check --labels: {self.metric} against {self.labels}",
                 f"judge: {self.judge}",
                 f"items: {self.n}; scored {s['spearman'].n}, failed {self.failures}, "
                 f"undefined {self.undefined}"]
        lines += [f"   failed {got['count']}: {reason}" for reason, got in self.failure_reasons.items()]
        lines.append(f"Spearman correlation with the labels: {s['spearman']}")
        if "exact_agreement" in s:
            lines.append(f"rating = label (scale {s['scale'][0]}-{s['scale'][1]}): agreement "
                         f"{s['exact_agreement']}   Cohen's kappa {s['kappa']}")
        b = s["baseline"]
        lines += [f"   baseline, {b['name']} ({b['definition']}), same items: Spearman {b['spearman']}",
                  f"   judge minus baseline (Spearman): {_signed(b['difference'])}: "
                  f"{_verdict_text(b['verdict'])}",
                  f"intervals: 95%; correlations, kappa and the difference: percentile bootstrap over items "
                  f"({self.settings['n_resamples']} resamples, seed {self.settings['seed']}); agreement: "
                  f"Wilson score; 'too few': under {MIN_ITEMS} items"]
        return "\n".join(lines)


def label_check(labels: str | Path | Sequence[LabelledItem], judge: Judge | None, metric: str, *,
                progress: bool = False, n_resamples: int = 2000, seed: int = 0,
                name: str | None = None) -> LabelCheck:
    """Measure the judged ``metric`` (any registered one: a rubric, faithfulness, ...) with ``judge``
    against the labels of a label file (or of :class:`LabelledItem` records); see the module docstring.
    ``name``: what the labels are called in the report (default: the file, or "(records)")."""
    from ragworkbook.judging.check_report import failure_reasons as _failure_reasons
    from ragworkbook.judging.check_report import judge_name
    from ragworkbook.judging.metrics import evaluate_judged
    from ragworkbook.judging.rubric import spec_rubric
    from ragworkbook.metrics.registry import parse_metric
    from ragworkbook.stats.agreement import kappa_estimate
    from ragworkbook.stats.proportions import rate_of

    if name is None:
        name = str(labels) if not isinstance(labels, Sequence) or isinstance(labels, str) else "(records)"
    items = read_labels(labels) if isinstance(labels, (str, Path)) else list(labels)
    m = parse_metric(metric, "judged")
    report = evaluate_judged([it.sample for it in items], judge, [m], progress=progress)
    results = report.results[m.name]
    base_name, base_def, base = _baseline(items)
    rubric = spec_rubric(m.spec)

    rows, ok = [], []
    for i, (it, r) in enumerate(zip(items, results, strict=True)):
        rating = r.detail.get("rating") if rubric is not None else None
        rows.append({"id": it.sample.sample_id, "label": it.label, "score": r.score, "rating": rating,
                     "outcome": r.outcome, "reason": r.reason, "baseline": base[i]})
        if r.outcome == SCORED:
            ok.append(i)
    labels_ok = [items[i].label for i in ok]
    scores_ok = [float(results[i].score) for i in ok]  # type: ignore[arg-type]
    stats: dict[str, Any] = {"spearman": _rho(scores_ok, labels_ok, n_resamples, seed)}
    if rubric is not None and all(float(x).is_integer() and rubric.low <= x <= rubric.high
                                  for x in (it.label for it in items)):
        ratings = [int(results[i].detail["rating"]) for i in ok]
        truth = [int(x) for x in labels_ok]
        scale = list(range(rubric.low, rubric.high + 1))
        stats["scale"] = [rubric.low, rubric.high]
        stats["exact_agreement"] = rate_of([a == b for a, b in zip(truth, ratings, strict=True)])
        stats["kappa"] = (kappa_estimate(truth, ratings, scale, n_resamples=n_resamples, seed=seed)
                          if len(truth) >= MIN_ITEMS else too_few(len(truth)))
    # the baseline on the same items (those the judge scored and the baseline defines)
    shared = [i for i in ok if base[i] is not None]
    j = np.asarray([float(results[i].score) for i in shared])  # type: ignore[arg-type]
    bl = np.asarray([float(base[i]) for i in shared])  # type: ignore[arg-type]
    y = np.asarray([items[i].label for i in shared])

    def diff(idx: np.ndarray) -> float | None:
        a, b = _spearman(j[idx], y[idx]), _spearman(bl[idx], y[idx])
        return None if a is None or b is None else a - b

    d = (bootstrap_statistic(diff, len(shared), n_resamples=n_resamples, seed=seed, unit="items")
         if len(shared) >= MIN_ITEMS else too_few(len(shared)))
    verdict = ("too few" if d.too_few else
               "undefined: a constant score has no rank correlation" if math.isnan(d.value)
               else "better" if d.low > 0 else "worse" if d.high < 0 else "not shown different")
    stats["baseline"] = {"name": base_name, "definition": base_def,
                         "spearman": _rho(list(bl), list(y), n_resamples, seed), "difference": d,
                         "verdict": verdict}
    return LabelCheck(
        labels=name, metric=m.name, judge=judge_name(judge) if judge is not None else "none",
        n=len(items), failures=sum(r.outcome == FAILED for r in results),
        undefined=sum(r.outcome == UNDEFINED for r in results), stats=stats, items=rows,
        failure_reasons=_failure_reasons(results),
        settings={"n_resamples": n_resamples, "seed": seed,
                  "rubric": rubric.to_dict() if rubric is not None else None})
