"""One evaluation report for a whole RAG pipeline, saved, loaded and compared.

:func:`evaluate` runs a pipeline (retrieve, then generate) over an eval set
and scores every question with the retrieval metrics (when relevance
judgements are given), the generation metrics against the reference answer,
and — when a judge is given — the LLM-judged metrics. The result is a
:class:`Report`:

- ``rows``: one dict per question (id, question, reference, answer, the
  retrieved context ids and texts, ``metrics`` name -> value, ``failures``
  name -> error message for every metric that could not be computed);
- ``aggregates``: per metric the mean with a bootstrap confidence interval,
  ``n`` (questions scored) and ``failures`` (questions that could not be
  scored). A failed judgment is never a silent NaN: its value is ``None``,
  its reason is in the row, and it is counted in ``failures``; the mean is
  over the ``n`` scored questions and says so.

Reports are saved as JSON (atomically) and loaded with validation, so a
malformed file fails with its name and the problem. :func:`compare_reports`
pairs two reports question by question and runs a paired test per metric:
the basis of a regression gate (``ragworkbook compare --fail-if-worse``).
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragworkbook._io import atomic_write_json

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "REPORT_FORMAT",
    "REPORT_VERSION",
    "LOWER_IS_BETTER",
    "Aggregate",
    "Report",
    "Comparison",
    "aggregate",
    "evaluate",
    "compare_reports",
    "cli_eval",
    "cli_compare",
]

REPORT_FORMAT = "ragworkbook-report"
REPORT_VERSION = 1

#: Metrics where a smaller value is better (everything else: higher is better).
LOWER_IS_BETTER = frozenset({"hallucination", "hallucination_rate", "numeric_issues"})


# ---------------------------------------------------------------------------------------------
# data model
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Aggregate:
    """The aggregate of one metric over the questions of a report.

    ``mean`` is over the ``n`` questions that were scored; ``failures`` counts
    the questions whose score could not be computed (kept out of the mean,
    never silently). ``ci_low``/``ci_high`` are a bootstrap confidence interval
    of the mean (``confidence``, default 95%); with ``n`` = 0 every number is NaN.
    """

    mean: float
    ci_low: float
    ci_high: float
    n: int
    failures: int = 0
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; NaN numbers become None."""
        return {"mean": _num_or_none(self.mean), "ci_low": _num_or_none(self.ci_low),
                "ci_high": _num_or_none(self.ci_high), "n": self.n, "failures": self.failures,
                "confidence": self.confidence}


def _num_or_none(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _nan_if_none(x: Any) -> float:
    return float("nan") if x is None else float(x)


def aggregate(values: Sequence[float | None], *, confidence: float = 0.95, seed: int = 0) -> Aggregate:
    """Aggregate per-question values: ``None`` entries are failures (counted, not averaged).

    The confidence interval is :func:`ragworkbook.stats.bootstrap_ci` over the
    scored values; a single value gives a zero-width interval.
    """
    scored = [float(v) for v in values if v is not None and not _is_nan(v)]
    failures = len(values) - len(scored)
    if not scored:
        nan = float("nan")
        return Aggregate(nan, nan, nan, 0, failures, confidence)
    from ragworkbook.stats import bootstrap_ci

    ci = bootstrap_ci(scored, confidence=confidence, seed=seed)
    return Aggregate(float(ci.mean), float(ci.low), float(ci.high), len(scored), failures, confidence)


def _is_nan(v: Any) -> bool:
    try:
        return math.isnan(float(v))
    except (TypeError, ValueError):
        return False


@dataclass
class Report:
    """Per-question rows, per-metric aggregates and metadata of one evaluation run."""

    rows: list[dict[str, Any]]
    metrics: list[str]
    aggregates: dict[str, Aggregate] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.aggregates:
            self.aggregates = {m: aggregate(self.values(m)) for m in self.metrics}

    # --- access -----------------------------------------------------------------------------
    @property
    def ids(self) -> list[str]:
        """Question ids in report order."""
        return [str(r["id"]) for r in self.rows]

    def values(self, metric: str) -> list[float | None]:
        """Per-question values of ``metric`` in row order (``None`` = failed)."""
        self._check_metric(metric)
        return [r["metrics"].get(metric) for r in self.rows]

    def means(self) -> dict[str, float]:
        """``metric -> mean`` over the scored questions (NaN when none was scored)."""
        return {m: a.mean for m, a in self.aggregates.items()}

    def _check_metric(self, metric: str) -> None:
        if metric not in self.metrics:
            raise ValueError(f"unknown metric {metric!r}; this report has: {', '.join(self.metrics)}")

    def to_pandas(self, *, text: bool = False) -> pd.DataFrame:
        """Per-question DataFrame indexed by question id: one column per metric (NaN = failed),
        a ``failures`` column naming the metrics that failed, and with ``text=True`` the
        question, answer and reference too."""
        import pandas as pd

        records = []
        for r in self.rows:
            rec: dict[str, Any] = {"id": r["id"]}
            if text:
                rec.update(question=r.get("question", ""), answer=r.get("answer", ""),
                           reference=r.get("reference", ""))
            for m in self.metrics:
                rec[m] = _nan_if_none(r["metrics"].get(m))
            rec["failures"] = ", ".join(sorted(r.get("failures", {})))
            records.append(rec)
        return pd.DataFrame(records).set_index("id")

    def summary(self) -> pd.DataFrame:
        """Aggregates as a DataFrame: one row per metric with mean, CI, n and failures."""
        import pandas as pd

        df = pd.DataFrame(
            [{"metric": m, "mean": a.mean, "ci_low": a.ci_low, "ci_high": a.ci_high, "n": a.n,
              "failures": a.failures} for m, a in self.aggregates.items()]
        )
        return df.set_index("metric")

    def check_eval_set(self, eval_set: Any) -> None:
        """Raise ValueError unless the report's questions are exactly ``eval_set``'s (ids and texts)."""
        items = {str(it["id"]): it["question"] for it in _items(eval_set)}
        mine = {str(r["id"]): r.get("question") for r in self.rows}
        name = self.meta.get("name") or "the report"
        only_r, only_e = sorted(set(mine) - set(items)), sorted(set(items) - set(mine))
        if only_r or only_e:
            raise ValueError(
                f"{name} does not match the eval set: "
                + (f"questions only in the report: {', '.join(only_r)}; " if only_r else "")
                + (f"questions only in the eval set: {', '.join(only_e)}; " if only_e else "")
                + "re-run the evaluation on this eval set"
            )
        changed = [i for i in items if items[i] != mine[i]]
        if changed:
            raise ValueError(f"{name} does not match the eval set: the text of question(s) "
                             f"{', '.join(changed)} differs; re-run the evaluation on this eval set")

    def targets(self, domain: str = "general") -> pd.DataFrame:
        """The aggregates rated against the targets table (see :mod:`ragworkbook.targets`)."""
        from ragworkbook.targets import apply_targets

        return apply_targets(self, domain=domain)

    # --- JSON -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON form written by :meth:`save` and read by :meth:`from_dict` (NaN -> null)."""
        rows = []
        for r in self.rows:
            r2 = dict(r)
            r2["metrics"] = {m: _num_or_none(v) for m, v in r["metrics"].items()}
            rows.append(r2)
        return {
            "format": REPORT_FORMAT,
            "version": REPORT_VERSION,
            "meta": self.meta,
            "metrics": list(self.metrics),
            "aggregates": {m: a.to_dict() for m, a in self.aggregates.items()},
            "rows": rows,
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the report as JSON, atomically (a reader never sees half a file)."""
        return atomic_write_json(path, self.to_dict())

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "report") -> Report:
        """Build a report from its JSON form, validating it (ValueError naming ``source``)."""
        _validate(data, source)
        aggs = {}
        for m, a in data["aggregates"].items():
            aggs[m] = Aggregate(_nan_if_none(a["mean"]), _nan_if_none(a["ci_low"]),
                                _nan_if_none(a["ci_high"]), int(a["n"]), int(a.get("failures", 0)),
                                float(a.get("confidence", 0.95)))
        rows = [dict(r) for r in data["rows"]]
        for r in rows:
            r.setdefault("failures", {})
        return cls(rows=rows, metrics=list(data["metrics"]), aggregates=aggs, meta=dict(data["meta"]))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Report:
        """Load and validate a saved report.

        FileNotFoundError if the file is missing; ValueError naming the file and
        the problem if it is not JSON or not a ragworkbook report.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"report file not found: {path}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                "a report is the file written by Report.save() or `ragworkbook eval --out`"
            ) from None
        except UnicodeDecodeError:
            raise ValueError(f"{path} is not a UTF-8 text file; expected a report JSON") from None
        return cls.from_dict(data, source=str(path))

    def __repr__(self) -> str:
        return (f"<Report {len(self.rows)} questions, {len(self.metrics)} metrics"
                f"{', ' + self.meta['name'] if self.meta.get('name') else ''}>")


def _validate(data: Any, source: str) -> None:
    def bad(problem: str) -> ValueError:
        return ValueError(f"{source} is not a valid ragworkbook report: {problem}")

    if not isinstance(data, dict):
        raise bad(f"expected a JSON object at the top level, got {type(data).__name__}")
    if data.get("format") != REPORT_FORMAT:
        raise bad(f"'format' must be {REPORT_FORMAT!r}, got {data.get('format')!r}")
    if data.get("version") != REPORT_VERSION:
        raise bad(f"unsupported 'version' {data.get('version')!r} (this package reads {REPORT_VERSION})")
    for key, typ in (("meta", dict), ("metrics", list), ("aggregates", dict), ("rows", list)):
        if key not in data:
            raise bad(f"missing key {key!r}")
        if not isinstance(data[key], typ):
            raise bad(f"{key!r} must be a JSON {'object' if typ is dict else 'array'}")
    metrics = data["metrics"]
    if not all(isinstance(m, str) for m in metrics):
        raise bad("'metrics' must be a list of metric names")
    seen: set[str] = set()
    for i, r in enumerate(data["rows"]):
        if not isinstance(r, dict):
            raise bad(f"row {i} is not an object")
        for key in ("id", "question", "metrics"):
            if key not in r:
                raise bad(f"row {i} has no {key!r}")
        rid = str(r["id"])
        if rid in seen:
            raise bad(f"question id {rid!r} appears twice")
        seen.add(rid)
        if not isinstance(r["metrics"], dict):
            raise bad(f"row {rid!r}: 'metrics' must be an object")
        for m, v in r["metrics"].items():
            if m not in metrics:
                raise bad(f"row {rid!r} has metric {m!r} not listed in 'metrics'")
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise bad(f"row {rid!r}: metric {m!r} must be a number or null, got {v!r}")
    for m in metrics:
        a = data["aggregates"].get(m)
        if not isinstance(a, dict):
            raise bad(f"no aggregate for metric {m!r}")
        for key in ("mean", "ci_low", "ci_high", "n"):
            if key not in a:
                raise bad(f"aggregate {m!r} has no {key!r}")


# ---------------------------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------------------------
@dataclass
class Comparison:
    """Two reports compared metric by metric on the same questions.

    ``table`` has one row per metric: ``mean_a, mean_b, diff`` (b - a),
    ``ci_low, ci_high`` (of the paired difference), ``p_value``, ``n`` (pairs
    where both were scored), ``dropped`` (pairs with a failure on either side,
    left out and counted) and ``verdict``: "better", "worse" (b relative to a,
    respecting the metric's direction, significant at ``alpha``) or "no
    significant change".
    """

    table: Any
    alpha: float
    method: str
    name_a: str = "a"
    name_b: str = "b"

    def worse(self, metric: str) -> bool:
        """True when b is significantly worse than a on ``metric``."""
        if metric not in self.table.index:
            raise ValueError(f"unknown metric {metric!r}; compared metrics: {', '.join(self.table.index)}")
        return self.table.loc[metric, "verdict"] == "worse"

    def _repr_html_(self) -> str:  # pragma: no cover - notebook display
        return self.table._repr_html_()

    def __repr__(self) -> str:
        return f"Comparison({self.name_a} -> {self.name_b}, alpha={self.alpha}, method={self.method!r})\n" + (
            self.table.to_string(float_format=lambda x: f"{x:.3f}")
        )


def _check_same_questions(a: Report, b: Report) -> None:
    ids_a, ids_b = set(a.ids), set(b.ids)
    if ids_a != ids_b:
        only_a = sorted(ids_a - ids_b)
        only_b = sorted(ids_b - ids_a)
        raise ValueError(
            "the two reports are not on the same questions: "
            + (f"only in A: {', '.join(only_a)}; " if only_a else "")
            + (f"only in B: {', '.join(only_b)}; " if only_b else "")
            + "a paired comparison needs the same eval set in both runs"
        )
    qa = {str(r["id"]): r.get("question") for r in a.rows}
    for r in b.rows:
        if qa[str(r["id"])] != r.get("question"):
            raise ValueError(
                f"question {r['id']!r} differs between the reports ({qa[str(r['id'])]!r} vs "
                f"{r.get('question')!r}); a paired comparison needs the same eval set in both runs"
            )


def compare_reports(a: Report, b: Report, metrics: Iterable[str] | None = None, *,
                    alpha: float = 0.05, method: str = "randomization", seed: int = 0) -> Comparison:
    """Paired comparison of report ``b`` against report ``a`` on the same questions.

    ``metrics`` defaults to every metric present in both. For each metric the
    questions scored in both reports are paired and passed to
    :func:`ragworkbook.stats.paired_test` (``method``); pairs with a failure in
    either report are dropped and counted. Raises ValueError when the question
    ids (or their texts) differ, or when a requested metric is missing.
    """
    import pandas as pd

    from ragworkbook.stats import paired_test

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    _check_same_questions(a, b)
    if metrics is None:
        metrics = [m for m in a.metrics if m in b.metrics]
    else:
        metrics = list(metrics)
        for m in metrics:
            missing = [name for name, r in (("A", a), ("B", b)) if m not in r.metrics]
            if missing:
                common = [x for x in a.metrics if x in b.metrics]
                raise ValueError(f"unknown metric {m!r} (not in report {' and '.join(missing)}); "
                                 f"metrics in both: {', '.join(common)}")
    by_id_b = {str(r["id"]): r for r in b.rows}
    rows = []
    for m in metrics:
        va, vb = [], []
        dropped = 0
        for r in a.rows:
            x = r["metrics"].get(m)
            y = by_id_b[str(r["id"])]["metrics"].get(m)
            if x is None or y is None or _is_nan(x) or _is_nan(y):
                dropped += 1
                continue
            va.append(float(x))
            vb.append(float(y))
        rec: dict[str, Any] = {"metric": m, "mean_a": float("nan"), "mean_b": float("nan"),
                               "diff": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"),
                               "p_value": float("nan"), "n": len(va), "dropped": dropped,
                               "verdict": "not compared (no pairs)"}
        if va:
            res = paired_test(vb, va, method=method, seed=seed)  # mean_diff = mean(b - a)
            rec.update(mean_a=sum(va) / len(va), mean_b=sum(vb) / len(vb), diff=float(res.mean_diff),
                       ci_low=float(res.ci_low), ci_high=float(res.ci_high), p_value=float(res.p_value))
            sign = -1.0 if m in LOWER_IS_BETTER else 1.0
            if res.p_value < alpha and res.mean_diff != 0:
                rec["verdict"] = "better" if sign * res.mean_diff > 0 else "worse"
            else:
                rec["verdict"] = "no significant change"
        rows.append(rec)
    table = pd.DataFrame(rows).set_index("metric")
    return Comparison(table=table, alpha=alpha, method=method,
                      name_a=str(a.meta.get("name", "a")), name_b=str(b.meta.get("name", "b")))


# ---------------------------------------------------------------------------------------------
# evaluate
# ---------------------------------------------------------------------------------------------
RETRIEVAL_METRICS = ("precision", "recall", "hit_rate", "mrr", "ndcg")
GENERATION_METRICS = ("bleu", "rouge_l", "meteor", "embedding_similarity", "token_f1", "exact_match",
                      "bertscore_f1")
JUDGED_METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall", "hallucination")
DEFAULT_GENERATION = ("bleu", "rouge_l", "meteor", "embedding_similarity", "token_f1")


def _retrieval_name(family: str, k: int) -> str:
    return f"{family}@{k}"


def resolve_metrics(metrics: Iterable[str] | None, *, k: int, have_qrels: bool,
                    have_judge: bool) -> list[str]:
    """The metric columns a run will have, in a fixed order.

    ``None`` = every retrieval metric (when relevance judgements are given),
    the default generation metrics (BLEU, ROUGE-L, METEOR, embedding
    similarity, token F1) and every judged metric (when a judge is given).
    Retrieval metrics may be named with or without the cut-off (``recall`` or
    ``recall@3``; the cut-off must equal ``k``). Raises ValueError naming
    unknown metrics, and metrics that need qrels or a judge that were not given.
    """
    if metrics is None:
        out = [_retrieval_name(f, k) for f in RETRIEVAL_METRICS] if have_qrels else []
        out += list(DEFAULT_GENERATION)
        out += list(JUDGED_METRICS) if have_judge else []
        return out
    if isinstance(metrics, str):
        metrics = [metrics]
    wanted: list[str] = []
    for m in metrics:
        name = str(m).strip().lower()
        fam, _, cut = name.partition("@")
        if fam in RETRIEVAL_METRICS:
            if cut and cut != str(k):
                raise ValueError(f"metric {m!r}: the cut-off must equal k={k} (use {fam}@{k} or {fam})")
            if not have_qrels:
                raise ValueError(f"metric {m!r} needs relevance judgements: pass qrels=... "
                                 "(e.g. ragworkbook.ground_truth.keyword_qrels(chunks, eval_set))")
            name = _retrieval_name(fam, k)
        elif name in JUDGED_METRICS:
            if not have_judge:
                raise ValueError(f"metric {m!r} needs an LLM judge: pass judge=get_generator(...)")
        elif name not in GENERATION_METRICS:
            known = ([f"{f}@{k}" for f in RETRIEVAL_METRICS] + list(GENERATION_METRICS)
                     + list(JUDGED_METRICS))
            raise ValueError(f"unknown metric {m!r}; known metrics: {', '.join(known)}")
        if name not in wanted:
            wanted.append(name)
    order = ([_retrieval_name(f, k) for f in RETRIEVAL_METRICS] + list(GENERATION_METRICS)
             + list(JUDGED_METRICS))
    return [m for m in order if m in wanted]


def _context_fields(contexts: Sequence[Any]) -> tuple[list[str | None], list[str]]:
    """(ids, texts) of retrieved contexts given as Hits, Chunks or strings."""
    ids: list[str | None] = []
    texts: list[str] = []
    for c in contexts:
        chunk = getattr(c, "chunk", c)
        if isinstance(chunk, str):
            ids.append(None)
            texts.append(chunk)
        else:
            ids.append(getattr(chunk, "id", None))
            texts.append(str(getattr(chunk, "text", chunk)))
    return ids, texts


def _retrieval_scores(ranking: list[str], relevance: Mapping[str, float], k: int,
                      wanted: list[str]) -> dict[str, float]:
    from ragworkbook import retrieval_metrics as rm

    relevant = {d for d, g in relevance.items() if g > 0}
    funcs = {
        "precision": lambda: rm.precision_at_k(ranking, relevant, k),
        "recall": lambda: rm.recall_at_k(ranking, relevant, k),
        "hit_rate": lambda: rm.hit_rate_at_k(ranking, relevant, k),
        "mrr": lambda: rm.reciprocal_rank(ranking, relevant, k=k),
        "ndcg": lambda: rm.ndcg_at_k(ranking, dict(relevance), k),
    }
    out = {}
    for fam in RETRIEVAL_METRICS:
        name = _retrieval_name(fam, k)
        if name in wanted:
            out[name] = float(funcs[fam]())
    return out


def _items(eval_set: Any) -> list[Any]:
    items = list(getattr(eval_set, "items", eval_set))
    if not items:
        raise ValueError("the eval set is empty")
    out = []
    for i, it in enumerate(items):
        if isinstance(it, Mapping):
            missing = [f for f in ("id", "question", "reference") if f not in it]
            if missing:
                raise ValueError(f"eval item {i} is missing {', '.join(missing)}")
            out.append(dict(it))
        else:
            out.append({"id": it.id, "question": it.question, "reference": it.reference,
                        "keyword": getattr(it, "keyword", None)})
    return out


_JUDGED_NAMES = {"faithfulness": "faithfulness", "answer_relevancy": "answer_relevancy",
                 "context_precision": "context_precision_with_reference", "context_recall": "context_recall"}


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


def _judge_rows(rows: list[dict[str, Any]], wanted: list[str], judge: Any, progress: bool) -> None:
    """Add the judged metrics to ``rows`` in place (values, failures with reasons, intermediates)."""
    from ragworkbook.judge import Judge
    from ragworkbook.judged_metrics import JudgeSample, evaluate_judged

    if not isinstance(judge, Judge):
        judge = Judge(judge)
    ours = [m for m in _JUDGED_NAMES if m in wanted or (m == "faithfulness" and "hallucination" in wanted)]
    samples = [JudgeSample(question=r["question"], answer=r["answer"], contexts=r["contexts"],
                           reference=r["reference"], sample_id=r["id"]) for r in rows]
    rep = evaluate_judged(samples, judge, [_JUDGED_NAMES[m] for m in ours], progress=progress)
    for m in ours:
        for r, res in zip(rows, rep.results[_JUDGED_NAMES[m]], strict=True):
            score = res.score
            if score is None or _is_nan(score):
                r["metrics"][m] = None
                r["failures"][m] = f"{res.status}: {res.error}" if res.error else res.status
            else:
                r["metrics"][m] = float(score)
            r.setdefault("judgments", {})[m] = _jsonable(
                {"status": res.status, "items": res.items, "detail": res.detail})
    if "hallucination" in wanted:
        for r in rows:
            f = r["metrics"].get("faithfulness")
            if f is None:
                r["metrics"]["hallucination"] = None
                why = r["failures"].get("faithfulness", "missing")
                r["failures"]["hallucination"] = f"no faithfulness score ({why})"
            else:
                r["metrics"]["hallucination"] = 1.0 if f < 1.0 else 0.0


def evaluate(pipeline: Any, eval_set: Any, *, qrels: Mapping[str, Mapping[str, float]] | None = None,
             k: int = 3, judge: Any = None, metrics: Iterable[str] | None = None, progress: bool = True,
             name: str = "", meta: Mapping[str, Any] | None = None) -> Report:
    """Run ``pipeline`` over ``eval_set`` and score every question -> :class:`Report`.

    - ``pipeline``: anything with ``.answer(question) -> RAGAnswer`` (``answer``
      text and ``contexts``, the retrieved Hits/Chunks in rank order), e.g.
      :class:`ragworkbook.pipeline.NaiveRAG`.
    - ``eval_set``: an :class:`~ragworkbook.datasets.EvalSet` (or a list of
      dicts with ``id``, ``question``, ``reference``).
    - ``qrels``: ``question id -> {chunk id: grade}``; with it the retrieval
      metrics @k are computed on the retrieved contexts' ids (binary relevance
      = grade > 0; NDCG uses the grades, linear gain). A question missing from
      ``qrels`` has no relevant chunk (every retrieval metric 0).
    - ``judge``: a :class:`~ragworkbook.judge.Judge` (or a
      :class:`~ragworkbook.llm.base.Generator`, wrapped in one) used as the LLM
      judge for faithfulness, answer relevancy, context precision and recall,
      and the per-question hallucination flag (1 when faithfulness < 1: at
      least one claim not supported; its mean is the hallucination rate).
      A judgment that fails is recorded as ``None`` with its reason in the
      row's ``failures`` and counted in the aggregate.
    - ``metrics``: see :func:`resolve_metrics`.
    - ``progress``: a tqdm bar over the questions.

    Generation errors of the pipeline itself are not caught: a run whose
    generator is down should stop, not produce a report of failures.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    items = _items(eval_set)
    wanted = resolve_metrics(metrics, k=k, have_qrels=qrels is not None, have_judge=judge is not None)
    gen_wanted = [m for m in wanted if m in GENERATION_METRICS]
    from tqdm.auto import tqdm

    rows: list[dict[str, Any]] = []
    for it in tqdm(items, desc="evaluate", disable=not progress, leave=False):
        ans = pipeline.answer(it["question"])
        answer = str(getattr(ans, "answer", ans))
        ids, texts = _context_fields(getattr(ans, "contexts", []) or [])
        row: dict[str, Any] = {"id": str(it["id"]), "question": it["question"], "reference": it["reference"],
                               "answer": answer, "context_ids": ids, "contexts": texts,
                               "metrics": {}, "failures": {}}
        if qrels is not None:
            rel = qrels.get(str(it["id"]), {})
            if not isinstance(rel, Mapping):
                rel = {d: 1 for d in rel}
            ranking = [i if i is not None else f"<context {n}>" for n, i in enumerate(ids)]
            row["metrics"].update(_retrieval_scores(ranking, rel, k, wanted))
        rows.append(row)
    if judge is not None and any(m in JUDGED_METRICS for m in wanted):
        _judge_rows(rows, wanted, judge, progress)
    if gen_wanted:
        from ragworkbook.generation_metrics import generation_scores

        answers = [r["answer"] for r in rows]
        df = generation_scores(answers, [r["reference"] for r in rows], metrics=gen_wanted)
        for i, r in enumerate(rows):
            for m in gen_wanted:
                r["metrics"][m] = float(df[m].iloc[i])
    for r in rows:
        r["metrics"] = {m: r["metrics"].get(m) for m in wanted}
    info: dict[str, Any] = {"name": name, "k": k, "n_questions": len(rows),
                            "eval_set": getattr(eval_set, "name", "")}
    gen = getattr(pipeline, "generator", None)
    if gen is not None:
        info.update(backend=getattr(gen, "backend", ""), model=getattr(gen, "model", ""))
    retr = getattr(pipeline, "retriever", None)
    if retr is not None:
        info["retriever"] = type(retr).__name__
    if judge is not None:
        jg = getattr(judge, "generator", judge)
        info["judge"] = f"{getattr(jg, 'backend', '')}:{getattr(jg, 'model', '')}"
    info.update(meta or {})
    return Report(rows=rows, metrics=wanted, meta=info)


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------
def _split_names(values: Iterable[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for chunk in values for v in chunk.split(",") if v.strip()]


def build_retriever(kind: str, chunks: Sequence[Any]) -> Any:
    """``dense`` (MiniLM), ``bm25`` or ``hybrid`` (reciprocal-rank fusion of both) over ``chunks``."""
    from ragworkbook import retrievers as rt

    if kind == "dense":
        return rt.DenseRetriever(chunks)
    if kind == "bm25":
        return rt.BM25Retriever(chunks)
    if kind == "hybrid":
        return rt.HybridRetriever([rt.DenseRetriever(chunks), rt.BM25Retriever(chunks)])
    raise ValueError(f"unknown retriever {kind!r}: use dense, bm25 or hybrid")


def format_summary(report: Report) -> str:
    """The aggregates as a fixed-width table with the targets rating where one applies."""
    from ragworkbook.targets import apply_targets

    ratings = dict(zip(*[apply_targets(report)[c] for c in ("metric", "rating")], strict=True))
    lines = [f"{'metric':<22}{'mean':>9}  {'95% CI':<17}{'n':>4}{'failed':>8}  target"]
    for m, a in report.aggregates.items():
        ci = f"[{a.ci_low:.3f}, {a.ci_high:.3f}]" if a.n else "-"
        lines.append(f"{m:<22}{a.mean:>9.3f}  {ci:<17}{a.n:>4}{a.failures:>8}  {ratings.get(m, '')}")
    return "\n".join(lines)


def cli_eval(args: Any) -> int:
    """``ragworkbook eval``: run the naive RAG over an eval set, print the aggregates, save the report."""
    from ragworkbook.chunking import chunk_pages
    from ragworkbook.datasets import load_corpus, load_eval_set
    from ragworkbook.ground_truth import keyword_qrels

    eval_set = load_eval_set(args.eval_set)
    corpus = load_corpus(args.corpus)
    metrics = _split_names(args.metric)
    resolve_metrics(metrics, k=args.k, have_qrels=True, have_judge=bool(args.judge))  # fail fast
    if args.k <= 0:
        raise ValueError(f"--k must be a positive integer, got {args.k}")
    chunks = chunk_pages(corpus)
    qrels = keyword_qrels(chunks, eval_set)
    retriever = build_retriever(args.retriever, chunks)
    from ragworkbook.llm import get_generator
    from ragworkbook.pipeline import NaiveRAG

    generator = get_generator(backend=args.backend, model=args.model, recording=args.recording,
                              announce=not args.json)
    pipeline = NaiveRAG(retriever, generator, k=args.k)
    report = evaluate(pipeline, eval_set, qrels=qrels, k=args.k, judge=generator if args.judge else None,
                      metrics=metrics, progress=not args.no_progress, name=args.name,
                      meta={"retriever": args.retriever, "corpus": getattr(corpus, "title", "")})
    if args.out:
        report.save(args.out)
    if args.json:
        print(json.dumps({m: a.to_dict() for m, a in report.aggregates.items()}, indent=2))
    else:
        m = report.meta
        print(f"{len(report.rows)} questions, {m.get('backend', '?')}:{m.get('model', '?')}, "
              f"{args.retriever} retrieval, k={args.k}")
        print(format_summary(report))
        if args.out:
            print(f"report saved to {args.out}")
    return 0


def cli_compare(args: Any) -> int:
    """``ragworkbook compare A.json B.json``: paired tests per metric; exit 1 when B is
    significantly worse on a ``--fail-if-worse`` metric, 2 on bad input, else 0."""
    a = Report.load(args.report_a)
    b = Report.load(args.report_b)
    if getattr(args, "eval_set", None):
        from ragworkbook.datasets import load_eval_set

        es = load_eval_set(args.eval_set)
        for path, r in ((args.report_a, a), (args.report_b, b)):
            try:
                r.check_eval_set(es)
            except ValueError as exc:
                raise ValueError(f"{path}: {exc}") from None
    gate = _split_names(args.fail_if_worse) or []
    metrics = _split_names(args.metric)
    if metrics is not None:
        metrics += [m for m in gate if m not in metrics]
    cmp = compare_reports(a, b, metrics, alpha=args.alpha, method=args.method)
    worse = [m for m in gate if cmp.worse(m)]
    if args.json:
        out = {"a": str(args.report_a), "b": str(args.report_b), "alpha": args.alpha, "method": args.method,
               "metrics": _jsonable(json.loads(cmp.table.reset_index().to_json(orient="records"))),
               "failed_gates": worse}
        print(json.dumps(out, indent=2))
    else:
        print(f"A = {args.report_a}\nB = {args.report_b}\n"
              f"paired {args.method} test per metric, alpha = {args.alpha}, diff = B - A")
        print(cmp.table.to_string(float_format=lambda x: f"{x:.3f}"))
        for m in worse:
            print(f"REGRESSION: B is significantly worse than A on {m}", file=sys.stderr)
    return 1 if worse else 0
