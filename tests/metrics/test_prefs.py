"""trec_eval's preference measures (metrics.prefs) and the prefs reader (corpus.trec.read_prefs).

Byte-for-byte agreement with the C trec_eval on whole files is in tests/corpus/test_trec_options.py
(``out.prefs*``, ``out.qrels_prefs*``, ``out.rand*``); here the definitions, on cases small enough to count
by hand."""

from __future__ import annotations

import numpy as np
import pytest

from ragworkbook.corpus.trec import read_prefs
from ragworkbook.metrics.prefs import (
    ALL_PREFS,
    PREFS_SET,
    evaluate_prefs,
    ir_eval_prefs,
    jg_preferences,
    prefs_request,
    query_values,
    rankings,
)


def _count(subgroups):
    return int(np.count_nonzero(jg_preferences(subgroups)[1]))


def test_a_full_ranking_of_six_documents_gives_thirteen_preferences():
    # levels 6 > 3 > 2 = 2 > 0 = 0: 5 + 4 + 2 + 2 preferences, ties none
    assert _count({"s1": {"d1": 3, "d2": 2, "d3": 0, "d4": 6, "d5": 0, "d6": 2}}) == 13


def test_sub_groups_join_without_counting_a_preference_twice():
    # 1>2, 1>3, 2>3 and 1>2, 4>1, 4>2: five distinct preferences given, and 4>3 by transitivity (4>1>3).
    # trec_eval's help says "5 preferences" for this example; the C program counts 6, as here.
    assert _count({"s1": {"d1": 3, "d2": 2, "d3": 1}, "s2": {"d1": 2, "d2": 1, "d4": 3}}) == 6


def test_preferences_are_transitive_within_a_group_but_ties_are_not():
    docs, pref = jg_preferences({"s1": {"d1": 3, "d2": 2, "d3": 1}, "s2": {"d2": 5, "d4": 4}})
    got = {(docs[i], docs[j]) for i, j in zip(*np.nonzero(pref), strict=True)}
    assert got == {("d1", "d2"), ("d1", "d3"), ("d2", "d3"), ("d2", "d4"), ("d1", "d4")}  # not d3 ~ d4
    # a = b in one sub-group, b > c in another: only b > c (a tie is no preference)
    assert _count({"s1": {"a": 2, "b": 2}, "s2": {"b": 3, "c": 1}}) == 1
    # level 0 in two sub-groups does not join them
    assert _count({"s1": {"a": 2, "b": 0}, "s2": {"c": 3, "d": 0}}) == 2


def test_a_group_that_contradicts_itself_is_an_error_naming_it():
    with pytest.raises(ValueError, match="inconsistent preferences.*'a'.*'b'"):
        jg_preferences({"s1": {"a": 2, "b": 1}, "s2": {"b": 3, "a": 1}})


def test_fulfilled_retrieved_and_implied_preferences():
    # d4 > d1 > d2 = d6 > d3 = d5; ranking d4, d3, d1, d9 (unjudged), d6; d2 and d5 not retrieved
    groups = {"u1": {"s1": {"d1": 3, "d2": 2, "d3": 0, "d4": 6, "d5": 0, "d6": 2}}}
    v = query_values(groups, ["d4", "d3", "d1", "d9", "d6"])
    assert v["prefs_num_prefs_poss"] == 13
    assert v["prefs_num_prefs_ful"] == 9  # includes A retrieved, B not; d2 > d5 (neither) fails
    assert v["prefs_num_prefs_ful_ret"] == 4
    assert v["prefs_simp"] == pytest.approx(9 / 13)
    assert v["prefs_simp_ret"] == pytest.approx(4 / 6)  # the six pairs both retrieved
    assert v["prefs_simp_imp"] == pytest.approx(9 / 12)  # d2 > d5 left out
    assert v["prefs_pair"] == v["prefs_simp"] == v["prefs_avgjg"]  # one group, no pair judged twice


def test_disagreeing_groups_pair_and_avgjg():
    # u1: a > b; u2: b > a, b > c, a > c. Ranking a, b, c.
    groups = {"u1": {"s": {"a": 2, "b": 1}}, "u2": {"s": {"b": 3, "a": 1, "c": 0}}}
    v = query_values(groups, ["a", "b", "c"])
    assert (v["prefs_num_prefs_poss"], v["prefs_num_prefs_ful"]) == (4, 3)
    assert v["prefs_simp"] == pytest.approx(3 / 4)
    assert v["prefs_pair"] == pytest.approx((1 / 2 + 1 + 1) / 3)  # the pair {a, b}: one of two
    assert v["prefs_avgjg"] == pytest.approx((1 + 2 / 3) / 2)


def test_a_group_without_preferences_counts_zero_in_avgjg():
    groups = {"u1": {"s": {"a": 2, "b": 1}}, "u2": {"s": {"a": 1, "b": 1}}}
    v = query_values(groups, ["a", "b"])
    assert v["prefs_simp"] == 1.0 and v["prefs_avgjg"] == 0.5


def test_ties_in_score_are_broken_by_docno_ascending_for_preferences():
    assert rankings({"q": {"b": 5.0, "a": 5.0, "c": 9.0}}) == {"q": ["c", "a", "b"]}


def test_summary_sums_counts_and_averages_ratios_in_query_order():
    prefs = {"q2": {"u": {"s": {"a": 1, "b": 1}}}, "q1": {"u": {"s": {"a": 2, "b": 1}}}}
    res = evaluate_prefs(prefs, {"q1": ["a", "b"], "q2": ["a"]}, ["prefs_num_prefs_poss", "prefs_simp"])
    assert res.query_ids == ["q1", "q2"]  # sorted; q2 has no preference and still counts
    assert res.summary == {"prefs_num_prefs_poss": 1, "prefs_simp": 0.5}
    # -c: a query with preferences the run lacks is evaluated on an empty ranking
    res = evaluate_prefs({**prefs, "q3": {"u": {"s": {"a": 2, "b": 1}}}}, {"q1": ["a", "b"]},
                         ["prefs_num_prefs_poss", "prefs_simp"], complete=True)
    assert res.query_ids == ["q1", "q2", "q3"] and res.summary["prefs_num_prefs_poss"] == 2
    # -M 1 keeps the first document only: a > b is then fulfilled as an implied preference
    res = evaluate_prefs(prefs, {"q1": ["a", "b"]}, ["prefs_num_prefs_ful_ret"], depth=1)
    assert res.values["prefs_num_prefs_ful_ret"] == [0]


def test_the_request_follows_trec_eval_sets_and_order():
    r = prefs_request(["prefs_simp", "prefs_num_prefs_ful"])
    assert r.measures == ("prefs_num_prefs_ful", "prefs_simp") and not r.runid and not r.num_q
    r = prefs_request(["prefs"])
    assert r.measures == PREFS_SET and r.runid and r.num_q
    assert prefs_request(["all_prefs"]).measures == ALL_PREFS
    with pytest.raises(ValueError, match="cannot be computed from preferences"):
        prefs_request(["map"])
    with pytest.raises(ValueError, match="-m prefs"):
        prefs_request([])
    assert len(ALL_PREFS) == 14


def test_output_lines(tmp_path):
    prefs = {"q1": {"u": {"s": {"a": 2, "b": 1}}}}
    lines = ir_eval_prefs(prefs, {"q1": {"b": 2.0, "a": 1.0}}, ["prefs_num_prefs_ful_ret", "prefs_simp"],
                          per_query=True, runid="r")
    assert lines == ["prefs_num_prefs_ful_ret\tq1\t0", "prefs_simp            \tq1\t0.0000",
                     "prefs_num_prefs_ful_ret\tall\t0", "prefs_simp            \tall\t0.0000"]
    with pytest.raises(ValueError, match="nothing to evaluate"):
        ir_eval_prefs(prefs, {"q9": {"a": 1.0}}, ["prefs"], per_query=False)


def test_read_prefs_both_forms_and_its_errors(tmp_path):
    p = tmp_path / "p.txt"
    p.write_text("# comment\nq1 u1 s1 d1 3\n\nq1 u1 s2 d1 2.5\nq1 u2 s1 d2 0\n", encoding="utf-8")
    assert read_prefs(p) == {"q1": {"u1": {"s1": {"d1": 3.0}, "s2": {"d1": 2.5}}, "u2": {"s1": {"d2": 0.0}}}}
    p.write_text("q1 u1 d1 3\nq1 u1 d2 0\n", encoding="utf-8")
    assert read_prefs(p, qrels_form=True) == {"q1": {"u1": {"u1": {"d1": 3.0, "d2": 0.0}}}}
    with pytest.raises(ValueError, match=r"line 1: a prefs line is 'qid jg jsg docno rel_level'"):
        read_prefs(p)
    p.write_text("q1 u1 s1 d1 3\nq1 u1 s1 d1 2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2: document 'd1' appears twice"):
        read_prefs(p)
    p.write_text("q1 u1 s1 d1 high\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 1: the rel_level 'high' is not a finite number"):
        read_prefs(p)


def _rnonrel(levels, ranking):
    v = query_values({"u": {"u": levels}}, ranking)
    return v["prefs_avgjg_Rnonrel"], v["prefs_avgjg_Rnonrel_ret"]


def test_rnonrel_adds_missing_nonrelevant_documents_below_the_ranking():
    # R = 2 relevant, N = 0: 2 * (2 - 0) preferences added, fulfilled for each retrieved relevant one
    assert _rnonrel({"a": 2, "b": 1}, ["b", "a"]) == pytest.approx((0.8, 0.8))  # (0 + 4) / (1 + 4)
    assert _rnonrel({"a": 2, "b": 1, "c": 0}, ["c", "a", "b"])[0] == pytest.approx(3 / 5)  # (1 + 2) / (3 + 2)
    # only one of the two relevant documents retrieved: it alone fulfils the added ones
    assert _rnonrel({"a": 2, "b": 2}, ["a", "x"]) == pytest.approx((0.5, 0.5))


def test_rnonrel_keeps_the_first_r_nonrelevant_documents_as_the_c_program_counts_them():
    # R = 1, N = 4, ranking r0 n2: the C trec_eval gives 1/5 (all 4 preferences + 1 * 1 possible) and,
    # among the retrieved (R = 1, N = 1), 1
    levels = {"r0": 1, "n0": 0, "n1": 0, "n2": 0, "n3": 0}
    assert _rnonrel(levels, ["r0", "n2"]) == pytest.approx((1 / 5, 1.0))
    # R = 2, N = 3, all retrieved in order: 6 / 11 (measured on the C program)
    assert _rnonrel({"a": 2, "b": 1, "c": 0, "d": 0, "e": 0}, list("abcde"))[0] == pytest.approx(6 / 11)


def test_rnonrel_is_zero_for_a_query_with_a_group_without_relevant_documents():
    groups = {"j0": {"s": {"d2": 3, "d1": 0}}, "j1": {"s": {"d5": 0, "d4": 0}}}
    v = query_values(groups, ["d2", "d1", "d0"])
    assert v["prefs_avgjg"] == 0.5 and v["prefs_avgjg_Rnonrel"] == 0.0  # as the C trec_eval 10 gives


def test_rnonrel_on_several_sub_groups_is_refused_with_the_place():
    prefs = {"q1": {"u": {"s1": {"a": 2, "b": 0}, "s2": {"a": 1, "c": 0}}}}
    assert "prefs_avgjg_Rnonrel" not in query_values(prefs["q1"], ["a"])
    assert evaluate_prefs(prefs, {"q1": ["a"]}, ["prefs_simp"]).values["prefs_simp"] == [1.0]
    with pytest.raises(ValueError, match="query 'q1', judgment group 'u' has several sub-groups"):
        evaluate_prefs(prefs, {"q1": ["a"]}, ["prefs_avgjg_Rnonrel"])
