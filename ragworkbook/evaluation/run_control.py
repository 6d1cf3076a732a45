"""Run control of :func:`ragworkbook.evaluation.evaluate.evaluate`: failures, checkpoints and resume.

The scoring is the caller's (a :class:`ScoreFn`, :func:`~ragworkbook.evaluation.evaluate.score_rows`
bound to the run's relevance and judge); this module decides what is asked and what is saved:

- **failure policy**: a question whose answer cannot be generated becomes a failed row with its
  reason (:func:`failure_reason`); after a failure that means the backend cannot answer at all, the
  remaining questions are not asked; a judge that cannot work fails the judged metrics of the
  remaining rows, the other metrics still computed;
- **checkpoints**: the report is written after every batch, at the end, and when the run is
  interrupted: questions not asked yet are failed ``not_run``, values not computed ``not_scored``;
- **resume**: the rows of an earlier report made with the same settings (:func:`run_settings`) are
  kept (:func:`reusable_rows`); their failed values and the metrics they lack are computed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tqdm.auto import tqdm

from ragworkbook._io import saved_first
from ragworkbook._text import differing_parts
from ragworkbook._types import JSON, JSONObject, as_json
from ragworkbook.corpus.eval_set import EvalItem
from ragworkbook.evaluation.report import Report
from ragworkbook.evaluation.rows import RowError, ScoredQuestion, Scoring, ScoringInfo
from ragworkbook.judging.ledger import merge_ledgers
from ragworkbook.llm.base import BackendUnavailable, LLMError, ModelNotFound, ReplayMissError
from ragworkbook.metrics.registry import Metric
from ragworkbook.outcomes import FAILED, UNDEFINED, Unscored
from ragworkbook.protocols import Context, PipelineLike, context_id, context_text

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.judging.judge import Judge
    from ragworkbook.llm.base import Generator

__all__ = ["PipelineRun", "ScoreFn", "failure_message", "failure_reason", "reusable_rows", "run_settings"]


class ScoreFn(Protocol):
    """How a run scores rows: :func:`~ragworkbook.evaluation.evaluate.score_rows` with the run's
    relevance judgements and judge."""

    def __call__(self, rows: Sequence[ScoredQuestion], metrics: Sequence[Metric], *,
                 rankings: Mapping[str, Sequence[str]], unscored: Mapping[str, Mapping[str, Unscored]],
                 progress: bool) -> Scoring: ...


#: Failures of a question's generation that mean the backend cannot answer any: after one, the
#: remaining questions are not asked (each is recorded failed with the same reason).
BACKEND_DOWN = ("backend_unavailable", "model_not_found")

#: A judge failure that stops the judging for the rest of the run (a replay miss fails one request).
_JUDGE_FAULTS = (BackendUnavailable, ModelNotFound, ReplayMissError)


def failure_reason(exc: BaseException) -> str:
    """The reason code of a failed generation or judgment."""
    return {"BackendUnavailable": "backend_unavailable", "ModelNotFound": "model_not_found",
            "ReplayMissError": "replay_miss", "OutputParseError": "output_parse_error",
            "AnswerTooLong": "answer_too_long"}.get(
        type(exc).__name__, "generation_error")


def failure_message(exc: BaseException) -> str:
    """The message of a failed generation or judgment (the exception's class named unless it is the
    package's own LLM error, whose message says it all)."""
    return str(exc) if isinstance(exc, LLMError) else f"{type(exc).__name__}: {exc}"


def failed_row(it: EvalItem, metrics: Sequence[Metric], reason: str, message: str) -> ScoredQuestion:
    """The row of a question without an answer: every metric failed with ``reason``."""
    why = Unscored(FAILED, reason, message)
    return ScoredQuestion(id=it.id, question=it.question, reference=it.reference, answer="",
                          metrics={m.name: None for m in metrics}, unscored={m.name: why for m in metrics},
                          error=RowError(reason, message))


def answer_row(pipeline: PipelineLike, it: EvalItem, wanted: Sequence[Metric]) -> ScoredQuestion:
    """Ask the pipeline one question -> its row (metrics to be scored), or a failed row."""
    try:
        ans = pipeline.answer(it.question)
    except Exception as exc:  # one question's failure is counted, never the end of the run
        return failed_row(it, wanted, failure_reason(exc), failure_message(exc))
    answer = str(getattr(ans, "answer", ans))
    contexts: Sequence[Context] = getattr(ans, "contexts", []) or []
    row = ScoredQuestion(id=it.id, question=it.question, reference=it.reference, answer=answer,
                         context_ids=[context_id(c) for c in contexts],
                         contexts=[context_text(c) for c in contexts])
    ranking = [context_id(c) or f"<context {n}>"
               for n, c in enumerate(getattr(ans, "retrieved", None) or contexts, start=1)]
    if ranking != row.ranked_ids:
        row.ranking = ranking
    return row


def _fingerprint(obj: JSON) -> str:
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _identity(gen: Generator | None) -> JSONObject | None:
    if gen is None:
        return None
    return {"backend": getattr(gen, "backend", type(gen).__name__), "model": getattr(gen, "model", ""),
            "identity": str(getattr(gen, "identity", None) or getattr(gen, "backend", type(gen).__name__))}


def run_settings(pipeline: PipelineLike, *, k: int, qrels: Mapping[str, Mapping[str, float]] | None,
                 unjudged: Iterable[str], judge: Judge | None,
                 extra: Mapping[str, JSON] | None = None) -> JSONObject:
    """What determines a row's answer and scores, as stored in ``report.meta["settings"]``: the
    pipeline's own description (``describe()``: prompt, options, k, retriever), its retrieval depth,
    the generator (backend, model, identity: the server for Ollama) and the judge, fingerprints of
    the relevance judgements, and ``extra`` (the caller's, e.g. the corpus fingerprint). Two runs
    with equal settings answer every question the same way: :func:`evaluate` ``resume`` reuses rows
    only between such runs."""
    describe = getattr(pipeline, "describe", None)
    judge_gen = getattr(judge, "generator", judge)
    out: JSONObject = {
        "pipeline": as_json(describe()) if callable(describe) else type(pipeline).__name__,
        "depth": getattr(pipeline, "depth", None), "k": k,
        "generator": _identity(getattr(pipeline, "generator", None)),
        "judge": None if judge is None else {**(_identity(judge_gen) or {}),
                                             "options": as_json(getattr(judge, "options", None))},
        "qrels": None if qrels is None else _fingerprint({str(q): dict(v) for q, v in qrels.items()}),
        "unjudged": _fingerprint(sorted(str(q) for q in unjudged)),
    }
    out.update(dict(extra or {}))
    return as_json(out)  # type: ignore[return-value]


def reusable_rows(path: Path, settings: Mapping[str, JSON],
                   items: Sequence[EvalItem]) -> dict[str, ScoredQuestion]:
    """The rows of the report at ``path`` that a resumed run keeps, by question id.

    The report must have been made with the same settings (:func:`run_settings`), else ValueError
    naming what differs. A row is kept when its question and reference are those of the eval set
    item with its id and its answer was generated (no row ``"error"``: failed and not-run questions
    are run again); its failed metric values (``not_scored`` included) are computed again.
    """
    if not path.exists():
        return {}
    old = Report.load(path)
    stored = old.meta.get("settings")
    if stored is None:
        raise ValueError(f"cannot resume from {path}: it does not record the settings it was made with "
                         "(made before --resume existed, or not by a pipeline run); run without --resume, "
                         "or write to another --out")
    if stored != settings:
        shown = {key: differing_parts(json.dumps(stored.get(key)), json.dumps(settings.get(key)))
                 for key in sorted(set(stored) | set(settings)) if stored.get(key) != settings.get(key)}
        diffs = [f"{key}: {was} in the report, {now} now" for key, (was, now) in shown.items()]
        raise ValueError(f"cannot resume from {path}: it was made with other settings ({'; '.join(diffs)}); "
                         "its rows would not be this run's: run without --resume, or write to another --out")
    by_id = {it.id: it for it in items}
    keep = {}
    for r in old.rows:
        it = by_id.get(str(r["id"]))
        if it is None or r.get("error") or (r.get("question"), r.get("reference")) != (it.question,
                                                                                      it.reference):
            continue
        keep[it.id] = ScoredQuestion.from_dict(r, f"{path}: row {it.id!r}")
    return keep


class PipelineRun:
    """The state of one pipeline run: its rows so far, what stopped, the checkpoints.

    ``meta`` is the report's meta as known before any question (name, k, settings...);
    ``previous`` the rows kept from an earlier report (:func:`reusable_rows`); ``forced``
    the values known not to be computable (``{question id: {metric name: Unscored}}``),
    extended as the judge fails.
    """

    def __init__(self, items: Sequence[EvalItem], wanted: Sequence[Metric], *, out: Path | None,
                 meta: JSONObject, score: ScoreFn, previous: Mapping[str, ScoredQuestion],
                 forced: dict[str, dict[str, Unscored]]):
        self.items, self.wanted, self.out, self.meta = items, wanted, out, meta
        self.score, self.previous, self.forced = score, previous, forced
        self.judged = [m for m in wanted if m.family == "judged"]
        # kept from the start: a checkpoint never drops what an earlier run answered
        self.rows: dict[str, ScoredQuestion] = dict(previous)
        self.generation_down: tuple[str, str] | None = None  # (reason, message) once the backend is down
        self.judge_down: tuple[str, str] | None = None
        self.info: JSONObject = {"judge_model_calls": 0}

    def run(self, pipeline: PipelineLike, *, save_every: int, progress: bool) -> Report:
        """Ask every question not kept and score, ``save_every`` questions at a time, saving a
        checkpoint after each batch that changed something (and when interrupted) -> the report."""
        items = self.items
        bar = tqdm(total=len(items), desc="evaluate", disable=not progress, leave=False)
        # interrupted, or a bug: what was done so far is saved first
        with saved_first(self.checkpoint), contextlib.closing(bar):
            for start in range(0, len(items), save_every):
                chunk = items[start:start + save_every]
                fresh, reused = [], []
                for it in chunk:
                    if it.id in self.previous:
                        row = _kept(self.previous[it.id])
                        reused.append(row)
                    elif self.generation_down is not None:
                        reason, message = self.generation_down
                        row = failed_row(it, self.wanted, reason, f"not asked: {message}")
                    else:
                        row = answer_row(pipeline, it, self.wanted)
                        if row.error is None:
                            fresh.append(row)
                        elif row.error.reason in BACKEND_DOWN:
                            self.generation_down = (row.error.reason,
                                                    f"the run stopped asking at question {it.id!r}: "
                                                    f"{row.error.message}")
                    self.rows[it.id] = row
                    bar.update(1)
                self._score_chunk(fresh, reused, progress)
                changed = len(reused) < len(chunk) or any(self.previous[r.id].metrics.get(m.name) is None
                                                          for r in reused for m in self.wanted)
                # a batch taken whole from the old report changes nothing: no write
                if changed and start + save_every < len(items):
                    self.checkpoint()
        return self.checkpoint(final=True)

    def report(self, final: bool = False) -> Report:
        """Every question of the eval set: its row, or (not asked yet) a failed ``not_run`` row;
        metrics not computed yet are failed ``not_scored``. Resuming from it runs what is missing."""
        names = [m.name for m in self.wanted]
        rows: list[ScoredQuestion] = []
        for it in self.items:
            row = self.rows.get(it.id)
            if row is None:
                row = failed_row(it, self.wanted, "not_run", "the run stopped before this question; "
                                 "run again with --resume (resume=True) to answer it")
            else:
                metrics, unscored = dict(row.metrics), dict(row.unscored)
                for m in self.wanted:
                    if m.name not in metrics:
                        metrics[m.name] = None
                        unscored[m.name] = Unscored(
                            FAILED, "not_scored", "the run stopped before this metric was computed; run "
                            "again with --resume (resume=True) to compute it")
                row = replace(row, metrics=metrics, unscored=unscored).only(names)
            rows.append(row)
        failed = [r for r in rows if r.error is not None]
        complete = final and self.generation_down is None and not any(
            r.error is not None and r.error.reason == "not_run" for r in failed)
        meta = {**self.meta, **self.info, "complete": complete, "failed_questions": len(failed)}
        if self.generation_down:
            meta["stopped"] = self.generation_down[1]
        if self.judge_down:
            meta["judge_stopped"] = self.judge_down[1]
        return Report(rows=[r.to_dict() for r in rows], metrics=names, meta=meta)

    def checkpoint(self, final: bool = False) -> Report:
        """The report so far (:meth:`report`), written to ``out`` when there is one."""
        report = self.report(final)
        if self.out is not None:
            report.save(self.out)
        return report

    # --- scoring, with the judge's failures -----------------------------------------------------
    def _score_chunk(self, fresh: list[ScoredQuestion], reused: list[ScoredQuestion], progress: bool) -> None:
        """Score the new rows on every metric and the reused rows on the metrics they lack."""
        todo: dict[tuple[str, ...], list[ScoredQuestion]] = {}
        for r in fresh:
            todo.setdefault(tuple(m.name for m in self.wanted), []).append(r)
        for r in reused:
            missing = tuple(m.name for m in self.wanted if m.name not in r.metrics)
            if missing:
                todo.setdefault(missing, []).append(r)
        for names, rows in todo.items():
            metrics = [m for m in self.wanted if m.name in names]
            if self.judge_down is not None:
                self._judge_unavailable(rows)
            try:
                got = self._score_into(rows, metrics, progress=progress)
            except _JUDGE_FAULTS:
                # one request the judge could not make: judge row by row, so only those rows fail
                for r in rows:
                    if self.judge_down is not None:
                        self._judge_unavailable([r])
                    try:
                        got = self._score_into([r], metrics, progress=False)
                    except _JUDGE_FAULTS as exc:
                        self.forced.setdefault(r.id, {}).update(
                            {m.name: Unscored(FAILED, failure_reason(exc), failure_message(exc))
                             for m in self.judged})
                        if not isinstance(exc, ReplayMissError):
                            self.judge_down = (failure_reason(exc), f"the judge stopped at question "
                                                                    f"{r.id!r}: {failure_message(exc)}")
                        got = self._score_into([r], metrics, progress=False)
                    self._take(got)
                continue
            self._take(got)

    def _score_into(self, rows: Sequence[ScoredQuestion], metrics: Sequence[Metric], *,
                    progress: bool) -> Scoring:
        """Score ``metrics`` for ``rows`` -> the rows with those values, their other metrics as they
        were. The judge's reliability cards are the run's, made once: those of the scoring are dropped."""
        if not rows or not metrics:
            return Scoring(list(rows), ScoringInfo())
        names = [m.name for m in metrics]
        rankings = {r.id: r.ranked_ids for r in rows}
        only = {r.id: {n: u for n, u in self.forced.get(r.id, {}).items() if n in names} for r in rows}
        got = self.score([r.inputs() for r in rows], metrics, rankings=rankings, unscored=only,
                         progress=progress)
        got.info.judge_reliability = None
        return Scoring([r.with_scores(c, names) for r, c in zip(rows, got.rows, strict=True)], got.info)

    def _take(self, got: Scoring) -> None:
        """Keep the scored rows of ``got`` and add its meta (calls and costs summed)."""
        for r in got.rows:
            self.rows[r.id] = r
        info = got.info.to_dict()
        self.info["judge_model_calls"] += info.pop("judge_model_calls", 0)
        for key, value in info.items():
            if key == "retrieval_depth":
                self.info[key] = max(self.info.get(key, 0), value)
            elif key == "judge_ledger":  # this run's cost: the batches summed (a resumed row's is not in it)
                self.info[key] = merge_ledgers(self.info.get(key), value)
            else:
                self.info[key] = value

    def _judge_unavailable(self, rows: Sequence[ScoredQuestion]) -> None:
        assert self.judge_down is not None
        reason, message = self.judge_down
        for r in rows:
            self.forced.setdefault(r.id, {}).update(
                {m.name: Unscored(FAILED, reason, f"not asked: {message}") for m in self.judged})


def _kept(was: ScoredQuestion) -> ScoredQuestion:
    """A row of an earlier report as a resumed run starts from: its scored and undefined values
    (its failed ones are computed again)."""
    kept = {n: v for n, v in was.metrics.items()
            if v is not None or (n in was.unscored and was.unscored[n].outcome == UNDEFINED)}
    return replace(was, metrics=kept, unscored={n: u for n, u in was.unscored.items() if n in kept})
