"""Judge meta-evaluation: how often does a judge agree with people? (``ragworkbook judge-check``)

:func:`judge_check` runs the package's own judged metric (or the pairwise judge)
through any judge on a public human-labelled data set (:mod:`ragworkbook.judging.datasets`)
and measures the judge against the human labels. Every figure comes with a
percentile bootstrap interval over the pairs (``n_resamples`` resamples, seed 0).

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
pair); pass ``limit=None`` on the command line (``--limit 0``) for every pair.

**WikiEval** (50 questions, a good and a bad item each):

- ``pairwise_accuracy``: the share of pairs on which the good item scores higher
  than the bad one, as the RAGAS paper defines its agreement; **a tie counts
  half** (a judge that scores everything alike gets 0.5, chance), see
  :func:`~ragworkbook.stats.agreement.pairwise_accuracy`. The paper's figures with
  a gpt-3.5 judge are 0.95 (faithfulness), 0.78 (answer relevance) and 0.70
  (context relevance).
- binary agreement: each item is judged good when its score is at least
  ``threshold`` (faithfulness 1.0, i.e. no unsupported claim, the package's
  hallucination flag; answer and context relevance 0.5); raw agreement, Cohen's
  kappa, TPR (good items judged good) and TNR (bad items judged bad) against the
  labels, and the majority-class baseline (always the commonest label: its kappa
  is 0).

**RAGChecker** (280 pairs of answers, two annotators, -2..2 preferences; pairs
taken round-robin over its 10 source data sets): the pairwise judge asked in both
orders; the annotators' sign (``A`` = the first system's answer better, ``B`` the
second's, ``tie``) on ``aspect`` (default ``overall``). Agreement and kappa with
each annotator and pooled (each pair counted once per annotator; an
``inconsistent`` verdict counts as a disagreement), the annotators' agreement with
each other on the same pairs (the ceiling), ``pairwise_accuracy`` on the pairs
both annotators decide the same way, position bias (the share of decisive
order-verdicts choosing the answer shown first), the inconsistency rate and the
win rate of B with its interval.

**Both**: failed judgments are counted (``failures``; ``parse_failure_rate`` over
every judgment of the main run) and their pairs left out of the statistics;
self-consistency repeats the judge ``repeats`` times at ``temperature`` (seeds 1,
2, ...) on the first ``consistency_items`` pairs and reports the flip rate: the
share of items whose verdict is not the same in every repeat.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragworkbook.judging.judge import Judge
from ragworkbook.outcomes import FAILED, SCORED, UNDEFINED
from ragworkbook.stats.resampling import Estimate, bootstrap_statistic

__all__ = ["DatasetSpec", "DATASETS", "ALIASES", "RECORDED_PAIRS", "resolve_dataset", "recording_path",
           "JudgeCheck", "judge_check", "judge_name", "RELIABILITY_MIN_KAPPA"]

#: Cohen's kappa a judge needs on its judge-check before the targets view rates its metric
#: ("substantial" agreement on the Landis & Koch scale).
RELIABILITY_MIN_KAPPA = 0.6

_RAGAS = "RAGAS paper, Es et al. 2023, arXiv:2309.15217"


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
        "WikiEval answer-relevance pairs: a relevant and a less relevant answer per question"),
    "wikieval-context-relevance": DatasetSpec(
        "wikieval-context-relevance", "wikieval", "context_relevance", 20, 5, "context_relevance", 0.5,
        {"pairwise_accuracy": 0.70, "judge": "gpt-3.5-turbo", "source": _RAGAS},
        "WikiEval context-relevance pairs: a relevant and a less relevant context per question"),
    "ragchecker": DatasetSpec(
        "ragchecker", "ragchecker", "pairwise", 10, 3, None, None, None,
        "RAGChecker meta-evaluation: two systems' answers per query with the reference answer, "
        "two annotators' preferences"),
}

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


def judge_name(judge: Judge) -> str:
    """``backend:model`` of a judge; for a replay, the recorded backend and the recording's file name."""
    g = judge.generator
    recording = getattr(g, "recording", None)
    if g.backend == "replay" and recording is not None:
        backends = sorted({e.get("backend", "?") for e in recording.entries.values()}) or ["?"]
        return f"{'/'.join(backends)}:{g.model} (replayed from {recording.path.name})"
    return f"{g.backend}:{g.model}"


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

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``dataset``, ``metric``, ``judge``, ``n``, ``failures``, the statistics
        (each ``{"value", "low", "high", "n", "confidence"}``), settings, documented, pairs."""
        out: dict[str, Any] = {"dataset": self.dataset, "metric": self.metric, "judge": self.judge,
                               "model": self.model, "n": self.n, "n_available": self.n_available,
                               "failures": self.failures,
                               "undefined": self.undefined, "judgments": self.judgments}
        out.update({k: _jsonable(v) for k, v in self.stats.items()})
        out["settings"] = dict(self.settings)
        out["documented"] = self.documented
        out["pairs"] = self.pairs
        return out

    @property
    def kappa(self) -> float | None:
        """The (pooled) Cohen's kappa against the humans, or None when undefined."""
        k = self.stats.get("kappa")
        return None if k is None or math.isnan(k.value) else float(k.value)

    def reliability(self) -> dict[str, Any]:
        """The reliability card a :class:`~ragworkbook.evaluation.report.Report` carries for
        this judge and metric (see :func:`ragworkbook.evaluation.report.reliability_of`)."""
        card: dict[str, Any] = {"status": "measured", "judge": self.judge, "model": self.model,
                                "metric": self.metric,
                                "dataset": self.dataset, "n": self.n, "failures": self.failures}
        for key in ("kappa", "agreement", "pairwise_accuracy"):
            if key in self.stats:
                card[key] = _jsonable(self.stats[key])
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
        if "pairwise_accuracy" in s:
            pa = s["pairwise_accuracy"]
            lines.append(f"pairwise accuracy (a tie counts half; chance 0.500): {_est(pa)}"
                         f"   wins {pa.wins}, ties {pa.ties}, losses {pa.losses}"
                         + (f" (on {pa.n} pairs both annotators decide alike)" if self.metric == "pairwise"
                            else ""))
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
        return "\n".join(lines)

    def _format_binary(self) -> list[str]:
        s = self.stats
        base = s["majority_baseline"]
        return [f"binary verdicts (judged good when {self.metric} >= {self.settings['threshold']:g}; "
                f"{s['kappa'].n} items):",
                f"   raw agreement {_est(s['agreement'])}   Cohen's kappa {_est(s['kappa'])}",
                f"   TPR (good judged good) {_est(s['tpr'])}   TNR (bad judged bad) {_est(s['tnr'])}",
                f"   majority-class baseline: always {base['label']} -> agreement {base['agreement']:.3f}, "
                "kappa 0"]

    def _format_pairwise(self) -> list[str]:
        s = self.stats
        base = s["majority_baseline"]
        pb = s["position_bias"]
        return [f"verdicts: {s['verdict_counts']}",
                f"agreement with the annotators (pooled; inconsistent = disagreement): {_est(s['agreement'])}"
                f"   kappa {_est(s['kappa'])}",
                f"   annotator 1: agreement {_est(s['agreement_annotator1'])}, kappa "
                f"{_est(s['kappa_annotator1'])}"
                f";  annotator 2: agreement {_est(s['agreement_annotator2'])}, "
                f"kappa {_est(s['kappa_annotator2'])}",
                "ceiling, annotator 1 vs annotator 2 on these pairs: agreement "
                f"{_est(s['annotator_agreement'])}"
                f", kappa {_est(s['annotator_kappa'])}",
                f"majority-class baseline: always {base['label']} -> agreement "
                f"{base['agreement']:.3f}, kappa 0",
                f"position bias: chose the answer shown first in {pb['first']} of {pb['decisive']} decisive "
                f"verdicts = {_est(pb['rate'])} (no bias: 0.500)",
                f"inconsistent (verdict flips with the order): {_est(s['inconsistent_rate'])}",
                f"win rate of B (second system) over A: judge {_est(s['win_rate_judge'])}; "
                f"annotators {_est(s['win_rate_annotators'])}"]


def _est(e: Any) -> str:
    if e is None:
        return "n/a"
    if isinstance(e, Estimate) or hasattr(e, "low"):
        if math.isnan(e.value):
            return "n/a"
        if math.isnan(e.low):
            return f"{e.value:.3f} [n/a]"
        return f"{e.value:.3f} [{e.low:.3f}, {e.high:.3f}]"
    return f"{float(e):.3f}"


def _jsonable(v: Any) -> Any:
    if isinstance(v, _PairwiseAccuracyEstimate):
        return {**v.estimate.to_dict(), "wins": v.wins, "ties": v.ties, "losses": v.losses,
                "tie_value": v.tie_value}
    if isinstance(v, Estimate):
        return v.to_dict()
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


@dataclass(frozen=True)
class _PairwiseAccuracyEstimate:
    """A pairwise accuracy with its counts (prints and serialises like an Estimate plus counts)."""

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


# --------------------------------------------------------------------------------------------
# statistics helpers
# --------------------------------------------------------------------------------------------
def _rate(flags: Sequence[bool], n_resamples: int, seed: int) -> Estimate:
    arr = np.asarray([float(f) for f in flags])
    return bootstrap_statistic(lambda idx: float(arr[idx].mean()), len(arr), n_resamples=n_resamples,
                               seed=seed)


def _credit_estimate(credit: Sequence[float], counts: tuple[int, int, int], tie_value: float,
                     n_resamples: int, seed: int) -> _PairwiseAccuracyEstimate:
    est = _rate(credit, n_resamples, seed)  # type: ignore[arg-type]
    return _PairwiseAccuracyEstimate(est, *counts, tie_value)


def _agreement_estimate(pairs: Sequence[tuple[Any, Any]], n_resamples: int, seed: int,
                        groups: Sequence[int] | None = None) -> Estimate:
    """Raw agreement over label pairs; with ``groups``, resample whole groups (a pair of answers)."""
    same = np.asarray([float(a == b) for a, b in pairs])
    if groups is None:
        return _rate(same.astype(bool).tolist(), n_resamples, seed)
    idx_of = _group_index(groups)
    return bootstrap_statistic(lambda g: float(same[np.concatenate([idx_of[i] for i in g])].mean()),
                               len(idx_of), n_resamples=n_resamples, seed=seed)


def _group_index(groups: Sequence[int]) -> list[np.ndarray]:
    order: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        order.setdefault(g, []).append(i)
    return [np.asarray(v) for v in order.values()]


def _kappa_estimate(pairs: Sequence[tuple[Any, Any]], labels: Sequence[Any], n_resamples: int, seed: int,
                    groups: Sequence[int] | None = None) -> Estimate:
    from ragworkbook.stats.agreement import cohen_kappa

    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    idx_of = _group_index(groups) if groups is not None else [np.asarray([i]) for i in range(len(a))]

    def stat(g: np.ndarray) -> float | None:
        idx = np.concatenate([idx_of[i] for i in g]) if len(g) else np.asarray([], dtype=int)
        sa, sb = [a[i] for i in idx], [b[i] for i in idx]
        if not sa or (len(set(sa)) == 1 and set(sa) == set(sb)):
            return None  # 0/0: both raters used one and the same label
        return cohen_kappa(sa, sb, labels=labels)

    return bootstrap_statistic(stat, len(idx_of), n_resamples=n_resamples, seed=seed)


# --------------------------------------------------------------------------------------------
# WikiEval
# --------------------------------------------------------------------------------------------
def _wikieval_samples(spec: DatasetSpec, pairs: Sequence[Any]) -> list[Any]:
    from ragworkbook.judging.results import JudgeSample

    out = []
    for p in pairs:
        for which, it in (("good", p.good), ("bad", p.bad)):
            out.append(JudgeSample(question=p.question, answer=it.answer or "",
                                   contexts=[it.context] if it.context is not None else [],
                                   sample_id=f"{p.id}-{which}"))
    return out


def _judge_samples(samples: Sequence[Any], judge: Judge, metric: str, progress: bool) -> list[Any]:
    from ragworkbook.judging.metrics import evaluate_judged

    return evaluate_judged(samples, judge, [metric], progress=progress).results[metric]


def _repeat_judges(judge: Judge, repeats: int, temperature: float) -> list[Judge]:
    return [Judge(judge.generator, options={**judge.options, "temperature": temperature, "seed": seed},
                  max_concurrency=judge.max_concurrency, timeout=judge.timeout, system=judge.system)
            for seed in range(1, repeats + 1)]


def _check_wikieval(spec: DatasetSpec, judge: Judge, limit: int | None, threshold: float, repeats: int,
                    temperature: float, consistency_items: int, progress: bool, n_resamples: int,
                    seed: int) -> JudgeCheck:
    from ragworkbook.judging.datasets import load_wikieval
    from ragworkbook.stats.agreement import binary_rates, majority_baseline

    assert spec.wikieval_set is not None
    data = load_wikieval(spec.wikieval_set)
    pairs = data.pairs[:limit] if limit else list(data.pairs)
    samples = _wikieval_samples(spec, pairs)
    results = _judge_samples(samples, judge, spec.metric, progress)
    by_id = {r.sample_id: r for r in results}
    failures = sum(r.outcome == FAILED for r in results)
    undefined = sum(r.outcome == UNDEFINED for r in results)

    detail, credit, counts = [], [], [0, 0, 0]
    item_pairs: list[tuple[int, int]] = []  # (label, verdict) for items with a score
    for p in pairs:
        g, b = by_id[f"{p.id}-good"], by_id[f"{p.id}-bad"]
        detail.append({"id": p.id, "good": g.score, "bad": b.score, "good_outcome": g.outcome,
                       "bad_outcome": b.outcome, "good_reason": g.reason, "bad_reason": b.reason})
        for label, r in ((1, g), (0, b)):
            if r.outcome == SCORED:
                item_pairs.append((label, int(float(r.score) >= threshold)))
        if g.outcome == SCORED and b.outcome == SCORED:
            if g.score > b.score:
                credit.append(1.0)
                counts[0] += 1
            elif g.score < b.score:
                credit.append(0.0)
                counts[2] += 1
            else:
                credit.append(0.5)
                counts[1] += 1
    stats: dict[str, Any] = {
        "parse_failure_rate": _rate([r.outcome == FAILED for r in results], n_resamples, seed)}
    stats["pairwise_accuracy"] = _credit_estimate(credit, (counts[0], counts[1], counts[2]), 0.5, n_resamples,
                                                  seed)
    stats["agreement"] = _agreement_estimate(item_pairs, n_resamples, seed)
    stats["kappa"] = _kappa_estimate(item_pairs, [0, 1], n_resamples, seed)
    labels = [y for y, _ in item_pairs]
    verdicts = [v for _, v in item_pairs]
    pos = [v for y, v in item_pairs if y == 1]
    neg = [1 - v for y, v in item_pairs if y == 0]
    stats["tpr"] = _rate([bool(v) for v in pos], n_resamples, seed)
    stats["tnr"] = _rate([bool(v) for v in neg], n_resamples, seed)
    if item_pairs:
        rates = binary_rates(labels, verdicts)
        assert stats["tpr"].n == rates.tp + rates.fn and stats["tnr"].n == rates.tn + rates.fp
        label, agree = majority_baseline(labels)
        stats["majority_baseline"] = {"label": label, "agreement": agree, "kappa": 0.0}
    else:
        stats["majority_baseline"] = {"label": None, "agreement": float("nan"), "kappa": 0.0}

    k = min(consistency_items, len(pairs))
    if repeats >= 2 and k:
        sub = samples[: 2 * k]
        runs = [_judge_samples(sub, j, spec.metric, progress)
                for j in _repeat_judges(judge, repeats, temperature)]
        flips, failed = [], 0
        for i in range(len(sub)):
            outs = [run[i] for run in runs]
            failed += sum(o.outcome != SCORED for o in outs)
            if all(o.outcome == SCORED for o in outs):
                flips.append(len({int(float(o.score) >= threshold) for o in outs}) > 1)
        stats["self_consistency"] = {"repeats": repeats, "temperature": temperature, "pairs": k,
                                     "compared": len(flips), "failed": failed,
                                     "flip_rate": _rate(flips, n_resamples, seed)}
    return JudgeCheck(
        dataset=spec.name, metric=spec.metric, judge=judge_name(judge), n=len(pairs), n_available=len(data),
        failures=failures, judgments=len(results), undefined=undefined, stats=stats, pairs=detail,
        settings={"limit": limit, "threshold": threshold, "ties": "half", "repeats": repeats,
                  "temperature": temperature, "consistency_items": k, "n_resamples": n_resamples,
                  "seed": seed},
        documented=spec.documented, description=spec.description, model=judge.generator.model)


# --------------------------------------------------------------------------------------------
# RAGChecker pairs
# --------------------------------------------------------------------------------------------
def _sign(x: int) -> str:
    return "B" if x > 0 else "A" if x < 0 else "tie"


def _pairwise_inputs(pairs: Sequence[Any]) -> list[dict[str, Any]]:
    return [{"question": p.query, "answer_a": p.answer1, "answer_b": p.answer2, "reference": p.reference,
             "pair_id": p.id} for p in pairs]


def _check_ragchecker(spec: DatasetSpec, judge: Judge, limit: int | None, aspect: str, repeats: int,
                      temperature: float, consistency_items: int, progress: bool, n_resamples: int,
                      seed: int) -> JudgeCheck:
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
    verdict_labels = ["A", "tie", "B", "inconsistent"]

    h1 = [_sign(p.labels[aspect][0]) for p in pairs]
    h2 = [_sign(p.labels[aspect][1]) for p in pairs]
    j = [r.verdict for r in results]  # None = failed
    ok = [i for i, v in enumerate(j) if v is not None]
    pooled = [(h1[i], j[i]) for i in ok] + [(h2[i], j[i]) for i in ok]
    groups = list(range(len(ok))) * 2
    stats: dict[str, Any] = {"parse_failure_rate": _rate([not c.ok for c in calls], n_resamples, seed)}
    # pairs both annotators decide the same way: the RAGAS-style pairwise accuracy
    credit, counts = [], [0, 0, 0]
    for i in ok:
        if h1[i] == h2[i] and h1[i] != "tie":
            if j[i] == h1[i]:
                credit.append(1.0)
                counts[0] += 1
            elif j[i] == "tie":
                credit.append(0.5)
                counts[1] += 1
            else:
                credit.append(0.0)
                counts[2] += 1
    stats["pairwise_accuracy"] = _credit_estimate(credit, (counts[0], counts[1], counts[2]), 0.5, n_resamples,
                                                  seed)
    stats["agreement"] = _agreement_estimate(pooled, n_resamples, seed, groups)
    stats["kappa"] = _kappa_estimate(pooled, verdict_labels, n_resamples, seed, groups)
    for k, h in (("1", h1), ("2", h2)):
        pp = [(h[i], j[i]) for i in ok]
        stats[f"agreement_annotator{k}"] = _agreement_estimate(pp, n_resamples, seed)
        stats[f"kappa_annotator{k}"] = _kappa_estimate(pp, verdict_labels, n_resamples, seed)
    ann = list(zip(h1, h2, strict=True))
    stats["annotator_agreement"] = _agreement_estimate(ann, n_resamples, seed)
    stats["annotator_kappa"] = _kappa_estimate(ann, ["A", "tie", "B"], n_resamples, seed)
    label, agree = majority_baseline(h1 + h2)
    stats["majority_baseline"] = {"label": label, "agreement": agree, "kappa": 0.0}
    stats["verdict_counts"] = {v: sum(x == v for x in j) for v in verdict_labels} | {
        "failed": sum(x is None for x in j)}

    chosen = [r.first_shown_chosen for r in results]
    flat = np.asarray([c for cs in chosen for c in cs], dtype=float)
    owner = np.asarray([i for i, cs in enumerate(chosen) for _ in cs])
    idx_of = [np.flatnonzero(owner == i) for i in range(len(results))]

    def pos_rate(g: np.ndarray) -> float | None:
        idx = np.concatenate([idx_of[i] for i in g]) if len(g) else np.asarray([], dtype=int)
        return float(flat[idx].mean()) if idx.size else None

    stats["position_bias"] = {"first": int(flat.sum()), "decisive": int(flat.size),
                              "rate": bootstrap_statistic(pos_rate, len(results), n_resamples=n_resamples,
                                                          seed=seed)}
    stats["inconsistent_rate"] = _rate([j[i] == "inconsistent" for i in ok], n_resamples, seed)
    decisive = [float(v == "B") for v in j if v in ("A", "B")]
    stats["win_rate_judge"] = _rate([bool(x) for x in decisive], n_resamples, seed)
    ann_dec = [(h1[i] == "B", h1[i] in ("A", "B"), h2[i] == "B", h2[i] in ("A", "B"))
               for i in range(len(pairs))]

    def ann_win(g: np.ndarray) -> float | None:
        wins = sum(ann_dec[i][0] + ann_dec[i][2] for i in g)
        dec = sum(ann_dec[i][1] + ann_dec[i][3] for i in g)
        return wins / dec if dec else None

    stats["win_rate_annotators"] = bootstrap_statistic(ann_win, len(pairs), n_resamples=n_resamples,
                                                       seed=seed)

    detail = [{"id": p.id, "dataset": p.dataset, "forward": r.forward, "backward": r.backward,
               "verdict": r.verdict, "outcome": r.outcome, "annotators": [h1[i], h2[i]],
               "labels": list(p.labels[aspect])} for i, (p, r) in enumerate(zip(pairs, results, strict=True))]

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
                                     "compared": len(flips), "failed": failed,
                                     "flip_rate": _rate(flips, n_resamples, seed)}
    return JudgeCheck(
        dataset=spec.name, metric="pairwise", judge=judge_name(judge), n=len(pairs), n_available=len(data),
        failures=failures, judgments=len(results), stats=stats, pairs=detail,
        settings={"limit": limit, "aspect": aspect, "order": "round-robin over the source data sets",
                  "repeats": repeats, "temperature": temperature, "consistency_items": k,
                  "n_resamples": n_resamples, "seed": seed},
        documented=None, description=spec.description + f" (aspect: {aspect})", model=judge.generator.model)


def judge_check(dataset: str, judge: Judge, *, limit: int | None | str = "default",
                threshold: float | None = None, aspect: str = "overall", repeats: int = 2,
                temperature: float = 0.8, consistency_items: int | None = None, progress: bool = False,
                n_resamples: int = 2000, seed: int = 0) -> JudgeCheck:
    """Measure ``judge`` on a human-labelled data set (see the module docstring).

    ``limit``: pairs to judge (``"default"``: the data set's default; None or 0: all);
    ``threshold``: score at or above which a WikiEval item is judged good (default: the
    data set's); ``aspect``: which RAGChecker label to compare with; ``repeats`` and
    ``temperature``: the self-consistency runs (``repeats < 2``: none), on the first
    ``consistency_items`` pairs (default: the data set's).
    """
    spec = resolve_dataset(dataset)
    if limit == "default":
        limit = spec.default_limit
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative number of pairs (0 = all), got {limit!r}")
    limit = limit or None
    if repeats < 0:
        raise ValueError(f"repeats must be >= 0, got {repeats}")
    if not temperature > 0 and repeats >= 2:
        raise ValueError(f"self-consistency needs a temperature above 0 (got {temperature}): at temperature "
                         "0 the repeats are identical by construction")
    k = spec.consistency_items if consistency_items is None else consistency_items
    run: Callable[..., JudgeCheck]
    if spec.source == "wikieval":
        th = spec.threshold if threshold is None else float(threshold)
        return _check_wikieval(spec, judge, limit, float(th), repeats, temperature, k, progress, n_resamples,
                               seed)
    run = _check_ragchecker
    return run(spec, judge, limit, aspect, repeats, temperature, k, progress, n_resamples, seed)
