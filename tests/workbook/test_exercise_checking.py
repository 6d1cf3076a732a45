"""The checker helpers read answers as written and point at the mistake, never at the distance."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from ragworkbook.workbook.exercises.checking import (
    Count,
    Mistake,
    Number,
    Numbers,
    close,
    close_each,
    count,
    negated,
    read_bool,
    read_count,
    read_number,
    read_written,
    same_items,
    same_text,
    yes_no,
)


@pytest.mark.parametrize("answer", [0.75, "0.75", " .75 ", "3/4", "3 / 4", "75%", Fraction(3, 4),
                                    np.float64(0.75), "Precision@4 is 0.75", "P@4 = 3 / 4 = 0.75",
                                    "It is 75%.", "3 of 4", "it is 3 out of 4"])
def test_reasonable_forms_of_a_share_are_read(answer):
    assert read_number(answer, "P@4", share=True) == (0.75, "")


def test_a_float_equal_to_the_rounded_solution_is_right_though_python_drops_its_trailing_zero():
    """0.810 typed in Python is the float 0.81; the string "0.81" still has 2 decimals of the 3 asked."""
    assert close(0.810, 17 / 21, 3, "hit rate")[0]
    ok, message = close("0.81", 17 / 21, 3, "hit rate")
    assert not ok and "give 3 decimals" in message
    assert not close(0.8, 17 / 21, 3, "hit rate")[0]


@pytest.mark.parametrize("answer", ["-125/771", "\u2212125/771", "kappa = -125 / 771"])
def test_a_negative_fraction_is_read_whole(answer):
    """A kappa written as a fraction keeps its sign: "-125/771" is one number, not -125 and 0.162."""
    assert read_number(answer, "kappa") == (-125 / 771, "")


@pytest.mark.parametrize("answer,says", [
    (True, "not True"),
    (math.nan, "NaN"),
    ("", "empty"),
    ([0.75], "got list"),
    ("It is not 0.75.", "not what it is not"),
    ("it isn't 0.75", "not what it is not"),
    ("k = 4 gives 0.75", "several numbers (4, 0.75)"),
    ("about three quarters", "fraction as a number"),
    ("no idea", "not what it is not"),
    ("dunno", "no number found"),
])
def test_unreadable_numbers_say_why(answer, says):
    value, why = read_number(answer, "P@4", share=True)
    assert value is None and says in why


def test_a_typeset_minus_is_a_minus():
    assert read_number("\u22120.16", "kappa") == (-0.16, "")
    assert read_number("kappa is \u22120.16", "kappa") == (-0.16, "")


def test_a_percentage_is_refused_where_the_quantity_is_not_a_share():
    assert read_number("75%", "the score")[0] is None


def test_a_unit_must_label_the_number_and_the_context_must_fit():
    french = {"french": "the question is about English-to-German"}
    assert read_number("The big model got a BLEU score of 28.4.", unit="BLEU")[0] == 28.4
    assert read_number("28.4 BLEU", unit="BLEU")[0] == 28.4
    assert read_number("28.4", unit="BLEU")[0] == 28.4  # a bare number is the number asked for
    assert "which number is the BLEU" in read_number("zzz 28.4", unit="BLEU")[1]
    got = read_number("28.4 BLEU on English-to-French.", unit="BLEU", wrong_context=french)
    assert got == (None, french["french"])
    assert "not what it is not" in read_number("It is not 28.4 BLEU.", unit="BLEU")[1]


def test_close_names_the_mistake_and_never_the_distance():
    hint = "did you divide by the number of relevant documents instead of k?"
    ok, msg = close(0.5, 0.75, what="P@4", mistakes=[Mistake(0.5, hint)])
    assert not ok and msg == f"P@4 0.5: {hint}"
    ok, msg = close(0.6, 0.75, what="P@4", low="count the hits in the top 4 again")
    assert not ok and msg == "P@4 0.6 is too low: count the hits in the top 4 again"
    ok, msg = close(0.9, 0.75, what="P@4")
    assert not ok and msg == "P@4 0.9 is too high" and "0.75" not in msg and "off by" not in msg
    ok, msg = close(75, 0.75, what="P@4", share=True)
    assert not ok and "not between 0 and 1" in msg and "percentage" in msg
    assert close("0.750", 0.75, 2, what="P@4") == (True, "P@4 is 0.75")


@pytest.mark.parametrize("answer,decimals", [
    ("0.643", 3), (0.643, 3), ("0.6429", 4), ("64.3%", 3), ("9/14", None), ("9 of 14", None),
    (0.642857142857, 9), ("it is 0.643", 3), (Fraction(9, 14), None), (np.float64(0.643), 3), ("6.43e-1", 3),
])
def test_an_answer_is_read_with_the_precision_it_was_written_in(answer, decimals):
    written, why = read_written(answer, share=True)
    assert why == "" and written.decimals == decimals and abs(written.value - 9 / 14) < 6e-4


@pytest.mark.parametrize("answer", ["0.643", 0.643, "0.6429", "64.3%", "9/14", 9 / 14, "0.64286",
                                    "ROUGE-2 recall is 0.643"])
def test_the_solution_at_the_precision_written_is_right_when_precise_enough(answer):
    ok, msg = close(answer, 9 / 14, 3, "ROUGE-2 recall", share=True)
    assert ok, msg
    assert not close("0.642", 9 / 14, 3, "ROUGE-2 recall")[0]  # 0.642857 rounds to 0.643, not 0.642


@pytest.mark.parametrize("answer,given", [("0.64", 2), (0.64, 2), ("64%", 2), ("0.6", 1), ("it is 64%", 2)])
def test_a_right_answer_with_too_few_decimals_is_asked_for_the_precision(answer, given):
    hint = "that is the F-measure"
    ok, msg = close(answer, 9 / 14, 3, "ROUGE-2 recall", share=True, mistakes=[Mistake(0.6, hint)],
                    low="l", high="h")
    assert not ok and msg == f"ROUGE-2 recall: give 3 decimals, as the task asks (you gave {given})"


def test_a_mistake_hint_fires_only_on_the_mistakes_own_value():
    hint = "that is NDCG@5 before the swap"
    m = [Mistake(0.6323, hint)]
    assert close("0.632", 0.9885, 3, "NDCG", mistakes=m)[1] == f"NDCG 0.632: {hint}"
    assert close("0.63", 0.9885, 3, "NDCG", mistakes=m)[1] == f"NDCG 0.63: {hint}"  # its value at 2 decimals
    assert close("0.948", 0.9885, 3, "NDCG", mistakes=m, low="recompute")[1] == (
        "NDCG 0.948 is too low: recompute")
    assert close("0.99", 0.9885, 3, "NDCG", mistakes=m)[1].startswith("NDCG: give 3 decimals")
    assert close(0.9885, 0.98846, 3, "NDCG") == (True, "NDCG is 0.9885")


def test_an_exact_answer_needs_no_decimals():
    assert close(1, 1.0, 3, "AP")[0] and close("3/4", 0.75, 4, "P")[0]
    assert close("75%", 0.75, 3, "P", share=True)[0]
    assert close("0.75", 0.75, 4, "P")[0]  # the solution itself has 2 decimals
    hint = "how many fit in the top 3?"
    assert close(1, 0.75, 2, "R", mistakes=[Mistake(1.0, hint)])[1] == f"R 1: {hint}"  # "1" means one
    assert close("2/256", 0.0078125, 4, "p")[0] and close("\u22120.162", -0.1621, 3, "kappa")[0]


def test_numbers_and_counts_declared():
    n = Number(0.75, 2, "P@4", share=True, mistakes=[Mistake(0.5, "grade 2 or more?")])
    assert n.check("3/4")[0] and n.check(0.5) == (False, "P@4 0.5: grade 2 or more?")
    pair = Numbers((Number(0.75, 2, "R-precision"), Number(0.8875, 3, "AP")))
    assert pair.value == (0.75, 0.8875) and pair.check((0.75, "0.888"))[0] and pair.check((0.75, "0.887"))[0]
    assert pair.check((0.75, 0.89)) == (False, "R-precision is right; AP: give 3 decimals, as the task asks "
                                               "(you gave 2)")
    assert pair.check(0.75)[1] == "give two numbers: (R-precision, AP)"
    c = Count(4, "k", mistakes=[Mistake(3, "relevant documents")], more="smaller")
    assert c.check("four")[0] and c.check(3) == (False, "k 3: relevant documents")
    assert c.check(5) == (False, "k 5 is too many: smaller")


def test_close_each_reads_every_number():
    ok, msg = close_each(("0.75", 0.7), (0.75, 0.7917), ("R-precision", "AP"))
    assert not ok and msg == "R-precision is right; AP 0.7 is too low"
    assert close_each(0.75, (0.75, 0.7917), ("R-precision", "AP")) == (
        False, "give two numbers: (R-precision, AP)")


def test_count_accepts_forms_of_a_whole_number():
    for answer in (4, 4.0, "4", "four", "Four", "There are 4."):
        assert read_count(answer) == (4, ""), answer
    assert read_count(4.5)[1] == "the count is a whole number, got 4.5"
    assert count(5, 4, more="look at the split column") == (
        False, "the count 5 is too many: look at the split column")
    assert count(3, 4) == (False, "the count 3 is too few")
    assert count(2, 4, mistakes=[Mistake(2, "that is with overlap")]) == (
        False, "the count 2: that is with overlap")


def test_yes_no_and_text():
    assert read_bool("Yes") is True and read_bool("false") is False and read_bool("maybe") is None
    assert yes_no("TRUE", True, right="r", wrong="w") == (True, "r")
    assert yes_no(False, True, right="r", wrong="w") == (False, "w")
    assert "True or False" in yes_no(1, True, right="r", wrong="w")[1]
    assert same_text(" 'replaymisserror' ", "ReplayMissError")[0]
    assert not same_text("KeyError", "ReplayMissError")[0]


def test_same_items_ignores_case_and_does_not_name_what_is_missing():
    assert same_items(["pdrop"], ["Pdrop"])[0]
    assert same_items("Pdrop", ["Pdrop"])[0]  # one item given bare
    ok, msg = same_items(["a", "c"], ["a", "b"])
    assert not ok and msg == "the items: not expected: ['c']; 1 is missing"
    assert "'b'" not in msg


def test_negation():
    assert negated("It is not 28.4") and negated("it isn't") and negated("never 8")
    assert not negated("Nothing here is denied; notation and nowhere are words")
