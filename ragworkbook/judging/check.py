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

The code follows these seams: :mod:`~ragworkbook.judging.check_catalogue` (which data sets exist),
:mod:`~ragworkbook.judging.check_runner` (judge them, then one call to
:func:`ragworkbook.stats.judge_table.judge_statistics` on the table of labels and verdicts) and
:mod:`~ragworkbook.judging.check_report` (the text and JSON). This module keeps the public names.
"""

from __future__ import annotations

from ragworkbook.judging.check_catalogue import (
    ALIASES,
    DATASETS,
    JUDGES,
    MIN_LABELLED_PAIRS,
    RECORDED_PAIRS,
    RELIABILITY_MIN_KAPPA,
    WORD_SUPPORT,
    WORD_SUPPORT_THRESHOLD,
    DatasetSpec,
    recording_path,
    resolve_dataset,
)
from ragworkbook.judging.check_report import JudgeCheck
from ragworkbook.judging.check_runner import judge_check, judge_name

__all__ = ["DatasetSpec", "DATASETS", "ALIASES", "RECORDED_PAIRS", "JUDGES", "WORD_SUPPORT",
           "WORD_SUPPORT_THRESHOLD", "resolve_dataset", "recording_path", "JudgeCheck", "judge_check",
           "judge_name", "RELIABILITY_MIN_KAPPA", "MIN_LABELLED_PAIRS"]
