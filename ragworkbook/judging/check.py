"""Judge meta-evaluation: how often does a judge agree with people? (``ragworkbook judge-check``)

:func:`judge_check` runs the package's own judged metric (or the pairwise judge, or the
deterministic word support) on a public labelled data set
(:mod:`ragworkbook.judging.datasets`) and measures it against the labels, **beside the
cheapest baseline that could pass for a judge** (:mod:`ragworkbook.judging.baselines`)
on the same pairs.

Data sets (:data:`DATASETS`; short aliases in :data:`ALIASES`):

================================  ====================  =================================  =====
name                              what is judged        judged metric                      limit
================================  ====================  =================================  =====
``wikieval-faithfulness``         answer vs context     :func:`faithfulness`               8
``wikieval-answer-relevance``     answer vs question    :func:`answer_relevancy`           20
``wikieval-context-relevance``    context vs question   :func:`context_relevance` (1 chunk)  20
``ragchecker``                    two answers, with     the pairwise judge                 10
                                  the reference         (:mod:`~ragworkbook.judging.pairwise`)
================================  ====================  =================================  =====

The default ``limit`` (pairs) keeps a live run with the embedded SmolLM2 judge to
a few minutes on a laptop (about 40 s per faithfulness pair, 10-25 s per other
pair); ``limit=None`` (``--limit 0``) judges every pair. ``judge="word-support"``
measures :mod:`ragworkbook.metrics.support` on the faithfulness pairs instead of an
LLM: instantly, every pair.

**WikiEval** (50 questions, a good and a bad item each; which is good comes from the
construction labels, see :func:`~ragworkbook.judging.datasets.load_wikieval`):

- ``pairwise_accuracy``: the share of pairs on which the good item scores higher
  than the bad one, as the RAGAS paper defines its agreement; **a tie counts
  half** (a judge that scores everything alike gets 0.5, chance), see
  :func:`~ragworkbook.stats.agreement.pairwise_accuracy`. The paper's figures with
  a gpt-3.5 judge are 0.95 (faithfulness), 0.78 (answer relevance) and 0.70
  (context relevance).
- ``baseline``: the data set's baseline scored on the same pairs, its pairwise
  accuracy, and the **judge-minus-baseline difference** of the per-pair credit (1, 0.5,
  0) on the pairs the judge scored, with the interval that inverts a paired sign-flip
  test (:func:`~ragworkbook.stats.resampling.paired_test`): the judge is
  ``"better"`` (``"worse"``) than its baseline only when that interval lies above
  (below) 0, else ``"not shown different"``.
- binary agreement: each item is judged good when its score is at least
  ``threshold`` (faithfulness 1.0, i.e. no unsupported claim, the package's
  hallucination flag; word support 0.9; answer and context relevance 0.5); raw
  agreement, Cohen's kappa, TPR (good items judged good) and TNR (bad items judged
  bad) against the labels, and the majority-class baseline (always the commonest
  label: its kappa is 0).

**RAGChecker** (280 pairs of answers, two annotators, -2..2 preferences; pairs
taken round-robin over its 10 source data sets): the pairwise judge asked in both
orders; the annotators' sign (``A`` = the first system's answer better, ``B`` the
second's, ``tie``) on ``aspect`` (default ``overall``). A verdict that flips with the
order (``inconsistent``) is not a verdict an annotator could give: it is reported as
its own rate (``inconsistent_rate``), and agreement and kappa are computed on the
**consistent verdicts** (A, tie, B), with each annotator and pooled (each pair
counted once per annotator, resampled as a pair). ``pairwise_accuracy`` is on the
pairs both annotators decide the same way: the judge's verdict counts 1 when it
agrees, 0 when it prefers the other answer, and **half when it cannot tell** (a tie
or an inconsistent verdict), so a judge that answers the position, or guesses,
scores 0.5: that is what "chance 0.5" means here. Beside it: the annotators'
agreement with each other (the ceiling), the token-F1 baseline's verdicts, position
bias (the share of decisive order-verdicts choosing the answer shown first) and the
win rate of B.

**Intervals**, each saying what it is (``method`` in the JSON): rates over
independent items (agreement of WikiEval items, TPR, TNR, parse failures,
inconsistency, position bias, flip rates) have Wilson score intervals; pairwise
accuracy and kappa a percentile bootstrap over **pairs** (the two items of a question,
the two annotators of a pair, resampled together; ``n_resamples``, seed 0); the
judge-minus-baseline difference the inverted sign-flip test. From fewer than 5
items there is no number: "too few".

**Both**: failed judgments are counted (``failures``; ``parse_failure_rate`` over
every judgment of the main run) and their pairs left out of the statistics;
self-consistency repeats the judge ``repeats`` times at ``temperature`` (seeds 1,
2, ...) on the first ``consistency_items`` pairs and reports the flip rate: the
share of items whose verdict is not the same in every repeat.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragworkbook.judging.judge import Judge
from ragworkbook.outcomes import FAILED, SCORED, UNDEFINED
from ragworkbook.stats.agreement import kappa_estimate
from ragworkbook.stats.proportions import rate_of
from ragworkbook.stats.resampling import MIN_ITEMS, Estimate, bootstrap_statistic, paired_test, too_few

__all__ = ["DatasetSpec", "DATASETS", "ALIASES", "RECORDED_PAIRS", "JUDGES", "WORD_SUPPORT",
           "resolve_dataset", "recording_path", "JudgeCheck", "judge_check", "judge_name",
           "RELIABILITY_MIN_KAPPA", "MIN_LABELLED_PAIRS"]

#: The lower bound of the kappa interval a judge needs on its judge-check before the targets view
#: rates (or the gate gates) its metric: above 0.60 is "substantial" agreement
#: (:data:`ragworkbook.stats.agreement.KAPPA_BANDS`, Landis & Koch).
RELIABILITY_MIN_KAPPA = 0.6
#: The fewest labelled pairs (scored on both items) a judge-check needs before its judge can be trusted:
#: below it a kappa of 1.0 is a matter of luck (2 pairs agree perfectly by chance one time in 16).
MIN_LABELLED_PAIRS = 30

#: ``judge_check``'s ``judge="word-support"``: the deterministic word support, not an LLM.
WORD_SUPPORT = "word-support"
#: What ``--judge`` accepts: ``llm`` (the generator given as a judge) or the deterministic word support.
JUDGES = ("llm", WORD_SUPPORT)

_RAGAS = "RAGAS paper, Es et al. 2023, arXiv:2309.15217"
_N_SIGN_PATTERNS = 10_000


@dataclass(frozen=True)
class DatasetSpec:
    """One data set ``judge-check`` knows: what is judged, by which metric, with which defaults."""

    name: str
    source: str  # "wikieval" or "ragchecker"
    metric: str  # the package metric checked ("pairwise" for the pairwise judge)
    default_limit: int
    consistency_items: int
    wikieval_set: str | None = None
    threshold: float | None = None
    documented: dict[str, Any] | None = None
    description: str = ""


DATASETS: dict[str, DatasetSpec] = {
    "wikieval-faithfulness": DatasetSpec(
        "wikieval-faithfulness", "wikieval", "faithfulness", 8, 3, "faithfulness", 1.0,
        {"pairwise_accuracy": 0.95, "judge": "gpt-3.5-turbo", "source": _RAGAS},
        "WikiEval faithfulness pairs: a grounded and an ungrounded answer per question, with the context"),
    "wikieval-answer-relevance": DatasetSpec(
        "wikieval-answer-relevance", "wikieval", "answer_relevancy", 20, 5, "answer_relevance", 0.5,
        {"pairwise_accuracy": 0.78, "judge": "gpt-3.5-turbo", "source": _RAGAS},
        "WikiEval answer-relevance pairs: a complete and an incomplete answer per question"),
    "wikieval-context-relevance": DatasetSpec(
        "wikieval-context-relevance", "wikieval", "context_relevance", 20, 5, "context_relevance", 0.5,
        {"pairwise_accuracy": 0.70, "judge": "gpt-3.5-turbo", "source": _RAGAS},
        "WikiEval context-relevance pairs: the original context and a longer one with added text"),
    "ragchecker": DatasetSpec(
        "ragchecker", "ragchecker", "pairwise", 10, 3, None, None, None,
        "RAGChecker meta-evaluation: two systems' answers per query with the reference answer, "
        "two annotators' preferences"),
}

#: Word support's default threshold: an answer is judged faithful when at least 90% of its content
#: words occur in the context (chosen before measuring; ``threshold=`` changes it).
WORD_SUPPORT_THRESHOLD = 0.9

#: How many pairs the bundled recordings of the embedded judge hold (``recording_path``): a replay can ask
#: for at most these (``limit=RECORDED_PAIRS[name]``); the self-consistency repeats are recorded too.
RECORDED_PAIRS = {"wikieval-faithfulness": 30, "wikieval-answer-relevance": 50,
                  "wikieval-context-relevance": 30, "ragchecker": 24}

ALIASES = {
    "ff": "wikieval-faithfulness", "faithfulness": "wikieval-faithfulness",
    "ar": "wikieval-answer-relevance", "answer-relevance": "wikieval-answer-relevance",
    "answer_relevancy": "wikieval-answer-relevance",
    "cr": "wikieval-context-relevance", "context-relevance": "wikieval-context-relevance",
    "context_relevance": "wikieval-context-relevance",
    "ragchecker-pairs": "ragchecker", "pairwise": "ragchecker",
}


def resolve_dataset(name: str) -> DatasetSpec:
    """The :class:`DatasetSpec` for a name or alias; ValueError listing the names otherwise."""
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in DATASETS:
        raise ValueError(f"unknown judge-check dataset {name!r}; choose one of: {', '.join(DATASETS)} "
                         f"(aliases: {', '.join(sorted(ALIASES))})")
    return DATASETS[key]


def recording_path(name: str) -> Any:
    """The bundled recording of the embedded judge's run on a data set
    (``ragworkbook/data/recordings/judge_check_<name>.json``)."""
    from ragworkbook.paths import data_path

    spec = resolve_dataset(name)
    return data_path("recordings", f"judge_check_{spec.name.replace('-', '_')}.json")


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


def _failure_reasons(results: Sequence[Any], limit: int = 300) -> dict[str, dict[str, Any]]:
    """``reason -> {"count", "example"}`` over the failed judgments of ``results`` (judged or pairwise),
    the example being the first failure's message (a server's error says what went wrong)."""
    from ragworkbook.llm.host import redact_text

    out: dict[str, dict[str, Any]] = {}
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
    settings: dict[str, Any] = field(default_factory=dict)
    documented: dict[str, Any] | None = None
    description: str = ""
    model: str = ""
    #: why judgments failed: reason -> ``{"count", "example"}`` (the first message, e.g. the server's error)
    failure_reasons: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``dataset``, ``metric``, ``judge``, ``n``, ``failures``, the statistics
        (each ``{"value", "low", "high", "n", "confidence", "method"}``), the ``baseline``, the
        reliability ``card``, settings, documented, pairs."""
        out: dict[str, Any] = {"dataset": self.dataset, "metric": self.metric, "judge": self.judge,
                               "model": self.model, "n": self.n, "n_available": self.n_available,
                               "failures": self.failures,
                               "undefined": self.undefined, "judgments": self.judgments,
                               "failure_reasons": self.failure_reasons}
        out.update({k: _jsonable(v) for k, v in self.stats.items()})
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

    def reliability(self) -> dict[str, Any]:
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
                card[key] = _jsonable(self.stats[key])
        base = self.stats.get("baseline")
        if base is not None:
            card["baseline"] = {k: _jsonable(base[k]) for k in ("name", "pairwise_accuracy", "difference",
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
                f"   judge minus baseline: {_signed(diff)} on {diff.n} pairs, p = {_p(base['p_value'])}: "
                f"{_verdict_text(base['verdict'])}"]

    def _format_binary(self) -> list[str]:
        s = self.stats
        base = s["majority_baseline"]
        return [f"binary verdicts (judged good when {self.metric} >= {self.settings['threshold']:g}; "
                f"{s['agreement'].n} items):",
                f"   raw agreement {_est(s['agreement'])}   Cohen's kappa {_est(s['kappa'])}",
                f"   TPR (good judged good) {_est(s['tpr'])}   TNR (bad judged bad) {_est(s['tnr'])}",
                f"   majority-class baseline: always {base['label']} -> agreement {_num(base['agreement'])}, "
                "kappa 0"]

    def _format_pairwise(self) -> list[str]:
        s = self.stats
        base = s["majority_baseline"]
        pb = s["position_bias"]
        return [f"verdicts: {s['verdict_counts']}",
                f"inconsistent (the verdict flips with the order; no annotator can give it): "
                f"{_est(s['inconsistent_rate'])}",
                f"on the {s['agreement'].n} consistent verdicts (A, tie, B), with the annotators pooled: "
                f"agreement {_est(s['agreement'])}, kappa {_est(s['kappa'])}",
                f"   annotator 1: agreement {_est(s['agreement_annotator1'])}, kappa "
                f"{_est(s['kappa_annotator1'])};  annotator 2: agreement {_est(s['agreement_annotator2'])}, "
                f"kappa {_est(s['kappa_annotator2'])}",
                "ceiling, annotator 1 vs annotator 2 on all these pairs: agreement "
                f"{_est(s['annotator_agreement'])}, kappa {_est(s['annotator_kappa'])}",
                f"majority-class baseline: always {base['label']} -> agreement {_num(base['agreement'])}, "
                "kappa 0",
                f"position bias: chose the answer shown first in {pb['first']} of {pb['decisive']} decisive "
                f"order-verdicts = {_est(pb['rate'])} (no bias: 0.500)",
                f"win rate of B (second system) over A: judge {_est(s['win_rate_judge'])}; "
                f"annotators {_est(s['win_rate_annotators'])}"]


def _num(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _p(p: float | None) -> str:
    return "n/a" if p is None or math.isnan(p) else f"{p:.3f}"


def _est(e: Any) -> str:
    if e is None:
        return "n/a"
    if isinstance(e, (Estimate, _PairwiseAccuracyEstimate)):
        return str(e.estimate if isinstance(e, _PairwiseAccuracyEstimate) else e)
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


def _jsonable(v: Any) -> Any:
    if isinstance(v, _PairwiseAccuracyEstimate):
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
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


@dataclass(frozen=True)
class _PairwiseAccuracyEstimate:
    """A pairwise accuracy with its counts (prints and serialises like an Estimate plus counts):
    ``wins`` right, ``ties`` counted half, ``losses`` wrong."""

    estimate: Estimate
    wins: int
    ties: int
    losses: int
    tie_value: float

    @property
    def value(self) -> float:
        return self.estimate.value

    @property
    def low(self) -> float:
        return self.estimate.low

    @property
    def high(self) -> float:
        return self.estimate.high

    @property
    def n(self) -> int:
        return self.estimate.n

    @property
    def too_few(self) -> bool:
        return self.estimate.too_few


# --------------------------------------------------------------------------------------------
# statistics helpers
# --------------------------------------------------------------------------------------------
def _mean_estimate(values: Sequence[float], n_resamples: int, seed: int, unit: str) -> Estimate:
    arr = np.asarray([float(v) for v in values])
    return bootstrap_statistic(lambda idx: float(arr[idx].mean()), len(arr), n_resamples=n_resamples,
                               seed=seed, unit=unit)


def _credit_estimate(credit: Sequence[float], n_resamples: int, seed: int) -> _PairwiseAccuracyEstimate:
    """Per-pair credit (1 right, 0.5 cannot tell, 0 wrong) -> the pairwise accuracy, bootstrap over pairs."""
    est = _mean_estimate(credit, n_resamples, seed, "pairs")
    return _PairwiseAccuracyEstimate(est, sum(c == 1.0 for c in credit), sum(c == 0.5 for c in credit),
                                     sum(c == 0.0 for c in credit), 0.5)


def _credit(good: float | None, bad: float | None) -> float | None:
    if good is None or bad is None:
        return None
    return 1.0 if good > bad else 0.0 if good < bad else 0.5


def _grouped_agreement(pairs: Sequence[tuple[Any, Any]], groups: Sequence[int], n_resamples: int,
                       seed: int) -> Estimate:
    """Raw agreement over label pairs, resampling whole groups (the annotators' labels of one pair)."""
    same = np.asarray([float(a == b) for a, b in pairs])
    order: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        order.setdefault(g, []).append(i)
    members = [np.asarray(v) for v in order.values()]
    est = bootstrap_statistic(lambda g: float(same[np.concatenate([members[i] for i in g])].mean()),
                              len(members), n_resamples=n_resamples, seed=seed, unit="pairs")
    return Estimate(est.value, est.low, est.high, len(pairs), est.confidence, est.n_resamples, est.n_skipped,
                    est.method + f", {len(members)} pairs of labels", est.note) if not est.too_few else est


def _kappa(pairs: Sequence[tuple[Any, Any]], labels: Sequence[Any], n_resamples: int, seed: int,
           groups: Sequence[Any] | None = None) -> Estimate:
    if not pairs:
        return too_few(0)
    return kappa_estimate([a for a, _ in pairs], [b for _, b in pairs], labels, n_resamples=n_resamples,
                          seed=seed, groups=groups, unit="pairs" if groups is not None else "items")


def _difference(judge_credit: Sequence[float], base_credit: Sequence[float]) -> tuple[Estimate, float, str]:
    """Judge minus baseline per pair: the mean difference with the interval that inverts the paired
    sign-flip test, its p-value, and the verdict ("better", "worse", "not shown different", "too few")."""
    n = len(judge_credit)
    method = f"inverted paired sign-flip test ({_N_SIGN_PATTERNS} sign patterns, seed 0)"
    if n < MIN_ITEMS:
        return too_few(n, method=method), math.nan, "too few"
    t = paired_test(judge_credit, base_credit, n_resamples=_N_SIGN_PATTERNS, seed=0)
    patterns = (f"all {t.n_resamples} sign patterns" if t.exact
                else f"{t.n_resamples} random sign patterns, seed 0")
    est = Estimate(t.mean_diff, t.ci_low, t.ci_high, n, t.confidence, t.n_resamples,
                   method=f"inverted paired sign-flip test ({patterns})")
    verdict = ("better" if t.ci_low > 0 else "worse" if t.ci_high < 0 else "not shown different")
    return est, t.p_value, verdict


# --------------------------------------------------------------------------------------------
# WikiEval
# --------------------------------------------------------------------------------------------
def _wikieval_samples(pairs: Sequence[Any]) -> list[Any]:
    from ragworkbook.judging.results import JudgeSample

    out = []
    for p in pairs:
        for which, it in (("good", p.good), ("bad", p.bad)):
            out.append(JudgeSample(question=p.question, answer=it.answer or "",
                                   contexts=[it.context] if it.context is not None else [],
                                   sample_id=f"{p.id}-{which}"))
    return out


def _judge_samples(samples: Sequence[Any], judge: Judge | None, metric: str, progress: bool) -> list[Any]:
    from ragworkbook.judging.metrics import evaluate_judged

    return evaluate_judged(samples, judge, [metric], progress=progress).results[metric]


def _repeat_judges(judge: Judge, repeats: int, temperature: float) -> list[Judge]:
    return [Judge(judge.generator, options={**judge.options, "temperature": temperature, "seed": seed},
                  max_concurrency=judge.max_concurrency, timeout=judge.timeout, system=judge.system)
            for seed in range(1, repeats + 1)]


def _wikieval_baseline(spec: DatasetSpec, pairs: Sequence[Any], judge_credit: dict[str, float],
                       n_resamples: int, seed: int, embed: Any) -> dict[str, Any]:
    from ragworkbook.judging.baselines import BASELINES, wikieval_baseline_scores

    scores = wikieval_baseline_scores(spec.name, pairs, embed)
    base_credit = {p.id: _credit(g, b) for p, (g, b) in zip(pairs, scores, strict=True)}
    scored = [c for c in base_credit.values() if c is not None]
    shared = [i for i, c in judge_credit.items() if base_credit.get(i) is not None]
    diff, p, verdict = _difference([judge_credit[i] for i in shared], [base_credit[i] for i in shared])
    b = BASELINES[spec.name]
    return {"name": b.name, "definition": b.definition,
            "pairwise_accuracy": _credit_estimate(scored, n_resamples, seed),
            "difference": diff, "p_value": p, "verdict": verdict,
            "scores": {p.id: [g, bb] for p, (g, bb) in zip(pairs, scores, strict=True)}}


def _check_wikieval(spec: DatasetSpec, judge: Judge | str, limit: int | None, threshold: float, repeats: int,
                    temperature: float, consistency_items: int, progress: bool, n_resamples: int,
                    seed: int, embed: Any) -> JudgeCheck:
    from ragworkbook.judging.datasets import load_wikieval
    from ragworkbook.stats.agreement import majority_baseline

    assert spec.wikieval_set is not None
    deterministic = isinstance(judge, str)
    metric = "word_support" if deterministic else spec.metric
    llm = None if deterministic else judge
    data = load_wikieval(spec.wikieval_set)
    pairs = data.pairs[:limit] if limit else list(data.pairs)
    samples = _wikieval_samples(pairs)
    results = _judge_samples(samples, llm, metric, progress)
    by_id = {r.sample_id: r for r in results}
    failures = sum(r.outcome == FAILED for r in results)
    undefined = sum(r.outcome == UNDEFINED for r in results)

    detail = []
    judge_credit: dict[str, float] = {}
    item_pairs: list[tuple[int, int]] = []  # (label, verdict) for items with a score
    item_group: list[str] = []
    for p in pairs:
        g, b = by_id[f"{p.id}-good"], by_id[f"{p.id}-bad"]
        row = {"id": p.id, "good": g.score, "bad": b.score, "good_outcome": g.outcome,
               "bad_outcome": b.outcome, "good_reason": g.reason, "bad_reason": b.reason}
        if deterministic:
            row["good_unsupported"] = g.detail.get("unsupported", [])
            row["bad_unsupported"] = b.detail.get("unsupported", [])
        detail.append(row)
        for label, r in ((1, g), (0, b)):
            if r.outcome == SCORED:
                item_pairs.append((label, int(float(r.score) >= threshold)))
                item_group.append(p.id)
        c = _credit(g.score if g.outcome == SCORED else None, b.score if b.outcome == SCORED else None)
        if c is not None:
            judge_credit[p.id] = c
    stats: dict[str, Any] = {"parse_failure_rate": rate_of([r.outcome == FAILED for r in results])}
    stats["pairwise_accuracy"] = _credit_estimate(list(judge_credit.values()), n_resamples, seed)
    stats["baseline"] = _wikieval_baseline(spec, pairs, judge_credit, n_resamples, seed, embed)
    stats["agreement"] = rate_of([y == v for y, v in item_pairs])
    stats["kappa"] = _kappa(item_pairs, [0, 1], n_resamples, seed, item_group)
    stats["tpr"] = rate_of([bool(v) for y, v in item_pairs if y == 1])
    stats["tnr"] = rate_of([not v for y, v in item_pairs if y == 0])
    if item_pairs:
        label, agree = majority_baseline([y for y, _ in item_pairs])
        stats["majority_baseline"] = {"label": label, "agreement": agree, "kappa": 0.0}
    else:
        stats["majority_baseline"] = {"label": None, "agreement": float("nan"), "kappa": 0.0}
    for row in detail:
        row["baseline"] = stats["baseline"]["scores"][row["id"]]
    del stats["baseline"]["scores"]

    k = min(consistency_items, len(pairs)) if not deterministic else 0
    if repeats >= 2 and k and llm is not None:
        sub = samples[: 2 * k]
        runs = [_judge_samples(sub, j, metric, progress) for j in _repeat_judges(llm, repeats, temperature)]
        flips, failed = [], 0
        for i in range(len(sub)):
            outs = [run[i] for run in runs]
            failed += sum(o.outcome != SCORED for o in outs)
            if all(o.outcome == SCORED for o in outs):
                flips.append(len({int(float(o.score) >= threshold) for o in outs}) > 1)
        stats["self_consistency"] = {"repeats": repeats, "temperature": temperature, "pairs": k,
                                     "compared": len(flips), "failed": failed, "flip_rate": rate_of(flips)}
    return JudgeCheck(
        dataset=spec.name, metric=metric, judge=judge_name(judge), n=len(pairs), n_available=len(data),
        failures=failures, failure_reasons=_failure_reasons(results), judgments=len(results),
        undefined=undefined, stats=stats, pairs=detail,
        settings={"limit": limit, "threshold": threshold, "ties": "half",
                  "repeats": 0 if deterministic else repeats, "temperature": temperature,
                  "consistency_items": k, "n_resamples": n_resamples,
                  "seed": seed, "deterministic": deterministic, "truth": "construction labels"},
        documented=spec.documented, description=spec.description,
        model=metric if deterministic else llm.generator.model)  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------------
# RAGChecker pairs
# --------------------------------------------------------------------------------------------
def _sign(x: int) -> str:
    return "B" if x > 0 else "A" if x < 0 else "tie"


def _pairwise_inputs(pairs: Sequence[Any]) -> list[dict[str, Any]]:
    return [{"question": p.query, "answer_a": p.answer1, "answer_b": p.answer2, "reference": p.reference,
             "pair_id": p.id} for p in pairs]


def _pair_credit(verdict: str | None, truth: str) -> float | None:
    """1 when the verdict is the annotators' choice, 0 for the other answer, 0.5 when it cannot tell."""
    if verdict is None:
        return None
    if verdict == truth:
        return 1.0
    return 0.5 if verdict in ("tie", "inconsistent") else 0.0


def _check_ragchecker(spec: DatasetSpec, judge: Judge, limit: int | None, aspect: str, repeats: int,
                      temperature: float, consistency_items: int, progress: bool, n_resamples: int,
                      seed: int) -> JudgeCheck:
    from ragworkbook.judging.baselines import BASELINES, ragchecker_verdicts
    from ragworkbook.judging.datasets import ASPECTS, load_ragchecker, round_robin
    from ragworkbook.judging.pairwise import pairwise_many
    from ragworkbook.stats.agreement import majority_baseline

    if aspect not in ASPECTS:
        raise ValueError(f"unknown aspect {aspect!r}; RAGChecker's annotators labelled: {', '.join(ASPECTS)}")
    data = load_ragchecker(predictions=False)
    ordered = round_robin(data.pairs)
    pairs = ordered[:limit] if limit else ordered
    results = pairwise_many(_pairwise_inputs(pairs), judge, progress=progress)
    calls = [c for r in results for c in r.calls]
    failures = sum(r.outcome == FAILED for r in results)
    labels3 = ["A", "tie", "B"]

    h1 = [_sign(p.labels[aspect][0]) for p in pairs]
    h2 = [_sign(p.labels[aspect][1]) for p in pairs]
    j = [r.verdict for r in results]  # None = failed
    ok = [i for i, v in enumerate(j) if v is not None]
    consistent = [i for i in ok if j[i] != "inconsistent"]
    pooled = [(h1[i], j[i]) for i in consistent] + [(h2[i], j[i]) for i in consistent]
    groups = consistent * 2
    stats: dict[str, Any] = {"parse_failure_rate": rate_of([not c.ok for c in calls])}
    # pairs both annotators decide the same way: the RAGAS-style pairwise accuracy
    decided = [i for i in ok if h1[i] == h2[i] and h1[i] != "tie"]
    credit = {pairs[i].id: _pair_credit(j[i], h1[i]) for i in decided}
    stats["pairwise_accuracy"] = _credit_estimate(list(credit.values()), n_resamples, seed)
    base_v = ragchecker_verdicts(pairs)
    base_credit = {pairs[i].id: _pair_credit(base_v[i], h1[i]) for i in decided}
    all_decided = [i for i in range(len(pairs)) if h1[i] == h2[i] and h1[i] != "tie"]
    diff, p_value, verdict = _difference(list(credit.values()), [base_credit[i] for i in credit])
    b = BASELINES[spec.name]
    stats["baseline"] = {
        "name": b.name, "definition": b.definition,
        "pairwise_accuracy": _credit_estimate([_pair_credit(base_v[i], h1[i]) for i in all_decided],  # type: ignore[misc]
                                              n_resamples, seed),
        "difference": diff, "p_value": p_value, "verdict": verdict,
        "agreement": _grouped_agreement([(h1[i], base_v[i]) for i in range(len(pairs))]
                                        + [(h2[i], base_v[i]) for i in range(len(pairs))],
                                        list(range(len(pairs))) * 2, n_resamples, seed),
        "kappa": _kappa([(h1[i], base_v[i]) for i in range(len(pairs))]
                        + [(h2[i], base_v[i]) for i in range(len(pairs))], labels3, n_resamples, seed,
                        list(range(len(pairs))) * 2)}
    stats["inconsistent_rate"] = rate_of([j[i] == "inconsistent" for i in ok])
    stats["agreement"] = (_grouped_agreement(pooled, groups, n_resamples, seed) if pooled
                          else too_few(0))
    stats["kappa"] = _kappa(pooled, labels3, n_resamples, seed, groups)
    for k, h in (("1", h1), ("2", h2)):
        pp = [(h[i], j[i]) for i in consistent]
        stats[f"agreement_annotator{k}"] = rate_of([a == v for a, v in pp])
        stats[f"kappa_annotator{k}"] = _kappa(pp, labels3, n_resamples, seed)
    ann = list(zip(h1, h2, strict=True))
    stats["annotator_agreement"] = rate_of([a == v for a, v in ann])
    stats["annotator_kappa"] = _kappa(ann, labels3, n_resamples, seed)
    label, agree = majority_baseline(h1 + h2)
    stats["majority_baseline"] = {"label": label, "agreement": agree, "kappa": 0.0}
    stats["verdict_counts"] = {v: sum(x == v for x in j) for v in ["A", "tie", "B", "inconsistent"]} | {
        "failed": sum(x is None for x in j)}

    chosen = [c for r in results for c in r.first_shown_chosen]
    stats["position_bias"] = {"first": int(sum(chosen)), "decisive": len(chosen), "rate": rate_of(chosen)}
    stats["win_rate_judge"] = rate_of([v == "B" for v in j if v in ("A", "B")])
    ann_dec = [(h1[i] == "B", h1[i] in ("A", "B"), h2[i] == "B", h2[i] in ("A", "B"))
               for i in range(len(pairs))]

    def ann_win(g: np.ndarray) -> float | None:
        wins = sum(ann_dec[i][0] + ann_dec[i][2] for i in g)
        dec = sum(ann_dec[i][1] + ann_dec[i][3] for i in g)
        return wins / dec if dec else None

    stats["win_rate_annotators"] = bootstrap_statistic(ann_win, len(pairs), n_resamples=n_resamples,
                                                       seed=seed, unit="pairs")

    detail = [{"id": p.id, "dataset": p.dataset, "forward": r.forward, "backward": r.backward,
               "verdict": r.verdict, "outcome": r.outcome, "annotators": [h1[i], h2[i]],
               "labels": list(p.labels[aspect]), "baseline": base_v[i]}
              for i, (p, r) in enumerate(zip(pairs, results, strict=True))]

    k = min(consistency_items, len(pairs))
    if repeats >= 2 and k:
        sub = _pairwise_inputs(pairs[:k])
        runs = [pairwise_many(sub, rj, progress=progress)
                for rj in _repeat_judges(judge, repeats, temperature)]
        flips, failed = [], 0
        for i in range(k):
            outs = [run[i].verdict for run in runs]
            failed += sum(v is None for v in outs)
            if all(v is not None for v in outs):
                flips.append(len(set(outs)) > 1)
        stats["self_consistency"] = {"repeats": repeats, "temperature": temperature, "pairs": k,
                                     "compared": len(flips), "failed": failed, "flip_rate": rate_of(flips)}
    return JudgeCheck(
        dataset=spec.name, metric="pairwise", judge=judge_name(judge), n=len(pairs), n_available=len(data),
        failures=failures, failure_reasons=_failure_reasons(results), judgments=len(results), stats=stats,
        pairs=detail,
        settings={"limit": limit, "aspect": aspect, "order": "round-robin over the source data sets",
                  "repeats": repeats, "temperature": temperature, "consistency_items": k,
                  "n_resamples": n_resamples, "seed": seed, "deterministic": False},
        documented=None, description=spec.description + f" (aspect: {aspect})", model=judge.generator.model)


def _check_threshold(threshold: float | None) -> float | None:
    if threshold is None:
        return None
    if isinstance(threshold, bool):
        raise ValueError(f"threshold must be a score between 0 and 1, got {threshold!r}")
    t = float(threshold)
    if math.isnan(t) or not 0.0 <= t <= 1.0:
        raise ValueError("threshold must be a score between 0 and 1 (an item is judged good at or above "
                         f"it), got {threshold!r}")
    return t


def judge_check(dataset: str, judge: Judge | str, *, limit: int | None | str = "default",
                threshold: float | None = None, aspect: str = "overall", repeats: int = 2,
                temperature: float = 0.8, consistency_items: int | None = None, progress: bool = False,
                n_resamples: int = 2000, seed: int = 0, embed: Any = None) -> JudgeCheck:
    """Measure ``judge`` on a labelled data set (see the module docstring).

    ``judge``: a :class:`~ragworkbook.judging.judge.Judge`, or ``"word-support"`` (the deterministic
    word support, faithfulness pairs only: every pair by default, no repeats).
    ``limit``: pairs to judge (``"default"``: the data set's default; None or 0: all);
    ``threshold``: score in [0, 1] at or above which a WikiEval item is judged good (default:
    the data set's); ``aspect``: which RAGChecker label to compare with; ``repeats`` and
    ``temperature``: the self-consistency runs (``repeats < 2``: none), on the first
    ``consistency_items`` pairs (default: the data set's); ``embed``: texts -> vectors for the
    MiniLM baselines (default: the local MiniLM).
    """
    spec = resolve_dataset(dataset)
    deterministic = isinstance(judge, str)
    if deterministic and judge != WORD_SUPPORT:
        raise ValueError(f"unknown judge {judge!r}: pass a Judge, or {WORD_SUPPORT!r}")
    if deterministic and spec.name != "wikieval-faithfulness":
        raise ValueError(f"{WORD_SUPPORT} measures faithfulness (the words of an answer found in its "
                         "context): use it on wikieval-faithfulness")
    if limit == "default":
        limit = None if deterministic else spec.default_limit
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative number of pairs (0 = all), got {limit!r}")
    limit = limit or None
    th = _check_threshold(threshold)
    if repeats < 0:
        raise ValueError(f"repeats must be >= 0, got {repeats}")
    if not temperature > 0 and repeats >= 2 and not deterministic:
        raise ValueError(f"self-consistency needs a temperature above 0 (got {temperature}): at temperature "
                         "0 the repeats are identical by construction")
    k = spec.consistency_items if consistency_items is None else consistency_items
    if spec.source == "wikieval":
        default = WORD_SUPPORT_THRESHOLD if deterministic else spec.threshold
        return _check_wikieval(spec, judge, limit, float(default if th is None else th), repeats, temperature,
                               k, progress, n_resamples, seed, embed)
    return _check_ragchecker(spec, judge, limit, aspect, repeats, temperature, k,  # type: ignore[arg-type]
                             progress, n_resamples, seed)
