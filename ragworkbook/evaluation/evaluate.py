"""The evaluate loop: run a RAG pipeline over an eval set and score every question -> a Report.

For each question the pipeline retrieves and answers; :func:`score_rows` then
scores the rows (the same function scores the outputs of a system given as
records, :func:`ragworkbook.evaluation.outputs.evaluate_outputs`):

- the **retrieval metrics** on the pipeline's ranking, when relevance
  judgements (qrels) are given, through the batch engine
  (:func:`ragworkbook.metrics.batch.evaluate_ranked`, the engine of every other
  retrieval number of the package);
- the **generation metrics** of the answer against the reference answer
  (:mod:`ragworkbook.metrics.generation`);
- the **judged metrics**, when a judge is given
  (:func:`ragworkbook.judging.metrics.ajudge`); a failed or undefined
  judgment is recorded with its outcome and reason, never as a number.

A value that cannot be computed for a row (no relevance judgements for the
question, no reference answer) is recorded as ``undefined`` with its reason,
counted beside the mean, never a number. What is asked and saved around the
scoring (failures, checkpoints, resume) is :mod:`ragworkbook.evaluation.run_control`'s.
Metric names come from the registry
(:mod:`ragworkbook.metrics.registry`); the report's columns carry them as they
were asked for.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ragworkbook._io import check_writable
from ragworkbook._types import JSON, JSONObject, as_json
from ragworkbook._validate import check_k
from ragworkbook.corpus.eval_set import EvalItem, EvalSet, as_items
from ragworkbook.evaluation.report import Report
from ragworkbook.evaluation.rows import ReliabilityEvidence, ScoredQuestion, Scoring, ScoringInfo
from ragworkbook.evaluation.run_control import PipelineRun, reusable_rows, run_settings
from ragworkbook.judging.judge import Judge, run_sync
from ragworkbook.judging.metrics import ajudge
from ragworkbook.judging.reliability import cards_for
from ragworkbook.judging.results import JudgeSample
from ragworkbook.metrics.batch import evaluate_ranked
from ragworkbook.metrics.context_text import CONTEXT_SCORERS
from ragworkbook.metrics.generation import score_pairs
from ragworkbook.metrics.ranked import Ranked
from ragworkbook.metrics.registry import Metric, parse_at_cutoff, specs, split_names
from ragworkbook.outcomes import UNDEFINED, Unscored
from ragworkbook.protocols import PipelineLike

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.llm.base import Generator

__all__ = ["resolve_metrics", "score_rows", "run_settings", "evaluate"]


def resolve_metrics(metrics: str | Metric | Iterable[str | Metric] | None, *, k: int, have_qrels: bool,
                    have_judge: bool, have_reference: bool = True) -> list[Metric]:
    """The metrics a run will compute, parsed and checked before any work.

    ``None`` = the registry's defaults whose needs are met: the retrieval
    defaults at cutoff ``k`` (with qrels), the default generation metrics (with
    reference answers), and the default judged metrics (with a judge). Named
    metrics (names or :class:`Metric` objects) keep the order and spelling given;
    a retrieval metric named without a cutoff (``recall``, ``ndcg``) is taken at
    ``k``, the number of chunks given to the generator (its other parameters kept).
    Raises ValueError naming an unknown metric, or one that needs relevance
    judgements, reference answers or a judge that was not given.
    """
    k = check_k(k)
    if metrics is None:
        out = []
        for s in specs():
            if not s.default or ("relevance" in s.needs and not have_qrels) or (
                    "judge" in s.needs and not have_judge) or (
                    "reference" in s.needs and s.family == "generation" and not have_reference):
                continue
            out.append(s.with_k(k) if s.cutoff != "none" else s.bind())
        return out
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    wanted: list[Metric] = []
    for raw in metrics:
        for item in ([raw] if isinstance(raw, Metric) else split_names(str(raw))):
            name = item.name if isinstance(item, Metric) else item.strip()
            if not name:
                continue
            metric = parse_at_cutoff(item if isinstance(item, Metric) else name, k)
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


def _judge_rows(rows: Sequence[ScoredQuestion], judged: list[Metric], judge: Judge | Generator | None,
                progress: bool, reliability: ReliabilityEvidence = None) -> Scoring:
    """The judged metrics of ``rows``: the rows with their values, outcomes with reasons and
    intermediates (judgments), and what the meta gets (judge, calls, cards, ledger)."""
    if judge is not None and not isinstance(judge, Judge):
        judge = Judge(judge)  # None: only judged metrics that need no LLM (word_support)
    samples = [JudgeSample(question=r.question, answer=r.answer, contexts=r.contexts,
                           reference=r.reference, sample_id=r.id) for r in rows]
    rep = run_sync(ajudge(samples, judge, judged, progress=progress))
    out = [replace(r, metrics={}, unscored={}, judgments={}) for r in rows]
    for m in judged:
        for got, res in zip(out, rep.results[m.name], strict=True):
            got.metrics[m.name] = res.score
            if res.unscored is not None:
                got.unscored[m.name] = res.unscored
            got.judgments[m.name] = as_json(  # type: ignore[index]
                {"outcome": res.outcome, "reason": res.reason, "items": res.items, "detail": res.detail})
    g = judge.generator if judge is not None else None
    name = f"{g.backend}:{g.model}" if g is not None else ""
    cards = cards_for(judged, reliability, name, g.model if g is not None else "")
    info = ScoringInfo(judge=name if g is not None else None, judge_model_calls=rep.n_model_calls,
                       judge_reliability=as_json(cards),  # type: ignore[arg-type]
                       judge_ledger=rep.ledger.to_dict() if g is not None else None)
    return Scoring(out, info)


def _groups(rows: Sequence[ScoredQuestion], metrics: Sequence[Metric],
            unscored: Mapping[str, Mapping[str, Unscored]]) -> list[tuple[list[int], list[Metric]]]:
    """The metrics grouped by the rows they are computed on (rows without a forced ``unscored`` entry),
    so each group is one batch."""
    groups: dict[tuple[int, ...], list[Metric]] = {}
    for m in metrics:
        idx = tuple(i for i, r in enumerate(rows) if m.name not in unscored.get(r.id, {}))
        groups.setdefault(idx, []).append(m)
    return [(list(idx), ms) for idx, ms in groups.items() if idx]


#: Why a text-based context metric (non_llm_context_precision / recall) is undefined for a record.
NO_REFERENCE_CONTEXTS = ("the record has no reference contexts (the passages a correct answer needs, as "
                         "text): add them as 'reference_contexts' (ragas) or 'context' (deepeval)")


def score_rows(rows: Sequence[ScoredQuestion], metrics: Sequence[Metric], *,
               rankings: Mapping[str, Sequence[str]] | None = None,
               qrels: Mapping[str, Mapping[str, float]] | None = None,
               judge: Judge | Generator | None = None,
               unscored: Mapping[str, Mapping[str, Unscored]] | None = None,
               progress: bool = False, judge_reliability: ReliabilityEvidence = None) -> Scoring:
    """Score questions: the one scoring path of pipelines and of given outputs.

    ``rows``: the questions (:class:`~ragworkbook.evaluation.rows.ScoredQuestion`: id,
    question, answer, reference, contexts; the values they hold are not read). Returns
    new rows, in the same order, with a value or a reason for every metric of ``metrics``
    (parsed once, by :func:`resolve_metrics`: the engines below receive the
    :class:`Metric` objects), and what the report's meta gets from the scoring
    (retrieval depth, judge and its model calls, the judge's reliability cards).

    - retrieval metrics: ``rankings[row id]`` (context ids, best first) against
      ``qrels`` through the batch engine (:func:`ragworkbook.metrics.batch.evaluate_ranked`;
      a question missing from ``qrels`` has no relevant context: 0);
    - generation metrics: the answer against the reference
      (:func:`ragworkbook.metrics.generation.score_pairs`, one batch per metric and group);
    - judged metrics: through ``judge`` (:func:`ragworkbook.judging.metrics.ajudge`),
      failures and undefined cases recorded with their reasons.

    ``unscored``: ``{row id: {metric name: Unscored}}``, values known not to be
    computable (no relevance for the question, no reference): recorded as given
    and left out of the computation. ``judge_reliability``: see :func:`evaluate`.
    """
    unscored = unscored or {}
    info = ScoringInfo()
    values: list[dict[str, float | None]] = [{} for _ in rows]
    why: list[dict[str, Unscored]] = [{} for _ in rows]
    judgments: list[dict[str, JSON] | None] = [None for _ in rows]
    by_family = {f: [m for m in metrics if m.family == f] for f in ("retrieval", "generation", "judged")}
    for i, r in enumerate(rows):
        for mname, u in unscored.get(r.id, {}).items():
            values[i][mname] = None
            why[i][mname] = u
    if by_family["retrieval"]:
        rankings = rankings or {}
        for idx, group in _groups(rows, by_family["retrieval"], unscored):
            ids = [rows[i].id for i in idx]
            missing = [i for i in ids if i not in rankings]
            if missing:
                raise ValueError(f"no ranking for question(s) {', '.join(missing)}: give each scored row a "
                                 "ranking, or an unscored entry saying why it has none")
            ranked = Ranked.from_rankings({i: list(rankings[i]) for i in ids},
                                          {str(q): v for q, v in (qrels or {}).items()})
            result = evaluate_ranked(ranked, group)
            for pos, i in enumerate(idx):
                for m in group:
                    values[i][m.name] = float(result.values[m.name][pos])
        info.retrieval_depth = max((len(v) for v in rankings.values()), default=0)
    if by_family["judged"]:
        info.judge_model_calls, info.judge_reliability = 0, {}  # also when no row is judged
        for idx, group in _groups(rows, by_family["judged"], unscored):
            got = _judge_rows([rows[i] for i in idx], group, judge, progress, judge_reliability)
            for i, row_got in zip(idx, got.rows, strict=True):
                values[i].update(row_got.metrics)
                why[i].update(row_got.unscored)
                judgments[i] = {**(judgments[i] or {}), **(row_got.judgments or {})}
            info.add(got.info)
    by_text = [m for m in by_family["generation"] if m.kind in CONTEXT_SCORERS]
    if by_text:  # the text-based context metrics: the contexts against the reference contexts
        for i, r in enumerate(rows):
            if r.reference_contexts is None:
                for m in by_text:
                    if m.name not in why[i]:
                        values[i][m.name] = None
                        why[i][m.name] = Unscored(UNDEFINED, "no_reference_contexts", NO_REFERENCE_CONTEXTS)
        for m in by_text:
            for i, r in enumerate(rows):  # its implementation with its bound parameters (the threshold)
                if m.name not in why[i] and r.reference_contexts is not None:
                    values[i][m.name] = float(m.compute(r.contexts, r.reference_contexts))
    by_family["generation"] = [m for m in by_family["generation"] if m.kind not in CONTEXT_SCORERS]
    if by_family["generation"]:
        for idx, group in _groups(rows, by_family["generation"], unscored):
            answers, references = [rows[i].answer for i in idx], [rows[i].reference for i in idx]
            for m in group:
                for i, value in zip(idx, score_pairs(m, answers, references), strict=True):
                    values[i][m.name] = float(value)
    scored = [replace(r, metrics={m.name: values[i].get(m.name) for m in metrics}, unscored=why[i],
                      judgments=judgments[i]) for i, r in enumerate(rows)]
    return Scoring(scored, info)


def no_relevance(metrics: Iterable[Metric], message: str,
                 reason: str = "no_relevance") -> dict[str, Unscored]:
    """``{metric name: Unscored}``: the retrieval metrics of ``metrics`` undefined for one question
    (``reason`` ``"no_relevance"`` unless said otherwise), for :func:`score_rows`'s ``unscored``."""
    return {m.name: Unscored(UNDEFINED, reason, message) for m in metrics if m.family == "retrieval"}


def evaluate(pipeline: PipelineLike, eval_set: EvalSet | Iterable[EvalItem | Mapping[str, JSON]], *,
             qrels: Mapping[str, Mapping[str, float]] | None = None, k: int = 3,
             judge: Judge | Generator | None = None, metrics: Iterable[str] | None = None,
             progress: bool = True, name: str = "", meta: Mapping[str, JSON] | None = None,
             unjudged: Iterable[str] = (), out: str | os.PathLike[str] | None = None,
             resume: bool = False, settings: Mapping[str, JSON] | None = None,
             save_every: int = 16, judge_reliability: ReliabilityEvidence = None) -> Report:
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

    The rows are scored by :func:`score_rows`, ``save_every`` questions at a time.

    **No run is all-or-nothing.** A question whose answer cannot be generated
    (any exception of ``pipeline.answer``: a server error, a timeout, a reply
    that is not Ollama's, a strict-replay miss) becomes a row whose every
    metric is ``failed`` with the reason (``generation_error``,
    ``output_parse_error``, ``replay_miss``, ``model_not_found``,
    ``backend_unavailable``) and the message, and a row ``"error"``; the other
    questions go on. After a failure that means the backend cannot answer at
    all (no server, model not pulled), the remaining questions are not asked:
    each is recorded failed with that reason (``meta["stopped"]`` says why). A
    judge that cannot work fails the judged metrics of the remaining rows the
    same way; the other metrics are still computed.

    **Checkpoints and resume.** With ``out`` (a path, checked before any work:
    :func:`ragworkbook._io.check_writable`), the report is written there
    atomically after every ``save_every`` questions, at the end, and when the run
    is interrupted (KeyboardInterrupt): every question is in it, those not asked
    yet failed ``not_run``, values not computed yet failed ``not_scored``;
    ``meta["complete"]`` says whether every question was asked. With
    ``resume=True`` the run first reads ``out`` (if it exists) and keeps the rows
    that match: same settings for the whole report (:func:`run_settings`, stored
    in ``meta["settings"]``: the pipeline's prompt, options, k, retriever and
    depth, the generator and judge with their identity, fingerprints of the
    relevance judgements, and the caller's ``settings``, e.g. a corpus
    fingerprint; otherwise ValueError naming what differs), then per question
    the same id, question text and reference, and an answer that was generated.
    Their scored and undefined values are kept; their failed values and the
    metrics they lack are computed; every other question is run.
    """
    k = check_k(k)
    if resume and out is None:
        raise ValueError("resume=True continues the report at out=PATH: give out (`--out` on the "
                         "command line)")
    if not isinstance(save_every, int) or save_every < 1:
        raise ValueError(f"save_every must be a positive number of questions, got {save_every!r}")
    out_path = check_writable(out) if out is not None else None
    items = as_items(eval_set)
    wanted = resolve_metrics(metrics, k=k, have_qrels=qrels is not None, have_judge=judge is not None)
    if judge is not None:
        judge = judge if isinstance(judge, Judge) else Judge(judge)  # one judge (one cache) for the run
    unjudged = {str(q) for q in unjudged}
    config = run_settings(pipeline, k=k, qrels=qrels, unjudged=unjudged, judge=judge, extra=settings)
    previous = reusable_rows(out_path, config, items) if resume and out_path is not None else {}
    forced = {it.id: no_relevance(wanted, f"question {it.id!r} has no relevance judgements (no keyword for "
                                          "the keyword rule, or absent from the qrels given)")
              for it in items if it.id in unjudged}
    info: JSONObject = {"name": name, "k": k, "n_questions": len(items),
                            "eval_set": getattr(eval_set, "name", "")}
    gen = getattr(pipeline, "generator", None)
    if gen is not None:
        info.update(backend=getattr(gen, "backend", ""), model=getattr(gen, "model", ""))
    retr = getattr(pipeline, "retriever", None)
    if retr is not None:
        info["retriever"] = type(retr).__name__
    info.update(meta or {})
    judged = [m for m in wanted if m.family == "judged"]
    if judge is not None:
        g = judge.generator
        info["judge"] = f"{g.backend}:{g.model}"
        if judged:  # one card per judged metric, whichever rows get judged (or kept by --resume)
            info["judge_reliability"] = as_json(cards_for(judged, judge_reliability,
                                                            info["judge"], g.model))
    info.update(settings=config, resumed=len(previous))

    def score(rows: Sequence[ScoredQuestion], metrics: Sequence[Metric], *,
              rankings: Mapping[str, Sequence[str]], unscored: Mapping[str, Mapping[str, Unscored]],
              progress: bool) -> Scoring:
        return score_rows(rows, metrics, rankings=rankings, qrels=qrels, judge=judge, unscored=unscored,
                          progress=progress)

    run = PipelineRun(items, wanted, out=out_path, meta=info, score=score, previous=previous, forced=forced)
    return run.run(pipeline, save_every=save_every, progress=progress)
