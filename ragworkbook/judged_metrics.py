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

Results are :class:`JudgedResult` objects. ``status`` is ``"ok"``, ``"failed"``
(a judge call failed: ``score`` is None, ``error`` says why and the raw outputs
are on ``calls``) or a defined special case where RAGAS would return NaN:

- ``"empty_answer"``: faithfulness None (nothing to check); answer relevancy 0.0
  (an empty answer does not address the question); context precision without
  reference None.
- ``"no_claims"``: the answer yielded no statement; faithfulness None (RAGAS: NaN).
- ``"empty_context"``: nothing retrieved; faithfulness 0.0 when the answer makes
  claims (none can be supported), context recall 0.0, context precision None.
- ``"empty_reference"``: context recall / precision with reference None.
- ``"noncommittal"``: answer relevancy 0.0 because the judge called the answer evasive.

:func:`ragworkbook.judge.aggregate` turns a list of results into a
:class:`~ragworkbook.judge.MetricAggregate`: failed and undefined samples are
counted, never averaged in, never NaN.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragworkbook.judge import (
    PROMPTS,
    Judge,
    JudgeCall,
    MetricAggregate,
    aggregate,
    questions_schema,
    run_sync,
    statements_schema,
    verdict_schema,
    verdicts_schema,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "METRICS",
    "JudgeSample",
    "JudgedResult",
    "JudgedReport",
    "faithfulness_from_verdicts",
    "context_precision_from_verdicts",
    "simple_context_precision",
    "answer_relevancy_from_questions",
    "split_statements",
    "afaithfulness",
    "aanswer_relevancy",
    "acontext_precision",
    "acontext_recall",
    "faithfulness",
    "answer_relevancy",
    "context_precision",
    "context_recall",
    "aevaluate_judged",
    "evaluate_judged",
]


# --- inputs and results --------------------------------------------------------------
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
        """Build from a dict with ``question``, ``answer``, ``contexts`` or ``chunks``
        (list of strings or of dicts with ``text``) and optional ``reference``/``id``."""
        if "question" not in m:
            fields = ", ".join(map(str, m)) or "nothing"
            raise ValueError(f"sample has no 'question' field (it has: {fields})")
        ctx = m.get("contexts", m.get("chunks"))
        if ctx is None:
            raise ValueError("sample has no 'contexts' (or 'chunks') field")
        texts = [c["text"] if isinstance(c, Mapping) else str(c) for c in ctx]
        sid = sample_id if sample_id is not None else str(m.get("id", m.get("sample_id", "0")))
        return cls(question=m["question"], answer=m.get("answer", ""), contexts=texts,
                   reference=m.get("reference"), sample_id=sid)


@dataclass
class JudgedResult:
    """One metric on one sample, with everything the judge said.

    ``items`` holds the per-statement / per-chunk / per-question intermediates
    (e.g. ``{"statement", "verdict", "reason"}``), ``detail`` metric-specific extras,
    ``calls`` every :class:`~ragworkbook.judge.JudgeCall` (with raw outputs).
    """

    metric: str
    sample_id: str
    score: float | None
    status: str
    items: list[dict[str, Any]] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
    calls: list[JudgeCall] = field(default_factory=list)
    error: str | None = None

    @property
    def n_model_calls(self) -> int:
        """Calls that reached the model (cached ones excluded)."""
        return sum(1 for c in self.calls if not c.cached)

    @property
    def raw_outputs(self) -> list[str]:
        """Every raw model output of every call, in call order."""
        return [r for c in self.calls for r in c.raw_outputs]


def _failed(metric: str, sample: JudgeSample, call: JudgeCall, items=None, calls=None,
            detail=None) -> JudgedResult:
    return JudgedResult(metric=metric, sample_id=sample.sample_id, score=None, status="failed",
                        items=items or [], detail=detail or {}, calls=calls or [call],
                        error=f"{call.prompt}: {call.error}")


# --- pure scoring functions ------------------------------------------------------------
def faithfulness_from_verdicts(verdicts: Sequence[int | bool]) -> float | None:
    """Faithfulness = supported / total statements; None when there are no statements.

    RAGAS (``_faithfulness.py``, ``_compute_score``) returns NaN for no statements;
    we return None and the metric reports status ``"no_claims"``.
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


def _as01(x: Any) -> int:
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
        return JudgedResult(m, sample.sample_id, None, "empty_answer")
    calls: list[JudgeCall] = []
    if claims is None:
        c = await judge.acall("statements", PROMPTS["statements"].format(
            question=sample.question, answer=sample.answer), statements_schema(max_statements))
        calls.append(c)
        if not c.ok:
            return _failed(m, sample, c)
        statements = [s.strip() for s in c.data["statements"] if s.strip()]
        source = "judge"
    else:
        statements = [str(s).strip() for s in claims if str(s).strip()]
        source = "given"
    if not statements:
        return JudgedResult(m, sample.sample_id, None, "no_claims", calls=calls,
                            detail={"statements_from": source})
    if not _has_context(sample):
        items = [{"statement": s, "verdict": 0, "reason": "no context was retrieved"} for s in statements]
        return JudgedResult(m, sample.sample_id, 0.0, "empty_context", items=items, calls=calls,
                            detail={"statements_from": source})
    n = len(statements)
    c = await judge.acall("faithfulness", PROMPTS["faithfulness"].format(
        context=_context_block(sample.contexts), statements=_numbered(statements), n=n),
        verdicts_schema(n))
    calls.append(c)
    if not c.ok or len(c.data["verdicts"]) != n:
        if c.ok:
            c.error = f"expected {n} verdicts, got {len(c.data['verdicts'])}"
        return _failed(m, sample, c, items=[{"statement": s} for s in statements], calls=calls)
    items = [{"statement": s, "verdict": int(v["verdict"]), "reason": v["reason"]}
             for s, v in zip(statements, c.data["verdicts"], strict=True)]
    score = faithfulness_from_verdicts([it["verdict"] for it in items])
    return JudgedResult(m, sample.sample_id, score, "ok", items=items, calls=calls,
                        detail={"statements_from": source})


async def aanswer_relevancy(sample: JudgeSample, judge: Judge, *, strictness: int = 3,
                            embed: Callable[[list[str]], np.ndarray] | None = None) -> JudgedResult:
    """Answer relevancy: ``strictness`` questions generated back from the answer; score =
    mean cosine (local MiniLM) to the original question, 0 when the answer is noncommittal.

    RAGAS (0.2 and later) zeroes the score only when *every* one of its ``strictness``
    generations flags the answer noncommittal (``np.all``; RAGAS 0.1 used ``np.any``);
    we ask once for ``strictness`` questions and one noncommittal flag, and with a
    single flag both rules give the same result.

    Model calls: 1 (RAGAS: ``strictness`` = 3 separate generations); 0 for an
    empty answer (score 0.0, status ``"empty_answer"``).
    """
    m = "answer_relevancy"
    if strictness < 1:
        raise ValueError(f"strictness must be >= 1, got {strictness}")
    if not sample.answer.strip():
        return JudgedResult(m, sample.sample_id, 0.0, "empty_answer")
    c = await judge.acall("answer_relevancy", PROMPTS["answer_relevancy"].format(
        answer=sample.answer, n=strictness), questions_schema(strictness))
    if not c.ok:
        return _failed(m, sample, c)
    questions = [q.strip() for q in c.data["questions"]]
    noncommittal = bool(c.data["noncommittal"])
    try:
        sims = _cosines(sample.question, questions, embed)
    except ValueError as exc:
        c.error = str(exc)
        return _failed(m, sample, c, items=[{"question": q} for q in questions])
    score = float(np.mean(sims))
    it = iter(sims)
    items = [{"question": q, "cosine": (next(it) if q else None)} for q in questions]
    detail = {"noncommittal": noncommittal, "mean_cosine": score}
    if noncommittal:
        return JudgedResult(m, sample.sample_id, 0.0, "noncommittal", items=items, detail=detail, calls=[c])
    return JudgedResult(m, sample.sample_id, score, "ok", items=items, detail=detail, calls=[c])


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
    m = "context_precision_with_reference" if with_reference else "context_precision_without_reference"
    if not sample.contexts:
        return JudgedResult(m, sample.sample_id, None, "empty_context")
    target = sample.reference if with_reference else sample.answer
    if with_reference and not (target or "").strip():
        return JudgedResult(m, sample.sample_id, None, "empty_reference")
    if not with_reference and not target.strip():
        return JudgedResult(m, sample.sample_id, None, "empty_answer")
    prompt = PROMPTS[m]
    calls = await asyncio.gather(*[
        judge.acall(m, prompt.format(question=sample.question, answer=target, context=ctx), verdict_schema())
        for ctx in sample.contexts
    ])
    items = [{"rank": r, "context": ctx,
              "verdict": (int(c.data["verdict"]) if c.ok else None),
              "reason": (c.data["reason"] if c.ok else None)}
             for r, (ctx, c) in enumerate(zip(sample.contexts, calls, strict=True), start=1)]
    bad = [c for c in calls if not c.ok]
    if bad:
        return _failed(m, sample, bad[0], items=items, calls=list(calls))
    v = [it["verdict"] for it in items]
    prec_at_k = [sum(v[:k]) / k for k in range(1, len(v) + 1)]
    detail = {"relevant_over_retrieved": simple_context_precision(v), "precision_at_k": prec_at_k}
    return JudgedResult(m, sample.sample_id, context_precision_from_verdicts(v), "ok", items=items,
                        detail=detail, calls=list(calls))


async def acontext_recall(sample: JudgeSample, judge: Judge) -> JudgedResult:
    """Context recall: the reference's sentences (:func:`split_statements`), each judged
    attributable (1) to the retrieved context or not (0); score = attributed / total.

    RAGAS (``_context_recall.py``) asks the judge to split the reference and classify
    each sentence in the same call; we split deterministically so statements line up
    with verdicts. Model calls: 1 (RAGAS: 1); 0 with an empty context (score 0.0,
    ``"empty_context"``) or an empty reference (None, ``"empty_reference"``).
    """
    m = "context_recall"
    if not (sample.reference or "").strip():
        return JudgedResult(m, sample.sample_id, None, "empty_reference")
    statements = split_statements(sample.reference)
    if not _has_context(sample):
        items = [{"statement": s, "verdict": 0, "reason": "no context was retrieved"} for s in statements]
        return JudgedResult(m, sample.sample_id, 0.0, "empty_context", items=items)
    n = len(statements)
    c = await judge.acall("context_recall", PROMPTS["context_recall"].format(
        question=sample.question, context=_context_block(sample.contexts),
        statements=_numbered(statements), n=n), verdicts_schema(n))
    if not c.ok or len(c.data["verdicts"]) != n:
        if c.ok:
            c.error = f"expected {n} verdicts, got {len(c.data['verdicts'])}"
        return _failed(m, sample, c, items=[{"statement": s} for s in statements])
    items = [{"statement": s, "verdict": int(v["verdict"]), "reason": v["reason"]}
             for s, v in zip(statements, c.data["verdicts"], strict=True)]
    return JudgedResult(m, sample.sample_id, sum(it["verdict"] for it in items) / n, "ok",
                        items=items, calls=[c])


# --- sync wrappers (work in scripts and in Jupyter) -------------------------------------
def faithfulness(sample: JudgeSample, judge: Judge, **kw: Any) -> JudgedResult:
    """Sync :func:`afaithfulness` (safe inside Jupyter's running loop)."""
    return run_sync(afaithfulness(sample, judge, **kw))


def answer_relevancy(sample: JudgeSample, judge: Judge, **kw: Any) -> JudgedResult:
    """Sync :func:`aanswer_relevancy`."""
    return run_sync(aanswer_relevancy(sample, judge, **kw))


def context_precision(sample: JudgeSample, judge: Judge, **kw: Any) -> JudgedResult:
    """Sync :func:`acontext_precision`."""
    return run_sync(acontext_precision(sample, judge, **kw))


def context_recall(sample: JudgeSample, judge: Judge) -> JudgedResult:
    """Sync :func:`acontext_recall`."""
    return run_sync(acontext_recall(sample, judge))


# --- many samples, many metrics ---------------------------------------------------------
METRICS: dict[str, Callable[..., Any]] = {
    "faithfulness": afaithfulness,
    "answer_relevancy": aanswer_relevancy,
    "context_precision_with_reference": lambda s, j: acontext_precision(s, j, with_reference=True),
    "context_precision_without_reference": lambda s, j: acontext_precision(s, j, with_reference=False),
    "context_recall": acontext_recall,
}


@dataclass
class JudgedReport:
    """Per-sample results and aggregates for several metrics over several samples."""

    results: dict[str, list[JudgedResult]]
    aggregates: dict[str, MetricAggregate]
    n_model_calls: int = 0

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
        """One row per metric: mean, n_scored, n_failed, n_undefined, n_total."""
        import pandas as pd

        return pd.DataFrame([
            {"metric": a.metric, "mean": a.mean, "n_scored": a.n_scored, "n_failed": a.n_failed,
             "n_undefined": a.n_undefined, "n_total": a.n_total}
            for a in self.aggregates.values()
        ]).set_index("metric")


async def aevaluate_judged(samples: Iterable[JudgeSample], judge: Judge,
                           metrics: Sequence[str] = ("faithfulness", "answer_relevancy",
                                                     "context_precision_with_reference",
                                                     "context_recall"),
                           *, progress: bool = True,
                           embed: Callable[[list[str]], np.ndarray] | None = None) -> JudgedReport:
    """Judge every sample on every metric, concurrently (bounded by ``judge.max_concurrency``),
    with a tqdm progress bar (one step per sample x metric). ``embed`` is passed to
    answer relevancy (default: the local MiniLM)."""
    samples = list(samples)
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric {unknown[0]!r}; choose from {sorted(METRICS)}")
    ids = [s.sample_id for s in samples]
    if len(set(ids)) != len(ids):
        raise ValueError("sample_id values must be unique (they key the results)")
    from tqdm.auto import tqdm

    before = judge.n_model_calls
    bar = tqdm(total=len(samples) * len(metrics), desc="judging", disable=not progress)

    async def one(metric: str, s: JudgeSample) -> JudgedResult:
        if metric == "answer_relevancy":
            r = await aanswer_relevancy(s, judge, embed=embed)
        else:
            r = await METRICS[metric](s, judge)
        bar.update(1)
        return r

    try:
        out = await asyncio.gather(*[one(m, s) for m in metrics for s in samples])
    finally:
        bar.close()
    results = {m: list(out[i * len(samples):(i + 1) * len(samples)]) for i, m in enumerate(metrics)}
    aggs = {m: aggregate(rs, m) for m, rs in results.items()}
    return JudgedReport(results, aggs, n_model_calls=judge.n_model_calls - before)


def evaluate_judged(samples: Iterable[JudgeSample], judge: Judge,
                    metrics: Sequence[str] = ("faithfulness", "answer_relevancy",
                                              "context_precision_with_reference", "context_recall"),
                    *, progress: bool = True,
                    embed: Callable[[list[str]], np.ndarray] | None = None) -> JudgedReport:
    """Sync :func:`aevaluate_judged` (safe inside Jupyter)."""
    return run_sync(aevaluate_judged(samples, judge, metrics, progress=progress, embed=embed))
