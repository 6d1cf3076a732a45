"""RAGTruth: real answers of six LLMs to QA, summarisation and data-to-text tasks, with human
hallucination spans (Niu et al., ACL 2024, arXiv:2401.00396; MIT).

The ``ragtruth`` data set (:mod:`ragworkbook.datasets`: vectara/FaithJudge's three files of RAGTruth's
test-split sources, at a pinned commit, checked) holds one source a line with its responses; each
response carries RAGTruth's span annotations verbatim. :func:`load_ragtruth` turns them into typed
:class:`RagTruthResponse` values, one per response: a response is **hallucinated** when it has at
least one labelled span (RAGTruth's own response-level rule, ``is_halu = len(labels) > 0``).

The ``context`` a metric is given is what the generating model saw: QA, the question's passages;
Summary, the article; Data2txt, the structured business record written out as indented JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragworkbook.corpus.jsonfile import DatasetError, PathLike, iter_jsonl

if TYPE_CHECKING:
    import numpy as np

    from ragworkbook._types import JSON, JSONObject
    from ragworkbook.judging.check_report import FailureReason
    from ragworkbook.judging.judge import Judge
    from ragworkbook.judging.ledger import Ledger
    from ragworkbook.metrics.support import WordSupport

__all__ = ["TASKS", "SIGNALS", "PUBLISHED", "RagTruthSpan", "RagTruthResponse", "RagTruthSet",
           "load_ragtruth", "JudgeOnRagTruth", "sample_responses",
           "Detection", "SpanDetection", "RagTruthCheck", "ragtruth_check", "detection", "signal_scores",
           "span_detection"]

#: RAGTruth's three tasks, by the data set's file.
TASKS = {"ragtruth_qa.jsonl": "QA", "ragtruth_summary.jsonl": "Summary",
         "ragtruth_data2txt.jsonl": "Data2txt"}


@dataclass(frozen=True)
class RagTruthSpan:
    """One labelled hallucination: character offsets ``start:end`` in the response, its ``text`` and
    RAGTruth's ``label_type`` (Evident / Subtle, Conflict / Baseless Info)."""

    start: int
    end: int
    text: str
    label_type: str


@dataclass(frozen=True)
class RagTruthResponse:
    """One model's response to one source, with the source's ``question`` (QA) and ``context``."""

    id: str
    source_id: str
    task: str
    model: str
    question: str | None
    context: str
    response: str
    spans: tuple[RagTruthSpan, ...]

    @property
    def hallucinated(self) -> bool:
        """At least one labelled span (RAGTruth's response-level label)."""
        return bool(self.spans)


@dataclass(frozen=True)
class RagTruthSet:
    """Every response, in file order (QA, Summary, Data2txt)."""

    responses: list[RagTruthResponse]

    def __iter__(self) -> Iterator[RagTruthResponse]:
        return iter(self.responses)

    def __len__(self) -> int:
        return len(self.responses)


def _context(task: str, source: JSON, where: str) -> tuple[str | None, str]:
    if task == "QA":
        if not isinstance(source, dict) or not isinstance(source.get("passages"), str):
            raise DatasetError(f"{where}: a QA source needs 'question' and 'passages'")
        return str(source.get("question", "")), source["passages"]
    if task == "Summary":
        if not isinstance(source, str):
            raise DatasetError(f"{where}: a Summary source must be the article's text")
        return None, source
    if not isinstance(source, dict):
        raise DatasetError(f"{where}: a Data2txt source must be a JSON object (the business record)")
    return None, json.dumps(source, indent=1, ensure_ascii=False)


def _spans(labels: JSON, where: str) -> tuple[RagTruthSpan, ...]:
    if not isinstance(labels, list):
        raise DatasetError(f"{where}: field 'labels' must be a list of spans")
    out = []
    for i, lab in enumerate(labels):
        if not isinstance(lab, dict) or not all(isinstance(lab.get(k), int) for k in ("start", "end")):
            raise DatasetError(f"{where}: label {i} needs integer 'start' and 'end'")
        out.append(RagTruthSpan(lab["start"], lab["end"], str(lab.get("text", "")),
                                str(lab.get("label_type", ""))))
    return tuple(out)


def load_ragtruth(folder: PathLike | None = None) -> RagTruthSet:
    """Every RAGTruth response of the data set's three files (``folder``: where they are; default the
    ``ragtruth`` data set, downloaded and checked on first use). DatasetError names the file and line
    of a malformed record."""
    if folder is None:
        from ragworkbook.datasets import dataset_file

        paths = [dataset_file("ragtruth", name) for name in TASKS]
    else:
        paths = [Path(folder) / name for name in TASKS]
    responses = []
    for path in paths:
        task = TASKS[path.name]
        for line, rec in iter_jsonl(path):
            where = f"{path}, line {line}"
            if (not isinstance(rec, dict) or "source_id" not in rec
                    or not isinstance(rec.get("responses"), list)):
                raise DatasetError(f"{where}: expected an object with 'source_id', 'source' and 'responses'")
            question, context = _context(task, rec.get("source"), where)
            sid = str(rec["source_id"])
            for r in rec["responses"]:
                if not isinstance(r, dict) or not isinstance(r.get("response"), str) or not r.get("model"):
                    raise DatasetError(f"{where}: every response needs 'response' and 'model'")
                responses.append(RagTruthResponse(f"{sid}:{r['model']}", sid, task, str(r["model"]), question,
                                                  context, r["response"], _spans(r.get("labels", []), where)))
    return RagTruthSet(responses)


# --------------------------------------------------------------------------------------------
# response-level hallucination detection (judge-check --dataset ragtruth)
# --------------------------------------------------------------------------------------------
#: The cheap signals measured beside any judge: a hallucination score per response (higher = more
#: likely hallucinated). ``always`` says "hallucinated" for every response (AUROC 0.5; its F1 is
#: the floor any detector must beat at this base rate).
SIGNALS = ("word-support", "word-overlap", "length", "always")

#: Published response-level figures on RAGTruth's test split, hallucinated class, overall (P, R, F1 in
#: %): RAGTruth paper (Niu et al. 2024) Table 5 as quoted by LettuceDetect's documentation, and
#: LettuceDetect (arXiv:2502.17125). ``None``: not published.
PUBLISHED: tuple[tuple[str, float | None, float | None, float], ...] = (
    ("prompt, gpt-3.5-turbo", 37.1, 92.3, 52.9),
    ("prompt, gpt-4-turbo", 46.9, 97.9, 63.4),
    ("SelfCheckGPT (gpt-3.5-turbo)", 49.7, 71.9, 58.8),
    ("fine-tuned Llama-2-13B (RAGTruth train split)", 76.9, 80.7, 78.7),
    ("LettuceDetect-large (ModernBERT, RAGTruth train split)", None, None, 79.22),
)
BASE_RATE_NOTE = (
    "the published figures are on RAGTruth's official test split (2,700 responses); this copy has 2,617 "
    "responses with a 41.2% hallucinated share (a third-party report gives 34.9% for the official split), "
    "so F1s, which move with the base rate, are not strictly comparable; AUROC does not depend on it")


@dataclass(frozen=True)
class Detection:
    """One signal on one task (``"all"`` for every response): AUROC with its bootstrap interval, and
    precision / recall / F1 of the hallucinated class with the threshold chosen on the other half of
    the sources (``thresholds``: the one chosen on each half)."""

    signal: str
    task: str
    n: int
    hallucinated: int
    auroc: float
    auroc_low: float
    auroc_high: float
    precision: float
    recall: float
    f1: float
    thresholds: tuple[float, float]


@dataclass(frozen=True)
class SpanDetection:
    """Word level: the response's content words word support marks unsupported, against the words inside
    a labelled span (pooled over responses)."""

    n_words: int
    labelled: int
    flagged: int
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class JudgeOnRagTruth:
    """The LLM judge measured on RAGTruth: who (``backend:model``), through which judged metric, the
    signal's name in the rows and its ``definition`` ("1 - faithfulness"; the score itself for a metric
    where lower is better), how its judgments went and what they cost (the ledger)."""

    judge: str
    metric: str
    signal: str
    definition: str
    judgments: int
    failures: int
    undefined: int
    failure_reasons: dict[str, FailureReason]
    ledger: Ledger


@dataclass(frozen=True)
class RagTruthCheck:
    """The whole measurement: :class:`Detection` rows per signal and task, the span level of word
    support, the published figures beside them."""

    rows: list[Detection]
    spans: SpanDetection | None
    n_resamples: int
    seed: int
    limit: int | None = None
    #: how the responses were chosen (every one, or the sample ``limit`` asked for)
    sample: str = "every response"
    #: the LLM judge measured beside the signals (None: none)
    judge: JudgeOnRagTruth | None = None

    def to_dict(self) -> JSONObject:
        """A JSON-ready document."""
        from dataclasses import asdict

        judge = None
        if self.judge is not None:
            judge = {"judge": self.judge.judge, "metric": self.judge.metric, "signal": self.judge.signal,
                     "definition": self.judge.definition,
                     "judgments": self.judge.judgments, "failures": self.judge.failures,
                     "undefined": self.judge.undefined, "failure_reasons": self.judge.failure_reasons,
                     "unscored_as": 0.5, "ledger": self.judge.ledger.to_dict()}
        return {"dataset": "ragtruth", "n": max((r.n for r in self.rows if r.task == "all"), default=0),
                "limit": self.limit, "sample": self.sample, "judge": judge,
                "split": "sources halved by sha256(source_id) parity",
                "bootstrap": f"percentile, over responses, {self.n_resamples} resamples, seed {self.seed}",
                "rows": [asdict(r) for r in self.rows], "spans": asdict(self.spans) if self.spans else None,
                "published": [dict(detector=d, precision=p, recall=r, f1=f) for d, p, r, f in PUBLISHED],
                "note": BASE_RATE_NOTE}

    def format(self) -> str:
        """The report: one line per signal and task, the span level, the published figures, the caveat."""
        n = max((r.n for r in self.rows if r.task == "all"), default=0)
        pos = max((r.hallucinated for r in self.rows if r.task == "all"), default=0)
        lines = [f"RAGTruth, response level: {n:,} responses, {pos:,} hallucinated ({pos / max(n, 1):.1%}); "
                 "hallucinated = at least one labelled span"]
        if self.judge is not None:
            from ragworkbook.judging.ledger import format_ledger

            j = self.judge
            lines.append(f"sample: {self.sample}")
            lines.append(f"judge: {j.judge}; signal {j.signal!r} = {j.definition} (higher = more likely "
                         f"hallucinated); judgments {j.judgments}, failed {j.failures}, "
                         f"undefined {j.undefined} (a response without a score counts 0.5: no evidence "
                         "either way)")
            lines += [f"   failed {got['count']}: {reason}; first: {got['example']}"
                      for reason, got in j.failure_reasons.items()]
            lines += format_ledger(j.ledger, j.judge).splitlines()
        lines += ["threshold chosen on one half of the sources (sha256 of the source id), applied to the "
                  "other; AUROC interval: percentile bootstrap over responses "
                  f"({self.n_resamples} resamples)",
                  f"{'signal':<14} {'task':<9} {'n':>5} {'halluc.':>7}  {'AUROC':>5} {'95% interval':<15} "
                  f"{'P':>5} {'R':>5} {'F1':>5}"]
        for r in self.rows:
            lines.append(f"{r.signal:<14} {r.task:<9} {r.n:>5} {r.hallucinated:>7}  {r.auroc:5.3f} "
                         f"[{r.auroc_low:.3f}, {r.auroc_high:.3f}]  {r.precision:5.3f} {r.recall:5.3f} "
                         f"{r.f1:5.3f}")
        if self.spans is not None:
            s = self.spans
            lines.append(f"span level (word support's unsupported words vs the labelled spans, "
                         f"{s.n_words:,} content words, {s.labelled:,} inside a span): "
                         f"P {s.precision:.3f} R {s.recall:.3f} F1 {s.f1:.3f}")
        lines.append("published, same split and level (hallucinated class, overall; RAGTruth paper Table 5 "
                     "via LettuceDetect's docs):")
        for d, p, r, f in PUBLISHED:
            pr = f"P {p:.1f} / R {r:.1f}, " if p is not None and r is not None else ""
            lines.append(f"  {d}: {pr}F1 {f:g}")
        lines.append(f"caveat: {BASE_RATE_NOTE}")
        return "\n".join(lines)


def _half(source_id: str) -> int:
    import hashlib

    return int(hashlib.sha256(source_id.encode("utf-8")).hexdigest(), 16) % 2


def _auroc(y: np.ndarray, x: np.ndarray) -> float | None:
    """Mann-Whitney AUROC (ties half); None when one class is missing."""
    import numpy as np
    from scipy.stats import rankdata

    n1 = int(y.sum())
    n0 = int(y.size - n1)
    if n1 == 0 or n0 == 0:
        return None
    ranks = rankdata(x)
    return float((ranks[y == 1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)) if np.isfinite(ranks).all() else None


def _best_threshold(y: np.ndarray, x: np.ndarray) -> float:
    """The score threshold (flag at or above it) with the best F1 of the hallucinated class on ``y, x``
    (the lowest such threshold on a tie)."""
    import numpy as np

    best, at = -1.0, float(np.min(x)) if x.size else 0.0
    for t in np.unique(x):
        p = x >= t
        tp = int((p & (y == 1)).sum())
        fp = int((p & (y == 0)).sum())
        fn = int((~p & (y == 1)).sum())
        f = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        if f > best:
            best, at = f, float(t)
    return at


def detection(signal: str, task: str, y: np.ndarray, x: np.ndarray, halves: np.ndarray, *,
              n_resamples: int = 2000, seed: int = 0) -> Detection:
    """AUROC (with its bootstrap interval over responses) and the cross-half thresholded P / R / F1 of one
    signal: for each half of the sources the threshold is the best-F1 one on the other half."""
    import numpy as np

    from ragworkbook.stats.resampling import bootstrap_statistic

    est = bootstrap_statistic(lambda idx: _auroc(y[idx], x[idx]), int(y.size), n_resamples=n_resamples,
                              seed=seed, unit="responses")
    pred = np.zeros(y.size, dtype=bool)
    chosen = []
    for h in (0, 1):
        other = halves != h
        t = _best_threshold(y[other], x[other]) if other.any() else float("inf")
        chosen.append(t)
        pred[halves == h] = x[halves == h] >= t
    tp = int((pred & (y == 1)).sum())
    fp = int((pred & (y == 0)).sum())
    fn = int((~pred & (y == 1)).sum())
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return Detection(signal, task, int(y.size), int(y.sum()), est.value, est.low, est.high, p, r, f,
                     (chosen[0], chosen[1]))


def _word_supports(responses: list[RagTruthResponse]) -> list[WordSupport]:
    from ragworkbook.metrics.support import word_support

    return [word_support(r.response, r.context) for r in responses]


def signal_scores(responses: list[RagTruthResponse], signal: str, supports: list[WordSupport] | None = None
                  ) -> list[float]:
    """Each response's hallucination score under ``signal`` (one of :data:`SIGNALS`); ``supports``: the
    responses' word supports when already computed."""
    if signal == "word-support":
        supports = supports if supports is not None else _word_supports(responses)
        # no content word: no evidence either way
        return [0.5 if ws.score is None else 1.0 - ws.score for ws in supports]
    if signal == "word-overlap":
        from ragworkbook.judging.baselines import word_overlap

        return [1.0 - (word_overlap(r.response, r.context) or 0.5) for r in responses]
    if signal == "length":
        return [float(len(r.response.split())) for r in responses]
    if signal == "always":
        return [1.0] * len(responses)
    raise ValueError(f"unknown signal {signal!r}; choose from: {', '.join(SIGNALS)}")


def span_detection(responses: list[RagTruthResponse], supports: list[WordSupport] | None = None
                   ) -> SpanDetection:
    """Word support's unsupported content words against the labelled spans: a content word of a response
    is *labelled* when it overlaps a span, *flagged* when word support lists it as not found in the
    context."""
    from ragworkbook.metrics.support import TOKEN_RE, _key, stop_words

    supports = supports if supports is not None else _word_supports(responses)
    stops = stop_words()
    n = labelled = flagged = hit = 0
    for r, ws in zip(responses, supports, strict=True):
        unsupported = {_key(w.lower(), True) for w in ws.unsupported}
        for m in TOKEN_RE.finditer(r.response):
            if m.group(0).lower() in stops:
                continue
            n += 1
            inside = any(s.start < m.end() and m.start() < s.end for s in r.spans)
            marked = _key(m.group(0).lower(), True) in unsupported
            labelled += inside
            flagged += marked
            hit += inside and marked
    p = hit / flagged if flagged else 0.0
    rc = hit / labelled if labelled else 0.0
    return SpanDetection(n, labelled, flagged, p, rc, 2 * p * rc / (p + rc) if p + rc else 0.0)


def sample_responses(responses: list[RagTruthResponse], limit: int, *, seed: int | None = None
                     ) -> list[RagTruthResponse]:
    """``limit`` responses taken round-robin over the tasks (so each task gets its share): in file order
    when ``seed`` is None, else each task's responses shuffled first with ``random.Random(seed)`` (a
    seeded sample spread over many sources, for a slow judge's few responses)."""
    import random

    by_task: dict[str, list[RagTruthResponse]] = {}
    for r in responses:
        by_task.setdefault(r.task, []).append(r)
    if seed is not None:
        rng = random.Random(seed)
        for group in by_task.values():
            rng.shuffle(group)
    mixed = [g[j] for j in range(max(map(len, by_task.values()), default=0)) for g in by_task.values()
             if j < len(g)]
    return mixed[:limit]


def _judge_scores(responses: list[RagTruthResponse], judge: Judge, metric: str, progress: bool
                  ) -> tuple[list[float], JudgeOnRagTruth]:
    """The judge's hallucination score per response (1 - the judged metric; 0.5 when it gave none) and
    how its judgments went."""
    from ragworkbook.judging.check_report import failure_reasons, judge_name
    from ragworkbook.judging.metrics import evaluate_judged
    from ragworkbook.judging.results import JudgeSample
    from ragworkbook.metrics.registry import parse_metric
    from ragworkbook.outcomes import FAILED, SCORED, UNDEFINED

    samples = [JudgeSample(question=r.question or "", answer=r.response, contexts=[r.context],
                           sample_id=r.id) for r in responses]
    flip = parse_metric(metric, "judged").higher_is_better  # faithfulness: 1 - score; hallucination: score
    report = evaluate_judged(samples, judge, [metric], progress=progress)
    results = report.results[metric]
    scores = [(1.0 - float(r.score) if flip else float(r.score))
              if r.outcome == SCORED and r.score is not None else 0.5 for r in results]
    return scores, JudgeOnRagTruth(
        judge=judge_name(judge), metric=metric, signal="llm-judge",
        definition=f"1 - {metric}" if flip else metric, judgments=len(results),
        failures=sum(r.outcome == FAILED for r in results),
        undefined=sum(r.outcome == UNDEFINED for r in results),
        failure_reasons=failure_reasons(results), ledger=report.ledger)


def ragtruth_check(signals: tuple[str, ...] = SIGNALS, *, limit: int | None = None,
                   n_resamples: int = 2000, seed: int = 0, spans: bool = True,
                   data: RagTruthSet | None = None, judge: Judge | None = None, metric: str = "faithfulness",
                   progress: bool = False) -> RagTruthCheck:
    """Response-level hallucination detection on RAGTruth for each signal, overall and per task (QA,
    Summary, Data2txt), and word support's span level. ``limit``: the first N responses in round-robin
    order over the tasks (None or 0: all); with a ``judge``, a seeded sample instead
    (:func:`sample_responses` with ``seed``), so that a slow judge's few responses spread over many
    sources. ``judge``: an LLM judge whose ``metric`` (a judged metric, default faithfulness) becomes
    the first signal (1 - the score; the score itself for a metric where lower is better, such as
    hallucination), measured on the same responses as the others."""
    import numpy as np

    responses = list(data if data is not None else load_ragtruth())
    n_all = len(responses)
    sample = "every response"
    if limit:
        responses = sample_responses(responses, limit, seed=seed if judge is not None else None)
        sample = (f"{len(responses)} of {n_all} responses, round-robin over the tasks"
                  + (f", each task shuffled with seed {seed}" if judge is not None else ", in file order"))
    y = np.array([int(r.hallucinated) for r in responses])
    halves = np.array([_half(r.source_id) for r in responses])
    tasks = np.array([r.task for r in responses])
    supports = _word_supports(responses) if "word-support" in signals else None
    scored: list[tuple[str, list[float]]] = []
    judged = None
    if judge is not None:
        judge_scores, judged = _judge_scores(responses, judge, metric, progress)
        scored.append((judged.signal, judge_scores))
    scored += [(signal, signal_scores(responses, signal, supports)) for signal in signals]
    rows = []
    for signal, values in scored:
        x = np.asarray(values, dtype=float)
        for task in ("all", *dict.fromkeys(TASKS.values())):
            keep = np.ones(y.size, bool) if task == "all" else tasks == task
            if keep.any():
                rows.append(detection(signal, task, y[keep], x[keep], halves[keep], n_resamples=n_resamples,
                                      seed=seed))
    span = span_detection(responses, supports) if spans and supports is not None else None
    return RagTruthCheck(rows, span, n_resamples, seed, limit or None, sample, judged)
