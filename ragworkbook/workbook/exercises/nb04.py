"""Exercises of notebook 04 (dense, BM25 and hybrid retrieval) and their solutions."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from ragworkbook.corpus.chunking import chunk_pages
from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.corpus.pages import load_corpus
from ragworkbook.retrieval.bm25 import BM25Retriever
from ragworkbook.retrieval.filters import FilteredRetriever, page_filter
from ragworkbook.stats.resampling import paired_test
from ragworkbook.workbook.exercises import Mistake, Number, Solution, exercise, read_count, solves

if TYPE_CHECKING:
    from ragworkbook.corpus.chunking import Chunk
    from ragworkbook.corpus.document import Corpus
    from ragworkbook.corpus.eval_set import EvalSet
    from ragworkbook.retrieval.dense import DenseRetriever

_TARGET = "p05-c02"  # the chunk that states h = 8
_DENSE_RANK = 16  # as the exercise's task states it; checked against the retriever by the tests


@lru_cache(maxsize=1)
def _setup() -> tuple[list[Chunk], EvalSet, Corpus]:
    return chunk_pages(load_corpus()), load_eval_set(), load_corpus()


def _rank(retriever: BM25Retriever | FilteredRetriever | DenseRetriever, question: str) -> int:
    hits = retriever.search(question, k=len(retriever.chunks))
    return next(h.rank for h in hits if h.id == _TARGET)


def _bm25_rank() -> int:
    chunks, eval_set, _ = _setup()
    return _rank(BM25Retriever(chunks), eval_set["q1"].question)


@exercise("04.1", "Does BM25 find h = 8?",
          "Dense retrieval puts the chunk that states h = 8 (p05-c02) at rank 16 for 'How many attention "
          "heads did they use?'. Predict its rank under BM25, then search with BM25Retriever and compare.",
          reveals=[r"code:bm25\.search\(", r"code:rank_of\(bm25"])
def _check_bm25(answer: object) -> tuple[bool, str]:
    rank, why = read_count(answer, "the rank")
    if rank is None:
        return False, why
    want = _bm25_rank()
    if rank == want:
        return True, f"BM25 ranks p05-c02 at {want}"
    if rank == _DENSE_RANK:
        return False, "16 is the dense retriever's rank; BM25 ranks by shared words, not by meaning"
    if rank < want:
        return False, (f"BM25 ranks it further down than {rank}: which of the question's words does the "
                       "chunk contain, and how many other chunks contain 'attention' and 'heads'?")
    return False, f"BM25 ranks it higher up than {rank} (the corpus has {len(_setup()[0])} chunks)"


@solves("04.1")
def _solve_bm25() -> Solution:
    rank = _bm25_rank()
    return Solution(rank, f"BM25 puts it at rank {rank}, far below dense. BM25 matches words: the question's "
                          "'attention' and 'heads' fill the appendix pages, while the chunk writes the "
                          "count as the symbol h = 8 and says 'parallel attention layers'. Lexical matching "
                          "helps only when the question uses the answer's words.")


def _dense() -> DenseRetriever:
    from ragworkbook.retrieval.dense import DenseRetriever  # loads MiniLM: only when asked

    return DenseRetriever(_setup()[0])


def _rank_with_pages(pages: list[int]) -> int | None:
    _, eval_set, _ = _setup()
    filtered = FilteredRetriever(_dense(), page_filter(include=pages))
    hits = filtered.search(eval_set["q1"].question, k=filtered.n_kept)
    return next((h.rank for h in hits if h.id == _TARGET), None)


def _most_pages() -> list[int]:
    """The largest set of pages whose filter puts p05-c02 in the top 3: every page with no chunk ranked
    above it by the dense retriever, plus page 5 (two chunks of page 5 outrank it, so it can be third
    at best)."""
    _, eval_set, corpus = _setup()
    hits = _dense().search(eval_set["q1"].question, k=len(_setup()[0]))
    above = {h.chunk.page for h in hits[:_rank(_dense(), eval_set["q1"].question) - 1]} - {5}
    return sorted(p.page for p in corpus.pages if p.page not in above)


@exercise("04.2", "A page filter that fixes the head-count miss",
          "Find the largest list of pages to keep (a page filter applied before ranking) for which dense "
          "retrieval puts p05-c02 in the top 3 for the head-count question. Predict first: how many of the "
          "17 pages can you keep?",
          reveals=[r"code:page_filter\(", r"code:_most_pages"])
def _check_filter(answer: object) -> tuple[bool, str]:
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return False, f"give the pages to keep as a list of page numbers, got {type(answer).__name__}"
    try:
        pages = sorted({int(p) for p in answer})
    except (TypeError, ValueError):
        return False, "give the pages to keep as whole page numbers, e.g. [3, 4, 5]"
    if not pages:
        return False, "keep at least one page"
    rank = _rank_with_pages(pages)
    if rank is None:
        return False, "that filter drops page 5, where h = 8 is stated"
    if rank > 3:
        return False, f"keeping pages {pages}, p05-c02 is at rank {rank}: still outside the top 3"
    best = _most_pages()
    if len(pages) < len(best):
        return False, (f"keeping pages {pages}, p05-c02 is at rank {rank}, but you can keep more pages: "
                       "which of the pages you dropped have no chunk ranked above it?")
    return True, f"keeping {len(pages)} of 17 pages, p05-c02 is at rank {rank}"


@solves("04.2")
def _solve_filter() -> Solution:
    _, eval_set, corpus = _setup()
    keep = _most_pages()
    rank = _rank_with_pages(keep)
    dropped = sorted(p.page for p in corpus.pages if p.page not in keep)
    no_appendix = _rank_with_pages([p.page for p in corpus.pages if p.page not in (15, 16)])
    return Solution(keep, f"Every chunk ranked above p05-c02 must go, except the two others of page 5, "
                          f"which outrank it whatever the filter: that drops pages {dropped} and keeps "
                          f"{len(keep)} of 17, and p05-c02 reaches rank {rank}. A page or section filter "
                          "only fixes this miss when it already knows which page holds the answer. The "
                          f"appendix filter of the notebook (pages 15 and 16 out) moves it from "
                          f"{_DENSE_RANK} to {no_appendix}.")


def _min_p(n: int = 8) -> float:
    return paired_test([1.0] * n, [0.0] * n, method="randomization").p_value


@exercise("04.3", "The smallest p-value 8 questions can give",
          "The exact randomisation test flips the signs of the 8 per-question differences in all 2^8 = 256 "
          "ways. Predict the smallest two-sided p-value it can ever report on 8 questions, to 3 decimals "
          "(or as a fraction), then compute it with paired_test on a system that wins every question.",
          reveals=[r"code:paired_test\(\[1\.0\]", r"2\s*/\s*256", r"1\s*/\s*128"])
def _min_p_answer() -> Number:
    extreme = "how many of the 256 sign patterns are at least as extreme as 'better on every question'?"
    return Number(_min_p(), 3, "the smallest p-value", share=True, mistakes=[
        Mistake(_min_p() / 2, "that is one-sided: the mirror-image pattern (worse on every question) is as "
                              "extreme, and a two-sided test counts it too"),
        Mistake(0.05, "0.05 is the usual threshold, not the smallest p-value the test can give"),
        Mistake(0.0, "the observed sign pattern is one of the 256 and always counts, so p cannot be 0")],
        low=extreme, high=extreme)


@solves("04.3")
def _solve_min_p() -> Solution:
    p = _min_p()
    return Solution(p, f"Only the observed sign pattern and its mirror image are as extreme as 'better on "
                       f"every question', so p = 2 / 256 = {p:.4f}. Below 5% needs at least 6 questions "
                       f"that all favour one system (2 / 2^6 = {_min_p(6):.3f} when the other two are "
                       "ties): with 8 questions the test can only see large, consistent differences.")
