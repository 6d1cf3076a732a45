"""A QuestEval-style consistency check: questions from the answer, answered from the context only.

QuestEval (Scialom et al., 2021) compares two texts by asking questions: questions generated
from one text are answered from the other, and the two answers are compared. Its *precision*
direction checks a summary (here: a RAG answer) against its source (here: the retrieved
context): every piece of information the answer gives should be recoverable from the context.
This module implements that direction with the local LLM judge in both roles:

1. **question generation** (one call): the judge writes up to ``n_questions`` short questions
   that the answer answers, each with the span of the answer that answers it (the *expected*
   answer);
2. **question answering from the context only** (one call per question, concurrently): the
   judge answers each question from the retrieved context, or leaves the answer empty when
   the context does not say (SQuAD 2.0's convention for "no answer"); it also gives an
   ``answerable`` flag, which is kept on the items but not trusted over the answer (a small
   judge often writes a right answer and flags it 0: those conflicts are counted in
   ``detail["flag_conflicts"]``);
3. **comparison** (no model): SQuAD token F1 (:func:`ragworkbook.metrics.generation.token_f1`)
   between the context's answer and the expected answer; an empty answer scores 0.

``questeval`` = the mean over the questions. A high score means what the answer says can be
read back out of the context; a low one that the context answers the answer's own questions
differently (a contradiction) or not at all (unsupported). Unlike faithfulness it needs no
claim verdict from the judge — the comparison is a deterministic string metric — but it
depends on the judge twice (asking and answering).

Outcomes: empty answer undefined (``"empty_answer"``); no question generated undefined
(``"no_questions"``); no context: every question is unanswerable, scored 0.0
(``"empty_context"``, no answering call); any failed call makes the sample ``failed``.
(The original QuestEval also weighs questions by answerability and uses a recall direction,
questions from the source answered from the summary; neither is implemented here.)
"""

from __future__ import annotations

import asyncio

from ragworkbook._types import JSONObject
from ragworkbook.judging.judge import Judge, synced
from ragworkbook.judging.results import JudgedResult, JudgeSample, failed, scored, undefined

__all__ = ["QG_PROMPT", "QA_PROMPT", "qg_schema", "qa_schema", "questeval_from_answers", "aquesteval",
           "questeval"]

#: Question generation from the answer.
QG_PROMPT = (
    "Read the answer below and write up to {n} short questions that it answers. For each question "
    "also copy the words of the answer that answer it.\n\n"
    "Answer: {answer}\n\n"
    "Reply in JSON with the key \"questions\": a list of objects with keys \"question\" and "
    "\"answer\"."
)

#: Question answering from the context only.
QA_PROMPT = (
    "Answer the question using only the context below. If the context does not contain the "
    "answer, set \"answerable\" to 0 and \"answer\" to an empty string.\n\n"
    "Context:\n{context}\n\nQuestion: {question}\n\n"
    "Reply in JSON with the keys \"answer\" (a few words) and \"answerable\" (0 or 1)."
)


def qg_schema(n: int) -> JSONObject:
    """Schema of the question generation: 1..n ``{"question", "answer"}`` objects."""
    if n < 1:
        raise ValueError(f"qg_schema needs n >= 1, got {n}")
    pair = {"type": "object", "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
            "required": ["question", "answer"]}
    return {"type": "object",
            "properties": {"questions": {"type": "array", "items": pair, "minItems": 1, "maxItems": n}},
            "required": ["questions"]}


def qa_schema() -> JSONObject:
    """Schema of one answer from the context: ``{"answer": str, "answerable": 0|1}`` (the answer first,
    so a model that writes in schema order answers before it decides whether it could)."""
    return {"type": "object",
            "properties": {"answer": {"type": "string"}, "answerable": {"type": "integer", "enum": [0, 1]}},
            "required": ["answer", "answerable"]}


def questeval_from_answers(expected: list[str], from_context: list[str | None]) -> tuple[float, list[float]]:
    """The score and per-question F1s: token F1 of each context answer against the expected answer,
    0 for an unanswerable question (``None``). ValueError for no question or unequal lengths."""
    from ragworkbook.metrics.generation import token_f1

    if len(expected) != len(from_context):
        raise ValueError(f"{len(expected)} expected answers but {len(from_context)} answers from the "
                         "context")
    if not expected:
        raise ValueError("no question to score")
    f1s = [0.0 if got is None else float(token_f1(got, exp)) for exp, got in zip(expected, from_context,
                                                                                  strict=True)]
    return sum(f1s) / len(f1s), f1s


def _context_block(contexts: list[str]) -> str:
    return "\n".join(f"[{i}] {c}" for i, c in enumerate(contexts, start=1))


async def aquesteval(sample: JudgeSample, judge: Judge, *, n_questions: int = 3) -> JudgedResult:
    """QuestEval-style precision of the answer against the retrieved context (see the module docstring).

    Model calls: 1 (question generation) + 1 per generated question; ``items`` keeps each
    ``question``, ``expected`` answer, ``answerable``, ``from_context`` answer and ``f1``.
    """
    m = "questeval"
    if not sample.answer.strip():
        return undefined(m, sample, "empty_answer")
    qg = await judge.acall("questeval_qg", QG_PROMPT.format(answer=sample.answer, n=n_questions),
                           qg_schema(n_questions))
    if not qg.ok:
        return failed(m, sample, qg)
    pairs = [(p["question"].strip(), p["answer"].strip()) for p in qg.data["questions"]
             if p["question"].strip() and p["answer"].strip()]
    if not pairs:
        return undefined(m, sample, "no_questions", calls=[qg])
    if not any(c.strip() for c in sample.contexts):
        items = [{"question": q, "expected": a, "answerable": 0, "from_context": None, "f1": 0.0}
                 for q, a in pairs]
        return scored(m, sample, 0.0, "empty_context", items=items, calls=[qg])
    context = _context_block(sample.contexts)
    answers = await asyncio.gather(*[
        judge.acall("questeval_qa", QA_PROMPT.format(context=context, question=q), qa_schema())
        for q, _ in pairs])
    calls = [qg, *answers]
    bad = next((c for c in answers if not c.ok), None)
    if bad is not None:
        items = [{"question": q, "expected": a} for q, a in pairs]
        return failed(m, sample, bad, items=items, calls=calls)
    got = [c.data["answer"].strip() or None for c in answers]  # empty = no answer (SQuAD 2.0)
    score, f1s = questeval_from_answers([a for _, a in pairs], got)
    items = [{"question": q, "expected": a, "answerable": int(c.data["answerable"]), "from_context": g,
              "f1": f} for (q, a), c, g, f in zip(pairs, answers, got, f1s, strict=True)]
    conflicts = sum((g is not None) != bool(c.data["answerable"]) for c, g in zip(answers, got, strict=True))
    detail = {"n_questions": len(pairs), "n_answered": sum(g is not None for g in got),
              "flag_conflicts": conflicts}
    return scored(m, sample, score, items=items, calls=calls, detail=detail)


questeval = synced(aquesteval)
