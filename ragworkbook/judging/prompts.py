"""What the judge is asked: the options, the system prompt, the prompt templates and the JSON schemas.

The prompts follow RAGAS's (``explodinggradients/ragas``,
``src/ragas/metrics/_faithfulness.py``, ``_answer_relevance.py``,
``_context_precision.py``, ``_context_recall.py``) in substance, shortened for
small local models; the wording is our own. Every judged metric asks through
one of these templates with one of these schemas, so a notebook can print
exactly what the judge saw.
"""

from __future__ import annotations

from ragworkbook._types import JSONObject

__all__ = [
    "JUDGE_OPTIONS",
    "SYSTEM_PROMPT",
    "PROMPTS",
    "statements_schema",
    "verdicts_schema",
    "verdict_schema",
    "questions_schema",
    "pairwise_schema",
]

#: Options for judge calls: deterministic (temperature 0, seed 0) with room for reasons.
JUDGE_OPTIONS: dict[str, float] = {"temperature": 0.0, "seed": 0, "num_predict": 512}

SYSTEM_PROMPT = (
    "You are a careful evaluator of question-answering systems. "
    "Answer only with JSON that follows the requested format."
)

#: The prompt templates (``str.format`` fields in braces). Kept in one place so a
#: notebook can print them.
PROMPTS: dict[str, str] = {
    "statements": (
        "Break the answer below into short, self-contained factual statements, written "
        "out in full. Each statement must make sense on its own (replace pronouns with the "
        "names they refer to). If the answer makes no factual claim (for example \"I don't "
        "know\"), give no statements.\n\n"
        "Question: {question}\nAnswer: {answer}\n\n"
        "Reply in JSON with the key \"statements\" (a list of strings)."
    ),
    "faithfulness": (
        "Read the context, then decide for each numbered statement whether the context "
        "supports it. Verdict 1 if the context supports the statement, 0 if the context "
        "contradicts it or does not mention it. Give a short reason before each verdict.\n\n"
        "Context:\n{context}\n\nStatements:\n{statements}\n\n"
        "Reply in JSON with the key \"verdicts\": a list of exactly {n} objects with keys "
        "\"reason\" and \"verdict\", in the order of the statements."
    ),
    "answer_relevancy": (
        "Write {n} different questions that the answer below would be a good answer to. "
        "Also say whether the answer is noncommittal: 1 if it is evasive, vague or "
        "ambiguous (like \"I don't know\" or \"I'm not sure\"), else 0.\n\n"
        "Answer: {answer}\n\n"
        "Reply in JSON with the keys \"questions\" (a list of {n} questions) and "
        "\"noncommittal\" (0 or 1)."
    ),
    "context_precision_with_reference": (
        "Given a question, its reference answer and one retrieved context, decide whether "
        "the context was useful for arriving at the reference answer. Verdict 1 if useful, "
        "0 if not. Give a short reason first.\n\n"
        "Question: {question}\nReference answer: {answer}\nContext: {context}\n\n"
        "Reply in JSON with the keys \"reason\" and \"verdict\" (0 or 1)."
    ),
    "context_precision_without_reference": (
        "Given a question, the system's answer and one retrieved context, decide whether "
        "the context was useful for arriving at the answer. Verdict 1 if useful, 0 if not. "
        "Give a short reason first.\n\n"
        "Question: {question}\nAnswer: {answer}\nContext: {context}\n\n"
        "Reply in JSON with the keys \"reason\" and \"verdict\" (0 or 1)."
    ),
    "context_recall": (
        "Read the context, then decide for each numbered statement from a reference answer "
        "whether it can be attributed to the context. Verdict 1 if the context contains the "
        "information, 0 if not. Give a short reason before each verdict.\n\n"
        "Question: {question}\nContext:\n{context}\n\nStatements:\n{statements}\n\n"
        "Reply in JSON with the key \"verdicts\": a list of exactly {n} objects with keys "
        "\"reason\" and \"verdict\", in the order of the statements."
    ),
    "pairwise_with_reference": (
        "Compare two answers to the same question. The reference answer is correct: the "
        "better answer states more of the reference's facts, states them correctly and adds "
        "fewer wrong statements. Do not prefer an answer for being shown first or for being "
        "longer. If neither is better, say tie.\n\n"
        "Question: {question}\n\nReference answer: {reference}\n\n"
        "Answer 1: {first}\n\nAnswer 2: {second}\n\n"
        "Reply in JSON with the keys \"better\" (\"1\", \"2\" or \"tie\") and \"reason\" "
        "(one short sentence)."
    ),
    "pairwise_with_context": (
        "Compare two answers to the same question, using only the context below: the better "
        "answer is the one whose statements the context supports and that answers the question "
        "more fully. Do not prefer an answer for being shown first or for being longer. If "
        "neither is better, say tie.\n\n"
        "Question: {question}\n\nContext: {context}\n\n"
        "Answer 1: {first}\n\nAnswer 2: {second}\n\n"
        "Reply in JSON with the keys \"better\" (\"1\", \"2\" or \"tie\") and \"reason\" "
        "(one short sentence)."
    ),
    "context_relevance": (
        "Decide whether the context below is relevant to the question: verdict 1 if it "
        "contains information that helps answer the question, 0 if not. Give a short reason "
        "first.\n\n"
        "Question: {question}\nContext: {context}\n\n"
        "Reply in JSON with the keys \"reason\" and \"verdict\" (0 or 1)."
    ),
}

_REASON = {"type": "string"}
_VERDICT = {"type": "integer", "enum": [0, 1]}


def statements_schema(max_statements: int = 10) -> JSONObject:
    """Schema of a claim/statement extraction: ``{"statements": [str, ...]}`` (0..max items)."""
    return {
        "type": "object",
        "properties": {
            "statements": {
                "type": "array",
                "items": {"type": "string"},
                "maxItems": max_statements,
            }
        },
        "required": ["statements"],
    }


def verdicts_schema(n: int) -> JSONObject:
    """Schema of ``n`` verdicts in order: ``{"verdicts": [{"reason": str, "verdict": 0|1}] * n}``."""
    if n < 1:
        raise ValueError(f"verdicts_schema needs n >= 1, got {n}")
    return {
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"reason": _REASON, "verdict": _VERDICT},
                    "required": ["reason", "verdict"],
                },
                "minItems": n,
                "maxItems": n,
            }
        },
        "required": ["verdicts"],
    }


def verdict_schema() -> JSONObject:
    """Schema of one verdict: ``{"reason": str, "verdict": 0|1}``."""
    return {
        "type": "object",
        "properties": {"reason": _REASON, "verdict": _VERDICT},
        "required": ["reason", "verdict"],
    }


def questions_schema(n: int) -> JSONObject:
    """Schema of the answer-relevancy generation: ``n`` questions and a noncommittal flag."""
    if n < 1:
        raise ValueError(f"questions_schema needs n >= 1, got {n}")
    return {
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": n,
                "maxItems": n,
            },
            "noncommittal": _VERDICT,
        },
        "required": ["questions", "noncommittal"],
    }


def pairwise_schema(max_reason: int = 150) -> JSONObject:
    """Schema of a pairwise verdict: ``{"better": "1" | "2" | "tie", "reason": str}``.

    The verdict comes first and the reason is capped at ``max_reason`` characters, so a
    small model cannot spend its token budget on the reason and leave the JSON unfinished.
    """
    return {
        "type": "object",
        "properties": {
            "better": {"type": "string", "enum": ["1", "2", "tie"]},
            "reason": {"type": "string", "maxLength": max_reason},
        },
        "required": ["better", "reason"],
    }
