"""RAGAS-style LLM-judged metrics with a local judge.

Four metrics, defined as in RAGAS (``explodinggradients/ragas``, files under
``src/ragas/metrics/``), with every intermediate kept on the result:

============================  =========================================  =================  ==============
metric                        score                                      model calls/sample  RAGAS makes
============================  =========================================  =================  ==============
faithfulness                  supported statements / statements          2 (1 if claims     2
                                                                         given)
answer_relevancy              mean cosine(question, generated q_i),      1                  strictness = 3
                              0 when noncommittal
context_precision_with_ref    position-weighted precision (below)        K (one per chunk)  K
context_precision_without_ref same, chunks judged against the answer     K                  K
context_recall                attributed reference statements / total    1                  1
============================  =========================================  =================  ==============

(K = number of retrieved chunks. A call whose output does not parse is retried by
the generator up to ``Generator.max_retries`` times, as RAGAS re-asks with
``max_retries``; a cached request makes no call at all.)

Results are :class:`~ragworkbook.judging.results.JudgedResult` objects with an
``outcome`` of the package's vocabulary (:mod:`ragworkbook.outcomes`):
``"scored"``, ``"failed"`` (a judge call failed: ``score`` is None, ``reason``
the kind of failure, ``error`` the message, the raw outputs on ``calls``) or
``"undefined"``, with a ``reason`` for every case where RAGAS would return NaN
or a special value:

- ``"empty_answer"``: faithfulness undefined (nothing to check); answer
  relevancy scored 0.0 (an empty answer does not address the question);
  context precision without reference undefined.
- ``"no_claims"``: the answer yielded no statement; faithfulness undefined (RAGAS: NaN).
- ``"empty_context"``: nothing retrieved; faithfulness scored 0.0 when the answer
  makes claims (none can be supported), context recall scored 0.0, context
  precision undefined.
- ``"empty_reference"``: context recall / precision with reference undefined.
- ``"noncommittal"``: answer relevancy scored 0.0 because the judge called the answer evasive.

:func:`~ragworkbook.judging.results.aggregate_results` turns a list of results
into an :class:`~ragworkbook.outcomes.Aggregate`: failed and undefined samples
are counted, never averaged in, never NaN. :func:`hallucination` derives the
per-sample hallucination flag from faithfulness.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragworkbook._types import JSON
from ragworkbook.judging.judge import Judge, JudgeCall, synced
from ragworkbook.judging.ledger import CallLog, Cost, Ledger, charging
from ragworkbook.judging.prompts import (
    PROMPTS,
    questions_schema,
    statements_schema,
    verdict_schema,
    verdicts_schema,
)
from ragworkbook.judging.results import (
    JudgedResult,
    JudgeSample,
    aggregate_results,
    failed,
    scored,
    undefined,
)
from ragworkbook.metrics.registry import Metric, get_spec, parse_metrics, specs
from ragworkbook.metrics.support import word_support as _word_support
from ragworkbook.outcomes import Aggregate

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "JudgedReport",
    "hallucination",
    "faithfulness_from_verdicts",
    "context_precision_from_verdicts",
    "simple_context_precision",
    "answer_relevancy_from_questions",
    "split_statements",
    "afaithfulness",
    "aanswer_relevancy",
    "acontext_precision",
    "acontext_precision_with_reference",
    "acontext_precision_without_reference",
    "acontext_recall",
    "faithfulness",
    "answer_relevancy",
    "context_precision",
    "context_recall",
    "acontext_relevance",
    "context_relevance",
    "aword_support",
    "word_support",
    "aevaluate_judged",
    "ajudge",
    "evaluate_judged",
]


# --- pure scoring functions ------------------------------------------------------------
def faithfulness_from_verdicts(verdicts: Sequence[int | bool]) -> float | None:
    """Faithfulness = supported / total statements; None when there are no statements.

    RAGAS (``_faithfulness.py``, ``_compute_score``) returns NaN for no statements;
    we return None and the metric reports it undefined (``"no_claims"``).
    """
    v = [_as01(x) for x in verdicts]
    return sum(v) / len(v) if v else None


def context_precision_from_verdicts(verdicts: Sequence[int | bool]) -> float:
    """RAGAS context precision: ``sum_k precision@k * v_k / (number of relevant in top K)``.

    ``verdicts`` are the 0/1 usefulness verdicts of the chunks in rank order. This
    is average precision over the retrieved list (RAGAS ``_context_precision.py``,
    ``_calculate_average_precision``, which divides by ``sum(v) + 1e-10``). With no
    relevant chunk we return exactly 0.0 (RAGAS: 0/1e-10 = 0.0). Empty list:
    ``ValueError`` (there is no ranking to score).

    Example: verdicts ``[0, 1, 1, 1, 1]`` give (1/2 + 2/3 + 3/4 + 4/5) / 4 = 0.679.
    """
    v = [_as01(x) for x in verdicts]
    if not v:
        raise ValueError("context precision needs at least one verdict (no chunk was retrieved)")
    hits, total = 0, 0.0
    for k, rel in enumerate(v, start=1):
        if rel:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def simple_context_precision(verdicts: Sequence[int | bool]) -> float:
    """The textbook simplification: relevant retrieved / retrieved (ignores the order)."""
    v = [_as01(x) for x in verdicts]
    if not v:
        raise ValueError("context precision needs at least one verdict (no chunk was retrieved)")
    return sum(v) / len(v)


def _as01(x: JSON) -> int:
    if isinstance(x, bool):
        return int(x)
    if x in (0, 1):
        return int(x)
    raise ValueError(f"a verdict must be 0/1 or a bool, got {x!r}")


def _cosines(question: str, generated: Sequence[str],
             embed: Callable[[list[str]], np.ndarray] | None) -> list[float]:
    gen = [g for g in generated if g and g.strip()]
    if not gen:
        raise ValueError("no generated question to compare with (every generation was empty)")
    if embed is None:
        from ragworkbook.embeddings import encode

        embed = encode
    vecs = np.asarray(embed([question] + gen), dtype=float)
    q, g = vecs[0], vecs[1:]
    return (g @ q / (np.linalg.norm(g, axis=1) * np.linalg.norm(q))).tolist()


def answer_relevancy_from_questions(question: str, generated: Sequence[str], noncommittal: bool,
                                    embed: Callable[[list[str]], np.ndarray] | None = None) -> float:
    """Mean cosine similarity of the generated questions to the original question, times
    ``not noncommittal`` (RAGAS ``_answer_relevance.py``, ``_calculate_score``).

    ``embed`` maps texts to vectors (default: the local MiniLM via
    :func:`ragworkbook.embeddings.encode`). Empty generated questions are ignored;
    none left raises ``ValueError`` (RAGAS gives NaN).
    """
    sims = _cosines(question, generated, embed)
    return float(np.mean(sims)) * (0.0 if noncommittal else 1.0)


_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def split_statements(text: str) -> list[str]:
    """Split a reference answer into sentences (on ``.``, ``!``, ``?`` followed by a
    capital or digit); used as the statements for context recall."""
    return [s.strip() for s in _SENT.split(text.strip()) if s.strip()]


def _context_block(contexts: Sequence[str]) -> str:
    return "\n".join(f"[{i}] {c}" for i, c in enumerate(contexts, start=1))


def _numbered(statements: Sequence[str]) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(statements, start=1))


def _has_context(sample: JudgeSample) -> bool:
    return any(c.strip() for c in sample.contexts)


# --- the metrics (async) ------------------------------------------------------------------
async def afaithfulness(sample: JudgeSample, judge: Judge, *,
                        claims: Sequence[str] | None = None, max_statements: int = 10) -> JudgedResult:
    """Faithfulness: statements extracted from the answer, each verified against the
    retrieved context (all chunks joined); score = supported / total.

    Model calls: 2 (extraction, then one verification call for all statements, as
    RAGAS); 1 when ``claims`` are given (extraction skipped); 1 when no statement
    is found or the context is empty (nothing to verify); 0 for an empty answer.
    """
    m = "faithfulness"
    if not sample.answer.strip():
        return undefined(m, sample, "empty_answer")
    calls: list[JudgeCall] = []
    if claims is None:
        c = await judge.acall("statements", PROMPTS["statements"].format(
            question=sample.question, answer=sample.answer), statements_schema(max_statements))
        calls.append(c)
        if not c.ok:
            return failed(m, sample, c)
        statements = [s.strip() for s in c.data["statements"] if s.strip()]
        source = "judge"
    else:
        statements = [str(s).strip() for s in claims if str(s).strip()]
        source = "given"
    if not statements:
        return undefined(m, sample, "no_claims", calls=calls, detail={"statements_from": source})
    if not _has_context(sample):
        items = [{"statement": s, "verdict": 0, "reason": "no context was retrieved"} for s in statements]
        return scored(m, sample, 0.0, "empty_context", items=items, calls=calls,
                      detail={"statements_from": source})
    n = len(statements)
    c = await judge.acall("faithfulness", PROMPTS["faithfulness"].format(
        context=_context_block(sample.contexts), statements=_numbered(statements), n=n),
        verdicts_schema(n))
    calls.append(c)
    if not c.ok or len(c.data["verdicts"]) != n:
        if c.ok:
            c.error = f"wrong_verdict_count: expected {n} verdicts, got {len(c.data['verdicts'])}"
        return failed(m, sample, c, items=[{"statement": s} for s in statements], calls=calls)
    items = [{"statement": s, "verdict": int(v["verdict"]), "reason": v["reason"]}
             for s, v in zip(statements, c.data["verdicts"], strict=True)]
    score = faithfulness_from_verdicts([it["verdict"] for it in items])
    return scored(m, sample, score, items=items, calls=calls, detail={"statements_from": source})


async def aanswer_relevancy(sample: JudgeSample, judge: Judge, *, strictness: int = 3,
                            embed: Callable[[list[str]], np.ndarray] | None = None) -> JudgedResult:
    """Answer relevancy: ``strictness`` questions generated back from the answer; score =
    mean cosine (local MiniLM) to the original question, 0 when the answer is noncommittal.

    RAGAS zeroed the score when *any* of its ``strictness`` generations flagged the answer
    noncommittal (``np.any``) until ragas PR #2327 (merged 2025-09-30, first released in
    0.3.6) changed the rule to *every* generation (``np.all``); we ask once for
    ``strictness`` questions and one noncommittal flag, and with a single flag both rules
    give the same result.

    Model calls: 1 (RAGAS: ``strictness`` = 3 separate generations); 0 for an
    empty answer (scored 0.0, reason ``"empty_answer"``).
    """
    m = "answer_relevancy"
    if strictness < 1:
        raise ValueError(f"strictness must be >= 1, got {strictness}")
    if not sample.answer.strip():
        return scored(m, sample, 0.0, "empty_answer")
    c = await judge.acall("answer_relevancy", PROMPTS["answer_relevancy"].format(
        answer=sample.answer, n=strictness), questions_schema(strictness))
    if not c.ok:
        return failed(m, sample, c)
    questions = [q.strip() for q in c.data["questions"]]
    noncommittal = bool(c.data["noncommittal"])
    try:
        sims = _cosines(sample.question, questions, embed)
    except ValueError as exc:
        c.error = f"no_generated_question: {exc}"
        return failed(m, sample, c, items=[{"question": q} for q in questions])
    score = float(np.mean(sims))
    it = iter(sims)
    items = [{"question": q, "cosine": (next(it) if q else None)} for q in questions]
    detail = {"noncommittal": noncommittal, "mean_cosine": score}
    if noncommittal:
        return scored(m, sample, 0.0, "noncommittal", items=items, detail=detail, calls=[c])
    return scored(m, sample, score, items=items, detail=detail, calls=[c])


async def acontext_precision(sample: JudgeSample, judge: Judge, *,
                             with_reference: bool = True) -> JudgedResult:
    """Context precision: each chunk judged useful (1) or not (0) for the reference answer
    (``with_reference=True``, RAGAS ``LLMContextPrecisionWithReference``) or for the
    system's answer (``False``, ``LLMContextPrecisionWithoutReference``); score =
    :func:`context_precision_from_verdicts` (position-weighted). ``detail`` also gives
    the order-blind ``relevant / retrieved`` and precision@k at every rank.

    Model calls: K, one per chunk, run concurrently (RAGAS: K). Any failed chunk
    makes the sample ``"failed"`` (the other verdicts are kept).
    """
    m = "context_precision" if with_reference else "context_precision_without_reference"
    prompt_name = "context_precision_with_reference" if with_reference else m
    if not sample.contexts:
        return undefined(m, sample, "empty_context")
    target = sample.reference if with_reference else sample.answer
    if with_reference and not (target or "").strip():
        return undefined(m, sample, "empty_reference")
    if not with_reference and not target.strip():
        return undefined(m, sample, "empty_answer")
    prompt = PROMPTS[prompt_name]
    calls = await asyncio.gather(*[
        judge.acall(prompt_name, prompt.format(question=sample.question, answer=target, context=ctx),
                    verdict_schema())
        for ctx in sample.contexts
    ])
    items = [{"rank": r, "context": ctx,
              "verdict": (int(c.data["verdict"]) if c.ok else None),
              "reason": (c.data["reason"] if c.ok else None)}
             for r, (ctx, c) in enumerate(zip(sample.contexts, calls, strict=True), start=1)]
    bad = [c for c in calls if not c.ok]
    if bad:
        return failed(m, sample, bad[0], items=items, calls=list(calls))
    v = [it["verdict"] for it in items]
    prec_at_k = [sum(v[:k]) / k for k in range(1, len(v) + 1)]
    detail = {"relevant_over_retrieved": simple_context_precision(v), "precision_at_k": prec_at_k}
    return scored(m, sample, context_precision_from_verdicts(v), items=items, detail=detail,
                  calls=list(calls))


async def acontext_precision_with_reference(sample: JudgeSample, judge: Judge) -> JudgedResult:
    """Context precision, chunks judged against the reference answer (the registry's
    ``context_precision``)."""
    return await acontext_precision(sample, judge, with_reference=True)


async def acontext_precision_without_reference(sample: JudgeSample, judge: Judge) -> JudgedResult:
    """Context precision, chunks judged against the system's answer."""
    return await acontext_precision(sample, judge, with_reference=False)


async def acontext_recall(sample: JudgeSample, judge: Judge) -> JudgedResult:
    """Context recall: the reference's sentences (:func:`split_statements`), each judged
    attributable (1) to the retrieved context or not (0); score = attributed / total.

    RAGAS (``_context_recall.py``) asks the judge to split the reference and classify
    each sentence in the same call; we split deterministically so statements line up
    with verdicts. Model calls: 1 (RAGAS: 1); 0 with an empty context (scored 0.0,
    ``"empty_context"``) or an empty reference (undefined, ``"empty_reference"``).
    """
    m = "context_recall"
    if not (sample.reference or "").strip():
        return undefined(m, sample, "empty_reference")
    statements = split_statements(sample.reference)
    if not _has_context(sample):
        items = [{"statement": s, "verdict": 0, "reason": "no context was retrieved"} for s in statements]
        return scored(m, sample, 0.0, "empty_context", items=items)
    n = len(statements)
    c = await judge.acall("context_recall", PROMPTS["context_recall"].format(
        question=sample.question, context=_context_block(sample.contexts),
        statements=_numbered(statements), n=n), verdicts_schema(n))
    if not c.ok or len(c.data["verdicts"]) != n:
        if c.ok:
            c.error = f"wrong_verdict_count: expected {n} verdicts, got {len(c.data['verdicts'])}"
        return failed(m, sample, c, items=[{"statement": s} for s in statements])
    items = [{"statement": s, "verdict": int(v["verdict"]), "reason": v["reason"]}
             for s, v in zip(statements, c.data["verdicts"], strict=True)]
    return scored(m, sample, sum(it["verdict"] for it in items) / n, items=items, calls=[c])


# --- sync wrappers (work in scripts and in Jupyter) -------------------------------------
faithfulness = synced(afaithfulness)
answer_relevancy = synced(aanswer_relevancy)
context_precision = synced(acontext_precision)
context_recall = synced(acontext_recall)


# --- the RAG triad's first leg -----------------------------------------------------------
async def acontext_relevance(sample: JudgeSample, judge: Judge) -> JudgedResult:
    """Context relevance: mean of per-chunk 0/1 relevance verdicts against the question.

    The triad's first leg (:mod:`ragworkbook.judging.triad`): each chunk is
    judged against the question alone. Model calls: K (one per chunk,
    concurrent). No chunk: undefined (``"empty_context"``). A failed chunk
    makes the sample failed.
    """
    m = "context_relevance"
    if not sample.contexts:
        return undefined(m, sample, "empty_context")
    calls = await asyncio.gather(*[
        judge.acall(m, PROMPTS[m].format(question=sample.question, context=ctx), verdict_schema())
        for ctx in sample.contexts
    ])
    items = [{"rank": r, "context": ctx, "verdict": int(c.data["verdict"]) if c.ok else None,
              "reason": c.data["reason"] if c.ok else None}
             for r, (ctx, c) in enumerate(zip(sample.contexts, calls, strict=True), start=1)]
    bad = [c for c in calls if not c.ok]
    if bad:
        return failed(m, sample, bad[0], items=items, calls=list(calls))
    return scored(m, sample, sum(it["verdict"] for it in items) / len(items), items=items, calls=list(calls))


context_relevance = synced(acontext_relevance)



def hallucination(faith: JudgedResult) -> JudgedResult:
    """The per-sample hallucination flag derived from a faithfulness result: 1.0 when
    faithfulness < 1 (at least one claim the context does not support), 0.0 when every
    claim is supported. A failed or undefined faithfulness gives the same outcome and
    reason here (it is never read as "no hallucination"). Its mean is the
    hallucination rate (registry: lower is better)."""
    if faith.score is None:
        return JudgedResult("hallucination", faith.sample_id, None, faith.outcome, faith.reason,
                            error=faith.error)
    return JudgedResult("hallucination", faith.sample_id, 1.0 if faith.score < 1.0 else 0.0,
                        reason=faith.reason, detail={"faithfulness": faith.score})


# --- word support: a judged metric with no LLM ---------------------------------------------
async def aword_support(sample: JudgeSample, judge: Judge | None = None) -> JudgedResult:
    """Word support of the answer by the retrieved context (:mod:`ragworkbook.metrics.support`):
    deterministic, no model call; ``judge`` is ignored. Items list every unsupported word;
    undefined (``"no_content_words"``) for an answer without a content word."""
    ws = _word_support(sample.answer, sample.contexts)
    if ws.score is None:
        return undefined("word_support", sample, "no_content_words")
    items = [{"word": w, "supported": 0} for w in ws.unsupported]
    return scored("word_support", sample, ws.score, items=items,
                  detail={"supported": ws.supported, "total": ws.total, "unsupported": list(ws.unsupported)})


word_support = synced(aword_support)


def default_judged() -> list[str]:
    """The registry's default judged metrics whose judgments are made (not derived from another's)."""
    return [s.name for s in specs("judged") if s.default and s.derived_from is None]


@dataclass
class JudgedReport:
    """Per-sample results and aggregates for several metrics over several samples,
    keyed by the metric names as asked for."""

    results: dict[str, list[JudgedResult]]
    aggregates: dict[str, Aggregate]
    n_model_calls: int = 0
    #: what the judging cost, per metric (:mod:`ragworkbook.judging.ledger`)
    ledger: Ledger = field(default_factory=Ledger)

    def to_frame(self) -> pd.DataFrame:
        """One row per sample: ``<metric>`` score and ``<metric>_status`` columns.

        Scores use pandas' nullable ``Float64`` dtype, so a sample without a score
        shows ``<NA>`` (its status says why), not NaN."""
        import pandas as pd

        rows: dict[str, dict[str, Any]] = {}
        for metric, results in self.results.items():
            for r in results:
                row = rows.setdefault(r.sample_id, {"sample_id": r.sample_id})
                row[metric] = r.score
                row[f"{metric}_status"] = r.status
        df = pd.DataFrame(list(rows.values())).set_index("sample_id")
        return df.astype({m: "Float64" for m in self.results})

    def summary(self) -> pd.DataFrame:
        """One row per metric: mean, n (scored), failed, undefined, total."""
        import pandas as pd

        return pd.DataFrame([
            {"metric": m, "mean": a.mean, "n": a.n, "failed": a.failed, "undefined": a.undefined,
             "total": a.total}
            for m, a in self.aggregates.items()
        ]).set_index("metric")


async def aevaluate_judged(samples: Iterable[JudgeSample], judge: Judge | None,
                           metrics: Sequence[str | Metric] | None = None, *, progress: bool = True,
                           embed: Callable[[list[str]], np.ndarray] | None = None) -> JudgedReport:
    """Judge every sample on every metric, concurrently (bounded by ``judge.max_concurrency``),
    with a tqdm progress bar (one step per sample x metric judged).

    ``metrics``: judged metrics of the registry, names (aliases and parameters accepted:
    ``answer_relevancy(strictness=5)``; results are keyed by the names given) or
    :class:`Metric` objects; default :func:`default_judged`. They are parsed here and
    judged by :func:`ajudge`. ``embed`` goes to the metrics that take it (their spec's
    ``optional_inputs``: answer relevancy; default the local MiniLM). ``judge`` may be None
    when no metric asked for needs an LLM (word support).
    """
    wanted = parse_metrics(list(metrics) if metrics is not None else default_judged(), "judged")
    return await ajudge(list(samples), judge, wanted, progress=progress, embed=embed)


async def ajudge(samples: Sequence[JudgeSample], judge: Judge | None, metrics: Sequence[Metric], *,
                 progress: bool = True,
                 embed: Callable[[list[str]], np.ndarray] | None = None) -> JudgedReport:
    """The engine of :func:`aevaluate_judged`: every sample judged on every parsed metric. Each is
    computed by its spec's implementation with its bound parameters (:meth:`Metric.compute`); a
    derived metric (``hallucination``) reuses the judgments of the metric it is derived from."""
    ids = [s.sample_id for s in samples]
    if len(set(ids)) != len(ids):
        raise ValueError("sample_id values must be unique (they key the results)")
    source = {m: _source(m) for m in metrics}
    base = list(dict.fromkeys(source.values()))
    if judge is None and any(b.spec.uses_judge for b in base):
        needing = ", ".join(b.name for b in base if b.spec.uses_judge)
        raise ValueError(f"{needing}: judged by an LLM, pass judge=...")
    from tqdm.auto import tqdm

    before = judge.n_model_calls if judge is not None else 0
    bar = tqdm(total=len(samples) * len(base), desc="judging", disable=not progress)
    log = CallLog()

    async def one(metric: Metric, s: JudgeSample) -> JudgedResult:
        extra = {"embed": embed} if embed is not None and "embed" in metric.spec.optional_inputs else {}
        with charging(log, metric.name):  # every call the judge makes for it is this metric's cost
            r = await metric.compute(s, judge, **extra)
        bar.update(1)
        return r

    try:
        out = await asyncio.gather(*[one(b, s) for b in base for s in samples])
    finally:
        bar.close()
    n = len(samples)
    by_base = {b: list(out[i * n:(i + 1) * n]) for i, b in enumerate(base)}
    results: dict[str, list[JudgedResult]] = {}
    for m in metrics:
        judged = by_base[source[m]]
        results[m.name] = judged if source[m] is m else [m.compute(r) for r in judged]
    aggs = {m: aggregate_results(rs) for m, rs in results.items()}
    calls = (judge.n_model_calls - before) if judge is not None else 0
    return JudgedReport(results, aggs, n_model_calls=calls, ledger=_ledger(metrics, source, log, judge))


def _ledger(wanted: Sequence[Metric], source: dict[Metric, Metric], log: CallLog,
            judge: Judge | None) -> Ledger:
    """The cost of each metric asked for: the calls made while computing it; none of its own for a
    derived metric (``derived``: whose judgments it reuses)."""
    ledger = Ledger(mode=str(getattr(getattr(judge, "generator", None), "mode", "live")))
    charged: dict[Metric, str] = {m: m.name for m in wanted if source[m] is m}
    for m in wanted:
        base = source[m]
        if base not in charged:  # derived from a metric not asked for: its judgments are this one's cost
            charged[base] = m.name
            ledger.costs[m.name] = log.cost(base.name)
        elif charged[base] == m.name:
            ledger.costs[m.name] = log.cost(base.name)
        else:
            ledger.costs[m.name] = Cost()
            ledger.derived[m.name] = charged[base]
    return ledger


def _source(metric: Metric) -> Metric:
    """The metric whose judgments ``metric`` is computed from: itself, or for a derived metric its
    spec's ``derived_from`` with the parameters the two share."""
    if metric.spec.derived_from is None:
        return metric
    spec = get_spec(metric.spec.derived_from)
    return spec.bind(**{k: v for k, v in metric.params if spec.param(k) is not None})


evaluate_judged = synced(aevaluate_judged)
