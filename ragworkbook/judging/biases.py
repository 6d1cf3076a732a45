"""Judge biases beyond position: verbosity, self-preference and prompt sensitivity.

Position bias (the verdict follows the order the answers are shown in) is measured by
:mod:`ragworkbook.judging.check`. Three more ways a judge's score can follow something other
than the quality it is asked about, each measured against labels someone else wrote:

- **verbosity** (:func:`verbosity_bias`): does the judge prefer the *longer* of two answers
  more than the labels do? On pairs with a known better item, the judge's pairwise accuracy is
  split by whether the better item is the longer one. A judge without a length preference is
  as accurate on both kinds of pair; one that likes length is right when the better answer is
  longer and wrong when it is shorter. The difference of the two accuracies is the bias, tested
  with Fisher's exact test (:func:`scipy.stats.fisher_exact`) on the decided pairs.
- **self-preference** (:func:`self_preference`): is the judge more lenient with text its own
  model wrote? Two sets of *bad* items of the same kind (answers written without the context,
  so ungrounded by construction), one written by the judge's model and one by another model,
  judged with the same metric; the bias is the difference of the shares *passed* (judged
  good), tested with Fisher's exact test.
- **prompt sensitivity** (:func:`prompt_sensitivity`): the same items judged under a reworded
  prompt that asks the same question. Verdicts that change with the wording measure the
  judge's instability; each wording's agreement with the labels says whether either is better.
  :func:`prompt_variant` swaps one template of :data:`~ragworkbook.judging.prompts.PROMPTS`
  for the duration of a ``with`` block, so the package's own metric runs with only the wording
  changed.

The experiments whose answers are recorded for notebook 18 are functions here too
(:func:`closed_book_answers`, :func:`judge_faithfulness`), so the notebook and the recording
run make exactly the same requests.
"""

from __future__ import annotations

import math
import string
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from scipy.stats import fisher_exact

from ragworkbook.judging.judge import Judge
from ragworkbook.judging.metrics import evaluate_judged, faithfulness
from ragworkbook.judging.prompts import PROMPTS
from ragworkbook.judging.results import JudgedResult, JudgeSample
from ragworkbook.llm.base import Generator, LLMError
from ragworkbook.stats.agreement import cohen_kappa
from ragworkbook.stats.sample_size import Proportion, proportion

__all__ = [
    "word_count",
    "VerbosityBias",
    "verbosity_bias",
    "SelfPreference",
    "self_preference",
    "PromptSensitivity",
    "prompt_sensitivity",
    "prompt_variant",
    "REWORDED_FAITHFULNESS",
    "CLOSED_BOOK_SYSTEM",
    "CLOSED_BOOK_OPTIONS",
    "closed_book_answers",
    "judge_faithfulness",
]


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
_STRIP = str.maketrans("", "", string.punctuation)


def word_count(text: str) -> int:
    """Words of ``text``: whitespace-separated tokens that are not only punctuation."""
    return sum(1 for w in str(text).split() if w.translate(_STRIP))


def _check_same_length(**seqs: Sequence[object]) -> int:
    lengths = {name: len(s) for name, s in seqs.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{k} {v}" for k, v in lengths.items())
        raise ValueError(f"the sequences must have one entry per pair: {shown}")
    return next(iter(lengths.values()), 0)


# --------------------------------------------------------------------------------------------
# verbosity
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class VerbosityBias:
    """Pairwise accuracy split by whether the better item is the longer one.

    ``good_longer`` / ``good_shorter``: the judge's accuracy (ties count half, like
    :func:`~ragworkbook.stats.agreement.pairwise_accuracy`) on pairs whose good item has more /
    fewer words; ``bias`` = the first minus the second (0: no length preference; a judge that
    always picks the longer answer scores +1). ``prefers_longer``: the share of the judge's
    decided pairs (no tie) won by the longer item; ``labels_prefer_longer``: the share of pairs
    whose good item is the longer (the length a perfect judge would "prefer").
    ``p_value``: Fisher's exact test, on the decided pairs, of "judge right" against "good item
    longer". Pairs of equal length or with a missing score are left out (``skipped``).
    """

    good_longer: Proportion
    good_shorter: Proportion
    ties_longer: int
    ties_shorter: int
    prefers_longer: Proportion
    labels_prefer_longer: Proportion
    p_value: float
    skipped: int

    @property
    def accuracy_longer(self) -> float:
        """Accuracy (ties half) on the pairs whose good item is longer."""
        return _tie_half(self.good_longer, self.ties_longer)

    @property
    def accuracy_shorter(self) -> float:
        """Accuracy (ties half) on the pairs whose good item is shorter."""
        return _tie_half(self.good_shorter, self.ties_shorter)

    @property
    def bias(self) -> float:
        return self.accuracy_longer - self.accuracy_shorter


def _tie_half(decided: Proportion, ties: int) -> float:
    n = decided.n + ties
    return (decided.k + ties / 2) / n if n else math.nan


def verbosity_bias(good_scores: Sequence[float | None], bad_scores: Sequence[float | None],
                   good_lengths: Sequence[int], bad_lengths: Sequence[int]) -> VerbosityBias:
    """Measure a judge's length preference on pairs with a known good item (see :class:`VerbosityBias`).

    ``good_scores[i]`` and ``bad_scores[i]`` are the judge's scores of pair i's good and bad items
    (None: no score, the pair is skipped); the lengths are in words (:func:`word_count`).
    """
    _check_same_length(good_scores=good_scores, bad_scores=bad_scores, good_lengths=good_lengths,
                       bad_lengths=bad_lengths)
    cells = {True: [0, 0, 0], False: [0, 0, 0]}  # good longer? -> [right, wrong, tie]
    skipped = 0
    longer_wins = decided = 0
    good_is_longer = pairs = 0
    for g, b, lg, lb in zip(good_scores, bad_scores, good_lengths, bad_lengths, strict=True):
        if g is None or b is None or lg == lb or _nan(g) or _nan(b):
            skipped += 1
            continue
        longer = lg > lb
        pairs += 1
        good_is_longer += longer
        cell = cells[longer]
        if g > b:
            cell[0] += 1
        elif g < b:
            cell[1] += 1
        else:
            cell[2] += 1
            continue
        decided += 1
        longer_wins += (g > b) == longer
    lo, sh = cells[True], cells[False]
    if lo[0] + lo[1] and sh[0] + sh[1]:
        p = float(fisher_exact([[lo[0], lo[1]], [sh[0], sh[1]]]).pvalue)
    else:
        p = math.nan
    return VerbosityBias(
        good_longer=proportion(lo[0], lo[0] + lo[1]), good_shorter=proportion(sh[0], sh[0] + sh[1]),
        ties_longer=lo[2], ties_shorter=sh[2], prefers_longer=proportion(longer_wins, decided),
        labels_prefer_longer=proportion(good_is_longer, pairs), p_value=p, skipped=skipped)


def _nan(x: float) -> bool:
    return isinstance(x, float) and math.isnan(x)


# --------------------------------------------------------------------------------------------
# self-preference
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SelfPreference:
    """How often the judge passes bad items written by its own model (``own``) and by another
    (``other``): each a :class:`Proportion` of items judged good among the scored bad items.
    ``excess`` = own - other (above 0: more lenient with its own text); ``p_value``: Fisher's
    exact test of the 2x2 table (passed / failed x own / other); ``unscored_own`` /
    ``unscored_other``: items without a score (failed or undefined), left out and counted."""

    own: Proportion
    other: Proportion
    p_value: float
    unscored_own: int
    unscored_other: int

    @property
    def excess(self) -> float:
        return self.own.value - self.other.value


def self_preference(own_scores: Sequence[float | None], other_scores: Sequence[float | None], *,
                    threshold: float = 1.0) -> SelfPreference:
    """Compare the pass rates of bad items written by the judge's model and by another model.

    An item passes when its score is at least ``threshold`` (faithfulness 1.0: no unsupported
    claim found). Both lists must hold items that are bad by construction (e.g. answers written
    without the context), so a fair judge passes them equally rarely.
    """
    def split(scores: Sequence[float | None]) -> tuple[int, int, int]:
        ok = [float(s) for s in scores if s is not None and not _nan(s)]
        return sum(s >= threshold for s in ok), len(ok), len(scores) - len(ok)

    k1, n1, u1 = split(own_scores)
    k2, n2, u2 = split(other_scores)
    p = float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue) if n1 and n2 else math.nan
    return SelfPreference(proportion(k1, n1), proportion(k2, n2), p, u1, u2)


# --------------------------------------------------------------------------------------------
# prompt sensitivity
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PromptSensitivity:
    """The same items judged under two wordings (``a``, the package's prompt, and ``b``, the
    reworded one).

    ``flips``: items whose yes/no verdict (score >= threshold) differs between the wordings, of
    the items scored under both; ``kappa``: Cohen's kappa between the two wordings' verdicts
    (1: the wording changes nothing); ``mean_a`` / ``mean_b``: the mean scores on those items;
    ``agreement_a`` / ``agreement_b``: each wording's raw agreement with the labels (when given);
    ``unscored``: items without a score under at least one wording."""

    flips: Proportion
    kappa: float
    mean_a: float
    mean_b: float
    agreement_a: Proportion | None
    agreement_b: Proportion | None
    unscored: int


def prompt_sensitivity(scores_a: Sequence[float | None], scores_b: Sequence[float | None], *,
                       threshold: float = 1.0, labels: Sequence[int | bool] | None = None
                       ) -> PromptSensitivity:
    """Compare a judge's scores of the same items under two prompt wordings (:class:`PromptSensitivity`).

    ``labels`` (1 = good item), when given, are compared with each wording's verdicts on the items
    scored under both.
    """
    if labels is not None:
        _check_same_length(scores_a=scores_a, scores_b=scores_b, labels=labels)
    else:
        _check_same_length(scores_a=scores_a, scores_b=scores_b)
    keep = [i for i, (a, b) in enumerate(zip(scores_a, scores_b, strict=True))
            if a is not None and b is not None and not _nan(a) and not _nan(b)]
    va = [int(float(scores_a[i]) >= threshold) for i in keep]  # type: ignore[arg-type]
    vb = [int(float(scores_b[i]) >= threshold) for i in keep]  # type: ignore[arg-type]
    flips = proportion(sum(x != y for x, y in zip(va, vb, strict=True)), len(keep))
    if not keep or (len(set(va)) == 1 and set(va) == set(vb)):
        kappa = math.nan  # no variation: kappa is 0/0
    else:
        kappa = cohen_kappa(va, vb, labels=[0, 1])
    mean_a = sum(float(scores_a[i]) for i in keep) / len(keep) if keep else math.nan  # type: ignore[arg-type]
    mean_b = sum(float(scores_b[i]) for i in keep) / len(keep) if keep else math.nan  # type: ignore[arg-type]
    agree_a = agree_b = None
    if labels is not None:
        y = [int(bool(labels[i])) for i in keep]
        agree_a = proportion(sum(v == t for v, t in zip(va, y, strict=True)), len(keep))
        agree_b = proportion(sum(v == t for v, t in zip(vb, y, strict=True)), len(keep))
    return PromptSensitivity(flips, kappa, mean_a, mean_b, agree_a, agree_b, len(scores_a) - len(keep))


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


@contextmanager
def prompt_variant(name: str, template: str) -> Iterator[str]:
    """Within the block, the package's prompt ``name`` (a key of
    :data:`~ragworkbook.judging.prompts.PROMPTS`) is ``template``; restored on exit.

    The new wording must use exactly the original's ``str.format`` fields, so the metric fills it
    in the same way. Not thread-safe: do not judge with the original prompt in another thread
    meanwhile.
    """
    if name not in PROMPTS:
        raise ValueError(f"no prompt {name!r}; the prompts are: {', '.join(PROMPTS)}")
    want, got = _fields(PROMPTS[name]), _fields(template)
    if want != got:
        raise ValueError(f"the reworded {name!r} prompt must use the fields {sorted(want)}, "
                         f"it uses {sorted(got)}")
    original = PROMPTS[name]
    PROMPTS[name] = template
    try:
        yield original
    finally:
        PROMPTS[name] = original


#: The faithfulness verification prompt reworded: the same task, the same fields and JSON keys,
#: other words (used by notebook 18; recorded in ``ragworkbook/data/recordings/18_judge_biases.json``).
REWORDED_FAITHFULNESS = (
    "You are given a context and a list of numbered statements. For each statement, answer "
    "whether it can be verified from the context alone: 1 when the context states it or "
    "directly implies it, 0 when the context says otherwise or says nothing about it. Before "
    "each verdict, explain it in a few words.\n\n"
    "Context:\n{context}\n\nStatements:\n{statements}\n\n"
    "Answer in JSON with the key \"verdicts\", holding exactly {n} objects (one per statement, "
    "in order), each with the keys \"reason\" and \"verdict\"."
)

#: The system prompt and options under which the judge's own model writes answers *without*
#: the context (closed book), for the self-preference check.
CLOSED_BOOK_SYSTEM = "Answer the question in two or three sentences."
CLOSED_BOOK_OPTIONS = {"num_predict": 160}


def closed_book_answers(questions: Sequence[str], generator: Generator) -> list[str | None]:
    """Answers ``generator`` writes to ``questions`` with no context (None where the call failed).

    Written without the context, such answers are ungrounded by construction, as WikiEval's
    ungrounded answers were (there by gpt-3.5).
    """
    out: list[str | None] = []
    for q in questions:
        try:
            out.append(generator.chat(q, system=CLOSED_BOOK_SYSTEM, options=CLOSED_BOOK_OPTIONS).text.strip())
        except LLMError:
            out.append(None)
    return out


def judge_faithfulness(samples: Sequence[JudgeSample], judge: Judge, *,
                       claims: Sequence[Sequence[str] | None] | None = None) -> list[JudgedResult]:
    """The package's faithfulness of each sample, in order; with ``claims``, each sample's claims
    are given (the extraction step is skipped; None for a sample extracts them)."""
    if claims is None:
        return evaluate_judged(samples, judge, ["faithfulness"], progress=False).results["faithfulness"]
    _check_same_length(samples=samples, claims=claims)
    return [faithfulness(s, judge, claims=list(c) if c is not None else None)
            for s, c in zip(samples, claims, strict=True)]
