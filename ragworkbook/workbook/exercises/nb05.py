"""Exercises of notebook 05 (lexical metrics: BLEU, ROUGE-1/2/L, METEOR, exact match, token F1)."""

from __future__ import annotations

import math
import re

import sacrebleu

from ragworkbook.metrics.generation import bleu, normalize_answer, rouge_n, token_f1
from ragworkbook.metrics.numeric import check_numbers
from ragworkbook.workbook.exercises import Mistake, Number, Solution, exercise, negated, solves, text_answer
from ragworkbook.workbook.exercises.examples import C3 as _C3
from ragworkbook.workbook.exercises.examples import REFERENCE as _REFERENCE

_SECOND = "On the WMT 2014 English-to-German translation task the big model reached 28.4 BLEU."


@exercise("05.1", "A wrong answer that BLEU likes",
          "Write an answer to 'What BLEU score did they get on English-to-German translation?' that scores "
          "sentence BLEU above 30 against the reference and is wrong: it must give another number where "
          "the reference says 28.4. Predict its BLEU before you run the check. (The C3 answer does not "
          "count.)")
@text_answer()
def _check_wrong_bleu(answer: str) -> tuple[bool, str]:
    if " ".join(answer.split()) == _C3:
        return False, "that is the C3 answer itself; write your own"
    if negated(answer):
        return False, ("it negates its number ('not ...'): a wrong answer states a wrong number as if it "
                       "were right")
    score = bleu(answer, _REFERENCE)
    numbers = check_numbers(answer, reference=_REFERENCE)
    rescaled = [n for n in numbers.contradicted
                if any(math.isclose(n.value * f, 28.4, rel_tol=1e-9) for f in (100.0, 0.01))]
    problems = []
    if score <= 30:
        problems.append(f"its BLEU is {score:.1f}, not above 30")
    if rescaled:
        problems.append(f"{rescaled[0].span} is 28.4 on another scale (BLEU from 0 to 1, or x 100): the same "
                        "score written differently, so the answer is not wrong")
    elif not numbers.contradicted:
        problems.append("it is not wrong: no number of it contradicts the reference's 28.4"
                        + (" (it states 28.4)" if not numbers.missing else ""))
    if problems:
        return False, "; ".join(problems)
    wrong = ", ".join(n.span for n in numbers.contradicted)
    return True, f"BLEU {score:.1f} for an answer that says {wrong} instead of 28.4"


@solves("05.1")
def _solve_wrong_bleu() -> Solution:
    answer = _REFERENCE.replace("28.4", "41.0")
    score = bleu(answer, _REFERENCE)
    return Solution(answer, f"Copy the reference and change only the number: BLEU {score:.1f}. Every n-gram "
                            "except the ones that contain the number still matches, so the score stays "
                            "high although the one fact the question asks for is wrong.")


#: a correct answer in other words than the reference (notebook 05 scores it beside C3)
_REWORDED = "On English-to-German the large Transformer scored 28.4 BLEU."


def _rouge2_recall() -> float:
    return rouge_n(_REWORDED, _REFERENCE, 2, measure="recall")


@exercise("05.4", "ROUGE-2 of a reworded correct answer",
          "Predict the ROUGE-2 recall of the correct, reworded answer 'On English-to-German the large "
          "Transformer scored 28.4 BLEU.' against the reference, to 3 decimals (or as a fraction): the share "
          "of the reference's bigrams (rouge-score tokens, stemmed) that the answer also contains.",
          reveals=[r"code:rouge_(?:n|2)\(\s*(?:reworded|['\"]On English)"])
def _rouge2() -> Number:
    return Number(_rouge2_recall(), 3, "ROUGE-2 recall", share=True, mistakes=[
        Mistake(rouge_n(_REWORDED, _REFERENCE, 1, measure="recall"),
                "that is ROUGE-1 recall (single tokens); ROUGE-2 counts pairs of adjacent tokens"),
        Mistake(rouge_n(_REWORDED, _REFERENCE, 2, measure="precision"),
                "that divides by the answer's bigrams (precision); recall divides by the reference's"),
        Mistake(rouge_n(_REWORDED, _REFERENCE, 2), "that is the F-measure; the task asks for recall")],
        low="list the reference's bigrams (rouge-score splits '28.4' into '28' and '4', and "
            "'English-to-German' into three tokens) and tick those the answer has",
        high="list the reference's bigrams and tick only those the answer has, word for word")


@solves("05.4")
def _solve_rouge2() -> Solution:
    from rouge_score.tokenizers import DefaultTokenizer

    tok = DefaultTokenizer(use_stemmer=True)
    a, r = tok.tokenize(_REWORDED), tok.tokenize(_REFERENCE)
    ref_bigrams = list(zip(r, r[1:], strict=False))
    shared = [b for b in ref_bigrams if b in set(zip(a, a[1:], strict=False))]
    value = _rouge2_recall()
    return Solution(value, f"The reference has {len(r)} tokens, so {len(ref_bigrams)} bigrams; the answer "
                           f"contains {len(shared)} of them ({', '.join(' '.join(b) for b in shared)}), so "
                           f"ROUGE-2 recall = {len(shared)}/{len(ref_bigrams)} = {value:.3f}. The answer is "
                           "right, in other words: ROUGE-2 keeps only the pairs around the number and the "
                           "language pair, and scores it below the wrong C3 answer, which copies the "
                           "wording.")


def _multi() -> dict[str, float]:
    return {"first": bleu(_C3, _REFERENCE), "second": bleu(_C3, _SECOND),
            "both": bleu(_C3, [_REFERENCE, _SECOND])}


def _where(scores: dict[str, float]) -> str:
    lo, hi = sorted((scores["first"], scores["second"]))
    return "above" if scores["both"] > hi else "below" if scores["both"] < lo else "between"


_WORDS = {"above": ("above", "higher", "more", "greater"), "below": ("below", "lower", "less", "smaller"),
          "between": ("between", "in between", "inside")}


@exercise("05.5", "Two references for the wrong answer",
          "A second reference says the same fact in other words. Predict whether the C3 answer's sentence "
          "BLEU against both references together is above, between or below its BLEU against each one "
          "alone. Answer 'above', 'between' or 'below'.",
          reveals=[r"code:bleu\([^)]*\[\s*reference\s*,", r"code:sentence_bleu\([^)]*\[\s*reference\s*,"],
          reveals_value=False)  # the words "above" / "between" / "below" say nothing on their own
def _check_multi(answer: object) -> tuple[bool, str]:
    if not isinstance(answer, str):
        return False, f"answer 'above', 'between' or 'below', got {type(answer).__name__}"
    word = re.sub(r"[^a-z ]", "", answer.lower()).strip()
    given = next((k for k, forms in _WORDS.items() if any(word == f or word.startswith(f + " ")
                                                          for f in forms)), None)
    if given is None:
        return False, f"answer 'above', 'between' or 'below', got {answer!r}"
    want = _where(_multi())
    if given == want:
        return True, f"with both references the answer scores {want} its single-reference scores"
    if given == "between":
        return False, ("BLEU with several references is not an average of single-reference scores: each "
                       "n-gram of the answer is matched against every reference at once")
    return False, ("each n-gram of the answer counts as matched when any one reference contains it: can "
                   "adding a reference take a match away?")


@solves("05.5")
def _solve_multi() -> Solution:
    s = _multi()
    res = sacrebleu.sentence_bleu(_C3, [_REFERENCE, _SECOND])
    return Solution(_where(s), f"BLEU {s['both']:.1f} with both references, against {s['first']:.1f} and "
                               f"{s['second']:.1f} with each alone. An n-gram of the answer is matched (up "
                               "to the largest count in any one reference) when either reference has it, so "
                               "the first reference supplies 'big model achieved a BLEU score of' and the "
                               "second 'on the WMT 2014 English-to-German translation task'; the brevity "
                               f"penalty uses the closest reference length ({res.ref_len} tokens). More "
                               "references make BLEU more forgiving of wording, and of a wrong number too.")


_SHORT, _SHORT_REF = "Adam.", "They used the Adam optimizer."


@exercise("05.2", "Token F1 of a short correct answer",
          "Predict the token F1 of the answer 'Adam.' against the reference 'They used the Adam optimizer.' "
          "to 2 decimals (SQuAD normalisation: lower case, punctuation and articles removed), then compute "
          "it with ragworkbook.metrics.generation.token_f1.",
          reveals=[r"code:token_f1\(\s*['\"]Adam"])
def _f1() -> Number:
    a, r = normalize_answer(_SHORT).split(), normalize_answer(_SHORT_REF).split()
    return Number(token_f1(_SHORT, _SHORT_REF), 2, "token F1", share=True, mistakes=[
        Mistake(1 / len(r), "that is the recall (1 shared token / the reference's tokens); F1 is the "
                            "harmonic mean of precision and recall"),
        Mistake(1 / (len(r) + 1), "after normalisation 'the' is gone: how many tokens does the reference "
                                  "keep?"),
        Mistake(0.0, "that is exact match; token F1 gives credit for the one shared token"),
        Mistake(1.0, f"that is the precision ({len(a)} token, all shared); F1 also needs the recall")])


@solves("05.2")
def _solve_f1() -> Solution:
    a, r = normalize_answer(_SHORT).split(), normalize_answer(_SHORT_REF).split()
    f1 = token_f1(_SHORT, _SHORT_REF)
    return Solution(f1, f"After normalisation the answer is {a} and the reference {r}: one shared token, "
                        f"precision 1/{len(a)} = 1, recall 1/{len(r)}, F1 = 2 * 1 * {1 / len(r):.2f} / "
                        f"(1 + {1 / len(r):.2f}) = {f1:.2f}. A correct, short answer is punished for not "
                        "repeating the reference's words; exact match gives it 0.")


_SHORT_BLEU = "28.4 BLEU."


def _bp() -> float:
    return float(sacrebleu.sentence_bleu(_SHORT_BLEU, [_REFERENCE]).bp)


@exercise("05.3", "The brevity penalty of a short answer",
          "The answer '28.4 BLEU.' is correct. Predict BLEU's brevity penalty for it against the reference "
          "to 4 decimals (13a tokens: c for the answer, r for the reference, BP = exp(1 - r/c) when c < r), "
          "then read it from sacrebleu.sentence_bleu(...).bp.",
          reveals=[r"code:\.bp\b", r"brevity penalty\s*=\s*0\.0"])
def _bp_answer() -> Number:
    res = sacrebleu.sentence_bleu(_SHORT_BLEU, [_REFERENCE])
    c, r = res.sys_len, res.ref_len
    return Number(_bp(), 4, "the brevity penalty", share=True, mistakes=[
        Mistake(1.0, "the answer is shorter than the reference, so BP is below 1"),
        Mistake(math.exp(1 - c / r),
                "that is exp(1 - c/r): the penalty is exp(1 - r/c), reference over answer"),
        Mistake(math.exp(1 - r / (c - 1)), "13a splits off the final full stop: it is a token too"),
        Mistake(c / r, "that is the length ratio c/r; BP is exp(1 - r/c)")])


@solves("05.3")
def _solve_bp() -> Solution:
    res = sacrebleu.sentence_bleu(_SHORT_BLEU, [_REFERENCE])
    return Solution(float(res.bp), f"The 13a tokeniser gives c = {res.sys_len} tokens ('28.4', 'BLEU', '.') "
                                   f"against r = {res.ref_len}, so BP = exp(1 - "
                                   f"{res.ref_len}/{res.sys_len}) = {res.bp:.4f}: the score "
                                   f"({res.score:.1f}) is cut to a few percent of what the n-gram "
                                   "precisions alone would give.")
