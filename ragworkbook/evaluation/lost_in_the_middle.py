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

Each answer is scored against the reference answer:

- ``correct``: the answer states the reference's number(s) (via
  :func:`ragworkbook.metrics.numeric.check_numbers`: no reference number missing) when
  the reference has a number, else it contains the question's keyword
  (case-insensitive; e.g. "Adam", "P100");
- ``token_f1``: SQuAD-style token F1 with the reference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["OrderTrial", "place", "states_reference", "lost_in_the_middle", "position_summary"]


@dataclass
class OrderTrial:
    """One (question, gold position) run: the chunk order given and the answer."""

    question_id: str
    position: int  # 1-based position of the gold chunk
    order: list[str]  # chunk ids in the order given to the generator
    answer: str
    correct: bool
    token_f1: float


def place(gold: Any, distractors: Sequence[Any], position: int) -> list[Any]:
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


def _generate(pipeline: Any, question: str, chunks: Sequence[Any]) -> str:
    for name in ("answer_from", "answer_with_contexts", "generate_answer"):
        fn = getattr(pipeline, name, None)
        if callable(fn):
            out = fn(question, list(chunks))
            return str(getattr(out, "answer", out))
    raise TypeError(f"{type(pipeline).__name__} has no method to answer from given chunks "
                    "(expected answer_from(question, chunks))")


def lost_in_the_middle(pipeline: Any, eval_set: Any, qrels: Mapping[str, Mapping[str, float]], *,
                       retriever: Any = None, n_contexts: int = 5, depth: int = 30,
                       progress: bool = True) -> list[OrderTrial]:
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
