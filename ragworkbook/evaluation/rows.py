"""Typed rows of a run: one :class:`ScoredQuestion` per question, one :class:`ScoringInfo` per scoring.

The scoring (:func:`ragworkbook.evaluation.evaluate.score_rows`) and the run loops
(:mod:`ragworkbook.evaluation.run_control`, :mod:`ragworkbook.evaluation.scoring_run`)
pass these values; a row becomes the dict of a report's ``rows`` only where a
:class:`~ragworkbook.evaluation.report.Report` is made (:meth:`ScoredQuestion.to_dict`),
and a stored row is read back with :meth:`ScoredQuestion.from_dict` (resume). The
dict keeps the keys and their order of the report format (version 2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeAlias

from ragworkbook._types import JSON, JSONObject
from ragworkbook.judging.ledger import merge_ledgers
from ragworkbook.outcomes import Unscored

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.judging.check import JudgeCheck

#: What is known of a judge's reliability, as :func:`ragworkbook.judging.reliability.cards_for` takes it:
#: nothing, a judge-check result, a reliability card (its JSON, as ``judge-check --json`` writes it),
#: or a list of them.
ReliabilityEvidence: TypeAlias = "JudgeCheck | JSONObject | Sequence[JudgeCheck | JSONObject] | None"

__all__ = ["ReliabilityEvidence", "RecordRelevance", "RowError", "ScoredQuestion", "Scoring", "ScoringInfo"]

#: The keys of a stored row that :class:`ScoredQuestion` reads into fields (others are kept as they are).
_KNOWN = ("id", "question", "reference", "answer", "context_ids", "contexts", "metrics", "unscored",
          "ranking", "relevance", "reference_contexts", "relevance_key", "error", "judgments")


@dataclass(frozen=True)
class RowError:
    """Why a question has no answer: a reason code (``generation_error``, ``not_run``...) and the message."""

    reason: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"reason": self.reason, "message": self.message}


@dataclass(frozen=True)
class RecordRelevance:
    """Where a given output's relevance came from (``"qrels"``, ``"ids"``, ``"keyword"``, or None
    when nothing says) and the fingerprint of its judgements or keyword (None without relevance)."""

    source: str | None
    key: str | None = None


@dataclass
class ScoredQuestion:
    """One question of a run: its inputs, and per metric a value or (``None``) why not.

    ``metrics`` maps a metric name to its value (``None`` = failed or undefined, with
    its :class:`~ragworkbook.outcomes.Unscored` in ``unscored``); ``judgments`` holds
    the judge's intermediates per judged metric (JSON, as the report stores them).
    ``ranking`` is kept when deeper than the contexts; ``relevance`` only for given
    outputs; ``error`` for a question whose answer could not be generated; ``extra``
    keeps the fields of a stored row this version does not read.
    """

    id: str
    question: str
    reference: str | None
    answer: str
    context_ids: list[str | None] = field(default_factory=list)
    contexts: list[str] = field(default_factory=list)
    metrics: dict[str, float | None] = field(default_factory=dict)
    unscored: dict[str, Unscored] = field(default_factory=dict)
    ranking: list[str] | None = None
    relevance: RecordRelevance | None = None
    reference_contexts: list[str] | None = None
    error: RowError | None = None
    judgments: dict[str, JSON] | None = None
    extra: JSONObject = field(default_factory=dict)

    @property
    def ranked_ids(self) -> list[str]:
        """The row's ranking: the stored one when deeper than its contexts, else its context ids."""
        if self.ranking is not None:
            return list(self.ranking)
        return [cid or f"<context {n}>" for n, cid in enumerate(self.context_ids, start=1)]

    def inputs(self) -> ScoredQuestion:
        """The row without any value: what a scoring starts from."""
        return replace(self, metrics={}, unscored={}, judgments=None)

    def with_scores(self, scored: ScoredQuestion, names: Sequence[str]) -> ScoredQuestion:
        """This row with the values of ``names`` taken from ``scored`` (the others left as they are)."""
        metrics = dict(self.metrics)
        unscored = {n: u for n, u in self.unscored.items() if n not in names}
        for name in names:
            metrics[name] = scored.metrics.get(name)
        unscored.update(scored.unscored)  # in the order the scoring gave them
        judgments = self.judgments
        if scored.judgments:
            judgments = {**(judgments or {}), **scored.judgments}
        return replace(self, metrics=metrics, unscored=unscored, judgments=judgments)

    def only(self, names: Sequence[str]) -> ScoredQuestion:
        """This row with the metrics ``names`` only, in that order (missing ones ``None``)."""
        judgments = None if self.judgments is None else {
            n: j for n, j in self.judgments.items() if n in names}
        return replace(self, metrics={n: self.metrics.get(n) for n in names},
                       unscored={n: u for n, u in self.unscored.items() if n in names}, judgments=judgments)

    def to_dict(self) -> JSONObject:
        """The row as a report stores it (keys in the order of the report format)."""
        out: JSONObject = {"id": self.id, "question": self.question, "reference": self.reference,
                           "answer": self.answer, "context_ids": list(self.context_ids),
                           "contexts": list(self.contexts), "metrics": dict(self.metrics),
                           "unscored": {n: u.to_dict() for n, u in self.unscored.items()}}
        if self.ranking is not None:
            out["ranking"] = list(self.ranking)
        if self.relevance is not None:
            out["relevance"] = self.relevance.source
        if self.reference_contexts is not None:
            out["reference_contexts"] = list(self.reference_contexts)
        if self.relevance is not None and self.relevance.key is not None:
            out["relevance_key"] = self.relevance.key
        if self.error is not None:
            out["error"] = self.error.to_dict()
        if self.judgments is not None:
            out["judgments"] = dict(self.judgments)
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, row: Mapping[str, JSON], where: str = "row") -> ScoredQuestion:
        """A stored row read back (a loaded report's rows are already checked)."""
        unscored = row.get("unscored") or {}
        error = row.get("error")
        relevance = None
        if "relevance" in row:
            relevance = RecordRelevance(row["relevance"], row.get("relevance_key"))  # type: ignore[arg-type]
        ranking, refs, judgments = row.get("ranking"), row.get("reference_contexts"), row.get("judgments")
        return cls(
            id=str(row["id"]), question=str(row.get("question", "")),
            reference=row.get("reference"),  # type: ignore[arg-type]
            answer=str(row.get("answer", "")),
            context_ids=list(row.get("context_ids") or []),  # type: ignore[arg-type]
            contexts=[str(c) for c in row.get("contexts") or []],  # type: ignore[union-attr]
            metrics=dict(row.get("metrics") or {}),  # type: ignore[arg-type]
            unscored={str(n): Unscored.from_dict(u, f"{where}: unscored {n!r}")
                      for n, u in unscored.items()},  # type: ignore[union-attr]
            ranking=None if ranking is None else [str(x) for x in ranking],  # type: ignore[union-attr]
            relevance=relevance,
            reference_contexts=None if refs is None else [str(x) for x in refs],  # type: ignore[union-attr]
            error=None if not isinstance(error, Mapping) else RowError(str(error.get("reason")),
                                                                       str(error.get("message", ""))),
            judgments=None if judgments is None else dict(judgments),  # type: ignore[arg-type]
            extra={k: v for k, v in row.items() if k not in _KNOWN},
        )


@dataclass
class ScoringInfo:
    """What one scoring tells the report's meta (``None``: not part of this scoring).

    ``retrieval_depth`` (the deepest ranking scored), ``judge`` (``backend:model``),
    ``judge_model_calls``, ``judge_reliability`` (metric -> reliability card) and
    ``judge_ledger`` (the judging's cost, :mod:`ragworkbook.judging.ledger`), both JSON
    as the report stores them.
    """

    retrieval_depth: int | None = None
    judge: str | None = None
    judge_model_calls: int | None = None
    judge_reliability: dict[str, JSON] | None = None
    judge_ledger: JSONObject | None = None

    def add(self, other: ScoringInfo) -> None:
        """Sum ``other`` (a later batch) into this: deepest ranking, calls and costs summed, cards merged."""
        if other.retrieval_depth is not None:
            self.retrieval_depth = max(self.retrieval_depth or 0, other.retrieval_depth)
        if other.judge is not None:
            self.judge = other.judge
        if other.judge_model_calls is not None:
            self.judge_model_calls = (self.judge_model_calls or 0) + other.judge_model_calls
        if other.judge_reliability is not None:
            self.judge_reliability = {**(self.judge_reliability or {}), **other.judge_reliability}
        if other.judge_ledger is not None:
            self.judge_ledger = merge_ledgers(self.judge_ledger, other.judge_ledger)

    def to_dict(self) -> JSONObject:
        """The fields given, as the report's meta keys (in this order)."""
        out: JSONObject = {}
        for key in ("retrieval_depth", "judge", "judge_model_calls", "judge_reliability", "judge_ledger"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass
class Scoring:
    """What :func:`~ragworkbook.evaluation.evaluate.score_rows` returns: the rows with their values
    (new objects, in the order given) and what the report's meta gets from the scoring."""

    rows: list[ScoredQuestion]
    info: ScoringInfo
