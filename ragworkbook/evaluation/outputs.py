"""Score outputs a RAG system already produced: records in, a :class:`Report` out, nothing regenerated.

:func:`evaluate_outputs` takes the answers and contexts of any system — an
answers file (JSONL, JSON, CSV), a list of dicts or a pandas DataFrame, with
RAGAS 0.2+, RAGAS 0.1 or the workbook's field names
(:mod:`ragworkbook.corpus.answers`) — and scores them with the same function
as the pipeline path (:func:`ragworkbook.evaluation.evaluate.score_rows`).
The report's rows hold the file's answers and contexts verbatim.

What is computed for a record depends on what it gives:

- **retrieval metrics**, when its relevance can be known, from the first of:
  a ``qrels`` mapping (question id -> {context id: grade}, e.g. a TREC qrels
  file read with :func:`ragworkbook.corpus.trec.read_qrels`), the record's
  relevant ids, or its keyword. Relevance by id needs the contexts' ids. A
  keyword marks the retrieved contexts that contain it (case-insensitive),
  which says nothing about the relevant passages that were not retrieved: the
  metrics that need all of them (the registry's ``all_relevant``: recall, NDCG,
  MAP, R-precision...) are then undefined (reason ``"incomplete_relevance"``),
  while the others (precision, hit rate, MRR, DCG, ERR...) are computed. Without any source: undefined,
  ``"no_relevance"``; relevance by id without context ids: undefined,
  ``"no_context_ids"``; an id absent from ``qrels``: undefined,
  ``"no_relevance"`` (not judged).
- **generation metrics**, when the record has a reference answer; else
  undefined, ``"no_reference"``.
- **judged metrics**, with a ``judge``; those that need a reference are
  undefined (``"no_reference"``) for a record without one.
- a record **without contexts** (question, answer and reference only: a common
  export) has every metric that needs the retrieved contexts (the registry's
  ``"contexts"`` need: the retrieval metrics, every judged metric but answer
  relevancy) undefined, ``"no_contexts"``; with context ids alone, relevance by id
  still gives the retrieval metrics.
- an answer or reference longer than
  :data:`~ragworkbook.corpus.answers.MAX_SCORED_CHARS` is kept but not scored:
  the generation and judged metrics that read it are undefined, ``"text_too_long"``.

Undefined values are counted in each aggregate beside the mean (never a NaN,
never a crash halfway through the file).

**Saved as it goes, resumable.** The records are scored ``save_every`` at a time
(:data:`SAVE_EVERY`, fewer with a judge), with a progress bar over the records.
With ``out`` the report is written there after every batch, at the end, and when
the run is interrupted (Ctrl-C, SIGTERM, SIGHUP): records not scored yet are
failed ``not_scored`` and ``meta["complete"]`` is false. ``resume=True`` reads
``out`` first and keeps its scored rows when the run is the same (same records,
relevance, metrics and judge: ``meta["settings"]``; otherwise ValueError naming
what differs), scoring only the rest.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from os import PathLike
from typing import TYPE_CHECKING

from ragworkbook._types import JSON, JSONObject
from ragworkbook._validate import check_k
from ragworkbook.corpus.answers import (
    MAX_SCORED_CHARS,
    AnswerRecord,
    AnswerSet,
    answer_records,
    load_answer_records,
)
from ragworkbook.evaluation.evaluate import no_relevance, resolve_metrics, score_rows
from ragworkbook.evaluation.report import Report
from ragworkbook.evaluation.rows import RecordRelevance, ReliabilityEvidence, ScoredQuestion, Scoring
from ragworkbook.metrics.context_text import CONTEXT_SCORERS
from ragworkbook.metrics.registry import Metric
from ragworkbook.outcomes import UNDEFINED, Unscored

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ragworkbook.judging.judge import Judge
    from ragworkbook.llm.base import Generator

__all__ = ["SAVE_EVERY", "evaluate_outputs", "relevance_of"]

#: Records scored (and saved) at a time without a judge; with one, 16.
SAVE_EVERY = 1000


def relevance_of(rec: AnswerRecord, qrels: Mapping[str, Mapping[str, float]] | None
                 ) -> tuple[str | None, list[str], dict[str, float], str]:
    """Where the relevance of ``rec`` comes from -> ``(source, ranking, judgements, why_not)``.

    ``source`` is ``"qrels"``, ``"ids"``, ``"keyword"`` or None (then
    ``why_not`` is the reason code and ranking/judgements are empty). The
    ranking is the context ids best first (``<context n>`` for a keyword
    ranking without ids).
    """
    if not rec.has_contexts and not rec.context_ids:
        return None, [], {}, "no_contexts"
    if qrels is not None or rec.relevant_ids is not None:
        if not rec.has_context_ids:
            return None, [], {}, "no_context_ids"
        ranking = [str(c) for c in rec.context_ids]
        if qrels is not None:
            if rec.id not in qrels:
                return None, [], {}, "no_relevance"
            return "qrels", ranking, dict(qrels[rec.id]), ""
        return "ids", ranking, {d: 1.0 for d in rec.relevant_ids or []}, ""
    if rec.keyword:
        if not rec.has_contexts:
            return None, [], {}, "no_contexts"
        needle = rec.keyword.lower()
        ranking = [cid if cid is not None else f"<context {n}>"
                   for n, cid in enumerate(rec.context_ids, start=1)]
        judged = {cid: 1.0 for cid, text in zip(ranking, rec.contexts, strict=True) if needle in text.lower()}
        return "keyword", ranking, judged, ""
    return None, [], {}, "no_relevance"


_WHY = {
    "no_relevance": "nothing says which contexts are relevant to this question (give a qrels file, "
                    "relevant ids or a keyword)",
    "no_context_ids": "relevance is given by id, but the contexts have no ids (give retrieved_context_ids "
                      "or contexts as objects with an id)",
    "incomplete_relevance": "the keyword judges only the retrieved contexts; this metric needs every "
                            "relevant passage of the corpus (give relevant ids or a qrels file)",
    "no_reference": "the record has no reference answer",
    "no_contexts": "the record gives no contexts (the passages the answer was generated from): add them as "
                   "'contexts' (or 'retrieved_contexts')",
}


def _unscored(rec: AnswerRecord, source: str | None, why_not: str, wanted: list[Metric],
              qrels_given: bool) -> dict[str, Unscored]:
    out: dict[str, Unscored] = {}
    if source is None:
        msg = _WHY[why_not]
        if why_not == "no_relevance" and qrels_given:
            msg = f"question id {rec.id!r} is not in the qrels"
        out.update(no_relevance(wanted, msg, why_not))
    elif source == "keyword":
        out.update({m.name: Unscored(UNDEFINED, "incomplete_relevance", _WHY["incomplete_relevance"])
                    for m in wanted if m.family == "retrieval" and m.spec.all_relevant})
    if rec.reference is None:
        out.update({m.name: Unscored(UNDEFINED, "no_reference", _WHY["no_reference"]) for m in wanted
                    if m.family in ("generation", "judged") and "reference" in m.spec.needs})
    if not rec.has_contexts:
        out.update({m.name: Unscored(UNDEFINED, "no_contexts", _WHY["no_contexts"]) for m in wanted
                    if m.family in ("generation", "judged") and "contexts" in m.spec.needs})
    for name in rec.too_long:
        size = len(getattr(rec, name))
        why = Unscored(UNDEFINED, "text_too_long",
                       f"the {name} has {size:,} characters; metrics are computed on texts of up to "
                       f"{MAX_SCORED_CHARS:,} (ragworkbook.corpus.answers.MAX_SCORED_CHARS): shorten it")
        out.update({m.name: why for m in wanted if m.family in ("generation", "judged")
                    and m.kind not in CONTEXT_SCORERS  # these read no answer and no reference
                    and (name == "answer" or "reference" in m.spec.needs) and m.name not in out})
    return out


def evaluate_outputs(records: AnswerSet | Iterable[Mapping[str, JSON]] | pd.DataFrame | str | PathLike, *,
                     qrels: Mapping[str, Mapping[str, float]] | None = None, k: int = 3,
                     judge: Judge | Generator | None = None, metrics: Iterable[str] | None = None,
                     progress: bool = True, name: str = "", meta: Mapping[str, JSON] | None = None,
                     judge_reliability: ReliabilityEvidence = None, out: str | os.PathLike[str] | None = None,
                     resume: bool = False, save_every: int | None = None) -> Report:
    """Score the given outputs of a RAG system -> :class:`Report` (one row per record, in order).

    - ``records``: a path to an answers file, a list of dicts, a pandas
      DataFrame or an :class:`~ragworkbook.corpus.answers.AnswerSet` (see
      :mod:`ragworkbook.corpus.answers`; problems are raised together, each
      with its line or record number and field).
    - ``qrels``: relevance judgements keyed by the records' ids (their context
      ids are the documents); when given, it is the relevance of every record.
    - ``k``: the cutoff of retrieval metrics named without one (and of the
      default ones); the judged metrics see every context of the record.
    - ``judge``: a :class:`~ragworkbook.judging.judge.Judge` or a generator,
      for the judged metrics; ``judge_reliability``: its judge-check results (as for
      :func:`~ragworkbook.evaluation.evaluate.evaluate`).
    - ``metrics``: see :func:`~ragworkbook.evaluation.evaluate.resolve_metrics`;
      by default the registry's defaults whose needs some record meets.
    - ``out``, ``resume``, ``save_every``: saved as it goes and resumed (module docstring).

    Each row keeps the record's ``answer`` and ``contexts`` exactly, and says
    where its relevance came from (``relevance``, and ``relevance_key``: a
    fingerprint of the judgements or keyword, which the regression gate compares).
    The meta records the source, the relevance sources and fields ignored.
    """
    from ragworkbook.evaluation.scoring_run import OutputsRun

    k = check_k(k)
    if resume and out is None:
        raise ValueError("resume=True continues the report at out=PATH: give out (`--out` on the command "
                         "line)")
    if isinstance(records, (str, os.PathLike)):
        answers = load_answer_records(records)
    else:
        answers = answer_records(records)
    relevance = [relevance_of(r, qrels) for r in answers]
    wanted = resolve_metrics(metrics, k=k, have_qrels=qrels is not None or any(src for src, *_ in relevance),
                             have_judge=judge is not None,
                             have_reference=any(r.reference is not None for r in answers))
    rows: list[ScoredQuestion] = []
    rankings: dict[str, list[str]] = {}
    judgements: dict[str, dict[str, float]] = {}
    forced: dict[str, dict[str, Unscored]] = {}
    counts: dict[str, int] = {}
    for rec, (source, ranking, judged, why_not) in zip(answers, relevance, strict=True):
        if source is not None:
            rankings[rec.id] = ranking
            judgements[rec.id] = judged
        refs = rec.reference_contexts  # read by the text-based context metrics
        rows.append(ScoredQuestion(
            id=rec.id, question=rec.question, reference=rec.reference, answer=rec.answer,
            context_ids=list(rec.context_ids), contexts=list(rec.contexts),
            relevance=RecordRelevance(source, _relevance_key(source, rec, judged) if source else None),
            reference_contexts=None if refs is None else list(refs)))
        counts[source or why_not] = counts.get(source or why_not, 0) + 1
        why = _unscored(rec, source, why_not, wanted, qrels is not None)
        if why:
            forced[rec.id] = why
    info: JSONObject = {"name": name, "k": k, "n_questions": len(rows), "source": answers.source,
                            "mode": "answers", "relevance": counts}
    if answers.n_generated_ids:
        info["generated_ids"] = answers.n_generated_ids
    if answers.ignored:
        info["ignored_fields"] = list(answers.ignored)
    run = OutputsRun(rows, wanted, info=info, extra_meta=meta, out=out if wanted else None,
                     save_every=save_every or (16 if judge is not None else SAVE_EVERY), progress=progress)
    run.settings = run.fingerprint(rankings=rankings, judgements=judgements, forced=forced, judge=judge)
    if resume:
        run.resume_from_out()

    def score(batch: list[ScoredQuestion], show: bool) -> Scoring:
        ids = {r.id for r in batch}
        return score_rows(batch, wanted, rankings={i: rankings[i] for i in ids if i in rankings},
                          qrels={i: judgements[i] for i in ids if i in judgements}, judge=judge,
                          unscored={i: forced[i] for i in ids if i in forced}, progress=show,
                          judge_reliability=judge_reliability)

    return run.run(score)


def _relevance_key(source: str, rec: AnswerRecord, judged: Mapping[str, float]) -> str:
    """A fingerprint of what says which contexts are relevant to ``rec``: its keyword (the contexts it
    marks are the system's own), else its judgements (relevant ids or qrels)."""
    import hashlib
    import json

    what: JSONObject = {"keyword": rec.keyword} if source == "keyword" else {
        "judgements": {str(d): float(g) for d, g in sorted(judged.items())}}
    blob = json.dumps(what, sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]
