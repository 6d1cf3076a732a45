"""Exercises of notebook 18 (judge biases: verbosity, self-preference, prompt sensitivity), with solutions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragworkbook.judging.biases import (
    REWORDED_FAITHFULNESS,
    SelfPreference,
    closed_book_answers,
    judge_faithfulness,
    prompt_sensitivity,
    prompt_variant,
    self_preference,
    word_count,
)
from ragworkbook.judging.check import recording_path
from ragworkbook.judging.datasets import WikiEvalPair, load_wikieval
from ragworkbook.judging.judge import Judge
from ragworkbook.judging.results import JudgedResult, JudgeSample
from ragworkbook.llm import get_generator
from ragworkbook.paths import data_path
from ragworkbook.workbook.exercises import Count, Mistake, Number, Solution, exercise, solves

if TYPE_CHECKING:
    from ragworkbook.corpus.jsonfile import PathLike
    from ragworkbook.stats.sample_size import Proportion

#: WikiEval faithfulness pairs judged with the reworded prompt (all the recorded pairs) and, for the
#: self-preference check, the questions the judge's own model answered without the context.
PROMPT_PAIRS = 30
OWN_PAIRS = 15
RECORDING = "18_judge_biases.json"


def judge_of(path: PathLike | None) -> Judge:
    """A judge answering from a recording (strict replay), or live when a backend is chosen."""
    return Judge(get_generator(recording=path))


def ff_pairs(n: int) -> list[WikiEvalPair]:
    return load_wikieval("faithfulness").pairs[:n]


def ff_samples(pairs: list[WikiEvalPair]) -> list[JudgeSample]:
    """Both items of each pair, good first, as judge samples (question, answer, the item's context)."""
    return [JudgeSample(p.question, it.answer or "", [it.context or ""], sample_id=f"{p.id}-{w}")
            for p in pairs for w, it in (("good", p.good), ("bad", p.bad))]


def _longer_count(name: str) -> tuple[int, int]:
    """(pairs whose good answer has more words than the bad one, pairs) of a WikiEval data set."""
    pairs = load_wikieval(name).pairs
    return sum(word_count(p.good.answer or "") > word_count(p.bad.answer or "") for p in pairs), len(pairs)


def _ar_good_longer_share() -> float:
    k, n = _longer_count("answer_relevance")
    return k / n


@exercise("18.1", "How long are the grounded answers?",
          "In how many of WikiEval's 50 faithfulness pairs is the grounded answer the longer of the two, in "
          "words (ragworkbook.judging.biases.word_count)? Give a whole number; divided by 50 it is the "
          "pairwise accuracy of a 'judge' that always prefers the longer answer.",
          reveals=[r"grounded answer is the longer", r"always prefers? the longer.*\d"])
def _longer_answer() -> Count:
    k, n = _longer_count("faithfulness")
    ar, _ = _longer_count("answer_relevance")
    mistakes = [Mistake(n - k, "that counts the pairs whose grounded answer is not the longer")]
    if ar not in (k, n - k):
        mistakes.insert(0, Mistake(ar, "that is the answer-relevance pairs (the complete answer against the "
                                       "incomplete one); the task asks about the faithfulness pairs"))
    return Count(k, "the number of pairs", mistakes=mistakes,
                 fewer="count the pairs whose grounded answer has more words than the ungrounded one",
                 more="an answer written without its context is often the wordier one")


@solves("18.1")
def _solve_longer() -> Solution:
    k, n = _longer_count("faithfulness")
    share = k / n
    return Solution(k, f"The grounded answer is the longer in {k} of {n} pairs ({share:.2f}): the answers "
                       "written without the context are usually wordier. A judge that likes length would be "
                       f"right on {share:.2f} of these pairs, far below chance, while on the "
                       f"answer-relevance pairs the same taste would look good "
                       f"({_ar_good_longer_share():.2f}): length has to be measured against the labels of "
                       "each data set.")


def own_and_other() -> tuple[list[JudgedResult], list[JudgedResult], list[str | None]]:
    """The judge on ungrounded answers written by its own model (closed book, recorded in notebook 18's
    recording) and on WikiEval's ungrounded answers (gpt-3.5's) to the same questions, against the same
    contexts; and the own answers."""
    pairs = ff_pairs(OWN_PAIRS)
    model = get_generator(recording=data_path("recordings", RECORDING))
    own = closed_book_answers([p.question for p in pairs], model)
    own_samples = [JudgeSample(p.question, a, [p.bad.context or ""], sample_id=f"{p.id}-own")
                   for p, a in zip(pairs, own, strict=True) if a is not None]
    own_results = judge_faithfulness(own_samples, Judge(model))
    other = [s for s in ff_samples(pairs) if s.sample_id.endswith("-bad")]
    other_results = judge_faithfulness(other, judge_of(recording_path("wikieval-faithfulness")))
    return own_results, other_results, own


def _self_preference() -> SelfPreference:
    own, other, _ = own_and_other()
    return self_preference([r.score for r in own], [r.score for r in other])


@exercise("18.2", "Lenient with its own text?",
          "From the table of the judge's faithfulness on the ungrounded answers written by its own model and "
          "by gpt-3.5, compute the self-preference excess: the share of its own answers it passes (score "
          "1.0) minus the share of gpt-3.5's it passes, each among the scored answers, to 2 decimals.",
          reveals=[r"code:self_preference\(", r"self-preference excess [-+−]?\d"])
def _excess_answer() -> Number:
    sp = _self_preference()
    n_own, n_other = sp.own.n + sp.unscored_own, sp.other.n + sp.unscored_other
    unscored_as_failed = sp.own.k / n_own - sp.other.k / n_other
    return Number(sp.excess, 2, "the excess", mistakes=[
        Mistake(-sp.excess, "the sign: own minus other, so a judge more lenient with its own text is "
                            "positive"),
        Mistake(unscored_as_failed, "an answer without a score (failed or no claim) is left out of both "
                                    "shares, not counted as failed")],
        low="own minus other: count the passed answers (score 1.0) in each group",
        high="own minus other: count the passed answers (score 1.0) in each group")


@solves("18.2")
def _solve_excess() -> Solution:
    sp = _self_preference()
    return Solution(sp.excess,
                    f"Own answers passed: {sp.own.k} of {sp.own.n}; gpt-3.5's: {sp.other.k} of "
                    f"{sp.other.n}; excess {sp.own.value:.3f} - {sp.other.value:.3f} = {sp.excess:+.3f} "
                    f"(Fisher's exact p = {sp.p_value:.2f}). Both groups are ungrounded by construction, "
                    "so a fair judge would pass both rarely.")


def prompt_runs() -> tuple[list[JudgedResult], list[JudgedResult], list[int]]:
    """Faithfulness of the recorded WikiEval pairs under the package's prompt and under the reworded one
    (the same claims, extracted once under the package's prompt), and the labels (1 = grounded)."""
    pairs = ff_pairs(PROMPT_PAIRS)
    samples = ff_samples(pairs)
    original = judge_faithfulness(samples, judge_of(recording_path("wikieval-faithfulness")))
    claims = [[it["statement"] for it in r.items] if r.items else None for r in original]
    with prompt_variant("faithfulness", REWORDED_FAITHFULNESS):
        reworded = judge_faithfulness(samples, judge_of(data_path("recordings", RECORDING)), claims=claims)
    labels = [int(s.sample_id.endswith("-good")) for s in samples]
    return original, reworded, labels


def _flip_rate() -> tuple[Proportion, int, float]:
    """The share of verdicts that change with the wording (a proportion, ``k`` of ``n``), the number that
    stay, and Cohen's kappa between the two wordings."""
    original, reworded, labels = prompt_runs()
    ps = prompt_sensitivity([r.score for r in original], [r.score for r in reworded], labels=labels)
    verdicts = [(int(a.score >= 1.0), int(b.score >= 1.0)) for a, b in zip(original, reworded, strict=True)
                if a.score is not None and b.score is not None]
    stay = sum(a == b for a, b in verdicts)
    return ps.flips, stay, ps.kappa


@exercise("18.3", "Same question, other words",
          "The same claims, judged under the package's faithfulness prompt and under a reworded one that "
          "asks the same thing. Over the items scored under both, how many of the yes/no verdicts (faithful "
          "when the score is 1.0) change with the wording? Give a whole number.",
          reveals=[r"code:prompt_sensitivity\(", r"change with the wording: \d", r"15 of 54"])
def _flips_answer() -> Count:
    flips, stay, _ = _flip_rate()
    return Count(flips.k, "the number of changed verdicts", mistakes=[
        Mistake(stay, "that is the number of verdicts that stay the same; the task asks for those that "
                      "change")],
        fewer="compare the two verdicts of each item: score >= 1.0 is 'faithful' under each wording",
        more="count only the items scored under both wordings, and only verdicts that differ")


@solves("18.3")
def _solve_flips() -> Solution:
    flips, stay, kappa = _flip_rate()
    return Solution(flips.k, f"{flips.k} of the {flips.n} verdicts change with the wording ({flips}; {stay} "
                             f"stay); Cohen's kappa between the two wordings is {kappa:.2f}. A judge whose "
                             "verdicts move with a rewording this often measures its prompt as much as the "
                             "answers.")
