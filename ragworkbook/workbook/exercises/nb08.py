"""Exercises of notebook 08 (building an eval set from generated questions) and their solutions."""

from __future__ import annotations

import re
from functools import lru_cache

from ragworkbook.corpus.chunking import Chunk, chunk_pages
from ragworkbook.corpus.pages import load_corpus
from ragworkbook.corpus.synthetic import (
    FilterResult,
    copy_ratio,
    filter_questions,
    generate_questions,
    load_examples,
)
from ragworkbook.llm import get_generator
from ragworkbook.paths import data_path
from ragworkbook.workbook.exercises import Count, Mistake, Number, Solution, exercise, solves

_QUESTION = "How many identical layers are in the encoder stack?"
_CHUNK = "p03-c02"


def _chunks() -> list[Chunk]:
    return chunk_pages(load_corpus())


def _chunk_text() -> str:
    return next(c.text for c in _chunks() if c.id == _CHUNK)


def _ratio() -> float:
    return copy_ratio(_QUESTION, _chunk_text())


@exercise("08.1", "How much of a question is copied",
          "Predict copy_ratio (the longest run of words shared with the chunk / the question's length in "
          "words) of 'How many identical layers are in the encoder stack?' against chunk p03-c02, to 3 "
          "decimals (or as a fraction), then compute it.",
          reveals=[r"code:copy_ratio\("])
def _ratio_answer() -> Number:
    n = len(re.findall(r"\w+", _QUESTION))
    return Number(_ratio(), 3, "the copy ratio", share=True, mistakes=[
        Mistake(1.0, "the question is not one sentence of the chunk copied whole: find the longest run of "
                     "consecutive words the two share"),
        Mistake(0.0, "some consecutive words of the question do appear in the chunk")],
        low=f"count the words of the longest shared run again (the question has {n} words)",
        high="the ratio counts one unbroken run of shared words, not every shared word")


@solves("08.1")
def _solve_ratio() -> Solution:
    value = _ratio()
    n = len(re.findall(r"\w+", _QUESTION))
    return Solution(value, f"The question has {n} words; the longest run it shares word for word with the "
                           f"chunk covers {round(value * n)} of them, so the ratio is {value:.3f} - far "
                           "below the 0.7 at which the filter calls a question a copy, although its "
                           "content words come from the chunk. The filter catches copied sentences, not "
                           "borrowed words.")


@lru_cache(maxsize=1)
def _recorded_result() -> FilterResult:
    """Notebook 08's generation and filtering, replayed from its recording (same calls as the notebook)."""
    chunks = _chunks()
    # replay the notebook's recorded answers (also while the notebook itself is being recorded)
    generator = get_generator(backend="replay", recording=data_path("recordings", "08_eval_set.json"))
    candidates = generate_questions(chunks, generator, examples=load_examples(chunks), n_per_chunk=3,
                                    options={"num_predict": 128}, progress=False)
    return filter_questions(candidates, chunks, generator, options={"num_predict": 64}, progress=False)


@exercise("08.2", "How many candidates survive",
          "Predict how many of the generated candidates survive every filter (a whole number), then count "
          "result.kept.",
          reveals=[r"code:filter_questions\(", r"questions survive", r"\bkept\s+\d+", r"kept \(\d+\)"])
def _kept_answer() -> Count:
    result = _recorded_result()
    return Count(len(result.kept), "the number of survivors",
                 more="read the answers above again: how many of them are a few words copied from the "
                      "chunk, as the span filter demands?",
                 fewer="some candidates do pass every filter (not all of them are right, as section 2 shows)")


@solves("08.2")
def _solve_kept() -> Solution:
    result = _recorded_result()
    counts = {k: v for k, v in result.counts().items() if v and k != "kept"}
    biggest = max(counts, key=counts.get) if counts else "none"
    listed = ", ".join(f"{k} {v}" for k, v in counts.items())
    return Solution(len(result.kept), f"{len(result.kept)} of {len(result.candidates)} candidates survive "
                                      f"({listed}). The largest loss is {biggest}: with a 135M model the "
                                      "filters, not the generator, decide what the eval set is.")


def _copies_hit_rate(retriever: str = "dense") -> tuple[float, int]:
    from ragworkbook.evaluation.retrieval import evaluate_retriever  # the retrievers load MiniLM
    from ragworkbook.retrieval.runs import build_retriever

    copies = [q for q in _recorded_result().candidates if q.dropped_by == "copies_chunk"]
    if not copies:
        raise ValueError("no candidate was dropped as a copy of its chunk in the recorded run")
    items = [{"id": q.id, "question": q.question, "reference": q.answer} for q in copies]
    labels = {q.id: {q.chunk_id: 1} for q in copies}
    res = evaluate_retriever(build_retriever(retriever, _chunks()), items, labels)
    return float(res.mean["hit_rate@3"]), len(copies)


@exercise("08.3", "The easy questions",
          "Predict the dense retriever's hit rate@3 on the questions dropped as copies of their chunk (each "
          "labelled with its source chunk), to 3 decimals (or as a fraction), then compute it with "
          "evaluate_retriever.",
          reveals=[r"code:evaluate_retriever\("])
def _copies_answer() -> Number:
    return Number(_copies_hit_rate()[0], 3, "hit rate@3", share=True, mistakes=[
        Mistake(_copies_hit_rate("bm25")[0],
                "that is BM25's hit rate; the task asks for the dense retriever")],
        low="a question made of its chunk's own sentence is an easy query: the source chunk is usually found",
        high="even a copied sentence is not always found: an embedding of a 400-character window averages "
             "over more than that one sentence")


@solves("08.3")
def _solve_copies() -> Solution:
    rate, n = _copies_hit_rate()
    bm25, _ = _copies_hit_rate("bm25")
    return Solution(rate, f"On the {n} copied questions the dense retriever finds the source chunk in its "
                          f"top 3 at a rate of {rate:.3f}, BM25 at {bm25:.3f}: a question made of the "
                          "chunk's own sentence is an easy query, easiest for word matching. Left in, such "
                          "questions would make a retriever look good, and the lexical one best; that is why "
                          "the filter drops them.")
