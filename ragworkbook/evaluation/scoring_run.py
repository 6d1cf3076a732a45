"""Scoring given outputs a batch at a time: progress, partial reports saved as it goes, resume.

:class:`OutputsRun` is the loop behind
:func:`ragworkbook.evaluation.outputs.evaluate_outputs`: the rows are scored
``save_every`` at a time by a function the caller gives (the one scoring path,
:func:`ragworkbook.evaluation.evaluate.score_rows`), a progress bar counts the
records, and with ``out`` the report is saved after every batch and when the run
is interrupted (KeyboardInterrupt, and SIGTERM / SIGHUP through
:mod:`ragworkbook._signals`). A saved partial report holds every record: those
not scored yet have every metric failed ``not_scored`` and ``meta["complete"]``
is false, so it loads, and the gate refuses it as incomplete.

Resuming (:meth:`OutputsRun.resume_from_out`) keeps the rows of the report at
``out`` that were scored, when the report was made by the same run: the same
records (ids, questions, answers, contexts, references), relevance, metrics and
judge, summed up in ``meta["settings"]``; a report made otherwise is refused,
naming what differs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm.auto import tqdm

from ragworkbook._io import saved_first
from ragworkbook._types import JSON, JSONObject, as_json
from ragworkbook.evaluation.report import Report
from ragworkbook.evaluation.rows import ScoredQuestion, Scoring
from ragworkbook.metrics.registry import Metric
from ragworkbook.outcomes import FAILED, Unscored

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.judging.judge import Judge
    from ragworkbook.llm.base import Generator

__all__ = ["OutputsRun"]

NOT_SCORED = (
    "the run stopped before this record was scored; run the same command again with --resume "
    "(resume=True) to score it"
)


def _fingerprint(obj: JSON) -> str:
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


class OutputsRun:
    """The state of one scoring run over given outputs (see the module docstring)."""

    def __init__(
        self,
        rows: list[ScoredQuestion],
        wanted: Sequence[Metric],
        *,
        info: JSONObject,
        extra_meta: Mapping[str, JSON] | None,
        out: str | os.PathLike[str] | None,
        save_every: int,
        progress: bool,
    ):
        if not isinstance(save_every, int) or save_every < 1:
            raise ValueError(f"save_every must be a positive number of records, got {save_every!r}")
        self.rows, self.wanted, self.info = rows, list(wanted), dict(info)
        self.extra_meta = dict(extra_meta or {})
        self.out = Path(out) if out is not None else None
        self.save_every, self.progress = save_every, progress
        self.done: set[int] = set()  # positions of the rows scored
        self.settings: JSONObject = {}
        self.resumed = 0

    def fingerprint(
        self,
        *,
        rankings: Mapping[str, list[str]],
        judgements: Mapping[str, dict[str, float]],
        forced: Mapping[str, Mapping[str, Unscored]],
        judge: Judge | Generator | None,
    ) -> JSONObject:
        """What determines every value of the run: the records, their relevance, the metrics, the judge."""
        gen = getattr(judge, "generator", judge)
        records = [
            {"id": r.id, "question": r.question, "answer": r.answer, "contexts": r.contexts,
             "context_ids": r.context_ids, "reference": r.reference}
            for r in self.rows
        ]
        return {
            "records": _fingerprint(records),
            "relevance": _fingerprint(
                {
                    "rankings": rankings,
                    "judgements": judgements,
                    "unscored": {i: {m: u.to_dict() for m, u in f.items()} for i, f in forced.items()},
                }
            ),
            "metrics": [m.name for m in self.wanted],
            "judge": None
            if judge is None
            else {
                "backend": getattr(gen, "backend", type(gen).__name__),
                "model": getattr(gen, "model", ""),
                "options": as_json(getattr(judge, "options", None)),
            },
        }

    def resume_from_out(self) -> None:
        """Keep the scored rows of the report at ``out`` (ValueError when it was made by another run)."""
        if self.out is None or not self.out.exists():
            return
        old = Report.load(self.out)
        stored = old.meta.get("settings")
        if not isinstance(stored, dict) or old.meta.get("mode") != "answers":
            raise ValueError(
                f"cannot resume from {self.out}: it is not a report of `eval --answers` that "
                "records its settings; run without --resume, or write to another --out"
            )
        if stored != self.settings:
            what = {
                "records": "the records (ids, questions, answers, contexts or references)",
                "relevance": "the relevance (qrels, relevant ids or keywords)",
                "metrics": "the metrics",
                "judge": "the judge",
            }
            diffs = [
                what.get(key, key)
                for key in sorted(set(stored) | set(self.settings))
                if stored.get(key) != self.settings.get(key)
            ]
            raise ValueError(
                f"cannot resume from {self.out}: it was made from other inputs ({'; '.join(diffs)} "
                "differ); its rows would not be this run's: run without --resume, or write to "
                "another --out"
            )
        by_id = {str(r["id"]): r for r in old.rows}
        for pos, row in enumerate(self.rows):
            was = by_id.get(row.id)
            if was is None:
                continue
            kept = ScoredQuestion.from_dict(was, f"{self.out}: row {row.id!r}")
            if any(u.outcome == FAILED and u.reason == "not_scored" for u in kept.unscored.values()):
                continue
            self.rows[pos] = replace(row, metrics=kept.metrics, unscored=kept.unscored,
                                     judgments=kept.judgments or row.judgments)
            self.done.add(pos)
        self.resumed = len(self.done)
        for key in ("judge", "judge_reliability", "retrieval_depth", "judge_model_calls"):
            if key in old.meta and key not in self.info:
                self.info[key] = old.meta[key]

    def report(self, final: bool) -> Report:
        """Every record: scored, or (not yet) every metric failed ``not_scored``."""
        names = [m.name for m in self.wanted]
        rows = []
        why = Unscored(FAILED, "not_scored", NOT_SCORED)
        for pos, row in enumerate(self.rows):
            if pos not in self.done:
                row = replace(row, metrics={n: None for n in names}, unscored={n: why for n in names})
            rows.append(row.to_dict())
        meta = {
            **self.info,
            **self.extra_meta,
            "settings": self.settings,
            "resumed": self.resumed,
            "complete": final and len(self.done) == len(self.rows),
        }
        return Report(rows=rows, metrics=names, meta=meta)

    def _save_if_named(self) -> None:
        """A checkpoint, when the run has a file to save to."""
        if self.out is not None:
            self.save()

    def save(self, final: bool = False) -> Report:
        report = self.report(final)
        if self.out is not None:
            report.save(self.out)
        return report

    def run(self, score: Callable[[list[ScoredQuestion], bool], Scoring]) -> Report:
        """Score the rows not done, ``save_every`` at a time (``score(rows, progress)`` returns them
        scored and what the meta gets), saving after each batch; the report."""
        todo = [pos for pos in range(len(self.rows)) if pos not in self.done]
        bar = tqdm(
            total=len(self.rows),
            initial=len(self.done),
            desc="score",
            unit="record",
            disable=not self.progress,
            leave=False,
        )
        judged = any(m.family == "judged" for m in self.wanted)
        # interrupted (Ctrl-C, SIGTERM, SIGHUP), or a bug: the work done is saved first
        with saved_first(self._save_if_named), contextlib.closing(bar):
            for start in range(0, len(todo), self.save_every):
                batch = todo[start : start + self.save_every]
                got = score([self.rows[pos] for pos in batch], self.progress and judged)
                for pos, row in zip(batch, got.rows, strict=True):
                    self.rows[pos] = row
                self._merge(got.info.to_dict())
                self.done.update(batch)
                bar.update(len(batch))
                if start + self.save_every < len(todo):
                    self._save_if_named()
        names = [m.name for m in self.wanted]
        self.rows = [  # a row's metrics in the run's order
            replace(row, metrics={n: row.metrics.get(n) for n in names},
                    unscored={n: row.unscored[n] for n in names if n in row.unscored})
            for row in self.rows
        ]
        return self.save(final=True)

    def _merge(self, got: JSONObject) -> None:
        for key, value in got.items():
            if key == "retrieval_depth":
                self.info[key] = max(self.info.get(key, 0), value)
            elif key == "judge_model_calls":
                self.info[key] = self.info.get(key, 0) + value
            elif key == "judge_reliability":
                self.info.setdefault(key, {}).update(value)
            elif key == "judge_ledger":  # the judge's cost: the batches summed
                from ragworkbook.judging.ledger import merge_ledgers

                self.info[key] = merge_ledgers(self.info.get(key), value)
            else:
                self.info[key] = value
