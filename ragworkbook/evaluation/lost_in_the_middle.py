"""A "lost in the middle" experiment: the same chunks, in different orders.

Long-context models are known to use information at the start or the end of
their context better than information in the middle (Liu et al., 2023, "Lost
in the Middle"). This module runs the controlled version of that experiment on
a RAG pipeline: for each question, one chunk that states the answer (the
*gold* chunk, from the relevance judgements) and ``n_contexts - 1``
distractors (the highest-ranked retrieved chunks that do not state it) are
given to the generator with the gold chunk moved through every position
1 .. ``n_contexts``. Only the order changes; the chunk set, the prompt and the
decoding options stay the same, so any change in the answer is caused by the
order alone.

The **placement strategy** the textbook chapter recommends follows from that
finding: put the highest-scored chunks at the start and the end of the context,
the weakest in the middle (:func:`edges_order`; LangChain calls it "long-context
reorder"). :func:`placement_experiment` measures it: the same top-``k``
retrieved chunks for each question, given to the generator in retrieval order,
edges-first order, and reversed, with the share of correct answers and where
the chunk that states the answer ended up.

Each answer is scored against the reference answer:

- ``correct``: the answer states the reference's number(s) (via
  :func:`ragworkbook.metrics.numeric.check_numbers`: no reference number missing) when
  the reference has a number, else it contains the question's keyword
  (case-insensitive; e.g. "Adam", "P100");
- ``token_f1``: SQuAD-style token F1 with the reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    import pandas as pd

    from ragworkbook._types import JSON
    from ragworkbook.corpus.eval_set import EvalItem, EvalSet
    from ragworkbook.protocols import AnswerLike
    from ragworkbook.retrieval.base import Hit, Retriever

T = TypeVar("T")

__all__ = ["OrderTrial", "place", "states_reference", "lost_in_the_middle", "position_summary", "edges_order",
           "PLACEMENTS", "PlacementTrial", "placement_experiment", "placement_summary"]


@dataclass
class OrderTrial:
    """One (question, gold position) run: the chunk order given and the answer."""

    question_id: str
    position: int  # 1-based position of the gold chunk
    order: list[str]  # chunk ids in the order given to the generator
    answer: str
    correct: bool
    token_f1: float


class ChunkAnswerer(Protocol):
    """A pipeline that answers from the chunks it is given, in their order
    (:meth:`ragworkbook.pipeline.naive.NaiveRAG.answer_from`)."""

    def answer_from(self, question: str, contexts: Sequence[Hit]) -> AnswerLike: ...


def place(gold: T, distractors: Sequence[T], position: int) -> list[T]:
    """``distractors`` in their order with ``gold`` inserted at 1-based ``position``."""
    n = len(distractors) + 1
    if not 1 <= position <= n:
        raise ValueError(f"position must be between 1 and {n}, got {position}")
    out = list(distractors)
    out.insert(position - 1, gold)
    return out


def states_reference(answer: str, reference: str, keyword: str | None = None) -> bool:
    """True when ``answer`` states the reference's numbers (all of them), or, when the
    reference has no number, contains ``keyword`` (case-insensitive). False otherwise."""
    from ragworkbook.metrics.numeric import check_numbers, extract_numbers

    if extract_numbers(reference):
        chk = check_numbers(answer, reference=reference)
        return not chk.missing and not chk.contradicted
    if not keyword:
        raise ValueError("the reference has no number: pass the keyword that marks a correct answer")
    return keyword.lower() in answer.lower()


def _generate(pipeline: ChunkAnswerer, question: str, chunks: Sequence[Hit]) -> str:
    for name in ("answer_from", "answer_with_contexts", "generate_answer"):
        fn = getattr(pipeline, name, None)
        if callable(fn):
            out = fn(question, list(chunks))
            return str(getattr(out, "answer", out))
    raise TypeError(f"{type(pipeline).__name__} has no method to answer from given chunks "
                    "(expected answer_from(question, chunks))")


def lost_in_the_middle(pipeline: ChunkAnswerer, eval_set: EvalSet | Iterable[EvalItem | Mapping[str, JSON]],
                       qrels: Mapping[str, Mapping[str, float]], *, retriever: Retriever | None = None,
                       n_contexts: int = 5, depth: int = 30, progress: bool = True) -> list[OrderTrial]:
    """Run the order experiment over ``eval_set`` -> one :class:`OrderTrial` per question x position.

    ``retriever`` (default ``pipeline.retriever``) ranks the chunks: the gold chunk is
    the best-ranked relevant chunk within ``depth`` results, the distractors the
    ``n_contexts - 1`` best-ranked non-relevant ones (kept in rank order). A question
    with no relevant chunk within ``depth`` is skipped (it has no gold chunk).
    """
    from tqdm.auto import tqdm

    from ragworkbook.corpus.eval_set import as_items
    from ragworkbook.metrics.generation import token_f1

    if n_contexts < 2:
        raise ValueError(f"n_contexts must be at least 2 (a gold chunk and a distractor), got {n_contexts}")
    retriever = retriever if retriever is not None else getattr(pipeline, "retriever", None)
    if retriever is None:
        raise ValueError("pass retriever=... (the pipeline has no .retriever)")
    items = as_items(eval_set)
    trials: list[OrderTrial] = []
    for it in tqdm(items, desc="lost in the middle", disable=not progress, leave=False):
        rel = qrels.get(it.id, {})
        hits = retriever.search(it.question, k=depth)
        gold = next((h for h in hits if rel.get(h.id, 0) > 0), None)
        if gold is None:
            continue
        distractors = [h for h in hits if rel.get(h.id, 0) <= 0][: n_contexts - 1]
        for pos in range(1, len(distractors) + 2):
            order = place(gold, distractors, pos)
            answer = _generate(pipeline, it.question, order)
            trials.append(OrderTrial(it.id, pos, [h.id for h in order], answer,
                                     states_reference(answer, it.reference, it.keyword),
                                     token_f1(answer, it.reference)))
    return trials


def position_summary(trials: Sequence[OrderTrial]) -> pd.DataFrame:
    """Per gold position: share of correct answers, mean token F1, number of questions
    -> DataFrame indexed by position."""
    import pandas as pd

    df = pd.DataFrame([{"position": t.position, "correct": float(t.correct), "token_f1": t.token_f1}
                       for t in trials])
    if df.empty:
        return pd.DataFrame(columns=["correct", "token_f1", "n"])
    out = df.groupby("position").agg(correct=("correct", "mean"), token_f1=("token_f1", "mean"),
                                     n=("correct", "size"))
    return out


# --- the placement strategy: best chunks at the edges ------------------------------------------
def edges_order(ranked: Sequence[T]) -> list[T]:
    """``ranked`` (best first) rearranged so the best items sit at both ends and the weakest in
    the middle: ranks 1, 3, 5, ... from the front, then ..., 6, 4, 2 to the back.

    ``edges_order([1, 2, 3, 4, 5]) == [1, 3, 5, 4, 2]``: rank 1 first, rank 2 last.
    """
    items = list(ranked)
    return items[0::2] + items[1::2][::-1]


#: Placement strategies: name -> reorder function of the ranked chunks (best first).
PLACEMENTS: dict[str, Callable[[Sequence[Hit]], list[Hit]]] = {
    "retrieval order": list,
    "edges (best at start and end)": edges_order,
    "reversed (best last)": lambda ranked: list(ranked)[::-1],
}


@dataclass
class PlacementTrial:
    """One (question, placement) run: the chunk order given, where the relevant chunks landed
    (1-based positions), the answer and its scores."""

    question_id: str
    placement: str
    order: list[str]
    relevant_positions: list[int]
    answer: str
    correct: bool
    token_f1: float


def placement_experiment(pipeline: ChunkAnswerer, eval_set: EvalSet | Iterable[EvalItem | Mapping[str, JSON]],
                         qrels: Mapping[str, Mapping[str, float]], *, retriever: Retriever | None = None,
                         k: int = 5, placements: Sequence[str] | None = None,
                         progress: bool = True) -> list[PlacementTrial]:
    """The same top-``k`` retrieved chunks per question, in each placement of :data:`PLACEMENTS`
    (or those named in ``placements``) -> one :class:`PlacementTrial` per question x placement.

    Unlike :func:`lost_in_the_middle` nothing is planted: the chunks are what the
    retriever returned, so a question whose top ``k`` holds no relevant chunk is
    kept (every placement then lacks the answer alike).
    """
    from tqdm.auto import tqdm

    from ragworkbook._validate import check_k
    from ragworkbook.corpus.eval_set import as_items
    from ragworkbook.metrics.generation import token_f1

    k = check_k(k)
    names = list(PLACEMENTS) if placements is None else list(placements)
    unknown = [n for n in names if n not in PLACEMENTS]
    if unknown:
        raise ValueError(f"unknown placement {unknown[0]!r}; choose from: {', '.join(PLACEMENTS)}")
    retriever = retriever if retriever is not None else getattr(pipeline, "retriever", None)
    if retriever is None:
        raise ValueError("pass retriever=... (the pipeline has no .retriever)")
    trials: list[PlacementTrial] = []
    for it in tqdm(as_items(eval_set), desc="placement", disable=not progress, leave=False):
        rel = qrels.get(it.id, {})
        hits = retriever.search(it.question, k=k)
        for name in names:
            order = PLACEMENTS[name](hits)
            answer = _generate(pipeline, it.question, order)
            trials.append(PlacementTrial(
                it.id, name, [h.id for h in order],
                [i for i, h in enumerate(order, start=1) if rel.get(h.id, 0) > 0], answer,
                states_reference(answer, it.reference, it.keyword), token_f1(answer, it.reference)))
    return trials


def placement_summary(trials: Sequence[PlacementTrial]) -> pd.DataFrame:
    """Per placement: share of correct answers, mean token F1, number of questions, and the mean
    position of the best-placed relevant chunk (questions with one) -> DataFrame."""
    import pandas as pd

    rows = [{"placement": t.placement, "correct": float(t.correct), "token_f1": t.token_f1,
             "first_relevant_position": (min(t.relevant_positions) if t.relevant_positions else None)}
            for t in trials]
    if not rows:
        return pd.DataFrame(columns=["correct", "token_f1", "n", "first_relevant_position"])
    df = pd.DataFrame(rows).astype({"first_relevant_position": "Float64"})
    order = list(dict.fromkeys(r["placement"] for r in rows))
    out = df.groupby("placement", sort=False).agg(
        correct=("correct", "mean"), token_f1=("token_f1", "mean"), n=("correct", "size"),
        first_relevant_position=("first_relevant_position", "mean"))
    return out.loc[order]
