"""The evaluate loop: run a RAG pipeline over an eval set and score every question -> a Report.

For each question the pipeline retrieves and answers; the loop then scores

- the **retrieval metrics** on the pipeline's ranking, when relevance
  judgements (qrels) are given, through
  :func:`ragworkbook.evaluation.retrieval.score_rankings` (the same path as
  every other retrieval number of the package);
- the **generation metrics** of the answer against the reference answer
  (:mod:`ragworkbook.metrics.generation`);
- the **judged metrics**, when a judge is given
  (:func:`ragworkbook.judging.metrics.evaluate_judged`); a failed or undefined
  judgment is recorded with its outcome and reason, never as a number.

Metric names come from the registry (:mod:`ragworkbook.metrics.registry`); the
report's columns carry them as they were asked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragworkbook._validate import check_k
from ragworkbook.evaluation.report import Report
from ragworkbook.metrics.registry import Metric, parse_metric, specs
from ragworkbook.protocols import PipelineLike, context_id, context_text

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.corpus.eval_set import EvalItem, EvalSet
    from ragworkbook.judging.judge import Judge
    from ragworkbook.llm.base import Generator

__all__ = ["resolve_metrics", "evaluate"]


def resolve_metrics(metrics: str | Iterable[str] | None, *, k: int, have_qrels: bool,
                    have_judge: bool) -> list[Metric]:
    """The metrics a run will compute, parsed and checked before any work.

    ``None`` = the registry's defaults whose needs are met: the retrieval
    defaults at cutoff ``k`` (with qrels), the default generation metrics, and
    the default judged metrics (with a judge). Named metrics keep the order and
    spelling given; a retrieval metric named without a cutoff (``recall``,
    ``ndcg``) is taken at ``k``, the number of chunks given to the generator.
    Raises ValueError naming an unknown metric, or one that needs relevance
    judgements or a judge that was not given.
    """
    k = check_k(k)
    if metrics is None:
        out = []
        for s in specs():
            if not s.default or ("relevance" in s.needs and not have_qrels) or (
                    "judge" in s.needs and not have_judge):
                continue
            out.append(s.with_k(k) if s.family == "retrieval" else s.with_k(None))
        return out
    if isinstance(metrics, str):
        metrics = [metrics]
    wanted: list[Metric] = []
    for raw in metrics:
        for name in str(raw).split(","):
            name = name.strip()
            if not name:
                continue
            try:
                metric = parse_metric(name)
            except ValueError:
                spec = _spec_or_none(name)
                if spec is None or spec.family != "retrieval":
                    raise
                metric = spec.with_k(k)  # "recall": a required cutoff, taken at k
            if metric.family == "retrieval" and metric.k is None and metric.spec.cutoff != "none":
                metric = metric.spec.with_k(k)
            if "relevance" in metric.spec.needs and not have_qrels:
                raise ValueError(f"metric {name!r} needs relevance judgements: pass qrels=... "
                                 "(e.g. ragworkbook.corpus.ground_truth.keyword_qrels(chunks, eval_set))")
            if "judge" in metric.spec.needs and not have_judge:
                raise ValueError(f"metric {name!r} is judged by an LLM: pass judge=... (a Judge or a "
                                 "generator from ragworkbook.llm.get_generator()); on the command line, "
                                 "`ragworkbook eval --judge`")
            if metric not in wanted:
                wanted.append(metric)
    if not wanted:
        raise ValueError("no metric given: pass names like 'recall@3', 'bleu', 'faithfulness'")
    return wanted


def _spec_or_none(name: str) -> Any:
    from ragworkbook.metrics.registry import get_spec

    try:
        return get_spec(name)
    except ValueError:
        return None


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


def _judge_rows(rows: list[dict[str, Any]], judged: list[Metric], judge: Judge | Generator,
                progress: bool, reliability: Any = None) -> dict[str, Any]:
    """Add the judged metrics to ``rows`` in place (values, outcomes with reasons, intermediates)."""
    from ragworkbook.judging.judge import Judge
    from ragworkbook.judging.metrics import evaluate_judged
    from ragworkbook.judging.results import JudgeSample

    if not isinstance(judge, Judge):
        judge = Judge(judge)
    samples = [JudgeSample(question=r["question"], answer=r["answer"], contexts=r["contexts"],
                           reference=r["reference"], sample_id=r["id"]) for r in rows]
    rep = evaluate_judged(samples, judge, [m.name for m in judged], progress=progress)
    for m in judged:
        for r, res in zip(rows, rep.results[m.name], strict=True):
            r["metrics"][m.name] = res.score
            if res.unscored is not None:
                r["unscored"][m.name] = res.unscored.to_dict()
            r.setdefault("judgments", {})[m.name] = _jsonable(
                {"outcome": res.outcome, "reason": res.reason, "items": res.items, "detail": res.detail})
    g = judge.generator
    from ragworkbook.judging.reliability import cards_for

    cards = cards_for([m.name for m in judged], reliability, f"{g.backend}:{g.model}", g.model)
    return {"judge": f"{g.backend}:{g.model}", "judge_model_calls": rep.n_model_calls,
            "judge_reliability": _jsonable(cards)}


def evaluate(pipeline: PipelineLike, eval_set: EvalSet | Iterable[EvalItem | Mapping[str, Any]], *,
             qrels: Mapping[str, Mapping[str, float]] | None = None, k: int = 3,
             judge: Judge | Generator | None = None, metrics: Iterable[str] | None = None,
             progress: bool = True, name: str = "", meta: Mapping[str, Any] | None = None,
             judge_reliability: Any = None) -> Report:
    """Run ``pipeline`` over ``eval_set`` and score every question -> :class:`Report`.

    - ``pipeline``: anything with ``.answer(question)`` returning an object with
      ``answer`` (text) and ``contexts`` (the retrieved hits, chunks or strings
      in rank order; :class:`~ragworkbook.protocols.PipelineLike`), e.g.
      :class:`ragworkbook.pipeline.naive.NaiveRAG`. When the answer also has
      ``retrieved`` (a deeper ranking), the retrieval metrics use it.
    - ``eval_set``: an :class:`~ragworkbook.corpus.eval_set.EvalSet` (or items,
      or dicts with ``id``, ``question``, ``reference``).
    - ``qrels``: ``question id -> {chunk id: grade}``; with it the retrieval
      metrics are computed on the ranking's chunk ids (binary relevance = grade
      > 0; NDCG uses the grades, linear gain). A question missing from ``qrels``
      has no relevant chunk (every retrieval metric 0). A cutoff beyond the
      ranking counts the missing positions as non-relevant.
    - ``judge``: a :class:`~ragworkbook.judging.judge.Judge` (or a generator,
      wrapped in one) for the judged metrics and the hallucination flag.
    - ``metrics``: see :func:`resolve_metrics`.
    - ``progress``: a tqdm bar over the questions.
    - ``judge_reliability``: what is known of the judge's reliability, carried into
      ``report.meta["judge_reliability"]``: a
      :class:`~ragworkbook.judging.check.JudgeCheck` (or its JSON), or a list of
      them; a judged metric without one is ``"unmeasured"``
      (:func:`ragworkbook.judging.reliability.cards_for`).

    Generation errors of the pipeline itself are not caught: a run whose
    generator is down should stop, not produce a report of failures.
    """
    from ragworkbook.corpus.eval_set import as_items

    k = check_k(k)
    items = as_items(eval_set)
    wanted = resolve_metrics(metrics, k=k, have_qrels=qrels is not None, have_judge=judge is not None)
    by_family: dict[str, list[Metric]] = {f: [m for m in wanted if m.family == f]
                                          for f in ("retrieval", "generation", "judged")}
    from tqdm.auto import tqdm

    rows: list[dict[str, Any]] = []
    rankings: dict[str, list[str]] = {}
    for it in tqdm(items, desc="evaluate", disable=not progress, leave=False):
        ans = pipeline.answer(it.question)
        answer = str(getattr(ans, "answer", ans))
        contexts: Sequence[Any] = getattr(ans, "contexts", []) or []
        ids = [context_id(c) for c in contexts]
        row: dict[str, Any] = {"id": it.id, "question": it.question, "reference": it.reference,
                               "answer": answer, "context_ids": ids,
                               "contexts": [context_text(c) for c in contexts],
                               "metrics": {}, "unscored": {}}
        ranking = getattr(ans, "retrieved", None) or contexts
        rankings[it.id] = [context_id(c) or f"<context {n}>" for n, c in enumerate(ranking, start=1)]
        rows.append(row)
    info: dict[str, Any] = {"name": name, "k": k, "n_questions": len(rows),
                            "eval_set": getattr(eval_set, "name", "")}
    if by_family["retrieval"]:
        from ragworkbook.evaluation.retrieval import score_rankings

        result = score_rankings(rankings, qrels or {}, [m.name for m in by_family["retrieval"]])
        for i, r in enumerate(rows):
            for m in by_family["retrieval"]:
                r["metrics"][m.name] = float(result.values[m.name][i])
        info["retrieval_depth"] = max(len(v) for v in rankings.values()) if rankings else 0
    if by_family["judged"]:
        info.update(_judge_rows(rows, by_family["judged"], judge, progress, judge_reliability))
    if by_family["generation"]:
        from ragworkbook.metrics.generation import generation_scores

        df = generation_scores([r["answer"] for r in rows], [r["reference"] for r in rows],
                               metrics=[m.name for m in by_family["generation"]])
        for i, r in enumerate(rows):
            for m in by_family["generation"]:
                r["metrics"][m.name] = float(df[m.name].iloc[i])
    for r in rows:
        r["metrics"] = {m.name: r["metrics"].get(m.name) for m in wanted}
    gen = getattr(pipeline, "generator", None)
    if gen is not None:
        info.update(backend=getattr(gen, "backend", ""), model=getattr(gen, "model", ""))
    retr = getattr(pipeline, "retriever", None)
    if retr is not None:
        info["retriever"] = type(retr).__name__
    info.update(meta or {})
    return Report(rows=rows, metrics=[m.name for m in wanted], meta=info)
