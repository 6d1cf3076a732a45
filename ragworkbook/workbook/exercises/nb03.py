"""Exercises of notebook 03 (corpus, chunking, keyword ground truth) and their solutions."""

from __future__ import annotations

from typing import Any

from ragworkbook.corpus.chunking import chunk_pages
from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.corpus.ground_truth import keyword_diagnostics, keyword_qrels
from ragworkbook.corpus.pages import load_corpus
from ragworkbook.workbook.exercises import Count, Mistake, Solution, exercise, same_items, solves


def _split_keywords(overlap: int) -> list[str]:
    """The eval-set keywords that 400-character windows with ``overlap`` split at a boundary."""
    corpus = load_corpus()
    diags = keyword_diagnostics(chunk_pages(corpus, size=400, overlap=overlap), load_eval_set(), corpus)
    return [d.keyword for d in diags if d.split]


def _longest_keyword() -> str:
    return max((it.keyword or "" for it in load_eval_set()), key=len)


@exercise("03.1", "Keywords the 400/50 chunker splits",
          "How many of the eight eval-set keywords does the documented 400/50 chunker split across a "
          "window boundary? Predict from the overlap, then count with keyword_diagnostics.",
          reveals=[r"code:keyword_diagnostics\(", r"no splits here", r"can be split by a window"])
def _split_50() -> Count:
    return Count(len(_split_keywords(50)), "the number of split keywords",
                 more="consecutive windows share 50 characters: can a keyword shorter than that fall "
                      "across a boundary, with no window holding it whole?")


@solves("03.1")
def _solve_split_50() -> Solution:
    n = len(_split_keywords(50))
    longest = _longest_keyword()
    return Solution(n, "None can be: consecutive windows share 50 characters, so any string of at most 51 "
                       "characters lies wholly inside one window (the one corner case is a short last "
                       f"window that was dropped), and the longest keyword, {longest!r}, has {len(longest)} "
                       f"characters. keyword_diagnostics finds {n} split keywords, as the guarantee says. "
                       "To see a split, take the overlap away (exercise 03.3).")


def _count(keyword: str) -> int:
    return len(keyword_qrels(chunk_pages(load_corpus()), {"q2": keyword})["q2"])


@exercise("03.2", "A more specific keyword",
          "The keyword 'dmodel' marks 11 chunks relevant to 'What is the model's embedding dimension?'. "
          "Predict how many chunks the keyword 'dmodel = 512' marks, then compute it with keyword_qrels.",
          reveals=[r"states 512", r"code:keyword_qrels\([^)]*512"])
def _specific() -> Count:
    return Count(_count("dmodel = 512"), "the number of chunks", mistakes=[
        Mistake(_count("dmodel"), "that is what 'dmodel' alone matches: the longer keyword is more specific"),
        Mistake(0, "the notes do state the width as 'dmodel = 512' somewhere: where is the model width "
                   "given?")],
        more="only the chunks that state the width match, not every formula that uses it",
        fewer="the width is stated in more than one place (the architecture and the embeddings)")


@solves("03.2")
def _solve_specific() -> Solution:
    n, broad = _count("dmodel = 512"), _count("dmodel")
    return Solution(n, f"'dmodel = 512' matches {n} chunks instead of {broad}: the ones that state the "
                       "width, not every formula that uses it. The Recall@3 ceiling for the question goes "
                       f"from 3/{broad} = {3 / broad:.2f} to {min(3, n)}/{n} = {min(3, n) / n:.2f}. A "
                       "keyword should name the answer, not the topic.")


@exercise("03.3", "Keywords the 400/0 chunker splits",
          "Now chunk with 400-character windows and no overlap. Predict which keywords are split, then "
          "check with keyword_diagnostics. Answer with a list of keywords.",
          reveals=[r"code:overlap\s*=\s*0", r"status='split'", r"cut exactly through"],
          reveals_value=False)  # the keywords themselves are printed in every table of the notebook
def _check_split_0(answer: Any) -> tuple[bool, str]:
    return same_items(answer, _split_keywords(0), what="the split keywords")


@solves("03.3")
def _solve_split_0() -> Solution:
    split = _split_keywords(0)
    return Solution(split, f"Without overlap only {split} is split: the window boundary of page 12 falls "
                           "inside it, so the chunk that states the base model's dropout rate no longer "
                           "contains the keyword. Which keyword breaks depends on where the boundaries "
                           "land, so it is luck, not a property of the keyword.")
