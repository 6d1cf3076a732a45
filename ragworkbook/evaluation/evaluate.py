"""The evaluate loop: run a RAG pipeline over an eval set and score every question -> a Report.

For each question the pipeline retrieves and answers; :func:`score_rows` then
scores the rows (the same function scores the outputs of a system given as
records, :func:`ragworkbook.evaluation.outputs.evaluate_outputs`):

- the **retrieval metrics** on the pipeline's ranking, when relevance
  judgements (qrels) are given, through
  :func:`ragworkbook.evaluation.retrieval.score_rankings` (the same path as
  every other retrieval number of the package);
- the **generation metrics** of the answer against the reference answer
  (:mod:`ragworkbook.metrics.generation`);
- the **judged metrics**, when a judge is given
  (:func:`ragworkbook.judging.metrics.evaluate_judged`); a failed or undefined
  judgment is recorded with its outcome and reason, never as a number.

A value that cannot be computed for a row (no relevance judgements for the
question, no reference answer) is recorded as ``undefined`` with its reason,
counted beside the mean, never a number. Metric names come from the registry
(:mod:`ragworkbook.metrics.registry`); the report's columns carry them as they
were asked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragworkbook._validate import check_k
from ragworkbook.evaluation.report import Report
from ragworkbook.metrics.registry import Metric, parse_metric, specs
from ragworkbook.outcomes import UNDEFINED, Unscored
from ragworkbook.protocols import PipelineLike, context_id, context_text

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.corpus.eval_set import EvalItem, EvalSet
    from ragworkbook.judging.judge import Judge
    from ragworkbook.llm.base import Generator

__all__ = ["resolve_metrics", "score_rows", "evaluate"]


def resolve_metrics(metrics: str | Iterable[str] | None, *, k: int, have_qrels: bool,
                    have_judge: bool, have_reference: bool = True) -> list[Metric]:
    """The metrics a run will compute, parsed and checked before any work.

    ``None`` = the registry's defaults whose needs are met: the retrieval
    defaults at cutoff ``k`` (with qrels), the default generation metrics (with
    reference answers), and the default judged metrics (with a judge). Named
    metrics keep the order and spelling given; a retrieval metric named without
    a cutoff (``recall``, ``ndcg``) is taken at ``k``, the number of chunks
    given to the generator. Raises ValueError naming an unknown metric, or one
    that needs relevance judgements, reference answers or a judge that was not
    given.
    """
    k = check_k(k)
    if metrics is None:
        out = []
        for s in specs():
            if not s.default or ("relevance" in s.needs and not have_qrels) or (
                    "judge" in s.needs and not have_judge) or (
                    "reference" in s.needs and s.family == "generation" and not have_reference):
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
                                 "(e.g. ragworkbook.corpus.ground_truth.keyword_qrels(chunks, eval_set)); "
                                 "for given outputs, a qrels file (--qrels) or relevant ids or keywords in "
                                 "the records")
            if "reference" in metric.spec.needs and not have_reference:
                raise ValueError(f"metric {name!r} compares the answer with a reference answer, and no "
                                 "question has one: give each question a 'reference' (or 'ground_truth')")
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


def _groups(rows: Sequence[Mapping[str, Any]], metrics: Sequence[Metric],
            unscored: Mapping[str, Mapping[str, Unscored]]) -> list[tuple[list[int], list[Metric]]]:
    """The metrics grouped by the rows they are computed on (rows without a forced ``unscored`` entry),
    so each group is one batch."""
    groups: dict[tuple[int, ...], list[Metric]] = {}
    for m in metrics:
        idx = tuple(i for i, r in enumerate(rows) if m.name not in unscored.get(str(r["id"]), {}))
        groups.setdefault(idx, []).append(m)
    return [(list(idx), ms) for idx, ms in groups.items() if idx]


def score_rows(rows: list[dict[str, Any]], metrics: Sequence[Metric], *,
               rankings: Mapping[str, Sequence[str]] | None = None,
               qrels: Mapping[str, Mapping[str, float]] | None = None,
               judge: Judge | Generator | None = None,
               unscored: Mapping[str, Mapping[str, Unscored]] | None = None,
               progress: bool = False, judge_reliability: Any = None) -> dict[str, Any]:
    """Score report rows in place: the one scoring path of pipelines and of given outputs.

    ``rows``: dicts with ``id``, ``question``, ``answer``, ``reference`` and
    ``contexts`` (texts); their ``metrics`` and ``unscored`` are filled for
    every metric of ``metrics`` (parsed, see :func:`resolve_metrics`).

    - retrieval metrics: ``rankings[row id]`` (context ids, best first) against
      ``qrels`` through :func:`ragworkbook.evaluation.retrieval.score_rankings`
      (a question missing from ``qrels`` has no relevant context: 0);
    - generation metrics: the answer against the reference
      (:func:`ragworkbook.metrics.generation.generation_scores`, one batch per metric group);
    - judged metrics: through ``judge`` (:func:`ragworkbook.judging.metrics.evaluate_judged`),
      failures and undefined cases recorded with their reasons.

    ``unscored``: ``{row id: {metric name: Unscored}}``, values known not to be
    computable (no relevance for the question, no reference): recorded as given
    and left out of the computation. ``judge_reliability``: see :func:`evaluate`.
    Returns what the report's meta gets from the scoring (retrieval depth, judge and
    its model calls, the judge's reliability cards).
    """
    unscored = unscored or {}
    info: dict[str, Any] = {}
    by_family = {f: [m for m in metrics if m.family == f] for f in ("retrieval", "generation", "judged")}
    for r in rows:
        r.setdefault("metrics", {})
        r.setdefault("unscored", {})
        for mname, why in unscored.get(str(r["id"]), {}).items():
            r["metrics"][mname] = None
            r["unscored"][mname] = why.to_dict()
    if by_family["retrieval"]:
        from ragworkbook.evaluation.retrieval import score_rankings

        rankings = rankings or {}
        for idx, group in _groups(rows, by_family["retrieval"], unscored):
            ids = [str(rows[i]["id"]) for i in idx]
            missing = [i for i in ids if i not in rankings]
            if missing:
                raise ValueError(f"no ranking for question(s) {', '.join(missing)}: give each scored row a "
                                 "ranking, or an unscored entry saying why it has none")
            result = score_rankings({i: rankings[i] for i in ids}, qrels or {}, [m.name for m in group])
            for pos, i in enumerate(idx):
                for m in group:
                    rows[i]["metrics"][m.name] = float(result.values[m.name][pos])
        info["retrieval_depth"] = max((len(v) for v in rankings.values()), default=0)
    if by_family["judged"]:
        calls, cards = 0, {}
        for idx, group in _groups(rows, by_family["judged"], unscored):
            got = _judge_rows([rows[i] for i in idx], group, judge, progress, judge_reliability)
            calls += got.pop("judge_model_calls")
            cards.update(got.pop("judge_reliability"))
            info.update(got)
        info["judge_model_calls"] = calls
        info["judge_reliability"] = cards
    if by_family["generation"]:
        from ragworkbook.metrics.generation import generation_scores

        for idx, group in _groups(rows, by_family["generation"], unscored):
            df = generation_scores([rows[i]["answer"] for i in idx], [rows[i]["reference"] for i in idx],
                                   metrics=[m.name for m in group])
            for pos, i in enumerate(idx):
                for m in group:
                    rows[i]["metrics"][m.name] = float(df[m.name].iloc[pos])
    for r in rows:
        r["metrics"] = {m.name: r["metrics"].get(m.name) for m in metrics}
    return info


def no_relevance(metrics: Iterable[Metric], message: str,
                 reason: str = "no_relevance") -> dict[str, Unscored]:
    """``{metric name: Unscored}``: the retrieval metrics of ``metrics`` undefined for one question
    (``reason`` ``"no_relevance"`` unless said otherwise), for :func:`score_rows`'s ``unscored``."""
    return {m.name: Unscored(UNDEFINED, reason, message) for m in metrics if m.family == "retrieval"}


def evaluate(pipeline: PipelineLike, eval_set: EvalSet | Iterable[EvalItem | Mapping[str, Any]], *,
             qrels: Mapping[str, Mapping[str, float]] | None = None, k: int = 3,
             judge: Judge | Generator | None = None, metrics: Iterable[str] | None = None,
             progress: bool = True, name: str = "", meta: Mapping[str, Any] | None = None,
             unjudged: Iterable[str] = (), judge_reliability: Any = None) -> Report:
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
      has no relevant chunk (every retrieval metric 0), unless it is listed in
      ``unjudged``: then its retrieval metrics are undefined (reason
      ``"no_relevance"``: nothing says what is relevant to it, e.g. an eval-set
      question without a keyword). A cutoff beyond the ranking counts the
      missing positions as non-relevant.
    - ``judge``: a :class:`~ragworkbook.judging.judge.Judge` (or a generator,
      wrapped in one) for the judged metrics and the hallucination flag.
    - ``metrics``: see :func:`resolve_metrics`.
    - ``progress``: a tqdm bar over the questions.
    - ``judge_reliability``: what is known of the judge's reliability, carried into
      ``report.meta["judge_reliability"]``: a
      :class:`~ragworkbook.judging.check.JudgeCheck` (or its JSON), or a list of
      them; a judged metric without one is ``"unmeasured"``
      (:func:`ragworkbook.judging.reliability.cards_for`).

    The rows are scored by :func:`score_rows`. Generation errors of the
    pipeline itself are not caught: a run whose generator is down should stop,
    not produce a report of failures.
    """
    from ragworkbook.corpus.eval_set import as_items

    k = check_k(k)
    items = as_items(eval_set)
    wanted = resolve_metrics(metrics, k=k, have_qrels=qrels is not None, have_judge=judge is not None)
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
    unjudged = {str(q) for q in unjudged}
    forced = {it.id: no_relevance(wanted, f"question {it.id!r} has no relevance judgements (no keyword for "
                                          "the keyword rule, or absent from the qrels given)")
              for it in items if it.id in unjudged}
    info: dict[str, Any] = {"name": name, "k": k, "n_questions": len(rows),
                            "eval_set": getattr(eval_set, "name", "")}
    info.update(score_rows(rows, wanted, rankings=rankings, qrels=qrels, judge=judge, unscored=forced,
                           progress=progress, judge_reliability=judge_reliability))
    gen = getattr(pipeline, "generator", None)
    if gen is not None:
        info.update(backend=getattr(gen, "backend", ""), model=getattr(gen, "model", ""))
    retr = getattr(pipeline, "retriever", None)
    if retr is not None:
        info["retriever"] = type(retr).__name__
    info.update(meta or {})
    return Report(rows=rows, metrics=[m.name for m in wanted], meta=info)
