"""Exercises of notebook 04 (dense, BM25 and hybrid retrieval) and their solutions."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ragworkbook.workbook.exercises import Solution, close, exercise, solves

_TARGET = "p05-c02"  # the chunk that states h = 8


@lru_cache(maxsize=1)
def _setup() -> tuple[Any, Any, Any]:
    from ragworkbook.corpus.chunking import chunk_pages
    from ragworkbook.corpus.eval_set import load_eval_set
    from ragworkbook.corpus.pages import load_corpus

    return chunk_pages(load_corpus()), load_eval_set(), load_corpus()


def _rank(retriever: Any, question: str) -> int:
    hits = retriever.search(question, k=len(retriever.chunks))
    return next(h.rank for h in hits if h.id == _TARGET)


def _bm25_rank() -> int:
    from ragworkbook.retrieval.bm25 import BM25Retriever

    chunks, eval_set, _ = _setup()
    return _rank(BM25Retriever(chunks), eval_set["q1"].question)


@exercise("04.1", "Does BM25 find h = 8?",
          "Dense retrieval puts the chunk that states h = 8 (p05-c02) at rank 16 for 'How many attention "
          "heads did they use?'. Predict its rank under BM25, then search with BM25Retriever and compare.")
def _check_bm25(answer: Any) -> tuple[bool, str]:
    if isinstance(answer, bool) or not isinstance(answer, int):
        return False, f"a rank is a whole number, got {type(answer).__name__}"
    want = _bm25_rank()
    if answer == want:
        return True, f"BM25 ranks p05-c02 at {want}"
    return False, f"rank {answer} is too {'low' if answer > want else 'high'} (off by {abs(answer - want)})"


@solves("04.1")
def _solve_bm25() -> Solution:
    rank = _bm25_rank()
    return Solution(rank, f"BM25 puts it at rank {rank}, far below dense. BM25 matches words: the question's "
                          "'attention' and 'heads' fill the appendix pages, while the chunk writes the "
                          "count as the symbol h = 8 and says 'parallel attention layers'. Lexical matching "
                          "helps only when the question uses the answer's words.")


def _dense() -> Any:
    from ragworkbook.retrieval.dense import DenseRetriever

    return DenseRetriever(_setup()[0])


def _rank_with_pages(pages: list[int]) -> int | None:
    from ragworkbook.retrieval.filters import FilteredRetriever, page_filter

    _, eval_set, _ = _setup()
    filtered = FilteredRetriever(_dense(), page_filter(include=pages))
    hits = filtered.search(eval_set["q1"].question, k=filtered.n_kept)
    return next((h.rank for h in hits if h.id == _TARGET), None)


@exercise("04.2", "A page filter that fixes the head-count miss",
          "Find a list of pages to keep (a page filter applied before ranking) for which dense retrieval "
          "puts p05-c02 in the top 3 for the head-count question. Predict first: how many of the 17 pages "
          "can you keep?")
def _check_filter(answer: Any) -> tuple[bool, str]:
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return False, f"give the pages to keep as a list of page numbers, got {type(answer).__name__}"
    pages = sorted({int(p) for p in answer})
    if not pages:
        return False, "keep at least one page"
    rank = _rank_with_pages(pages)
    if rank is None:
        return False, "that filter drops page 5, where h = 8 is stated"
    if rank > 3:
        return False, f"keeping pages {pages}, p05-c02 is at rank {rank}: still outside the top 3"
    return True, f"keeping {len(pages)} of 17 pages, p05-c02 is at rank {rank}"


@solves("04.2")
def _solve_filter() -> Solution:
    _, eval_set, corpus = _setup()
    hits = _dense().search(eval_set["q1"].question, k=len(_setup()[0]))
    keep = sorted(p.page for p in corpus.pages)
    order = []  # drop the page of the best-ranked wrong chunk, again and again
    while (rank := _rank_with_pages(keep)) is not None and rank > 3:
        worst = next(h.chunk.page for h in hits if h.chunk.page in keep and h.chunk.page != 5)
        keep.remove(worst)
        order.append(worst)
    no_appendix = _rank_with_pages([p.page for p in corpus.pages if p.page not in (15, 16)])
    unfiltered = _rank(_dense(), eval_set["q1"].question)
    return Solution(keep, f"Dropping the page of the best-ranked wrong chunk, one page at a time, takes "
                          f"{len(order)} pages out ({order}) before p05-c02 reaches rank {rank}; only pages "
                          f"{keep} remain. Two other chunks of page 5 still outrank it, so a page or "
                          "section filter only fixes this miss when it already knows which page holds the "
                          "answer. The appendix filter of the notebook (pages 15 and 16 out) moves it from "
                          f"{unfiltered} to {no_appendix}.")


def _min_p() -> float:
    from ragworkbook.stats.resampling import paired_test

    return paired_test([1.0] * 8, [0.0] * 8, method="randomization").p_value


@exercise("04.3", "The smallest p-value 8 questions can give",
          "The exact randomisation test flips the signs of the 8 per-question differences in all 2^8 = 256 "
          "ways. Predict the smallest two-sided p-value it can ever report on 8 questions, then compute it "
          "with paired_test on a system that wins every question.")
def _check_min_p(answer: Any) -> tuple[bool, str]:
    return close(answer, _min_p(), 1e-4, what="the smallest p-value")


@solves("04.3")
def _solve_min_p() -> Solution:
    p = _min_p()
    return Solution(p, f"Only the observed sign pattern and its mirror image are as extreme as 'better on "
                       f"every question', so p = 2 / 256 = {p:.4f}. Below 5% needs at least 6 questions "
                       "that all favour one system (2 / 2^6 = 0.031 when the other two are ties): with 8 "
                       "questions the test can only see large, consistent differences.")
