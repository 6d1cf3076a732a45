"""The one Python entry point: ``ragworkbook.evaluate(records, metrics=[...], judge=...)``.

As ``ragas.evaluate`` and deepeval's ``evaluate`` do, it takes what a RAG system produced — a
list of dicts or a pandas DataFrame, with the column names ``ragworkbook eval --answers``
accepts (the workbook's ``question``/``answer``/``contexts``/``reference``, RAGAS 0.2's
``user_input``/``response``/``retrieved_contexts``/``reference``, RAGAS 0.1's
``ground_truth``...; ``ragworkbook schema answers`` lists them) — and returns an
:class:`EvaluationResult`:

>>> import ragworkbook
>>> result = ragworkbook.evaluate(
...     [{"question": "Who wrote it?", "answer": "Vaswani et al.", "reference": "Vaswani et al."}],
...     metrics=["exact_match", "token_f1"], progress=False)
>>> result.summary()["mean"].tolist()
[1.0, 1.0]

The scoring is :func:`ragworkbook.evaluation.outputs.evaluate_outputs` (the same path as the
command line and the pipeline runs): failed and undefined values are counted with their reasons,
every mean has a bootstrap interval, a judged run keeps its ledger of calls, tokens and seconds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from ragworkbook._types import JSON
from ragworkbook.evaluation.outputs import evaluate_outputs
from ragworkbook.evaluation.report import Report
from ragworkbook.evaluation.rows import ReliabilityEvidence
from ragworkbook.outcomes import Unscored

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ragworkbook.judging.judge import Judge
    from ragworkbook.llm.base import Generator
    from ragworkbook.metrics.registry import Metric

__all__ = ["evaluate", "EvaluationResult", "as_judge"]


def as_judge(judge: Judge | Generator | str | None) -> Judge | Generator | None:
    """The judge ``evaluate`` is given: a :class:`~ragworkbook.judging.judge.Judge` or a generator
    as is; a string ``"backend"`` or ``"backend:model"`` (``"embedded"``, ``"ollama:qwen2.5:7b"``,
    ``"openai:my-model"`` with ``OPENAI_BASE_URL`` set) through
    :func:`ragworkbook.llm.get_generator`; None for no judge."""
    if judge is None or not isinstance(judge, str):
        return judge
    from ragworkbook.llm import get_generator

    backend, _, model = judge.strip().partition(":")
    if not backend:
        raise ValueError(f"judge={judge!r}: give a backend (embedded, ollama, openai, auto), optionally "
                         "with a model after a colon: 'ollama:qwen2.5:7b'")
    return get_generator(backend=backend, model=model or None)


@dataclass
class EvaluationResult:
    """What :func:`evaluate` returns: the :class:`~ragworkbook.evaluation.report.Report` of the run,
    with the views a notebook wants.

    ``result["faithfulness"]`` is the metric's per-record values (None where not scored, as in
    ``result.unscored("faithfulness")``); ``result.summary()`` the means with their 95% intervals
    and the failed/undefined counts; ``result.to_pandas()`` one row per record;
    ``result.ledger()`` what the judging cost; ``result.save(path)`` the report file that
    ``ragworkbook compare`` and ``ragworkbook report --html`` read.
    """

    report: Report

    @property
    def metrics(self) -> list[str]:
        """The metric names, as asked for."""
        return list(self.report.metrics)

    def __getitem__(self, metric: str) -> list[float | None]:
        return self.report.values(metric)

    def unscored(self, metric: str) -> dict[str, Unscored]:
        """record id -> why ``metric`` has no value there (outcome, reason, message)."""
        return self.report.unscored(metric)

    def to_pandas(self, *, text: bool = True) -> pd.DataFrame:
        """One row per record, indexed by id: the question, answer and reference (``text=False``
        drops them), one nullable Float64 column per metric (``<NA>`` where not scored) and an
        ``unscored`` column saying why."""
        return self.report.to_pandas(text=text)

    def summary(self) -> pd.DataFrame:
        """One row per metric: ``mean``, ``ci_low``, ``ci_high`` (95% bootstrap over the scored
        records), ``n`` scored, ``failed``, ``undefined``."""
        return self.report.summary()

    def ledger(self) -> pd.DataFrame | None:
        """What the judging cost, one row per judged metric and the total: ``requests``, ``calls``,
        ``failed``, ``cache_hits`` (which cost nothing), ``prompt_tokens``, ``completion_tokens``,
        ``seconds`` (:mod:`ragworkbook.judging.ledger`); None when nothing was judged."""
        import pandas as pd

        from ragworkbook.judging.ledger import Ledger

        stored = self.report.meta.get("judge_ledger")
        if not stored:
            return None
        led = Ledger.from_dict(stored)
        rows = [{"metric": m, **c.to_dict(), "derived_from": led.derived.get(m)}
                for m, c in led.costs.items()]
        rows.append({"metric": "total", **led.total.to_dict(), "derived_from": None})
        return pd.DataFrame(rows).set_index("metric")

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the report as JSON, atomically (``ragworkbook schema report`` describes the file)."""
        return self.report.save(path)

    def __repr__(self) -> str:
        parts = []
        for m, a in self.report.aggregates.items():
            ci = f" [{a.ci_low:.3f}, {a.ci_high:.3f}]" if a.n else ""
            extra = ", ".join(f"{n} {w}" for n, w in ((a.failed, "failed"), (a.undefined, "undefined")) if n)
            parts.append(f"'{m}': {a.mean:.4f}{ci}" + (f" ({extra})" if extra else ""))
        return "{" + ", ".join(parts) + "}"


def evaluate(records: Iterable[Mapping[str, JSON]] | pd.DataFrame | str | PathLike,
             metrics: str | Iterable[str | Metric] | None = None,
             judge: Judge | Generator | str | None = None, *,
             qrels: Mapping[str, Mapping[str, float]] | None = None, k: int = 3, progress: bool = True,
             name: str = "", judge_reliability: ReliabilityEvidence = None) -> EvaluationResult:
    """Score the outputs of a RAG system -> :class:`EvaluationResult`.

    - ``records``: a list of dicts, a pandas DataFrame (one row per record), or the path of an
      answers file (JSONL, JSON, CSV); field names as ``ragworkbook eval --answers`` accepts
      (``ragworkbook schema answers``). Problems are raised together, each naming the record and
      the field.
    - ``metrics``: names of the registry (``["faithfulness", "context_recall", "bleu",
      "precision@3"]``, or one comma-separated string); default: the registry's defaults whose
      needs the records meet (a judge given, references, contexts, relevance).
    - ``judge``: for the judged metrics: a :class:`~ragworkbook.judging.judge.Judge`, a generator
      (:func:`ragworkbook.llm.get_generator`), or ``"backend[:model]"`` (see :func:`as_judge`).
    - ``qrels``, ``k``, ``judge_reliability``: as for
      :func:`~ragworkbook.evaluation.outputs.evaluate_outputs`.
    """
    if isinstance(metrics, str):
        metrics = [metrics]
    report = evaluate_outputs(records, qrels=qrels, k=k, judge=as_judge(judge),
                              metrics=list(metrics) if metrics is not None else None, progress=progress,
                              name=name, judge_reliability=judge_reliability)
    return EvaluationResult(report)
