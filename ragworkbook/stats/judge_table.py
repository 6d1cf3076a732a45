"""A judge against people's labels, as one table, and every agreement figure from it in one call.

:class:`JudgeTable` holds what a meta-evaluation observed: one :class:`Rating` per (unit, rater)
with the people's label, the judge's verdict and a baseline's verdict; one :class:`PairChoice` per
pair with the people's, the judge's and a baseline's choice (credited 1 right, 0.5 cannot tell, 0
wrong); the verdicts of repeated runs (self-consistency); and named yes/no flags (failed calls, ...).
:func:`judge_statistics` turns it into a :class:`JudgeStatistics`: pairwise accuracy, agreement,
Cohen's kappa, TPR / TNR, the majority-class baseline, the judge-minus-baseline difference, the flip
rate and each flag's rate, each with the interval that fits how its items were drawn:

- rates over independent items: Wilson score (:func:`~ragworkbook.stats.proportions.rate_of`);
- pairwise accuracy and kappa: percentile bootstrap over the units (``group``: the two items of a
  WikiEval question, the two annotators' labels of a RAGChecker pair, resampled together);
- agreement pooled over two or more raters: percentile bootstrap over the units as well;
- judge minus baseline: the interval that inverts a paired sign-flip test
  (:func:`~ragworkbook.stats.resampling.paired_test`).

From fewer than :data:`~ragworkbook.stats.resampling.MIN_ITEMS` items there is no number: "too few".
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragworkbook.stats.agreement import kappa_estimate, majority_baseline
from ragworkbook.stats.proportions import rate_of
from ragworkbook.stats.resampling import MIN_ITEMS, Estimate, bootstrap_statistic, paired_test, too_few

__all__ = ["Rating", "PairChoice", "JudgeTable", "SelfConsistency", "CreditEstimate", "Difference",
           "RaterAgreement", "JudgeStatistics", "judge_statistics", "N_SIGN_PATTERNS"]

#: Sign patterns of the paired sign-flip test behind the judge-minus-baseline interval (seed 0).
N_SIGN_PATTERNS = 10_000


@dataclass(frozen=True)
class Rating:
    """One labelled item: the unit it belongs to (``group``, resampled whole), who labelled it
    (``rater``), the people's ``label``, the judge's ``verdict`` (None: no verdict, e.g. a failed call)
    and a cheap ``baseline``'s verdict (None: none measured)."""

    group: Hashable
    label: Hashable
    verdict: Hashable | None
    rater: str = ""
    baseline: Hashable | None = None


@dataclass(frozen=True)
class PairChoice:
    """One pair of answers and which is better: the people's choice (``truth``), the judge's and a
    cheap baseline's (None: no verdict). A verdict in :attr:`JudgeTable.half` (a tie, an inconsistent
    verdict) earns half a pair, the truth a whole one, the other answer nothing."""

    group: Hashable
    truth: Hashable
    judge: Hashable | None
    baseline: Hashable | None = None

    @classmethod
    def from_scores(cls, group: Hashable, judge: tuple[float | None, float | None],
                    baseline: tuple[float | None, float | None] = (None, None)) -> PairChoice:
        """A good and a bad item scored by the judge and by the baseline: ``"good"`` when the good item
        scores higher, ``"bad"`` when lower, ``"tie"`` when equal, None when either has no score."""
        def choice(good: float | None, bad: float | None) -> str | None:
            if good is None or bad is None:
                return None
            return "good" if good > bad else "bad" if good < bad else "tie"

        return cls(group, "good", choice(*judge), choice(*baseline))


@dataclass(frozen=True)
class JudgeTable:
    """What a judge-check observed (see the module docstring).

    ``categories``: the label set, in order (kappa's categories; a verdict outside it, e.g. an
    "inconsistent" one, is no answer a rater could give and is left out of agreement and kappa);
    ``positive`` / ``negative``: for binary labels, the two classes TPR and TNR are measured on;
    ``half``: the pair verdicts that earn half a pair (cannot tell);
    ``repeats``: one tuple of verdicts per repeated run, item by item (None: failed), for the flip rate;
    ``flags``: named yes/no observations whose rates are reported (Wilson intervals);
    ``preference``: ``(first, second)`` labels whose "second wins" share among the raters' decisive
    labels is estimated (bootstrap over units).
    """

    ratings: tuple[Rating, ...]
    pairs: tuple[PairChoice, ...]
    categories: tuple[Hashable, ...]
    positive: Hashable | None = None
    negative: Hashable | None = None
    half: tuple[Hashable, ...] = ("tie", "inconsistent")
    repeats: tuple[tuple[Hashable | None, ...], ...] = ()
    flags: Mapping[str, Sequence[bool]] = field(default_factory=dict)
    preference: tuple[Hashable, Hashable] | None = None


@dataclass(frozen=True)
class CreditEstimate:
    """A pairwise accuracy with its counts (prints like its :class:`Estimate`): ``wins`` right,
    ``ties`` counted ``tie_value`` (half), ``losses`` wrong."""

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


@dataclass(frozen=True)
class Difference:
    """Judge minus baseline per pair: the mean difference with the interval that inverts the paired
    sign-flip test, its p-value and the verdict ("better", "worse", "not shown different", "too few")."""

    estimate: Estimate
    p_value: float
    verdict: str


@dataclass(frozen=True)
class RaterAgreement:
    """Agreement (a rate) and Cohen's kappa of one pair of raters."""

    agreement: Estimate
    kappa: Estimate


@dataclass(frozen=True)
class SelfConsistency:
    """Repeated runs: the items ``compared`` (a verdict in every repeat), the repeats that ``failed``,
    and the flip rate (the share of compared items whose verdict is not the same in every repeat)."""

    compared: int
    failed: int
    flip_rate: Estimate


@dataclass(frozen=True)
class JudgeStatistics:
    """Every figure :func:`judge_statistics` computes from a :class:`JudgeTable`; ``by_rater``,
    ``between_raters`` (the raters against each other: the ceiling), ``baseline`` (its agreement and
    kappa), ``tpr`` / ``tnr``, ``preference`` and ``self_consistency`` only when the table has what
    they need."""

    pairwise_accuracy: CreditEstimate
    baseline_accuracy: CreditEstimate
    difference: Difference
    agreement: Estimate
    kappa: Estimate
    majority_label: Hashable | None
    majority_agreement: float
    rates: dict[str, Estimate]
    tpr: Estimate | None = None
    tnr: Estimate | None = None
    by_rater: dict[str, RaterAgreement] = field(default_factory=dict)
    between_raters: RaterAgreement | None = None
    baseline: RaterAgreement | None = None
    preference: Estimate | None = None
    self_consistency: SelfConsistency | None = None


def judge_statistics(table: JudgeTable, *, n_resamples: int = 2000, seed: int = 0) -> JudgeStatistics:
    """Every agreement figure of a judge against labels, from one :class:`JudgeTable` (see the module
    docstring for each interval). Bootstraps use ``n_resamples`` and ``seed``; the sign-flip test
    :data:`N_SIGN_PATTERNS` patterns, seed 0."""
    raters = list(dict.fromkeys(r.rater for r in table.ratings))
    several = len(raters) > 1
    cats = set(table.categories)
    answered = [r for r in table.ratings if r.verdict is not None and r.verdict in cats]
    # pooled over raters rater by rater; a unit (``group``) is resampled whole
    answered.sort(key=lambda r: raters.index(r.rater))
    based = sorted((r for r in table.ratings if r.baseline is not None), key=lambda r: raters.index(r.rater))
    labels_of = {rater: [(r.label, r.verdict) for r in answered if r.rater == rater] for rater in raters}
    by_unit: dict[Hashable, dict[str, Hashable]] = {}
    for r in table.ratings:
        by_unit.setdefault(r.group, {})[r.rater] = r.label
    between = ([(u[raters[0]], u[raters[1]]) for u in by_unit.values() if raters[0] in u and raters[1] in u]
               if several else [])

    def credit(choice: Hashable | None, truth: Hashable) -> float | None:
        return (None if choice is None else 1.0 if choice == truth else 0.5 if choice in table.half
                else 0.0)

    judge_credit = [credit(p.judge, p.truth) for p in table.pairs]
    base_credit = [credit(p.baseline, p.truth) for p in table.pairs]
    judged = [c for c in judge_credit if c is not None]
    shared = [(j, b) for j, b in zip(judge_credit, base_credit, strict=True)
              if j is not None and b is not None]
    flips = [len(set(outs)) > 1 for outs in zip(*table.repeats, strict=True) if None not in outs]
    failed_repeats = sum(v is None for run in table.repeats for v in run)

    # kappa and the majority class (ragworkbook.stats.agreement)
    def kappa(pairs: Sequence[tuple[Hashable, Hashable]], groups: Sequence[Hashable] | None) -> Estimate:
        if not pairs:
            return too_few(0)
        return kappa_estimate([a for a, _ in pairs], [b for _, b in pairs], table.categories,
                              n_resamples=n_resamples, seed=seed, groups=groups,
                              unit="pairs" if groups is not None else "items")

    pooled = [(r.label, r.verdict) for r in answered]
    kappa_pooled = kappa(pooled, [r.group for r in answered])
    kappa_by_rater = {rater: kappa(pp, None) for rater, pp in labels_of.items()} if several else {}
    kappa_between = kappa(between, None) if several else None
    kappa_baseline = (kappa([(r.label, r.baseline) for r in based], [r.group for r in based]) if based
                      else None)
    majority_labels = [r.label for r in (table.ratings if several else answered)]
    majority = majority_baseline(majority_labels) if majority_labels else (None, math.nan)

    # pairwise accuracy, the baseline difference, pooled agreement (bootstrap / sign flips:
    # ragworkbook.stats.resampling)
    def credit_estimate(values: Sequence[float]) -> CreditEstimate:
        arr = np.asarray([float(v) for v in values])
        est = bootstrap_statistic(lambda idx: float(arr[idx].mean()), len(arr), n_resamples=n_resamples,
                                  seed=seed, unit="pairs")
        return CreditEstimate(est, sum(c == 1.0 for c in values), sum(c == 0.5 for c in values),
                              sum(c == 0.0 for c in values), 0.5)

    def grouped_agreement(pairs: Sequence[tuple[Hashable, Hashable]], groups: Sequence[Hashable]) -> Estimate:
        if not pairs:
            return too_few(0)
        same = np.asarray([float(a == b) for a, b in pairs])
        order: dict[Hashable, list[int]] = {}
        for i, g in enumerate(groups):
            order.setdefault(g, []).append(i)
        members = [np.asarray(v) for v in order.values()]
        est = bootstrap_statistic(lambda g: float(same[np.concatenate([members[i] for i in g])].mean()),
                                  len(members), n_resamples=n_resamples, seed=seed, unit="pairs")
        if est.too_few:
            return est
        return Estimate(est.value, est.low, est.high, len(pairs), est.confidence, est.n_resamples,
                        est.n_skipped, est.method + f", {len(members)} pairs of labels", est.note)

    method = f"inverted paired sign-flip test ({N_SIGN_PATTERNS} sign patterns, seed 0)"
    if len(shared) < MIN_ITEMS:
        difference = Difference(too_few(len(shared), method=method), math.nan, "too few")
    else:
        t = paired_test([j for j, _ in shared], [b for _, b in shared], n_resamples=N_SIGN_PATTERNS, seed=0)
        patterns = (f"all {t.n_resamples} sign patterns" if t.exact
                    else f"{t.n_resamples} random sign patterns, seed 0")
        difference = Difference(
            Estimate(t.mean_diff, t.ci_low, t.ci_high, len(shared), t.confidence, t.n_resamples,
                     method=f"inverted paired sign-flip test ({patterns})"),
            t.p_value, "better" if t.ci_low > 0 else "worse" if t.ci_high < 0 else "not shown different")
    preference = None
    if table.preference is not None:
        first, second = table.preference
        tallies: dict[Hashable, list[int]] = {}
        for r in table.ratings:
            tally = tallies.setdefault(r.group, [0, 0])
            tally[0] += r.label == second
            tally[1] += r.label in (first, second)
        units = list(tallies.values())
        preference = bootstrap_statistic(
            lambda idx: (sum(units[i][0] for i in idx) / d if (d := sum(units[i][1] for i in idx)) else None),
            len(units), n_resamples=n_resamples, seed=seed, unit="pairs")
    pairwise = credit_estimate(judged)  # type: ignore[arg-type]
    baseline_accuracy = credit_estimate([c for c in base_credit if c is not None])
    agreement_pooled = grouped_agreement(pooled, [r.group for r in answered]) if several else None
    agreement_baseline = (grouped_agreement([(r.label, r.baseline) for r in based], [r.group for r in based])
                          if several and based else None)

    # rates over independent items: Wilson (ragworkbook.stats.proportions)
    def rate(pairs: Sequence[tuple[Hashable, Hashable | None]]) -> Estimate:
        return rate_of([a == b for a, b in pairs])

    rates = {name: rate_of(list(flags)) for name, flags in table.flags.items()}
    return JudgeStatistics(
        pairwise_accuracy=pairwise, baseline_accuracy=baseline_accuracy, difference=difference,
        agreement=agreement_pooled if agreement_pooled is not None else rate(pooled), kappa=kappa_pooled,
        majority_label=majority[0], majority_agreement=majority[1], rates=rates,
        tpr=(rate_of([v == table.positive for y, v in pooled if y == table.positive])
             if table.positive is not None else None),
        tnr=(rate_of([v == table.negative for y, v in pooled if y == table.negative])
             if table.positive is not None else None),
        by_rater={rater: RaterAgreement(rate(pp), kappa_by_rater[rater]) for rater, pp in labels_of.items()}
        if several else {},
        between_raters=RaterAgreement(rate(between), kappa_between) if kappa_between is not None else None,
        baseline=(RaterAgreement(agreement_baseline if agreement_baseline is not None
                                 else rate([(r.label, r.baseline) for r in based]), kappa_baseline)
                  if kappa_baseline is not None else None),
        preference=preference,
        self_consistency=(SelfConsistency(len(flips), failed_repeats, rate_of(flips)) if table.repeats
                          else None))
