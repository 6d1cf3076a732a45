"""What a judged metric takes and gives: :class:`JudgeSample` in, :class:`JudgedResult` out.

A :class:`JudgedResult` speaks the package's one vocabulary of outcomes
(:mod:`ragworkbook.outcomes`): ``scored`` (a number, sometimes with a
``reason`` for a special case: ``"noncommittal"``, ``"empty_context"``,
``"empty_answer"``), ``failed`` (a judge call broke: ``reason`` is the kind of
failure, ``error`` the whole message, the raw outputs are on ``calls``) or
``undefined`` (no value by definition: ``"no_claims"``, ``"empty_answer"``,
``"empty_context"``, ``"empty_reference"``). The report and the comparison
gate carry the same three outcomes and reasons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from ragworkbook._types import JSONObject
from ragworkbook.judging.judge import JudgeCall
from ragworkbook.outcomes import FAILED, SCORED, UNDEFINED, Aggregate, Unscored, aggregate

__all__ = ["JudgeSample", "JudgedResult", "scored", "undefined", "failed", "aggregate_results"]


@dataclass
class JudgeSample:
    """One RAG output to judge: the question, the answer, the retrieved chunks in rank
    order, and (for the reference-based metrics) a reference answer."""

    question: str
    answer: str
    contexts: list[str]
    reference: str | None = None
    sample_id: str = "0"

    def __post_init__(self) -> None:
        if isinstance(self.contexts, str):
            raise TypeError("contexts must be a list of chunk texts in rank order, not one string")
        if not isinstance(self.question, str) or not isinstance(self.answer, str):
            raise TypeError("question and answer must be strings (use '' for an empty answer)")
        self.contexts = [str(c) for c in self.contexts]
        self.sample_id = str(self.sample_id)

    @classmethod
    def from_mapping(cls, m: Mapping[str, Any], sample_id: str | None = None) -> JudgeSample:
        """Build from a dict in the workbook's or RAGAS's field names: the question (``question``,
        ``user_input``), the answer (``answer``, ``response``), the contexts (``contexts``,
        ``retrieved_contexts`` or ``chunks``: strings or dicts with ``text``), optionally the
        reference (``reference``, ``ground_truth``) and the id (``id``, ``sample_id``...;
        :data:`ragworkbook.corpus.answers.FIELDS` lists every name).

        Without an id (and no ``sample_id`` argument) the id is
        :func:`ragworkbook.corpus.answers.question_id` of the question: two samples of
        different questions never share it; give ids to several samples of one question.
        A field given under two names with different values is a ValueError.
        """
        from ragworkbook.corpus.answers import FIELDS, question_id, resolve_fields

        table = {**FIELDS, "contexts": (*FIELDS["contexts"], "chunks")}
        values, problems = resolve_fields(m, table, "sample")
        if problems:
            raise ValueError("; ".join(problems))
        if "question" not in values:
            fields = ", ".join(map(str, m)) or "nothing"
            raise ValueError(f"sample has no 'question' field (it has: {fields}); RAGAS's 'user_input' "
                             "is accepted too")
        ctx = values.get("contexts")
        if ctx is None:
            raise ValueError("sample has no 'contexts' (or 'retrieved_contexts', 'chunks') field")
        texts = [c["text"] if isinstance(c, Mapping) else str(c) for c in ctx]
        question = values["question"]
        if sample_id is not None:
            sid = str(sample_id)
        elif "id" in values:
            sid = str(values["id"])
        else:
            sid = question_id(str(question))
        return cls(question=question, answer=values.get("answer", ""), contexts=texts,
                   reference=values.get("reference"), sample_id=sid)


@dataclass
class JudgedResult:
    """One metric on one sample, with everything the judge said.

    ``outcome`` is ``"scored"``, ``"failed"`` or ``"undefined"``; ``reason`` a
    short code for a special case or a failure (None for a plain score);
    ``error`` the full failure message. ``items`` holds the per-statement /
    per-chunk / per-question intermediates (e.g. ``{"statement", "verdict",
    "reason"}``), ``detail`` metric-specific extras, ``calls`` every
    :class:`~ragworkbook.judging.judge.JudgeCall` (with raw outputs).
    """

    metric: str
    sample_id: str
    score: float | None
    outcome: str = SCORED
    reason: str | None = None
    items: list[JSONObject] = field(default_factory=list)
    detail: JSONObject = field(default_factory=dict)
    calls: list[JudgeCall] = field(default_factory=list)
    error: str | None = None

    @property
    def status(self) -> str:
        """One word for tables: ``"ok"``, ``"failed"``, or the special case (``"no_claims"``...)."""
        if self.outcome == FAILED:
            return FAILED
        return self.reason or "ok"

    @property
    def unscored(self) -> Unscored | None:
        """Why there is no score (None when scored)."""
        if self.outcome == SCORED:
            return None
        return Unscored(self.outcome, self.reason or self.outcome, self.error or "")

    @property
    def n_model_calls(self) -> int:
        """Calls that reached the model (cached ones excluded)."""
        return sum(1 for c in self.calls if not c.cached)

    @property
    def raw_outputs(self) -> list[str]:
        """Every raw model output of every call, in call order."""
        return [r for c in self.calls for r in c.raw_outputs]


class ResultParts(TypedDict, total=False):
    """What a judged result may carry besides its score: the per-item judgments (claims, chunks, ...),
    free detail, and the judge calls made."""

    items: list[JSONObject]
    detail: JSONObject
    calls: list[JudgeCall]


def scored(metric: str, sample: JudgeSample, score: float, reason: str | None = None,
           **kw: Unpack[ResultParts]) -> JudgedResult:
    """A scored result (``reason`` names a special case, e.g. ``"noncommittal"``)."""
    return JudgedResult(metric, sample.sample_id, float(score), SCORED, reason, **kw)


def undefined(metric: str, sample: JudgeSample, reason: str, **kw: Unpack[ResultParts]) -> JudgedResult:
    """A result with no value by definition (``reason``: ``"no_claims"``, ``"empty_reference"``...)."""
    return JudgedResult(metric, sample.sample_id, None, UNDEFINED, reason, **kw)


def failed(metric: str, sample: JudgeSample, call: JudgeCall, *, items: list | None = None,
           calls: list | None = None, detail: dict | None = None) -> JudgedResult:
    """A failed result from the judge call that failed; its error's kind (``"output_parse_error"``,
    ``"timeout"``, ``"llm_error"``...) is the reason, the whole message the error."""
    message = call.error or "unknown error"
    kind = message.split(":", 1)[0].strip() if ":" in message else "invalid_output"
    return JudgedResult(metric, sample.sample_id, None, FAILED, kind, items=items or [],
                        detail=detail or {}, calls=calls or [call], error=f"{call.prompt}: {message}")


def aggregate_results(results: Sequence[JudgedResult]) -> Aggregate:
    """The :class:`~ragworkbook.outcomes.Aggregate` of per-sample results: mean of the scored,
    failed and undefined counted (a NaN score is a bug: ValueError)."""
    return aggregate([r.score for r in results], [r.outcome for r in results])
