"""A human-evaluation protocol: blind pairwise sheets, spot checks, agreement between annotators.

People are the reference a judge is measured against, and they are raters too: they disagree,
tire, and prefer what they saw first. A protocol makes their labels worth having:

1. **a rubric** written before labelling (what counts as supported, complete, better; with
   examples), so two people answer the same question;
2. **pairwise comparison** when two systems are compared: both answers side by side, the
   systems' names hidden and the order drawn at random per item (:func:`blind_pairs`), the
   verdicts mapped back afterwards (:func:`unblind`) and summarised as a win rate with a sign
   test (:func:`preference_summary`);
3. **spot checks**: a seeded random sample of a run's outputs read every week
   (:func:`spot_check_sample`; :func:`ragworkbook.stats.sample_size.items_to_spot` says how
   many items find a given error rate);
4. **two annotators on a shared subset**, and their agreement measured
   (:func:`annotator_agreement`): raw agreement, Cohen's kappa, and for an ordinal scale the
   quadratically weighted kappa (a -2 against a +2 is a worse disagreement than a -1 against a
   -2), each with a bootstrap interval over items. Their agreement is the ceiling any judge is
   read against;
5. **enough items** for the interval you need
   (:func:`ragworkbook.stats.sample_size.items_for_width`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest

from ragworkbook.stats.agreement import cohen_kappa
from ragworkbook.stats.resampling import Estimate, bootstrap_statistic
from ragworkbook.stats.sample_size import Proportion, proportion

__all__ = ["BlindPair", "blind_pairs", "unblind", "spot_check_sample", "AnnotatorAgreement",
           "annotator_agreement", "PreferenceSummary", "preference_summary"]

_CHOICES = ("1", "2", "tie")


@dataclass(frozen=True)
class BlindPair:
    """One row of a blind comparison sheet: the item, the question, the two answers as shown
    (``answer_1`` first) and the key (``first_is``: which system, ``"A"`` or ``"B"``, is shown first).
    Hand the annotator everything but the key."""

    item_id: str
    question: str
    answer_1: str
    answer_2: str
    first_is: str

    def sheet_row(self) -> dict[str, str]:
        """What the annotator sees: id, question, answer 1, answer 2, and an empty choice."""
        return {"id": self.item_id, "question": self.question, "answer 1": self.answer_1,
                "answer 2": self.answer_2, "better (1, 2 or tie)": ""}


def blind_pairs(items: Sequence[tuple[str, str, str, str]], seed: int = 0) -> list[BlindPair]:
    """Blind comparison rows for ``(item_id, question, answer_a, answer_b)`` tuples: per item, a
    seeded coin decides which system's answer is shown first. Item ids must be unique."""
    ids = [str(it[0]) for it in items]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"item ids must be unique, repeated: {', '.join(dup)}")
    rng = np.random.default_rng(seed)
    flips = rng.integers(0, 2, size=len(items))
    out = []
    for (item_id, question, a, b), flip in zip(items, flips, strict=True):
        first, second, first_is = (b, a, "B") if flip else (a, b, "A")
        out.append(BlindPair(str(item_id), question, first, second, first_is))
    return out


def unblind(choices: Mapping[str, str], pairs: Sequence[BlindPair]) -> dict[str, str]:
    """Map the annotator's choices (``"1"``, ``"2"`` or ``"tie"`` per item id) back to systems
    (``"A"``, ``"B"``, ``"tie"``). Every item of the sheet needs a choice; an unknown id or choice
    is a ValueError naming it."""
    key = {p.item_id: p.first_is for p in pairs}
    unknown = sorted(set(choices) - set(key))
    if unknown:
        raise ValueError(f"choices for items not on the sheet: {', '.join(unknown)}")
    missing = [i for i in key if i not in choices]
    if missing:
        raise ValueError(f"no choice for {len(missing)} items: {', '.join(missing[:5])}")
    out = {}
    for item_id, first in key.items():
        c = str(choices[item_id]).strip().lower()
        if c not in _CHOICES:
            raise ValueError(f"item {item_id}: the choice is '1', '2' or 'tie', got {choices[item_id]!r}")
        if c == "tie":
            out[item_id] = "tie"
        else:
            second = "B" if first == "A" else "A"
            out[item_id] = first if c == "1" else second
    return out


def spot_check_sample(ids: Sequence[str], n: int, seed: int) -> list[str]:
    """A seeded random sample of ``n`` of ``ids`` (without replacement), in the ids' order. Use a new
    seed each week (e.g. the week number) and write it down with the sample."""
    ids = list(ids)
    if len(set(ids)) != len(ids):
        raise ValueError("ids must be unique")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(ids):
        raise ValueError(f"n must be a whole number from 1 to {len(ids)}, got {n!r}")
    chosen = set(np.random.default_rng(seed).choice(len(ids), size=n, replace=False).tolist())
    return [x for i, x in enumerate(ids) if i in chosen]


@dataclass(frozen=True)
class AnnotatorAgreement:
    """Two annotators on the same items: ``exact`` (raw agreement), ``kappa`` (Cohen's, unweighted),
    ``weighted_kappa`` (quadratic weights over ``labels``' order; None for a nominal scale),
    ``within_one`` (labels at most one step apart; None for a nominal scale), each an
    :class:`~ragworkbook.stats.resampling.Estimate` with a bootstrap interval over items;
    ``n`` items, ``labels`` the scale."""

    n: int
    labels: tuple[Hashable, ...]
    exact: Estimate
    kappa: Estimate
    weighted_kappa: Estimate | None
    within_one: Estimate | None


def annotator_agreement(a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable], *,
                        ordinal: bool = True, n_resamples: int = 2000, seed: int = 0) -> AnnotatorAgreement:
    """Agreement of two annotators' labels on the same items (see :class:`AnnotatorAgreement`).

    ``labels`` is the scale in order (e.g. ``[-2, -1, 0, 1, 2]``); a label outside it is a
    ValueError. ``ordinal=False`` for unordered categories (no weighted kappa, no within-one)."""
    if len(a) != len(b):
        raise ValueError(f"the two annotators must label the same items: {len(a)} and {len(b)} labels")
    if not len(a):
        raise ValueError("no items")
    scale = list(labels)
    pos = {x: i for i, x in enumerate(scale)}
    outside = [x for x in list(a) + list(b) if x not in pos]
    if outside:
        raise ValueError(f"label {outside[0]!r} is not on the scale {scale}")
    ia = np.asarray([pos[x] for x in a])
    ib = np.asarray([pos[x] for x in b])
    la, lb = list(a), list(b)

    def boot(stat: object) -> Estimate:
        return bootstrap_statistic(stat, len(ia), n_resamples=n_resamples, seed=seed)  # type: ignore[arg-type]

    def kappa_of(weights: str | None):  # type: ignore[no-untyped-def]
        def stat(idx: np.ndarray) -> float | None:
            sa, sb = [la[i] for i in idx], [lb[i] for i in idx]
            if len(set(sa)) == 1 and set(sa) == set(sb):
                return None  # one and the same label throughout: kappa is 0/0
            return cohen_kappa(sa, sb, labels=scale, weights=weights)
        return stat

    exact = boot(lambda idx: float(np.mean(ia[idx] == ib[idx])))
    kappa = boot(kappa_of(None))
    weighted = within = None
    if ordinal:
        weighted = boot(kappa_of("quadratic"))
        within = boot(lambda idx: float(np.mean(np.abs(ia[idx] - ib[idx]) <= 1)))
    return AnnotatorAgreement(len(ia), tuple(scale), exact, kappa, weighted, within)


@dataclass(frozen=True)
class PreferenceSummary:
    """Pairwise verdicts of A against B: counts, ``win_rate_b`` among the decided items (B's wins
    / (A's + B's wins), Wilson interval) and ``p_value``, the two-sided sign test (exact binomial
    test of the decided items against 1/2; ties left out, as the sign test does)."""

    a: int
    b: int
    ties: int
    win_rate_b: Proportion
    p_value: float


def preference_summary(verdicts: Sequence[str]) -> PreferenceSummary:
    """Summarise per-item verdicts ``"A"``, ``"B"`` or ``"tie"`` (any case)."""
    v = [str(x).strip().upper() for x in verdicts]
    bad = [x for x in v if x not in ("A", "B", "TIE")]
    if bad:
        raise ValueError(f"a verdict is 'A', 'B' or 'tie', got {bad[0]!r}")
    na, nb, nt = v.count("A"), v.count("B"), v.count("TIE")
    p = float(binomtest(nb, na + nb, 0.5).pvalue) if na + nb else float("nan")
    return PreferenceSummary(na, nb, nt, proportion(nb, na + nb), p)
