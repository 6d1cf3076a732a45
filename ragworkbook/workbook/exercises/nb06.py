"""Exercises of notebook 06 (embedding similarity, BERTScore, the numeric check) and their solutions."""

from __future__ import annotations

import math

from ragworkbook.metrics.numeric import check_numbers
from ragworkbook.workbook.exercises import Solution, exercise, read_number, solves, text_answer, yes_no
from ragworkbook.workbook.exercises.examples import C3 as _C3
from ragworkbook.workbook.exercises.examples import REFERENCE as _REFERENCE

#: an answer about another language pair answers another question, however right its number
_WRONG_CONTEXT = {r"\bfrench\b|\ben(?:glish)?[- ]to[- ]fr|\ben-fr\b":
                  "the question is about English-to-German, not English-to-French"}


def _sim(text: str) -> float:
    from ragworkbook.metrics.generation import embedding_similarity  # loads MiniLM: only when asked

    return float(embedding_similarity(text, _REFERENCE))


@exercise("06.1", "A right answer the encoder likes less than the wrong one",
          "Write a correct answer (it states 28.4 as the BLEU score for English-to-German and no number the "
          "reference contradicts) whose embedding similarity to the reference is below that of the wrong "
          "C3 answer. Predict: how hard is it to find one?")
@text_answer()
def _check_less_similar(answer: str) -> tuple[bool, str]:
    value, why = read_number(answer, "the BLEU score", unit="BLEU", wrong_context=_WRONG_CONTEXT)
    if value is None:
        return False, why
    if not math.isclose(value, 28.4):
        return False, f"it gives {value:g} as the BLEU score: a correct answer states the reference's score"
    numbers = check_numbers(answer, reference=_REFERENCE)
    if numbers.contradicted:
        wrong_numbers = ", ".join(n.span for n in numbers.contradicted)
        return False, f"it also states {wrong_numbers}, which the reference contradicts"
    mine, wrong = _sim(answer), _sim(_C3)
    if mine >= wrong:
        return False, (f"its similarity {mine:.3f} is not below the wrong answer's {wrong:.3f}: use fewer of "
                       "the reference's words")
    return True, f"a correct answer at {mine:.3f} against the wrong answer's {wrong:.3f}"


@solves("06.1")
def _solve_less_similar() -> Solution:
    answer = "28.4 BLEU on the English-German test set, for the large configuration."
    return Solution(answer, "Easy: say the right number in fewer of the reference's words. This answer "
                            f"scores {_sim(answer):.3f}, the wrong C3 answer {_sim(_C3):.3f}. A sentence "
                            "embedding measures how much the two sentences are about the same thing in the "
                            "same words; one number among twenty tokens barely moves it.")


_ROUNDED = "About 28 BLEU."


def _passes_at_2_percent() -> bool:
    return check_numbers(_ROUNDED, reference=_REFERENCE, rel_tol=0.02).ok


@exercise("06.2", "A tolerance for rounded numbers",
          "With the default tolerance the numeric check flags 'About 28 BLEU.' (28 is not 28.4). Predict "
          "whether it passes with rel_tol=0.02 (True or False), then run check_numbers and compare.",
          reveals=[r"code:rel_tol\s*=\s*0\.02"])
def _check_tol(answer: object) -> tuple[bool, str]:
    want = _passes_at_2_percent()
    return yes_no(answer, want, right=f"with rel_tol=0.02 the check {'passes' if want else 'still flags it'}",
                  wrong="compute |28 - 28.4| / 28.4 and compare it with 0.02")


@solves("06.2")
def _solve_tol() -> Solution:
    ok = _passes_at_2_percent()
    rel = abs(28 - 28.4) / 28.4
    return Solution(ok, f"|28 - 28.4| / 28.4 = {rel:.4f}, below 0.02, so the two numbers count as the same "
                        f"and the check passes ({ok}). A tolerance trades strictness for robustness to "
                        "rounding: at 0.02 an answer of 28.0 passes, and so would 28.9.")
