"""Exercises of notebook 03 (corpus, chunking, keyword ground truth) and their solutions."""

from __future__ import annotations

from ragworkbook.corpus.chunking import chunk_pages
from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.corpus.ground_truth import keyword_diagnostics, keyword_qrels
from ragworkbook.corpus.pages import load_corpus
from ragworkbook.workbook.exercises import Count, Mistake, Solution, exercise, same_items, solves


def _split_keywords(size: int, overlap: int) -> list[str]:
    """The eval-set keywords that ``size``-character windows with ``overlap`` split at a boundary."""
    corpus = load_corpus()
    diags = keyword_diagnostics(chunk_pages(corpus, size=size, overlap=overlap), load_eval_set(), corpus)
    return [d.keyword for d in diags if d.split]


def _longest_keyword() -> str:
    return max((it.keyword or "" for it in load_eval_set()), key=len)


def _count(keyword: str) -> int:
    return len(keyword_qrels(chunk_pages(load_corpus()), {"q4": keyword})["q4"])


@exercise("03.1", "A more specific keyword",
          "The keyword 'Adam' marks 3 chunks relevant to 'What optimizer was used for training?'. Predict "
          "how many chunks the keyword 'Adam optimizer' marks, then compute it with keyword_qrels.",
          reveals=[r"code:keyword_qrels\([^)]*Adam optimizer"])
def _specific() -> Count:
    return Count(_count("Adam optimizer"), "the number of chunks", mistakes=[
        Mistake(_count("Adam"), "that is what 'Adam' alone matches: the longer keyword is more specific"),
        Mistake(0, "the notes do name the optimizer with its full name somewhere: where is training "
                   "described?")],
        more="only the chunks that write 'Adam optimizer' match, not every chunk that says 'Adam'",
        fewer="count again the chunks that 'Adam' matches and read what follows the word")


@solves("03.1")
def _solve_specific() -> Solution:
    n, broad = _count("Adam optimizer"), _count("Adam")
    return Solution(n, f"'Adam optimizer' matches {n} chunk instead of {broad}: the other chunks say 'Adam' "
                       "without the word 'optimizer' right after it. A more specific keyword marks fewer "
                       "chunks; whether they are the right ones is what to check, by reading them.")


@exercise("03.2", "Keywords a 300/30 chunker splits",
          "How many of the eight eval-set keywords do 300-character windows with 30 characters of overlap "
          "split across a window boundary? Predict from the overlap, then count with keyword_diagnostics.",
          reveals=[r"code:overlap\s*=\s*30\b", r"code:size\s*=\s*300\b"])
def _split_300() -> Count:
    return Count(len(_split_keywords(300, 30)), "the number of split keywords",
                 more="consecutive windows share 30 characters: can a keyword shorter than that fall across "
                      "a boundary, with no window holding it whole?")


@solves("03.2")
def _solve_split_300() -> Solution:
    n = len(_split_keywords(300, 30))
    longest = _longest_keyword()
    return Solution(n, "None can be: consecutive windows share 30 characters, so any string of at most 31 "
                       "characters lies wholly inside one window (the one corner case is a short last window "
                       f"that was dropped), and the longest keyword, {longest!r}, has {len(longest)} "
                       f"characters. keyword_diagnostics finds {n} split keywords, as the guarantee says: "
                       "the window size does not matter, only the overlap against the keyword's length.")


@exercise("03.3", "Keywords a 350/0 chunker splits",
          "Now chunk with 350-character windows and no overlap. Predict which keywords are split, then "
          "check with keyword_diagnostics. Answer with a list of keywords.",
          reveals=[r"code:size\s*=\s*350\b"],
          reveals_value=False)  # the keywords themselves are printed in every table of the notebook
def _check_split_0(answer: object) -> tuple[bool, str]:
    return same_items(answer, _split_keywords(350, 0), what="the split keywords")


@solves("03.3")
def _solve_split_0() -> Solution:
    split = _split_keywords(350, 0)
    return Solution(split, f"Without overlap, 350-character windows split {split}: a window boundary falls "
                           "inside it where a page states it, so that chunk no longer contains the keyword. "
                           "400-character windows cut 'Pdrop' instead: which keyword breaks depends on where "
                           "the boundaries land, so it is luck, not a property of the keyword.")
