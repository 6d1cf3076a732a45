"""Exercises of notebook 03 (corpus, chunking, keyword ground truth) and their solutions."""

from __future__ import annotations

from typing import Any

from ragworkbook.workbook.exercises import Solution, exercise, same_items, solves


def _split_keywords(overlap: int) -> list[str]:
    """The eval-set keywords that 400-character windows with ``overlap`` split at a boundary."""
    from ragworkbook.corpus.chunking import chunk_pages
    from ragworkbook.corpus.eval_set import load_eval_set
    from ragworkbook.corpus.ground_truth import keyword_diagnostics
    from ragworkbook.corpus.pages import load_corpus

    corpus = load_corpus()
    diags = keyword_diagnostics(chunk_pages(corpus, size=400, overlap=overlap), load_eval_set(), corpus)
    return [d.keyword for d in diags if d.split]


def _longest_keyword() -> str:
    from ragworkbook.corpus.eval_set import load_eval_set

    return max((it.keyword or "" for it in load_eval_set()), key=len)


@exercise("03.1", "Keywords the 400/50 chunker splits",
          "How many of the eight eval-set keywords does the documented 400/50 chunker split across a window "
          "boundary? Predict from the overlap guarantee, then count with keyword_diagnostics.")
def _check_split_50(answer: Any) -> tuple[bool, str]:
    if isinstance(answer, bool) or not isinstance(answer, int):
        return False, f"give a count (a whole number), got {type(answer).__name__}"
    want = len(_split_keywords(50))
    if answer == want:
        return True, f"{want} keywords are split with 50 characters of overlap"
    return False, f"{answer} is not the count; look at the 'split' column of keyword_diagnostics"


@solves("03.1")
def _solve_split_50() -> Solution:
    n = len(_split_keywords(50))
    longest = _longest_keyword()
    return Solution(n, f"None can be: consecutive windows share 50 characters, so any string of at most 51 "
                       f"characters lies wholly inside one window (the one corner case is a short last "
                       f"window that was dropped), and the longest keyword, {longest!r}, has {len(longest)} "
                       f"characters. keyword_diagnostics finds {n} split keywords, as the guarantee says. "
                       "To see a split, take the overlap away (exercise 03.2).")


@exercise("03.2", "Keywords the 400/0 chunker splits",
          "Now chunk with 400-character windows and no overlap. Predict which keywords are split, then "
          "check with keyword_diagnostics. Answer with a list of keywords.")
def _check_split_0(answer: Any) -> tuple[bool, str]:
    return same_items(answer, _split_keywords(0), what="the split keywords")


@solves("03.2")
def _solve_split_0() -> Solution:
    split = _split_keywords(0)
    return Solution(split, f"Without overlap only {split} is split: the window boundary of page 12 falls "
                           "inside it, so the chunk that states the base model's dropout rate no longer "
                           "contains the keyword. Which keyword breaks depends on where the boundaries "
                           "land, so it is luck, not a property of the keyword.")


def _count(keyword: str) -> int:
    from ragworkbook.corpus.chunking import chunk_pages
    from ragworkbook.corpus.ground_truth import keyword_qrels
    from ragworkbook.corpus.pages import load_corpus

    return len(keyword_qrels(chunk_pages(load_corpus()), {"q2": keyword})["q2"])


@exercise("03.3", "A more specific keyword",
          "The keyword 'dmodel' marks 11 chunks relevant to 'What is the model's embedding dimension?'. "
          "Predict how many chunks the keyword 'dmodel = 512' marks, then compute it with keyword_qrels.")
def _check_specific(answer: Any) -> tuple[bool, str]:
    if isinstance(answer, bool) or not isinstance(answer, int):
        return False, f"give a count (a whole number), got {type(answer).__name__}"
    want = _count("dmodel = 512")
    if answer == want:
        return True, f"'dmodel = 512' matches {want} chunks"
    return False, f"{answer} chunks is too {'many' if answer > want else 'few'}"


@solves("03.3")
def _solve_specific() -> Solution:
    n, broad = _count("dmodel = 512"), _count("dmodel")
    return Solution(n, f"'dmodel = 512' matches {n} chunks instead of {broad}: the ones that state the "
                       "width, not every formula that uses it. The Recall@3 ceiling for the question goes "
                       f"from 3/{broad} = {3 / broad:.2f} to {min(3, n)}/{n} = {min(3, n) / n:.2f}. A "
                       "keyword should name the answer, not the topic.")
