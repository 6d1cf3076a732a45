"""Exercises of notebook 05 (lexical metrics: BLEU, ROUGE-L, METEOR, exact match, token F1)."""

from __future__ import annotations

from typing import Any

from ragworkbook.workbook.exercises import Solution, close, exercise, solves

_REFERENCE = "The big model achieved a BLEU score of 28.4 on English-to-German translation."
_C3 = ("The paper reports that their big model achieved a BLEU score of 41.0 on the WMT 2014 "
       "English-to-German translation task.")


@exercise("05.1", "A wrong answer that BLEU likes",
          "Write an answer to 'What BLEU score did they get on English-to-German translation?' that scores "
          "sentence BLEU above 30 against the reference and is wrong: it must give another number where "
          "the reference says 28.4. Predict its BLEU before you run the check. (The C3 answer does not "
          "count.)")
def _check_wrong_bleu(answer: Any) -> tuple[bool, str]:
    from ragworkbook.metrics.generation import bleu
    from ragworkbook.metrics.numeric import check_numbers

    if not isinstance(answer, str):
        return False, f"write the answer as a string, got {type(answer).__name__}"
    if " ".join(answer.split()) == _C3:
        return False, "that is the C3 answer itself; write your own"
    score = bleu(answer, _REFERENCE)
    numbers = check_numbers(answer, reference=_REFERENCE)
    problems = []
    if score <= 30:
        problems.append(f"its BLEU is {score:.1f}, not above 30")
    if not numbers.contradicted:
        problems.append("it is not wrong: no number of it contradicts the reference's 28.4"
                        + (" (it states 28.4)" if not numbers.missing else ""))
    if problems:
        return False, "; ".join(problems)
    wrong = ", ".join(n.span for n in numbers.contradicted)
    return True, f"BLEU {score:.1f} for an answer that says {wrong} instead of 28.4"


@solves("05.1")
def _solve_wrong_bleu() -> Solution:
    from ragworkbook.metrics.generation import bleu

    answer = "The big model achieved a BLEU score of 41.0 on English-to-German translation."
    score = bleu(answer, _REFERENCE)
    return Solution(answer, f"Copy the reference and change only the number: BLEU {score:.1f}. Every n-gram "
                            "except the ones that contain the number still matches, so the score stays "
                            "high although the one fact the question asks for is wrong.")


_SHORT, _SHORT_REF = "Adam.", "They used the Adam optimizer."


@exercise("05.2", "Token F1 of a short correct answer",
          "Predict the token F1 of the answer 'Adam.' against the reference 'They used the Adam optimizer.' "
          "(SQuAD normalisation: lower case, punctuation and articles removed), then compute it with "
          "ragworkbook.metrics.generation.token_f1.")
def _check_f1(answer: Any) -> tuple[bool, str]:
    from ragworkbook.metrics.generation import token_f1

    return close(answer, token_f1(_SHORT, _SHORT_REF), what="token F1")


@solves("05.2")
def _solve_f1() -> Solution:
    from ragworkbook.metrics.generation import normalize_answer, token_f1

    a, r = normalize_answer(_SHORT).split(), normalize_answer(_SHORT_REF).split()
    f1 = token_f1(_SHORT, _SHORT_REF)
    return Solution(f1, f"After normalisation the answer is {a} and the reference {r}: one shared token, "
                        f"precision 1/{len(a)} = 1, recall 1/{len(r)}, F1 = 2 * 1 * {1 / len(r):.2f} / "
                        f"(1 + {1 / len(r):.2f}) = {f1:.2f}. A correct, short answer is punished for not "
                        "repeating the reference's words; exact match gives it 0.")


_SHORT_BLEU = "28.4 BLEU."


def _bp() -> float:
    import sacrebleu

    return float(sacrebleu.sentence_bleu(_SHORT_BLEU, [_REFERENCE]).bp)


@exercise("05.3", "The brevity penalty of a short answer",
          "The answer '28.4 BLEU.' is correct. Predict BLEU's brevity penalty for it against the reference "
          "(13a tokens: c for the answer, r for the reference, BP = exp(1 - r/c) when c < r), then read "
          "it from sacrebleu.sentence_bleu(...).bp.")
def _check_bp(answer: Any) -> tuple[bool, str]:
    return close(answer, _bp(), 1e-3, what="the brevity penalty")


@solves("05.3")
def _solve_bp() -> Solution:
    import sacrebleu

    res = sacrebleu.sentence_bleu(_SHORT_BLEU, [_REFERENCE])
    return Solution(float(res.bp), f"The 13a tokeniser gives c = {res.sys_len} tokens ('28.4', 'BLEU', '.') "
                                   f"against r = {res.ref_len}, so BP = exp(1 - "
                                   f"{res.ref_len}/{res.sys_len}) = {res.bp:.4f}: the score "
                                   f"({res.score:.1f}) is cut to a few percent of what the n-gram "
                                   "precisions alone would give.")
