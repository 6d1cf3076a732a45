"""Recompute every documented number (NUMBERS.md) with the package.

:func:`reproduce_all` returns one :class:`ReproducedNumber` per row of the
documented-numbers table (A1-A6, B1-B9, C1-C4, and D1-D4 for the field's tools:
RAGChecker and RAGAS): the documented figures, the figures this package computes
from the same inputs, a status and the reason.

Statuses:

- ``exact``: every figure reproduced to the printed digit (the reproduced value
  formatted with the documented number of decimals equals the printed text);
- ``differs``: recomputed, and the printed figure does not follow from the
  stated definition (the reason says which definition, if any, gives it);
- ``environment``: depends on a corpus, model or PDF the workbook does not ship
  (measured here on what is shipped; documented vs measured, and why);
- ``not-reproducible``: the source gives no inputs to recompute from;
- ``table``: a table of thresholds with no figure to recompute (A5): it is held
  as data and applied, and is not counted as reproduced.

Rows that need a model (C2: the naive RAG's answers; B7: answer relevancy)
use ``generator`` (default: :func:`ragworkbook.llm.get_generator`, the live
backend: Ollama if a server answers, else the embedded SmolLM2). Pass a replay
generator to re-run them byte-identically (notebook 14 does).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

from ragworkbook._types import JSONObject, as_json

if TYPE_CHECKING:
    import pandas as pd

    from ragworkbook.corpus.chunking import Chunk
    from ragworkbook.corpus.document import Corpus
    from ragworkbook.corpus.eval_set import EvalSet
    from ragworkbook.corpus.ground_truth import Qrels
    from ragworkbook.corpus.jsonfile import PathLike
    from ragworkbook.protocols import GeneratorLike
    from ragworkbook.retrieval.dense import DenseRetriever

__all__ = ["Figure", "ReproducedNumber", "ROW_IDS", "reproduce_all", "ndcg_variants",
           "to_frame", "format_table", "check_ids", "STATUSES", "NEEDS_MODEL", "PDF_ROWS"]

STATUSES = ("exact", "differs", "environment", "not-reproducible", "table")


@dataclass
class Figure:
    """One figure of a row: ``documented`` as printed (a string, "" when none is
    printed), the reproduced ``value`` and its text ``shown`` at the printed precision."""

    name: str
    documented: str
    value: float | None
    shown: str
    matches: bool | None = None  # None: no printed figure to match
    held: bool = True  # False: NUMBERS.md does not hold this figure exact (C3's wording-dependent similarity)


@dataclass
class ReproducedNumber:
    """One row of NUMBERS.md, recomputed."""

    id: str
    what: str
    documented: str
    reproduced: str
    status: str
    reason: str
    documented_status: str  # the status column of NUMBERS.md: exact / check / environment / ...
    figures: list[Figure] = field(default_factory=list)
    details: dict[str, object] = field(default_factory=dict)  # intermediates (per-question values, answers)

    def to_dict(self) -> JSONObject:
        """JSON-ready dict of every field (what ``reproduce --json`` prints per row)."""
        return asdict(self)

    @property
    def breaks_its_documented_status(self) -> bool:
        """True when NUMBERS.md calls the row exact and a figure it holds exact did not reproduce
        (``reproduce`` then exits 1). A figure documented as "report what you get" never breaks it."""
        if self.documented_status != "exact":
            return False
        held = [f.matches for f in self.figures if f.held and f.matches is not None]
        return not all(held) if held else self.status != "exact"


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def _decimals(printed: str) -> int:
    core = printed.strip().rstrip("%")
    return len(core.split(".")[1]) if "." in core else 0


def _show(value: float | None, printed: str) -> str:
    """``value`` formatted like ``printed`` (same decimals, % when printed with %)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    d = _decimals(printed) if printed else 3
    if printed.endswith("%"):
        return f"{value * 100:.{d}f}%"
    if d == 0 and value != round(value):
        d = 3  # never round 0.2 to a printed "0"
    return f"{value:.{d}f}"


def _fig(name: str, documented: str, value: float | None, shown_decimals: int | None = None) -> Figure:
    if documented:
        shown = _show(value, documented)
        return Figure(name, documented, value, shown, shown == documented)
    shown = "n/a" if value is None else f"{value:.{3 if shown_decimals is None else shown_decimals}f}"
    return Figure(name, documented, value, shown, None)


def _join(figs: Sequence[Figure], attr: str) -> str:
    return ", ".join(f"{f.name} = {getattr(f, attr)}" for f in figs if getattr(f, attr))


def _row(rid: str, what: str, doc_status: str, figs: list[Figure], status: str | None = None,
         reason: str = "", documented: str | None = None, reproduced: str | None = None,
         details: dict[str, object] | None = None) -> ReproducedNumber:
    if status is None:
        status = "exact" if all(f.matches for f in figs if f.matches is not None) else "differs"
    return ReproducedNumber(
        id=rid, what=what,
        documented=_join(figs, "documented") if documented is None else documented,
        reproduced=_join(figs, "shown") if reproduced is None else reproduced,
        status=status, reason=reason, documented_status=doc_status, figures=figs, details=details or {},
    )


# --------------------------------------------------------------------------------------------
# A. tutorial article
# --------------------------------------------------------------------------------------------
def _a1(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.metrics.retrieval import recall_at_k

    ranking = ["doc_3", "doc_7", "doc_1", "doc_5", "doc_2"]
    relevant = {"doc_1", "doc_5", "doc_9"}
    figs = [_fig("Recall@3", "0.33", recall_at_k(ranking, relevant, 3)),
            _fig("Recall@5", "0.67", recall_at_k(ranking, relevant, 5))]
    return _row("A1", "Recall@k of one ranking (tutorial)", "exact", figs,
                reason="1 of the 3 relevant documents in the top 3, 2 of 3 in the top 5")


def _a2(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.metrics.retrieval import reciprocal_rank

    rankings = [["x1", "rel"], ["x1", "x2", "rel"], ["rel"]]  # first relevant at rank 2, 3, 1
    rr = [reciprocal_rank(r, {"rel"}) for r in rankings]
    figs = [_fig("MRR", "0.611", sum(rr) / len(rr))]
    return _row("A2", "MRR over three queries (tutorial)", "exact", figs,
                reason="(1/2 + 1/3 + 1) / 3 = 0.6111")


#: NDCG definitions tried for A3: name -> (gain, discount(rank), ideal) with ranks from 1.
def _ndcg_definitions() -> dict[str, tuple[Callable[[float], float], Callable[[int], float], str]]:
    lin = float
    exp = lambda g: 2.0 ** g - 1.0  # noqa: E731
    log2p1 = lambda r: math.log2(r + 1)  # noqa: E731
    jarvelin = lambda r: 1.0 if r == 1 else math.log2(r)  # noqa: E731
    recip = lambda r: float(r)  # noqa: E731
    return {
        "linear gain, log2(rank+1) discount (the snippet; trec_eval)": (lin, log2p1, "all"),
        "exponential gain 2^rel-1, log2(rank+1) discount (ranx ndcg_burges)": (exp, log2p1, "all"),
        "linear gain, 1/rank discount": (lin, recip, "all"),
        "linear gain, Jarvelin-Kekalainen discount (rank 1 undiscounted, then log2(rank))":
            (lin, jarvelin, "all"),
        "exponential gain, Jarvelin-Kekalainen discount": (exp, jarvelin, "all"),
        "linear gain, log2(rank+1), ideal from the top-k grades only": (lin, log2p1, "topk"),
        "linear gain, log2(rank+2) discount (off-by-one rank)": (lin, lambda r: math.log2(r + 2), "all"),
    }


def ndcg_variants(grades: Sequence[float], ks: Iterable[int] = (3, 5)) -> pd.DataFrame:
    """NDCG@k of ``grades`` (in rank order) under several definitions found in tutorials
    -> DataFrame (one row per definition, one column per k). The first row is the
    standard one (:func:`ragworkbook.metrics.retrieval.ndcg_from_grades`, asserted equal)."""
    import pandas as pd

    from ragworkbook.metrics.retrieval import ndcg_from_grades

    ks = list(ks)
    rows = {}
    for name, (gain, disc, ideal) in _ndcg_definitions().items():
        vals = {}
        for k in ks:
            dcg = sum(gain(g) / disc(i) for i, g in enumerate(grades[:k], start=1))
            pool = grades[:k] if ideal == "topk" else grades
            ideal_grades = sorted(pool, reverse=True)
            idcg = sum(gain(g) / disc(i) for i, g in enumerate(ideal_grades[:k], start=1))
            vals[f"NDCG@{k}"] = dcg / idcg if idcg > 0 else 0.0
        rows[name] = vals
    first = next(iter(rows))
    for k in ks:
        assert abs(rows[first][f"NDCG@{k}"] - ndcg_from_grades(list(grades), k)) < 1e-12
    return pd.DataFrame.from_dict(rows, orient="index")


def _a3(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.metrics.retrieval import ndcg_from_grades

    grades = [3, 0, 2, 1, 0]
    figs = [_fig("NDCG@3", "0.846", ndcg_from_grades(grades, 3)),
            _fig("NDCG@5", "0.876", ndcg_from_grades(grades, 5))]
    table = ndcg_variants(grades)
    giving: dict[str, list[str]] = {"0.846": [], "0.876": []}
    for name, row in table.iterrows():
        for col, v in row.items():
            for printed in giving:
                if f"{v:.3f}" == printed:
                    giving[printed].append(f"{col} with {name}")
    parts = [f"the snippet's own definition (linear gain, log2(rank+1), ideal = grades sorted) gives "
             f"{figs[0].shown} and {figs[1].shown}"]
    for printed, found in giving.items():
        parts.append(f"{printed} is given by " + ("; ".join(found) if found else
                                                  f"none of the {len(table)} definitions tried"))
    both = [n for n, r in table.iterrows()
            if f"{r['NDCG@3']:.3f}" == "0.846" and f"{r['NDCG@5']:.3f}" == "0.876"]
    parts.append("no single definition gives both printed values" if not both else
                 f"both come from {both[0]}")
    return _row("A3", "NDCG@3 and NDCG@5 of graded list [3, 0, 2, 1, 0] (tutorial)", "check", figs,
                reason="; ".join(parts), details={"variants": table.to_dict(orient="index")})


def _a4(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.outcomes import aggregate

    flags = [1.0] * 8 + [0.0] * 92  # one hallucination flag per answer: 1 = judged unfaithful
    figs = [_fig("hallucination rate", "8.0%", aggregate(flags).mean)]
    return _row("A4", "hallucination rate, 8 unfaithful answers of 100 (tutorial)", "exact", figs,
                reason="mean of the per-answer hallucination flag, as the report computes it")


_A5_DOCUMENTED = {
    "Recall@10": ("< 0.60", "0.60-0.80", "> 0.80"),
    "MRR": ("< 0.30", "0.30-0.50", "> 0.50"),
    "NDCG@10": ("< 0.50", "0.50-0.70", "> 0.70"),
    "Faithfulness": ("< 0.80", "0.80-0.90", "> 0.90"),
    "Hallucination rate": ("> 10%", "5%-10%", "< 5%"),
}


def _a5(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.evaluation.targets import targets_of, targets_table

    table = targets_table()
    ok = all(tuple(table.loc[m]) == bands for m, bands in _A5_DOCUMENTED.items()) and len(table) == 5
    strict = targets_of("strict")
    strict_ok = strict["faithfulness"].high == 0.95 and strict["hallucination"].low == 0.02
    rep = "; ".join(f"{m} {' / '.join(table.loc[m])}" for m in table.index)
    return _row("A5", "metric targets table (tutorial)", "table", [],
                status="table" if ok and strict_ok else "differs",
                documented="poor / acceptable / good thresholds for Recall@10, MRR, NDCG@10, faithfulness, "
                "hallucination rate (strict: faithfulness > 0.95, hallucination < 2%)",
                reproduced=rep + "; strict: faithfulness > 0.95, hallucination < 2%",
                reason="a table of thresholds, no figure: ragworkbook.evaluation.targets holds it as data "
                "(checked equal to the printed bands) and apply_targets() rates a report with it, "
                "never a judged "
                "metric whose judge's agreement is unmeasured or low. "
                "The strict row gives only the 'good' thresholds; the general 'poor' ones are kept")


def _a6(ctx: _Context) -> ReproducedNumber:
    return _row("A6", "illustrative RAGAS result (tutorial)", "not reproducible", [],
                status="not-reproducible",
                documented="faithfulness 0.95, answer relevancy 0.92, context precision 0.88, "
                "context recall 0.90",
                reproduced="-",
                reason="printed without the questions, answers or contexts it was computed from: "
                "nothing to recompute")


# --------------------------------------------------------------------------------------------
# B. textbook: the carbon-pricing example
# --------------------------------------------------------------------------------------------
def _carbon(ctx: _Context) -> JSONObject:
    if ctx.carbon is None:
        from ragworkbook.paths import data_path

        path = data_path("carbon_pricing.json")
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing (the carbon-pricing worked example)")
        data = json.loads(path.read_text(encoding="utf-8"))
        data["chunks"] = sorted(data["chunks"], key=lambda c: int(c.get("rank", 0)))
        ctx.carbon = data
    return ctx.carbon


def _carbon_ranking(ctx: _Context) -> tuple[list[str], dict[str, int]]:
    data = _carbon(ctx)
    chunks = data["chunks"]
    ranking = [c["id"] for c in chunks]
    grades = {c["id"]: int(c["grade"]) for c in chunks}
    return ranking, grades


def _precision_recall(ctx: _Context, row: str, k: int, precision: str, recall: str,
                      reason: str) -> ReproducedNumber:
    """Row ``row``: Precision@k and Recall@k of the carbon-pricing ranking against their documented
    values."""
    from ragworkbook.metrics.retrieval import precision_at_k, recall_at_k

    ranking, grades = _carbon_ranking(ctx)
    figs = [_fig(f"Precision@{k}", precision, precision_at_k(ranking, grades, k)),
            _fig(f"Recall@{k}", recall, recall_at_k(ranking, grades, k))]
    return _row(row, f"Precision@{k}, Recall@{k} (carbon pricing)", "exact", figs, reason=reason)


def _b1(ctx: _Context) -> ReproducedNumber:
    return _precision_recall(ctx, "B1", 3, "0.667", "0.5",
                             reason="2 relevant (grade > 0) in the top 3; 4 relevant in all")


def _b2(ctx: _Context) -> ReproducedNumber:
    return _precision_recall(ctx, "B2", 5, "0.8", "1.0",
                             reason="4 relevant in the top 5, all 4 of the corpus")


def _b3(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.metrics.retrieval import reciprocal_rank

    ranking, grades = _carbon_ranking(ctx)
    figs = [_fig("MRR", "0.5", reciprocal_rank(ranking, grades))]
    return _row("B3", "reciprocal rank (carbon pricing)", "exact", figs,
                reason="first relevant chunk at rank 2")


def _b4(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.metrics.retrieval import ndcg_at_k

    ranking, grades = _carbon_ranking(ctx)
    exp = ndcg_at_k(ranking, grades, 5, gain="exponential")
    lin = ndcg_at_k(ranking, grades, 5, gain="linear")
    figs = [_fig("NDCG@5 (2^rel-1)", "0.632", exp), _fig("NDCG@5 (linear)", "", lin)]
    return _row("B4", "NDCG@5 with exponential gain (carbon pricing)", "exact", figs,
                reason=f"exponential gain 2^rel-1 gives {exp:.3f} as printed; linear gain gives {lin:.3f}")


def _carbon_verdicts(ctx: _Context) -> tuple[list[int], list[int]]:
    """(claim verdicts, chunk usefulness verdicts) of the worked example."""
    data = _carbon(ctx)
    claims = [1 if c.get("supported", True) else 0 for c in data["claims"]]
    _, grades = _carbon_ranking(ctx)
    return claims, [1 if grades[c["id"]] > 0 else 0 for c in data["chunks"]]


def _b5(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.judging.metrics import faithfulness_from_verdicts

    claims, _ = _carbon_verdicts(ctx)
    figs = [_fig("faithfulness", "1.0", faithfulness_from_verdicts(claims))]
    return _row("B5", "faithfulness from the hand-checked claims (carbon pricing)", "exact", figs,
                reason=f"{sum(claims)} of {len(claims)} claims supported by the retrieved chunks")


def _b6(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.judging.metrics import context_precision_from_verdicts, simple_context_precision

    _, useful = _carbon_verdicts(ctx)
    simple = simple_context_precision(useful)
    ragas = context_precision_from_verdicts(useful)
    figs = [_fig("relevant / retrieved", "0.8", simple), _fig("RAGAS position-weighted", "", ragas)]
    return _row("B6", "context precision (carbon pricing)", "exact", figs,
                reason=f"the chapter's simplification (relevant / retrieved) gives {simple:.1f}; RAGAS's "
                f"definition (mean of precision@k at the relevant positions) gives {ragas:.3f} on the "
                "same verdicts, because the first chunk is not relevant")


def _b7(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.judging.judge import Judge
    from ragworkbook.judging.metrics import answer_relevancy
    from ragworkbook.judging.results import JudgeSample

    data = _carbon(ctx)
    gen = ctx.generator()
    sample = JudgeSample(question=data["question"], answer=data["answer"],
                         contexts=[c["text"] for c in data["chunks"]], sample_id="carbon")
    res = answer_relevancy(sample, Judge(gen))
    who = f"{gen.backend}:{gen.model}"
    if res.score is None:
        return _row("B7", "answer relevancy (carbon pricing)", "illustrative",
                    [_fig("answer relevancy", "0.9", None)], status="environment",
                    reason=f"the judge ({who}) failed: {res.status} {res.error or ''}".strip())
    score = float(res.score)
    fig = Figure("answer relevancy", "0.9", score, f"{score:.3f}", None)  # "about 0.9": not matched
    qs = [it.get("question", "") for it in res.items] if res.items else []
    details = {"answer": data["answer"], "generated_questions": qs, "items": res.items}
    return _row("B7", "answer relevancy (carbon pricing)", "illustrative", [fig], status="environment",
                reason=f"the chapter's 'about 0.9' is illustrative; measured with the judge {who} "
                f"(mean MiniLM cosine of {len(qs) or 'the'} generated questions to the question); "
                "depends on the judge model's questions", details=as_json(details))


def _b8(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.workbook.quality_model import ceiling_for, end_to_end_quality

    plain = end_to_end_quality(0.2, 1.0)
    capped = end_to_end_quality(0.2, 1.0, ceiling=0.9)
    c = ceiling_for(0.2, 1.0, 0.18)
    figs = [_fig("quality, plain product", "0.18", plain),
            _fig("quality, product x 0.9 ceiling", "", capped, 2)]
    return _row("B8", "end-to-end quality at retrieval 0.2, perfect generation (heatmap)", "check", figs,
                status="differs",
                reason=f"the plain product model retrieval x generation gives {plain:.2f}; 0.18 needs a "
                f"generation ceiling of {c:.1f} (quality = retrieval x generation x {c:.1f}: even perfect "
                "generation turns right context into a right answer 90% of the time). "
                "The chapter states no model")


def _b9(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.metrics.retrieval import gain_values

    g3, g2 = gain_values([3, 2], "exponential")
    figs = [_fig("gain(3) / gain(2)", "2.3", float(g3 / g2))]
    return _row("B9", "exponential gain ratio of grade 3 to grade 2", "exact", figs,
                reason=f"2^3-1 = {g3:g}, 2^2-1 = {g2:g}, ratio 7/3")


# --------------------------------------------------------------------------------------------
# C. hands-on page (rag-cookbook)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Retrieval:
    """The documented retrieval pipeline as the C rows run it."""

    eval_set: EvalSet
    corpus: Corpus
    chunks: list[Chunk]
    retriever: DenseRetriever
    qrels: Qrels
    rankings: dict[str, list[str]]


def _retrieval_setup(ctx: _Context) -> _Retrieval:
    """The documented retrieval pipeline on the bundled notes, or on ``ctx.pdf`` (the user's copy of
    the paper) when given: chunks, keyword qrels, dense rankings of the 8 questions (top 5)."""
    if ctx.retrieval is None:
        from ragworkbook.corpus.chunking import chunk_pages
        from ragworkbook.corpus.eval_set import load_eval_set
        from ragworkbook.corpus.ground_truth import keyword_qrels
        from ragworkbook.corpus.pages import load_corpus
        from ragworkbook.retrieval.dense import DenseRetriever

        eval_set = load_eval_set()
        if ctx.pdf is not None:
            from ragworkbook.corpus.pdf import load_pdf_corpus

            corpus = load_pdf_corpus(ctx.pdf)
        else:
            corpus = load_corpus()
        chunks = chunk_pages(corpus)
        if not chunks:
            raise ValueError(f"{ctx.pdf}: pypdf extracted no text from this PDF (a scan?): "
                             "nothing to retrieve")
        retriever = DenseRetriever(chunks)
        hits = retriever.search_many(eval_set.questions, k=5)
        ctx.retrieval = _Retrieval(
            eval_set=eval_set, corpus=corpus, chunks=chunks, retriever=retriever,
            qrels=keyword_qrels(chunks, eval_set),
            rankings={it.id: [h.id for h in hs] for it, hs in zip(eval_set, hits, strict=True)})
    return ctx.retrieval


def _pdf_source(ctx: _Context) -> JSONObject:
    """What the C rows were measured on when ``--pdf`` was given: the file, its size, pages, pypdf."""
    from pathlib import Path

    from ragworkbook.corpus.pdf import PAPER_V7_BYTES, PYPDF_EXACT_C1

    s = _retrieval_setup(ctx)
    corpus = s.corpus
    size = int(corpus.meta.get("bytes", Path(str(ctx.pdf)).stat().st_size))
    version = str(corpus.meta.get("pypdf", ""))
    return {"pdf": str(ctx.pdf), "bytes": size, "pages": len(corpus), "chunks": len(s.chunks),
            "pypdf": version, "arxiv_v7_size": size == PAPER_V7_BYTES,
            "pypdf_measured_exact": version in PYPDF_EXACT_C1}


def _pdf_words(src: JSONObject) -> str:
    from pathlib import Path

    name = "the arXiv v7 PDF" if src["arxiv_v7_size"] else f"{Path(src['pdf']).name}"
    return (f"{name} ({src['bytes']:,} bytes, {src['pages']} pages, {src['chunks']} chunks), "
            f"text extracted by pypdf {src['pypdf']}")


#: The documented C1 figures as metric names (the names are the registry's aliases, kept as written).
_C1_METRICS = ("P@3", "R@3", "MRR@5", "NDCG@3", "Hit@3")


def _per_question(ctx: _Context) -> dict[str, dict[str, float]]:
    from ragworkbook.evaluation.retrieval import score_rankings

    s = _retrieval_setup(ctx)
    result = score_rankings(s.rankings, s.qrels, _C1_METRICS)
    return result.per_query


def _c1(ctx: _Context) -> ReproducedNumber:
    s = _retrieval_setup(ctx)
    per = _per_question(ctx)
    n = len(per)
    documented = {"Precision@3": ("P@3", "0.583"), "Recall@3": ("R@3", "0.620"), "MRR@5": ("MRR@5", "0.812"),
                  "NDCG@3": ("NDCG@3", "0.740"), "Hit Rate@3": ("Hit@3", "0.875")}
    figs = [_fig(name, printed, sum(v[key] for v in per.values()) / n)
            for name, (key, printed) in documented.items()]
    missed = [qid for qid, v in per.items() if v["Hit@3"] == 0]
    details: dict[str, object] = {"per_question": per, "rankings": s.rankings}
    misses = f"Questions with no relevant chunk in the top 3 here: {', '.join(missed) or 'none'}"
    what = "dense retrieval over the 8 questions, k = 3"
    if ctx.pdf is None:
        return _row("C1", what, "environment", figs, status="environment",
                    reason="documented on the arXiv PDF (pypdf text, same recipe); measured on the bundled "
                    f"notes corpus ({len(s.corpus)} pages, {len(s.chunks)} chunks, MiniLM, keyword "
                    "relevance). "
                    f"{misses}. Run the same on your copy of the paper: `ragworkbook download-paper`, then "
                    "`ragworkbook reproduce --pdf FILE`", details=details)
    from ragworkbook.corpus.pdf import PAPER_V7_BYTES, PYPDF_EXACT_C1

    src = _pdf_source(ctx)
    details["source"] = src
    exact = all(f.matches for f in figs)
    if exact:
        head = (f"exact on the arXiv v7 PDF with pypdf {src['pypdf']}" if src["arxiv_v7_size"] else
                "every documented figure reproduces")
        reason = f"{head}: measured on {_pdf_words(src)}, MiniLM, keyword relevance. {misses}"
    else:
        hint = (f"The documented figures come from the arXiv v7 PDF with the text of pypdf "
                f"{', '.join(PYPDF_EXACT_C1)} (ragworkbook requires pypdf>=6.16,<6.20)")
        if not src["pypdf_measured_exact"]:
            hint += f"; pypdf {src['pypdf']} is not one of those: its text differs"
        elif not src["arxiv_v7_size"]:
            hint += f"; this file is not the v7 PDF (its size is not {PAPER_V7_BYTES:,} bytes)"
        measured = ", ".join(f"{f.name} {f.shown}" for f in figs)
        reason = f"measured on {_pdf_words(src)}: {measured}. {hint}. {misses}"
    return _row("C1", what, "environment", figs, status="exact" if exact else "environment",
                reason=reason, details=details)


def _c4(ctx: _Context) -> ReproducedNumber:
    per = _per_question(ctx)
    q1 = per["q1"]
    figs = [_fig("Precision@3", "0", q1["P@3"]), _fig("Recall@3", "0", q1["R@3"]),
            _fig("reciprocal rank", "0", q1["MRR@5"])]
    s = _retrieval_setup(ctx)
    top = s.rankings["q1"][:3]
    hit = any(f.matches is False for f in figs)
    what = "the documented miss: 'How many attention heads did they use?'"
    if ctx.pdf is None:
        reason = (f"on the bundled notes the head-count question retrieves {', '.join(top)} at the top: "
                  + ("the page stating h = 8 is found, so the documented miss (appendix "
                     "attention-visualisation pages outranking it in the PDF) does not occur here" if hit else
                     "the documented miss occurs here too"))
        return _row("C4", what, "environment", figs, status="environment", reason=reason)
    src = _pdf_source(ctx)
    pages = sorted({c.split("-")[0] for c in s.qrels.get("q1", {})})
    where = f"on {', '.join(pages)}" if pages else "nowhere (the keyword is not in the extracted text)"
    reason = (f"on {_pdf_words(src)} the head-count question retrieves {', '.join(top)} at the top; the "
              f"chunks stating h = 8 are {where}: "
              + ("the documented miss occurs" if not hit else "the documented miss does not occur"))
    return _row("C4", what, "environment", figs, status="environment" if hit else "exact", reason=reason,
                details={"source": src, "top3": top})


#: three-word lead-ins of the form the page gives for the C3 answer ("<lead-in> that their big model ..."):
#: the page does not say which one it used, and the similarity depends on it (the lexical metrics do not)
C3_LEAD_INS = ("The paper reports", "The authors report", "The study reports", "The paper states",
               "The authors claim", "The document says", "The notes say", "The text states")


def _c3(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.metrics.generation import bleu, embedding_similarities, meteor, rouge_l

    reference = "The big model achieved a BLEU score of 28.4 on English-to-German translation."
    tail = (" that their big model achieved a BLEU score of 41.0 on the WMT 2014 English-to-German "
            "translation task.")
    answer = C3_LEAD_INS[0] + tail
    variants = [lead + tail for lead in C3_LEAD_INS]
    sims = embedding_similarities(variants, [reference] * len(variants))
    figs = [_fig("BLEU", "32.9", bleu(answer, reference)),
            _fig("ROUGE-L", "0.68", rouge_l(answer, reference)),
            _fig("METEOR", "0.76", meteor(answer, reference)),
            replace(_fig("semantic similarity", "0.89", float(sims[0])), held=False)]
    lexical_ok = all(f.matches for f in figs[:3])
    sim = figs[3]
    giving = [lead for lead, v in zip(C3_LEAD_INS, sims, strict=True) if f"{v:.2f}" == sim.documented]
    # the legend: "exact" means every figure reproduced; the similarity does not, so the row differs
    status = "exact" if lexical_ok and sim.matches else "differs"
    return _row("C3", "the wrong answer (41.0 for English-to-German)", "exact", figs, status=status,
                reason="lead-in 'The paper reports'; BLEU (sacrebleu sentence), ROUGE-L F (stemmed) and "
                "METEOR (NLTK, whitespace tokens, real WordNet) reproduce to the printed digit"
                + ("" if lexical_ok else " -- NOT all of them did here")
                + f"; the MiniLM cosine is {sim.shown}, not the printed {sim.documented}: it depends on the "
                "answer's three-word lead-in, which the page does not give (the lexical figures do not "
                f"depend on it). Of {len(C3_LEAD_INS)} plausible lead-ins, {len(giving)} give "
                f"{sim.documented} ({', '.join(repr(g) for g in giving) or 'none'}), the others "
                f"{min(sims):.2f} to {max(sims):.2f}: the documented similarity is consistent with such a "
                "wording, but not reproduced without knowing it",
                details={"lead_in_similarity": dict(zip(C3_LEAD_INS, map(float, sims), strict=True))})


def _c2(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.metrics.generation import corpus_bleu, generation_scores
    from ragworkbook.pipeline.naive import NaiveRAG

    s = _retrieval_setup(ctx)
    gen = ctx.generator()
    rag = NaiveRAG(s.retriever, gen, k=3)
    eval_set = s.eval_set
    from tqdm.auto import tqdm

    answers = [rag.answer(it.question).answer
               for it in tqdm(list(eval_set), desc="C2 answers", disable=not ctx.progress, leave=False)]
    refs = [it.reference for it in eval_set]
    df = generation_scores(answers, refs, metrics=["bleu", "rouge_l", "meteor", "embedding_similarity"])
    cb = corpus_bleu(answers, refs)
    figs = [_fig("BLEU (mean sentence)", "33.4", float(df["bleu"].mean())),
            _fig("ROUGE-L", "0.661", float(df["rouge_l"].mean())),
            _fig("METEOR", "0.629", float(df["meteor"].mean())),
            _fig("semantic similarity", "0.825", float(df["embedding_similarity"].mean())),
            _fig("corpus BLEU", "", cb, 1)]
    return _row("C2", "generation metrics over the 8 answers", "environment", figs, status="environment",
                reason=f"documented with qwen3:4b on the arXiv PDF; measured with {gen.backend}:{gen.model} "
                "on the bundled notes (same prompt recipe: top-3 chunks, one short sentence). The answers of "
                "a different model differ, so the numbers do",
                details={"answers": dict(zip(eval_set.ids, answers, strict=True)),
                         "per_question": {qid: {m: float(df[m].iloc[i]) for m in df.columns}
                                          for i, qid in enumerate(eval_set.ids)}})


# --------------------------------------------------------------------------------------------
# D. the field's tools: RAGChecker, RAGAS
# --------------------------------------------------------------------------------------------
_D1 = {"correctness": ("49.66", "46.95"), "completeness": ("60.67", "58.11"), "overall": ("61.93", "60.90")}
_D2 = {"correctness": ("63.67", "59.19"), "completeness": ("71.91", "68.36"), "overall": ("70.09", "68.89")}


def _ragchecker_correlations(ctx: _Context) -> dict[str, dict[str, tuple[float, float]]]:
    if ctx.ragchecker is None:
        from ragworkbook.judging.ragchecker import meta_eval_correlations

        ctx.ragchecker = meta_eval_correlations()
    return ctx.ragchecker


def _d1(ctx: _Context) -> ReproducedNumber:
    corr = _ragchecker_correlations(ctx)
    figs = [_fig(f"{aspect} {kind}", printed, corr[aspect]["ragchecker"][i])
            for aspect, pair in _D1.items()
            for i, (kind, printed) in enumerate(zip(("Pearson", "Spearman"), pair, strict=True))]
    return _row("D1", "RAGChecker vs human preference, Pearson / Spearman x 100 (RAGChecker meta-evaluation)",
                "exact", figs,
                reason="recomputed from RAGChecker's shipped predictions (baseline_ragchecker.json) and the "
                "560 "
                "human labels (human_labeled_data.json) the way its meta_eval.py does: second "
                "answer's score minus "
                "the first's, a missing prediction replaced by the median, rescaled to [-2, 2], each "
                "prediction "
                "repeated for both annotators, scipy's Pearson and Spearman x 100 rounded to 2 decimals",
                details={"correlations": as_json(_ragchecker_correlations(ctx))})


def _d2(ctx: _Context) -> ReproducedNumber:
    corr = _ragchecker_correlations(ctx)
    figs = [_fig(f"{aspect} {kind}", printed, corr[aspect]["human"][i])
            for aspect, pair in _D2.items()
            for i, (kind, printed) in enumerate(zip(("Pearson", "Spearman"), pair, strict=True))]
    return _row("D2", "human vs human, Pearson / Spearman x 100 (RAGChecker meta-evaluation)", "exact", figs,
                reason="annotator 1's 280 labels against annotator 2's (-2..2, per aspect), as "
                "meta_eval.py's "
                "sanity check: the ceiling any automatic evaluator's correlation should be read against")


def _d3(ctx: _Context) -> ReproducedNumber:
    import copy

    from ragworkbook.datasets import dataset_file
    from ragworkbook.judging.ragchecker import example_metrics

    path = dataset_file("ragchecker", "example_checking_outputs.json")
    results = json.loads(path.read_text(encoding="utf-8"))
    results = results["results"]
    committed = example_metrics(results)
    # the README's CLI block: the same results with one more response claim on the first query,
    # a claim the ground-truth answer does not entail and a relevant retrieved chunk does
    alt = copy.deepcopy(results)
    first = alt[0]
    relevant = [any(lab == "Entailment" for lab in col)
                for col in zip(*first["retrieved2answer"], strict=True)]
    chunk = relevant.index(True)
    first["answer2response"].append("Neutral")
    first["retrieved2response"].append(["Entailment" if i == chunk else "Neutral"
                                        for i in range(len(relevant))])
    extra = example_metrics(alt)
    figs = [_fig("precision", "73.3", committed["overall"]["precision"] / 100),
            _fig("F1", "67.3", committed["overall"]["f1"] / 100),
            _fig("faithfulness", "70.8", committed["generator"]["faithfulness"] / 100)]
    for f in figs:  # RAGChecker prints percentages with one decimal
        f.shown = f"{(f.value or 0) * 100:.1f}"
        f.matches = f.shown == f.documented
    same = all(extra[g][m] == v for g, ms in _D3_CLI.items() for m, v in ms.items())
    return _row("D3", "RAGChecker's README example (its CLI output): precision, F1, faithfulness", "check",
                figs,
                status="differs",
                reason="the committed example_checking_outputs.json gives 76.4 / 68.3 / 68.2 (recall 62.5), "
                "the "
                "figures of the README's Python example, not the 73.3 / 67.3 / 70.8 of its CLI "
                "example. The CLI "
                "figures are exactly what the same file gives with one more claim extracted from the first "
                "response (12 instead of 11), a claim the ground-truth answer does not entail and a relevant "
                "retrieved chunk does: "
                + ("all 11 printed CLI metrics then match (noise sensitivity 22.5, hallucination 4.2, "
                   "self-knowledge 25.0 included)" if same else "NOT all printed CLI metrics match then")
                + ", which points to two runs of the LLM claim extractor (its claims vary from run to run)",
                details={"committed_outputs": committed, "with_one_more_claim": extra,
                         "cli_printed": _D3_CLI})


_D3_CLI = {
    "overall": {"precision": 73.3, "recall": 62.5, "f1": 67.3},
    "retriever": {"claim_recall": 61.4, "context_precision": 87.5},
    "generator": {"context_utilization": 87.5, "noise_sensitivity_in_relevant": 22.5,
                  "noise_sensitivity_in_irrelevant": 0.0, "hallucination": 4.2, "self_knowledge": 25.0,
                  "faithfulness": 70.8},
}

_D4 = {"wikieval-faithfulness": ("faithfulness", "0.95"),
       "wikieval-answer-relevance": ("answer relevance", "0.78"),
       "wikieval-context-relevance": ("context relevance", "0.70")}


def _d4(ctx: _Context) -> ReproducedNumber:
    from ragworkbook.judging.check import RECORDED_PAIRS, judge_check, recording_path
    from ragworkbook.judging.judge import Judge
    from ragworkbook.llm.replay import ReplayGenerator

    figs, checks = [], {}
    for name, (label, printed) in _D4.items():
        res = judge_check(name, Judge(ReplayGenerator(recording_path(name))), limit=RECORDED_PAIRS[name],
                          repeats=0)
        pa = res.stats["pairwise_accuracy"]
        base = res.stats["baseline"]
        bpa, diff = base["pairwise_accuracy"], base["difference"]
        checks[name] = {"n": res.n, "failures": res.failures, "pairwise_accuracy": pa.value,
                        "low": pa.low, "high": pa.high, "baseline": base["name"],
                        "baseline_pairwise_accuracy": bpa.value, "difference": diff.value,
                        "difference_low": diff.low, "difference_high": diff.high, "verdict": base["verdict"]}
        figs.append(_fig(label, printed, pa.value))
    judged = "; ".join(
        f"{_D4[k][0]} {v['pairwise_accuracy']:.2f} [{v['low']:.2f}, {v['high']:.2f}] on {v['n']} pairs "
        f"({v['failures']} failed judgment{'' if v['failures'] == 1 else 's'}), its baseline "
        f"({v['baseline']}) {v['baseline_pairwise_accuracy']:.2f} on the same pairs, judge minus baseline "
        f"{v['difference']:+.2f} [{v['difference_low']:+.2f}, {v['difference_high']:+.2f}]"
        for k, v in checks.items())
    ff = checks["wikieval-faithfulness"]
    same = f"{ff['baseline_pairwise_accuracy']:.2f}" == _D4["wikieval-faithfulness"][1]
    return _row("D4", "RAGAS paper: agreement with human pairwise preferences on WikiEval", "environment",
                figs,
                status="environment",
                reason="documented with a gpt-3.5-turbo judge, which the workbook cannot run offline; "
                "measured against WikiEval's construction labels (its `label` column is not a quality label) "
                "with the embedded SmolLM2-135M judge (its recorded runs, replayed; a tie counts half): "
                f"{judged}."
                + (" Word overlap alone reaches the documented faithfulness figure." if same else "")
                + " Measure your own judge with `ragworkbook judge-check --dataset wikieval-faithfulness "
                "--backend ollama --model qwen3:4b --limit 0`",
                details={"judge_checks": as_json(checks)})


ROWS: dict[str, Callable[[_Context], ReproducedNumber]] = {}


class _Context:
    """What the rows of one run share: the generator, the user's PDF, and what is computed once."""

    def __init__(self, generator: GeneratorLike | None = None, progress: bool = False,
                 pdf: PathLike | None = None):
        self._generator = generator
        self.progress = progress
        self.pdf = pdf  # the user's copy of the paper for the C rows (None: the bundled notes)
        self.carbon: JSONObject | None = None
        self.retrieval: _Retrieval | None = None
        self.ragchecker: dict[str, dict[str, tuple[float, float]]] | None = None

    def generator(self) -> GeneratorLike:
        if self._generator is None:
            from ragworkbook.llm import get_generator

            self._generator = get_generator()
        return self._generator


ROWS.update({
    "A1": _a1, "A2": _a2, "A3": _a3, "A4": _a4, "A5": _a5, "A6": _a6,
    "B1": _b1, "B2": _b2, "B3": _b3, "B4": _b4, "B5": _b5, "B6": _b6, "B7": _b7, "B8": _b8, "B9": _b9,
    "C1": _c1, "C2": _c2, "C3": _c3, "C4": _c4,
    "D1": _d1, "D2": _d2, "D3": _d3, "D4": _d4,
})
ROW_IDS = tuple(ROWS)
NEEDS_MODEL = ("B7", "C2")
#: The rows ``--pdf`` recomputes on the user's copy of the paper (C2 also uses it when asked for).
PDF_ROWS = ("C1", "C4")


def check_ids(only: Iterable[str] | None) -> list[str]:
    if only is None:
        return list(ROW_IDS)
    ids = [str(i).strip().upper() for i in only]
    unknown = [i for i in ids if i not in ROWS]
    if unknown:
        raise ValueError(f"unknown row id(s) {', '.join(unknown)}; rows are {', '.join(ROW_IDS)}")
    return [i for i in ROW_IDS if i in ids]


def reproduce_all(generator: GeneratorLike | None = None, *, only: Iterable[str] | None = None,
                  progress: bool = False, pdf: PathLike | None = None) -> list[ReproducedNumber]:
    """Recompute every row of NUMBERS.md (or the rows in ``only``), in table order.

    ``generator`` answers the rows that need a model (B7, C2); default: the live
    backend from :func:`ragworkbook.llm.get_generator` (created only if needed).
    ``pdf``: a path to the user's copy of the paper; the C rows then retrieve from
    its pages (text by the installed pypdf, named in the rows) instead of the
    bundled notes, and C1/C4 say whether the documented figures reproduce.
    """
    if pdf is not None:
        from pathlib import Path

        if not Path(pdf).is_file():
            raise FileNotFoundError(f"{pdf}: no such PDF file (get the paper with "
                                    "`ragworkbook download-paper`)")
    ctx = _Context(generator, progress, pdf)
    ids = check_ids(only)
    from tqdm.auto import tqdm

    return [ROWS[i](ctx) for i in tqdm(ids, desc="reproduce", disable=not progress, leave=False)]


def to_frame(rows: Sequence[ReproducedNumber]) -> pd.DataFrame:
    """The checklist as a DataFrame indexed by id: what, documented, reproduced, status, reason."""
    import pandas as pd

    return pd.DataFrame([{"id": r.id, "what": r.what, "documented": r.documented, "reproduced": r.reproduced,
                          "status": r.status, "reason": r.reason} for r in rows]).set_index("id")


def format_table(rows: Sequence[ReproducedNumber], width: int = 100) -> str:
    """A plain-text checklist: one block per row (id, status, documented, reproduced, reason)."""
    import textwrap

    out = []
    for r in rows:
        out.append(f"{r.id:<4}{r.status:<18}{r.what}")
        out.append(f"    documented: {r.documented}")
        out.append(f"    reproduced: {r.reproduced}")
        out.extend(textwrap.wrap(r.reason, width=width, initial_indent="    why: ",
                                 subsequent_indent="         "))
    counts = {s: sum(r.status == s for r in rows) for s in STATUSES}
    out.append(", ".join(f"{n} {s}" for s, n in counts.items() if n))
    return "\n".join(out)
