"""How a judge-check reads: :class:`JudgeCheck` holds what
:func:`~ragworkbook.judging.check_runner.judge_check` measured, and prints it as text
(:meth:`JudgeCheck.format`, ``judge-check``) or JSON
(:meth:`JudgeCheck.to_dict`, ``judge-check --json``), with the reliability card a report carries
(:meth:`JudgeCheck.reliability`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from ragworkbook._types import JSON, JSONObject
from ragworkbook.judging.check_catalogue import Documented
from ragworkbook.judging.judge import Judge
from ragworkbook.outcomes import FAILED
from ragworkbook.stats.judge_table import CreditEstimate, JudgeStatistics
from ragworkbook.stats.resampling import MIN_ITEMS, Estimate

if TYPE_CHECKING:
    from ragworkbook.judging.pairwise import PairwiseResult
    from ragworkbook.judging.results import JudgedResult

__all__ = ["JudgeCheck", "FailureReason", "judge_name", "failure_reasons", "wikieval_figures",
           "ragchecker_figures"]


class FailureReason(TypedDict):
    """How many judgments failed for one reason, and the first one's message (redacted, shortened)."""

    count: int
    example: str


def judge_name(judge: Judge | str) -> str:
    """``backend:model`` of a judge; for a replay, the recorded backend and the recording's file name;
    ``deterministic:word_support`` for the word support."""
    if isinstance(judge, str):
        return f"deterministic:{judge.replace('-', '_')}"
    g = judge.generator
    recording = getattr(g, "recording", None)
    if g.backend == "replay" and recording is not None:
        backends = sorted({e.get("backend", "?") for e in recording.entries.values()}) or ["?"]
        return f"{'/'.join(backends)}:{g.model} (replayed from {recording.path.name})"
    return f"{g.backend}:{g.model}"


def failure_reasons(results: Sequence[JudgedResult | PairwiseResult], limit: int = 300
                    ) -> dict[str, FailureReason]:
    """``reason -> {"count", "example"}`` over the failed judgments of ``results`` (judged or pairwise),
    the example being the first failure's message (a server's error says what went wrong)."""
    from ragworkbook.llm.host import redact_text

    out: dict[str, FailureReason] = {}
    for r in results:
        if getattr(r, "outcome", None) != FAILED:
            continue
        message = getattr(r, "error", None) or next(
            (c.error for c in getattr(r, "calls", []) if getattr(c, "error", None)), None) or ""
        reason = getattr(r, "reason", None) or str(message).split(":", 1)[0].strip() or "failed"
        example = redact_text(" ".join(str(message).split()))[:limit]
        got = out.setdefault(reason, {"count": 0, "example": example})
        got["count"] += 1
    return out


def _baseline(st: JudgeStatistics, name: str, definition: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "definition": definition, "pairwise_accuracy": st.baseline_accuracy,
                           "difference": st.difference.estimate, "p_value": st.difference.p_value,
                           "verdict": st.difference.verdict}
    if st.baseline is not None:
        out |= {"agreement": st.baseline.agreement, "kappa": st.baseline.kappa}
    return out


def _consistency(st: JudgeStatistics, repeats: int, temperature: float, k: int) -> dict[str, Any]:
    sc = st.self_consistency
    assert sc is not None
    return {"repeats": repeats, "temperature": temperature, "pairs": k, "compared": sc.compared,
            "failed": sc.failed, "flip_rate": sc.flip_rate}


def wikieval_figures(st: JudgeStatistics, baseline: tuple[str, str], repeats: int, temperature: float,
                     k: int) -> dict[str, Any]:
    """:attr:`JudgeCheck.stats` of a WikiEval check (``baseline``: its name and definition)."""
    out: dict[str, Any] = {
        "parse_failure_rate": st.rates["parse_failure"], "pairwise_accuracy": st.pairwise_accuracy,
        "baseline": _baseline(st, *baseline), "agreement": st.agreement, "kappa": st.kappa,
        "tpr": st.tpr, "tnr": st.tnr,
        "majority_baseline": {"label": st.majority_label, "agreement": st.majority_agreement, "kappa": 0.0}}
    if st.self_consistency is not None:
        out["self_consistency"] = _consistency(st, repeats, temperature, k)
    return out


def ragchecker_figures(st: JudgeStatistics, baseline: tuple[str, str], verdicts: Sequence[str | None],
                       first_shown: Sequence[bool], repeats: int, temperature: float,
                       k: int) -> dict[str, Any]:
    """:attr:`JudgeCheck.stats` of a RAGChecker check (``verdicts``: the judge's per pair, None failed;
    ``first_shown``: per decisive order-verdict, whether it chose the answer shown first)."""
    out: dict[str, Any] = {
        "parse_failure_rate": st.rates["parse_failure"], "pairwise_accuracy": st.pairwise_accuracy,
        "baseline": _baseline(st, *baseline), "inconsistent_rate": st.rates["inconsistent"],
        "agreement": st.agreement, "kappa": st.kappa}
    for rater, got in st.by_rater.items():
        out[f"agreement_annotator{rater}"] = got.agreement
        out[f"kappa_annotator{rater}"] = got.kappa
    assert st.between_raters is not None
    out["annotator_agreement"] = st.between_raters.agreement
    out["annotator_kappa"] = st.between_raters.kappa
    out["majority_baseline"] = {"label": st.majority_label, "agreement": st.majority_agreement, "kappa": 0.0}
    out["verdict_counts"] = {v: sum(x == v for x in verdicts) for v in ["A", "tie", "B", "inconsistent"]} | {
        "failed": sum(x is None for x in verdicts)}
    out["position_bias"] = {"first": int(sum(first_shown)), "decisive": len(first_shown),
                            "rate": st.rates["first_shown"]}
    out["win_rate_judge"] = st.rates["win_b"]
    out["win_rate_annotators"] = st.preference
    if st.self_consistency is not None:
        out["self_consistency"] = _consistency(st, repeats, temperature, k)
    return out


@dataclass
class JudgeCheck:
    """What :func:`judge_check` measured: the figures (:attr:`stats`), the per-pair detail
    (:attr:`pairs`) and how the run was made. :meth:`to_dict` is ``judge-check --json``."""

    dataset: str
    metric: str
    judge: str
    n: int  # pairs judged
    n_available: int
    failures: int  # failed judgments in the main run
    judgments: int  # judgments in the main run
    undefined: int = 0
    stats: dict[str, Any] = field(default_factory=dict)
    pairs: list[dict[str, Any]] = field(default_factory=list)
    settings: JSONObject = field(default_factory=dict)
    documented: Documented | None = None
    description: str = ""
    model: str = ""
    #: why judgments failed: reason -> ``{"count", "example"}`` (the first message, e.g. the server's error)
    failure_reasons: dict[str, FailureReason] = field(default_factory=dict)

    def to_dict(self) -> JSONObject:
        """JSON form: ``dataset``, ``metric``, ``judge``, ``n``, ``failures``, the statistics
        (each ``{"value", "low", "high", "n", "confidence", "method"}``), the ``baseline``, the
        reliability ``card``, settings, documented, pairs."""
        out: dict[str, Any] = {"dataset": self.dataset, "metric": self.metric, "judge": self.judge,
                               "model": self.model, "n": self.n, "n_available": self.n_available,
                               "failures": self.failures,
                               "undefined": self.undefined, "judgments": self.judgments,
                               "failure_reasons": self.failure_reasons}
        out.update({k: figure_json(v) for k, v in self.stats.items()})
        out["card"] = self.reliability()
        out["settings"] = dict(self.settings)
        out["documented"] = self.documented
        out["pairs"] = self.pairs
        return out

    @property
    def kappa(self) -> float | None:
        """The (pooled) Cohen's kappa against the labels, or None when undefined or too few."""
        k = self.stats.get("kappa")
        return None if k is None or math.isnan(k.value) else float(k.value)

    def reliability(self) -> JSONObject:
        """The reliability card a :class:`~ragworkbook.evaluation.report.Report` carries for
        this judge and metric (see :mod:`ragworkbook.judging.reliability`): who was measured on
        what, how many labelled pairs, the kappa, agreement and pairwise accuracy with their
        intervals, and the baseline comparison."""
        pa = self.stats.get("pairwise_accuracy")
        card: dict[str, Any] = {"status": "measured", "judge": self.judge, "model": self.model,
                                "metric": self.metric, "dataset": self.dataset, "n": self.n,
                                "n_pairs": pa.n if pa is not None else 0, "failures": self.failures}
        for key in ("kappa", "agreement", "pairwise_accuracy"):
            if key in self.stats:
                card[key] = figure_json(self.stats[key])
        base = self.stats.get("baseline")
        if base is not None:
            card["baseline"] = {k: figure_json(base[k]) for k in ("name", "pairwise_accuracy", "difference",
                                                                 "p_value", "verdict")}
        return card

    def format(self) -> str:
        """The plain-text report ``judge-check`` prints."""
        s = self.stats
        lines = [f"judge-check {self.dataset}: {self.description}",
                 f"judge: {self.judge}",
                 f"pairs: {self.n} of {self.n_available}"
                 + (f" (--limit {self.settings['limit']})" if self.settings.get("limit") else "")
                 + f"; judgments: {self.judgments}, failed {self.failures}"
                 + (f", undefined {self.undefined}" if self.undefined else "")
                 + f"; parse-failure rate {_est(s['parse_failure_rate'])}"]
        for reason, got in self.failure_reasons.items():
            lines.append(f"   failed {got['count']}: {reason}; first: {got['example']}")
        pa = s["pairwise_accuracy"]
        chance = ("a tie or an inconsistent verdict counts half" if self.metric == "pairwise"
                  else "a tie counts half")
        lines.append(f"pairwise accuracy ({chance}; chance 0.500): {_est(pa)}"
                     f"   right {pa.wins}, half {pa.ties}, wrong {pa.losses}"
                     + (f" (on {pa.n} pairs both annotators decide alike)" if self.metric == "pairwise"
                        else ""))
        lines += self._format_baseline()
        if self.documented:
            d = self.documented
            lines.append(f"   documented: {d['pairwise_accuracy']:.2f} with a {d['judge']} judge "
                         f"({d['source']})")
        if self.metric == "pairwise":
            lines += self._format_pairwise()
        else:
            lines += self._format_binary()
        sc = s.get("self_consistency")
        if sc is not None:
            unit = ("pair" if self.metric == "pairwise" else "item") + ("" if sc["compared"] == 1 else "s")
            lines.append(f"self-consistency ({sc['repeats']} repeats at temperature {sc['temperature']} on "
                         f"{sc['pairs']} pairs, {sc['compared']} {unit}"
                         f" compared): flip rate {_est(sc['flip_rate'])}; failed repeats {sc['failed']}")
        elif self.settings.get("deterministic"):
            lines.append("self-consistency: deterministic (the same verdict on every run)")
        lines.append(f"intervals: {s['parse_failure_rate'].confidence:.0%}; rates: Wilson score; pairwise "
                     f"accuracy and kappa: percentile bootstrap over pairs ({self.settings['n_resamples']} "
                     "resamples); difference: inverted paired sign-flip test; 'too few': under "
                     f"{MIN_ITEMS} items")
        return "\n".join(lines)

    def _format_baseline(self) -> list[str]:
        base = self.stats.get("baseline")
        if base is None:
            return []
        diff = base["difference"]
        return [f"   baseline, {base['name']} ({base['definition']}), same pairs: "
                f"{_est(base['pairwise_accuracy'])}",
                f"   judge minus baseline: {_signed(diff)} on {diff.n} pairs, p = {_dec3(base['p_value'])}: "
                f"{_verdict_text(base['verdict'])}"]

    def _format_binary(self) -> list[str]:
        s = self.stats
        return [f"binary verdicts (judged good when {self.metric} >= {self.settings['threshold']:g}; "
                f"{s['agreement'].n} items):",
                f"   raw agreement {_est(s['agreement'])}   Cohen's kappa {_est(s['kappa'])}",
                f"   TPR (good judged good) {_est(s['tpr'])}   TNR (bad judged bad) {_est(s['tnr'])}",
                "   " + _majority(s)]

    def _format_pairwise(self) -> list[str]:
        s = self.stats
        pb = s["position_bias"]
        return [f"verdicts: {s['verdict_counts']}",
                f"inconsistent (the verdict flips with the order; no annotator can give it): "
                f"{_est(s['inconsistent_rate'])}",
                f"on the {s['agreement'].n} consistent verdicts (A, tie, B), with the annotators pooled: "
                + _agreement_kappa(s, "agreement", "kappa"),
                "   annotator 1: " + _agreement_kappa(s, "agreement_annotator1", "kappa_annotator1")
                + ";  annotator 2: " + _agreement_kappa(s, "agreement_annotator2", "kappa_annotator2"),
                "ceiling, annotator 1 vs annotator 2 on all these pairs: "
                + _agreement_kappa(s, "annotator_agreement", "annotator_kappa"),
                _majority(s),
                f"position bias: chose the answer shown first in {pb['first']} of {pb['decisive']} decisive "
                f"order-verdicts = {_est(pb['rate'])} (no bias: 0.500)",
                f"win rate of B (second system) over A: judge {_est(s['win_rate_judge'])}; "
                f"annotators {_est(s['win_rate_annotators'])}"]


def _agreement_kappa(stats: Mapping[str, Any], agreement: str, kappa: str) -> str:
    """"agreement A, kappa K" from two of the statistics."""
    return f"agreement {_est(stats[agreement])}, kappa {_est(stats[kappa])}"


def _majority(stats: Mapping[str, Any]) -> str:
    """The majority-class baseline: its label, its agreement and its kappa (0 by construction)."""
    base = stats["majority_baseline"]
    return f"majority-class baseline: always {base['label']} -> agreement {_dec3(base['agreement'])}, kappa 0"


def _dec3(x: float | None) -> str:
    """A number to 3 decimals, "n/a" when there is none (None or NaN)."""
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _est(e: Estimate | CreditEstimate | float | None) -> str:
    if e is None:
        return "n/a"
    if isinstance(e, (Estimate, CreditEstimate)):
        return str(e.estimate if isinstance(e, CreditEstimate) else e)
    return f"{float(e):.3f}"


def _signed(e: Estimate) -> str:
    if e.too_few:
        return str(e)
    if math.isnan(e.value):
        return "n/a"
    def signed(x: float) -> str:
        return "-inf" if x == -math.inf else "inf" if x == math.inf else f"{0.0 if abs(x) < 5e-4 else x:+.3f}"

    return f"{signed(e.value)} [{signed(e.low)}, {signed(e.high)}]"


def _verdict_text(verdict: str) -> str:
    return {"better": "better than its baseline (the interval lies above 0)",
            "worse": "worse than its baseline (the interval lies below 0)",
            "not shown different": "not shown different from its baseline (the interval contains 0)",
            "too few": "too few pairs to compare"}.get(verdict, verdict)


def figure_json(v: object) -> JSON:
    """A figure (an Estimate, a pairwise accuracy, a dict of them, a number) as JSON: NaN -> null, an
    infinite bound -> "inf" / "-inf"."""
    if isinstance(v, CreditEstimate):
        return {**v.estimate.to_dict(), "wins": v.wins, "ties": v.ties, "losses": v.losses,
                "tie_value": v.tie_value}
    if isinstance(v, Estimate):
        d = v.to_dict()
        if d["low"] is None and v.low == -math.inf:
            d["low"] = "-inf"
        if d["high"] is None and v.high == math.inf:
            d["high"] = "inf"
        return d
    if isinstance(v, dict):
        return {k: figure_json(x) for k, x in v.items()}
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v  # type: ignore[return-value]  # the rest is JSON already (str, int, float, list, None)
