"""Agreement between raters: is the judge reliable?

An LLM judge is a rater like any other, so we measure it the way annotation
studies measure people: against a second rater (a human label set), with

- :func:`accuracy` - the fraction of items on which two raters give the same label;
- :func:`confusion_matrix` - counts of (rater A label, rater B label) pairs;
- :func:`cohen_kappa` - agreement corrected for the agreement two raters with the
  same label frequencies would reach by chance (Cohen 1960), optionally weighted
  (linear / quadratic) for ordinal labels; agrees with
  ``sklearn.metrics.cohen_kappa_score``;
- :func:`pairwise_preference` - win / tie / loss counts and the win rate when two
  systems are compared item by item;
- :func:`run_variance` - how much a score moves between repeated judge runs
  (different seeds) on the same items;
- :func:`kappa_standard_error` - the large-sample standard error of kappa (Fleiss,
  Cohen & Everitt 1969) and its normal interval, as ``statsmodels``'s
  ``cohens_kappa``; :func:`kappa_estimate` - kappa with a bootstrap interval;
- :func:`pairwise_accuracy` - the RAGAS paper's agreement on pairs: the share of
  pairs on which the item people preferred scores higher (ties count half);
- :func:`binary_rates` - true-positive and true-negative rates of a judge against
  binary labels; :func:`majority_baseline` - what always answering the most
  common label achieves.

Conventions (also stated per function): pairs where either label is ``None``
(a failed or undefined judgment) are dropped and counted, never silently
treated as a label; empty inputs raise ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ragworkbook.stats.resampling import Estimate

__all__ = [
    "PairedLabels",
    "paired_labels",
    "accuracy",
    "confusion_matrix",
    "cohen_kappa",
    "KAPPA_BANDS",
    "kappa_interpretation",
    "Preference",
    "pairwise_preference",
    "RunVariance",
    "run_variance",
    "kappa_standard_error",
    "kappa_estimate",
    "PairwiseAccuracy",
    "pairwise_accuracy",
    "pairwise_accuracy_estimate",
    "BinaryRates",
    "binary_rates",
    "majority_baseline",
]


@dataclass(frozen=True)
class PairedLabels:
    """Two raters' labels on the same items, with the items one of them did not label removed.

    ``n_dropped`` counts the positions where either label was ``None``;
    ``dropped_index`` lists them.
    """

    a: list[Hashable]
    b: list[Hashable]
    n_dropped: int = 0
    dropped_index: list[int] = field(default_factory=list)


def paired_labels(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> PairedLabels:
    """Align two label sequences, dropping positions where either is ``None``.

    Raises ``ValueError`` when the lengths differ (the labels must be for the same items).
    """
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        raise TypeError("labels must be sequences of labels, not a single string")
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(
            f"the two raters labelled different numbers of items ({len(a)} vs {len(b)}); "
            "pass labels for the same items in the same order"
        )
    keep_a, keep_b, dropped = [], [], []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x is None or y is None or (isinstance(x, float) and math.isnan(x)) or (
            isinstance(y, float) and math.isnan(y)
        ):
            dropped.append(i)
            continue
        keep_a.append(x)
        keep_b.append(y)
    return PairedLabels(keep_a, keep_b, len(dropped), dropped)


def _pairs(a, b) -> PairedLabels:
    p = paired_labels(a, b)
    if not p.a:
        raise ValueError(
            "no item has a label from both raters (empty input, or every judgment failed); "
            "agreement is undefined"
        )
    return p


def accuracy(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> float:
    """Observed agreement: the fraction of items with the same label from both raters.

    Items where either label is ``None`` are dropped first (see :func:`paired_labels`).
    """
    p = _pairs(a, b)
    return float(np.mean([x == y for x, y in zip(p.a, p.b, strict=True)]))


def confusion_matrix(
    a: Sequence[Hashable | None],
    b: Sequence[Hashable | None],
    labels: Sequence[Hashable] | None = None,
) -> tuple[np.ndarray, list[Hashable]]:
    """Counts ``C[i, j]`` of items rater ``a`` labelled ``labels[i]`` and rater ``b`` ``labels[j]``.

    ``labels`` defaults to the sorted union of the labels seen (as in
    ``sklearn.metrics.confusion_matrix``); returns ``(C, labels)``. A label outside
    ``labels`` raises ``ValueError``.
    """
    p = _pairs(a, b)
    if labels is None:
        labels = sorted(set(p.a) | set(p.b), key=lambda v: (str(type(v)), v))
    labels = list(labels)
    index = {lab: i for i, lab in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for x, y in zip(p.a, p.b, strict=True):
        if x not in index or y not in index:
            raise ValueError(f"label {x if x not in index else y!r} is not in labels={labels!r}")
        m[index[x], index[y]] += 1
    return m, labels


def cohen_kappa(
    a: Sequence[Hashable | None],
    b: Sequence[Hashable | None],
    labels: Sequence[Hashable] | None = None,
    weights: str | None = None,
) -> float:
    """Cohen's kappa: ``(p_o - p_e) / (1 - p_e)``.

    ``p_o`` is the observed agreement and ``p_e`` the agreement expected by chance
    from each rater's own label frequencies (the product of the marginals). With
    ``weights="linear"`` or ``"quadratic"`` disagreements are weighted by
    ``|i - j|`` or ``(i - j)**2`` over the positions in ``labels`` (ordinal labels),
    as in ``sklearn.metrics.cohen_kappa_score``.

    Edge cases: items with a ``None`` label are dropped. When chance agreement is
    already perfect (both raters used one and the same label for everything) the
    ratio is 0/0; we return 1.0 (the raters then agree on every item), where
    scikit-learn and statsmodels both return NaN. A kappa of 0 means "no better
    than chance", negative means worse than chance.
    """
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    m, labels = confusion_matrix(a, b, labels)
    n = m.sum()
    k = len(labels)
    if weights is None:
        w = 1.0 - np.eye(k)
    else:
        idx = np.arange(k)
        diff = np.abs(idx[:, None] - idx[None, :]).astype(float)
        w = diff if weights == "linear" else diff**2
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / n
    observed_dis = float((w * m).sum())
    expected_dis = float((w * expected).sum())
    if expected_dis == 0.0:
        return 1.0 if observed_dis == 0.0 else 0.0
    return 1.0 - observed_dis / expected_dis


#: The one vocabulary for agreement in the package: Landis & Koch's (1977) bands for Cohen's kappa,
#: ``(upper bound, name)``; below 0 is "poor (worse than chance)", above 0.80 "almost perfect". A
#: kappa *above* 0.60 is "substantial": the judge reliability gate's threshold
#: (:data:`ragworkbook.judging.check.RELIABILITY_MIN_KAPPA`) is that band's lower edge.
KAPPA_BANDS: tuple[tuple[float, str], ...] = ((0.20, "slight"), (0.40, "fair"), (0.60, "moderate"),
                                              (0.80, "substantial"))


def kappa_interpretation(kappa: float) -> str:
    """The Landis & Koch (1977) band of a kappa value (:data:`KAPPA_BANDS`; a convention, not a test)."""
    if kappa is None or math.isnan(kappa):
        raise ValueError("kappa is undefined (NaN/None): there is nothing to interpret")
    if kappa < 0:
        return "poor (worse than chance)"
    for bound, name in KAPPA_BANDS:
        if kappa <= bound:
            return name
    return "almost perfect"


@dataclass(frozen=True)
class Preference:
    """Pairwise comparison of system A against system B over the same items.

    ``win_rate`` = wins / (wins + losses) (ties excluded; None when every item ties);
    ``win_rate_ties_half`` = (wins + ties / 2) / n (the usual arena convention).
    ``n_dropped`` items had no score for one of the systems.
    """

    wins: int
    ties: int
    losses: int
    n: int
    win_rate: float | None
    win_rate_ties_half: float
    n_dropped: int = 0


def pairwise_preference(
    scores_a: Sequence[float | None] | None = None,
    scores_b: Sequence[float | None] | None = None,
    *,
    preferences: Sequence[str | None] | None = None,
    tie_tolerance: float = 0.0,
) -> Preference:
    """Win / tie / loss of A over B, item by item.

    Give either two score lists (A wins an item when ``a - b > tie_tolerance``, loses
    when ``b - a > tie_tolerance``, ties otherwise) or ``preferences``: a list of
    ``"A"``, ``"B"`` or ``"tie"`` verdicts (from a human or a pairwise judge).
    ``None`` entries are dropped and counted in ``n_dropped``.
    """
    if preferences is not None:
        if scores_a is not None or scores_b is not None:
            raise ValueError("give either scores_a/scores_b or preferences, not both")
        prefs = list(preferences)
        bad = [p for p in prefs if p is not None and p not in ("A", "B", "tie")]
        if bad:
            raise ValueError(f"preferences must be 'A', 'B', 'tie' or None, got {bad[0]!r}")
        kept = [p for p in prefs if p is not None]
        wins, losses, ties = kept.count("A"), kept.count("B"), kept.count("tie")
        dropped = len(prefs) - len(kept)
    else:
        if scores_a is None or scores_b is None:
            raise ValueError("give scores_a and scores_b (or preferences=...)")
        if tie_tolerance < 0:
            raise ValueError(f"tie_tolerance must be >= 0, got {tie_tolerance}")
        p = paired_labels(scores_a, scores_b)
        diffs = np.asarray(p.a, dtype=float) - np.asarray(p.b, dtype=float)
        wins = int((diffs > tie_tolerance).sum())
        losses = int((diffs < -tie_tolerance).sum())
        ties = len(diffs) - wins - losses
        dropped = p.n_dropped
    n = wins + ties + losses
    if n == 0:
        raise ValueError("no item was scored for both systems: a preference is undefined")
    decisive = wins + losses
    return Preference(
        wins=wins, ties=ties, losses=losses, n=n,
        win_rate=wins / decisive if decisive else None,
        win_rate_ties_half=(wins + ties / 2) / n,
        n_dropped=dropped,
    )


@dataclass(frozen=True)
class RunVariance:
    """Run-to-run spread of a judge's scores over repeated runs on the same items.

    ``run_means`` is each run's mean over the items it scored; ``mean`` and ``std``
    (sample, ddof=1; 0.0 for one run) summarise them. ``item_std`` is the mean over
    items of the per-item standard deviation across runs (ddof=1, items scored in
    at least two runs). ``flip_rate`` is the fraction of items whose score is not the
    same in every run (items scored in at least two runs). ``n_failed`` counts
    ``None`` scores.
    """

    n_runs: int
    n_items: int
    run_means: list[float]
    mean: float
    std: float
    item_std: float
    flip_rate: float
    n_failed: int


def run_variance(runs: Sequence[Sequence[float | None]]) -> RunVariance:
    """Summarise several runs (one list of per-item scores per run, same item order).

    ``None`` marks a failed judgment: it is left out of that run's mean and counted.
    """
    runs = [list(r) for r in runs]
    if not runs:
        raise ValueError("run_variance needs at least one run")
    n_items = len(runs[0])
    if any(len(r) != n_items for r in runs):
        raise ValueError("every run must score the same items (lists of equal length)")
    if n_items == 0:
        raise ValueError("the runs are empty")
    arr = np.array([[np.nan if v is None else float(v) for v in r] for r in runs], dtype=float)
    n_failed = int(np.isnan(arr).sum())
    run_means = []
    for row in arr:
        ok = row[~np.isnan(row)]
        if ok.size == 0:
            raise ValueError("a run has no scored item (every judgment failed)")
        run_means.append(float(ok.mean()))
    rm = np.array(run_means)
    item_stds, flips = [], []
    for col in arr.T:
        ok = col[~np.isnan(col)]
        if ok.size >= 2:
            item_stds.append(float(ok.std(ddof=1)))
            flips.append(bool(np.ptp(ok) > 0))
    return RunVariance(
        n_runs=len(runs), n_items=n_items, run_means=run_means, mean=float(rm.mean()),
        std=float(rm.std(ddof=1)) if len(rm) > 1 else 0.0,
        item_std=float(np.mean(item_stds)) if item_stds else 0.0,
        flip_rate=float(np.mean(flips)) if flips else 0.0,
        n_failed=n_failed,
    )


# --- intervals for kappa -----------------------------------------------------------------------
def kappa_standard_error(a: Sequence[Hashable | None], b: Sequence[Hashable | None],
                         labels: Sequence[Hashable] | None = None,
                         confidence: float = 0.95) -> tuple[float, float, float, float]:
    """Unweighted kappa with its large-sample standard error and normal interval.

    Returns ``(kappa, se, low, high)``. The variance is Fleiss, Cohen & Everitt's
    (1969) for proportions ``p_ij`` of the confusion table with marginals ``r_i``,
    ``c_j``, observed agreement ``p_o`` and chance agreement ``p_e``::

        var = [ sum_i p_ii (1 - (r_i + c_i)(1 - k))^2
              + (1 - k)^2 sum_{i != j} p_ij (c_i + r_j)^2
              - (k - p_e (1 - k))^2 ] / ((1 - p_e)^2 n)

    the formula ``statsmodels.stats.inter_rater.cohens_kappa`` uses (its ``std_kappa``,
    ``kappa_low``, ``kappa_upp``). The interval is ``kappa -/+ z se`` (not clipped to
    [-1, 1]). Undefined (NaN) when chance agreement is 1.
    """
    from scipy.stats import norm

    m, _ = confusion_matrix(a, b, labels)
    n = float(m.sum())
    p = m / n
    r, c = p.sum(axis=1), p.sum(axis=0)
    p_o, p_e = float(np.trace(p)), float(r @ c)
    nan = float("nan")
    if p_e >= 1.0:
        return nan, nan, nan, nan
    k = (p_o - p_e) / (1 - p_e)
    diag = np.diag(p)
    term_a = float(np.sum(diag * (1 - (r + c) * (1 - k)) ** 2))
    off = p.copy()
    np.fill_diagonal(off, 0.0)
    term_b = (1 - k) ** 2 * float(np.sum(off * (c[:, None] + r[None, :]) ** 2))
    term_c = (k - p_e * (1 - k)) ** 2
    var = max(0.0, (term_a + term_b - term_c) / ((1 - p_e) ** 2 * n))
    se = math.sqrt(var)
    z = float(norm.ppf(0.5 + confidence / 2))
    return k, se, k - z * se, k + z * se


def kappa_estimate(a: Sequence[Hashable | None], b: Sequence[Hashable | None],
                   labels: Sequence[Hashable] | None = None, *, confidence: float = 0.95,
                   n_resamples: int = 2000, seed: int = 0, groups: Sequence[Hashable] | None = None,
                   unit: str = "items") -> Estimate:
    """Cohen's kappa of two raters with a percentile bootstrap interval.

    Items where either label is None are dropped first (``n`` counts the rest).
    ``labels`` fixes the label set (pass it: a resample may miss a label). ``groups``
    (one key per item) resamples whole groups instead of items: the two items of one
    WikiEval question, the two annotators' labels of one pair; ``unit`` names what is
    resampled in the estimate's ``method``. A resample on which both raters use one and
    the same single label has kappa 0/0 and is skipped (counted in ``n_skipped``), rather
    than taken as 1.0. Fewer than 5 items (groups): "too few".
    """
    from ragworkbook.stats.resampling import bootstrap_statistic

    if groups is not None and len(groups) != len(a):
        raise ValueError(f"groups must give one key per item ({len(groups)} keys for {len(a)} items)")
    p = paired_labels(a, b)
    xa, xb = np.asarray(p.a, dtype=object), np.asarray(p.b, dtype=object)
    labs = (list(labels) if labels is not None
            else sorted(set(p.a) | set(p.b), key=lambda v: (str(type(v)), v)))
    if groups is None:
        members = [np.asarray([i]) for i in range(len(p.a))]
    else:
        dropped = set(p.dropped_index)
        kept = [g for i, g in enumerate(groups) if i not in dropped]
        order: dict[Hashable, list[int]] = {}
        for i, g in enumerate(kept):
            order.setdefault(g, []).append(i)
        members = [np.asarray(v) for v in order.values()]

    def stat(idx: np.ndarray) -> float | None:
        items = np.concatenate([members[i] for i in idx]) if len(idx) else np.asarray([], dtype=int)
        sa, sb = xa[items].tolist(), xb[items].tolist()
        if not sa or (len(set(sa)) == 1 and set(sa) == set(sb)):
            return None
        return cohen_kappa(sa, sb, labels=labs)

    return bootstrap_statistic(stat, len(members), confidence=confidence, n_resamples=n_resamples, seed=seed,
                               unit=unit)


# --- pairs: the RAGAS paper's agreement -----------------------------------------------------------
@dataclass(frozen=True)
class PairwiseAccuracy:
    """Agreement of a metric with people's preference on pairs (good item vs bad item).

    ``accuracy = (wins + ties * tie_value) / n`` where a *win* is a pair whose preferred
    item scored higher, a *loss* one where it scored lower, a *tie* equal scores;
    ``tie_value`` is 0.5 by default (a tie is a coin flip: a metric that gives every
    item the same score gets 0.5, the chance level), 0 with ``ties="loss"``.
    ``n_dropped`` pairs had no score for one of the items (failed or undefined).
    """

    accuracy: float
    wins: int
    ties: int
    losses: int
    n: int
    tie_value: float
    n_dropped: int = 0


_TIE_VALUES = {"half": 0.5, "loss": 0.0}


def pairwise_accuracy(good: Sequence[float | None], bad: Sequence[float | None], *,
                      ties: str = "half") -> PairwiseAccuracy:
    """The share of pairs on which the item people preferred (``good[i]``) scores higher than
    the other (``bad[i]``): the agreement the RAGAS paper reports on WikiEval.

    ``ties="half"`` (default) counts a tie as half a pair, ``"loss"`` as a disagreement.
    Pairs with a None score are dropped and counted. No pair left: ValueError.
    """
    if ties not in _TIE_VALUES:
        raise ValueError(f"ties must be 'half' or 'loss', got {ties!r}")
    p = paired_labels(good, bad)
    if not p.a:
        raise ValueError("no pair has a score for both items: a pairwise accuracy is undefined")
    g, b = np.asarray(p.a, dtype=float), np.asarray(p.b, dtype=float)
    wins, losses = int((g > b).sum()), int((g < b).sum())
    n = len(g)
    tv = _TIE_VALUES[ties]
    t = n - wins - losses
    return PairwiseAccuracy((wins + tv * t) / n, wins, t, losses, n, tv, p.n_dropped)


def pairwise_accuracy_estimate(good: Sequence[float | None], bad: Sequence[float | None], *,
                               ties: str = "half", confidence: float = 0.95, n_resamples: int = 2000,
                               seed: int = 0) -> Estimate:
    """:func:`pairwise_accuracy` with a percentile bootstrap interval over the pairs ("too few"
    below 5 pairs)."""
    from ragworkbook.stats.resampling import bootstrap_statistic

    pa = pairwise_accuracy(good, bad, ties=ties)
    p = paired_labels(good, bad)
    g, b = np.asarray(p.a, dtype=float), np.asarray(p.b, dtype=float)
    credit = np.where(g > b, 1.0, np.where(g < b, 0.0, pa.tie_value))
    est = bootstrap_statistic(lambda idx: float(credit[idx].mean()), len(credit), confidence=confidence,
                              n_resamples=n_resamples, seed=seed, unit="pairs")
    assert est.too_few or abs(est.value - pa.accuracy) < 1e-12
    return est


# --- binary labels ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BinaryRates:
    """A judge's verdicts against binary labels (1 = positive).

    ``tpr`` = judged 1 among labelled 1 (sensitivity), ``tnr`` = judged 0 among
    labelled 0 (specificity); None when a class has no item. ``n_dropped`` items had
    no verdict.
    """

    tp: int
    fn: int
    tn: int
    fp: int
    tpr: float | None
    tnr: float | None
    n_dropped: int = 0


def _binary(x: Hashable) -> int:
    if isinstance(x, bool) or x in (0, 1):
        return int(x)  # type: ignore[arg-type]
    raise ValueError(f"binary labels must be 0/1 or bools, got {x!r}")


def binary_rates(labels: Sequence[int | bool | None], verdicts: Sequence[int | bool | None]) -> BinaryRates:
    """True-positive and true-negative rates of ``verdicts`` against ``labels`` (None dropped)."""
    p = _pairs(labels, verdicts)
    y = [_binary(v) for v in p.a]
    v = [_binary(x) for x in p.b]
    tp = sum(1 for a, b in zip(y, v, strict=True) if a == 1 and b == 1)
    fn = sum(1 for a, b in zip(y, v, strict=True) if a == 1 and b == 0)
    tn = sum(1 for a, b in zip(y, v, strict=True) if a == 0 and b == 0)
    fp = sum(1 for a, b in zip(y, v, strict=True) if a == 0 and b == 1)
    return BinaryRates(tp, fn, tn, fp, tp / (tp + fn) if tp + fn else None,
                       tn / (tn + fp) if tn + fp else None, p.n_dropped)


def majority_baseline(labels: Sequence[Hashable | None]) -> tuple[Hashable, float]:
    """The most common label and the agreement a rater reaches by always giving it.

    Ties between labels go to the first in sorted order. Its kappa is 0 by construction.
    """
    kept = [x for x in labels if x is not None]
    if not kept:
        raise ValueError("no label given: the majority baseline is undefined")
    counts: dict[Hashable, int] = {}
    for x in kept:
        counts[x] = counts.get(x, 0) + 1
    best = max(sorted(counts, key=lambda v: (str(type(v)), v)), key=lambda v: counts[v])
    return best, counts[best] / len(kept)
