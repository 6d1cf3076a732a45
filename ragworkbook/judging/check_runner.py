"""Run a judge-check: judge a labelled data set of the catalogue
(:mod:`ragworkbook.judging.check_catalogue`), lay what was observed out as one table of labels,
verdicts and pair choices (:class:`~ragworkbook.stats.judge_table.JudgeTable`), and compute every
figure with one call to :func:`ragworkbook.stats.judge_table.judge_statistics`; the result, a
:class:`~ragworkbook.judging.check_report.JudgeCheck`, prints itself. What is measured:
:mod:`ragworkbook.judging.check`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ragworkbook.judging.check_catalogue import (
    WORD_SUPPORT,
    WORD_SUPPORT_THRESHOLD,
    DatasetSpec,
    resolve_dataset,
)
from ragworkbook.judging.check_report import (
    JudgeCheck,
    failure_reasons,
    judge_name,
    ragchecker_figures,
    wikieval_figures,
)
from ragworkbook.judging.judge import Judge
from ragworkbook.outcomes import FAILED, SCORED, UNDEFINED
from ragworkbook.stats.judge_table import JudgeTable, PairChoice, Rating, judge_statistics

__all__ = ["judge_check", "judge_name"]

if TYPE_CHECKING:
    from ragworkbook.judging.baselines import Embed


def _check_wikieval(spec: DatasetSpec, judge: Judge | str, limit: int | None, threshold: float, repeats: int,
                    temperature: float, consistency_items: int, progress: bool, n_resamples: int,
                    seed: int, embed: Embed | None) -> JudgeCheck:
    from ragworkbook.judging.baselines import BASELINES, wikieval_baseline_scores
    from ragworkbook.judging.datasets import load_wikieval
    from ragworkbook.judging.metrics import evaluate_judged

    assert spec.wikieval_set is not None
    llm = None if isinstance(judge, str) else judge
    metric = "word_support" if llm is None else spec.metric
    data = load_wikieval(spec.wikieval_set)
    pairs = data.pairs[:limit] if limit else list(data.pairs)
    samples = [s for p in pairs for s in p.samples()]
    results = evaluate_judged(samples, llm, [metric], progress=progress).results[metric]
    k = min(consistency_items, len(pairs)) if llm is not None else 0
    runs = ([evaluate_judged(samples[: 2 * k], j, [metric], progress=progress).results[metric]
             for j in llm.repeats(repeats, temperature)] if repeats >= 2 and k and llm is not None else [])
    base_scores = wikieval_baseline_scores(spec.name, pairs, embed)
    baseline = BASELINES[spec.name]

    by_id = {r.sample_id: r for r in results}
    detail = []
    for p, base in zip(pairs, base_scores, strict=True):
        g, b = by_id[f"{p.id}-good"], by_id[f"{p.id}-bad"]
        row = {"id": p.id, "good": g.score, "bad": b.score, "good_outcome": g.outcome,
               "bad_outcome": b.outcome, "good_reason": g.reason, "bad_reason": b.reason}
        if llm is None:
            row["good_unsupported"] = g.detail.get("unsupported", [])
            row["bad_unsupported"] = b.detail.get("unsupported", [])
        detail.append(row | {"baseline": list(base)})
    scored = {r.sample_id: r.score if r.outcome == SCORED else None for r in results}
    table = JudgeTable(
        ratings=tuple(Rating(p.id, label, int(float(s) >= threshold))
                      for p in pairs for label, s in ((1, scored[f"{p.id}-good"]), (0, scored[f"{p.id}-bad"]))
                      if s is not None),
        pairs=tuple(PairChoice.from_scores(p.id, (scored[f"{p.id}-good"], scored[f"{p.id}-bad"]), base)
                    for p, base in zip(pairs, base_scores, strict=True)),
        categories=(0, 1), positive=1, negative=0,
        repeats=tuple(tuple(int(float(o.score) >= threshold) if o.outcome == SCORED else None for o in run)
                      for run in runs),
        flags={"parse_failure": [r.outcome == FAILED for r in results]})
    st = judge_statistics(table, n_resamples=n_resamples, seed=seed)
    return JudgeCheck(
        dataset=spec.name, metric=metric, judge=judge_name(judge), n=len(pairs), n_available=len(data),
        failures=sum(r.outcome == FAILED for r in results), failure_reasons=failure_reasons(results),
        judgments=len(results), undefined=sum(r.outcome == UNDEFINED for r in results),
        stats=wikieval_figures(st, (baseline.name, baseline.definition), repeats, temperature, k),
        pairs=detail,
        settings={"limit": limit, "threshold": threshold, "ties": "half",
                  "repeats": 0 if llm is None else repeats, "temperature": temperature,
                  "consistency_items": k, "n_resamples": n_resamples,
                  "seed": seed, "deterministic": llm is None, "truth": "construction labels"},
        documented=spec.documented, description=spec.description,
        model=metric if llm is None else llm.generator.model)


def _check_ragchecker(spec: DatasetSpec, judge: Judge, limit: int | None, aspect: str, repeats: int,
                      temperature: float, consistency_items: int, progress: bool, n_resamples: int,
                      seed: int) -> JudgeCheck:
    from ragworkbook.judging.baselines import BASELINES, ragchecker_verdicts
    from ragworkbook.judging.datasets import ASPECTS, load_ragchecker, round_robin
    from ragworkbook.judging.pairwise import pairwise_many

    if aspect not in ASPECTS:
        raise ValueError(f"unknown aspect {aspect!r}; RAGChecker's annotators labelled: {', '.join(ASPECTS)}")
    data = load_ragchecker(predictions=False)
    ordered = round_robin(data.pairs)
    pairs = ordered[:limit] if limit else ordered
    inputs = [p.pairwise_input() for p in pairs]
    prefs = [p.preferences(aspect) for p in pairs]
    results = pairwise_many(inputs, judge, progress=progress)
    k = min(consistency_items, len(pairs))
    runs = ([pairwise_many(inputs[:k], rj, progress=progress) for rj in judge.repeats(repeats, temperature)]
            if repeats >= 2 and k else [])
    base_v = ragchecker_verdicts(pairs)
    baseline = BASELINES[spec.name]

    j = [r.verdict for r in results]  # None = failed
    chosen = [c for r in results for c in r.first_shown_chosen]
    table = JudgeTable(
        ratings=tuple(Rating(p.id, h, j[i], str(n + 1), base_v[i])
                      for i, p in enumerate(pairs) for n, h in enumerate(prefs[i])),
        # pairs both annotators decide the same way: the RAGAS-style pairwise accuracy
        pairs=tuple(PairChoice(p.id, h1, j[i], base_v[i]) for i, (p, (h1, h2)) in enumerate(zip(pairs, prefs,
                                                                                                 strict=True))
                    if h1 == h2 and h1 != "tie"),
        categories=("A", "tie", "B"), preference=("A", "B"),
        repeats=tuple(tuple(r.verdict for r in run) for run in runs),
        flags={"parse_failure": [not c.ok for r in results for c in r.calls],
               "inconsistent": [v == "inconsistent" for v in j if v is not None],
               "first_shown": chosen, "win_b": [v == "B" for v in j if v in ("A", "B")]})
    st = judge_statistics(table, n_resamples=n_resamples, seed=seed)
    detail = [{"id": p.id, "dataset": p.dataset, "forward": r.forward, "backward": r.backward,
               "verdict": r.verdict, "outcome": r.outcome, "annotators": list(prefs[i]),
               "labels": list(p.labels[aspect]), "baseline": base_v[i]}
              for i, (p, r) in enumerate(zip(pairs, results, strict=True))]
    return JudgeCheck(
        dataset=spec.name, metric="pairwise", judge=judge_name(judge), n=len(pairs), n_available=len(data),
        failures=sum(r.outcome == FAILED for r in results), failure_reasons=failure_reasons(results),
        judgments=len(results),
        stats=ragchecker_figures(st, (baseline.name, baseline.definition), j, chosen, repeats, temperature,
                                 k),
        pairs=detail,
        settings={"limit": limit, "aspect": aspect, "order": "round-robin over the source data sets",
                  "repeats": repeats, "temperature": temperature, "consistency_items": k,
                  "n_resamples": n_resamples, "seed": seed, "deterministic": False},
        documented=None, description=spec.description + f" (aspect: {aspect})", model=judge.generator.model)


def _check_threshold(threshold: float | None) -> float | None:
    if threshold is None:
        return None
    if isinstance(threshold, bool):
        raise ValueError(f"threshold must be a score between 0 and 1, got {threshold!r}")
    t = float(threshold)
    if math.isnan(t) or not 0.0 <= t <= 1.0:
        raise ValueError("threshold must be a score between 0 and 1 (an item is judged good at or above "
                         f"it), got {threshold!r}")
    return t


def judge_check(dataset: str, judge: Judge | str, *, limit: int | None | str = "default",
                threshold: float | None = None, aspect: str = "overall", repeats: int = 2,
                temperature: float = 0.8, consistency_items: int | None = None, progress: bool = False,
                n_resamples: int = 2000, seed: int = 0, embed: Embed | None = None) -> JudgeCheck:
    """Measure ``judge`` on a labelled data set (see the module docstring).

    ``judge``: a :class:`~ragworkbook.judging.judge.Judge`, or ``"word-support"`` (the deterministic
    word support, faithfulness pairs only: every pair by default, no repeats).
    ``limit``: pairs to judge (``"default"``: the data set's default; None or 0: all);
    ``threshold``: score in [0, 1] at or above which a WikiEval item is judged good (default:
    the data set's); ``aspect``: which RAGChecker label to compare with; ``repeats`` and
    ``temperature``: the self-consistency runs (``repeats < 2``: none), on the first
    ``consistency_items`` pairs (default: the data set's); ``embed``: texts -> vectors for the
    MiniLM baselines (default: the local MiniLM).
    """
    spec = resolve_dataset(dataset)
    deterministic = isinstance(judge, str)
    if deterministic and judge != WORD_SUPPORT:
        raise ValueError(f"unknown judge {judge!r}: pass a Judge, or {WORD_SUPPORT!r}")
    if deterministic and spec.name != "wikieval-faithfulness":
        raise ValueError(f"{WORD_SUPPORT} measures faithfulness (the words of an answer found in its "
                         "context): use it on wikieval-faithfulness")
    if limit == "default":
        limit = None if deterministic else spec.default_limit
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative number of pairs (0 = all), got {limit!r}")
    limit = limit or None
    th = _check_threshold(threshold)
    if repeats < 0:
        raise ValueError(f"repeats must be >= 0, got {repeats}")
    if not temperature > 0 and repeats >= 2 and not deterministic:
        raise ValueError(f"self-consistency needs a temperature above 0 (got {temperature}): at temperature "
                         "0 the repeats are identical by construction")
    k = spec.consistency_items if consistency_items is None else consistency_items
    if spec.source == "wikieval":
        default = WORD_SUPPORT_THRESHOLD if deterministic else spec.threshold
        return _check_wikieval(spec, judge, limit, float(default if th is None else th), repeats, temperature,
                               k, progress, n_resamples, seed, embed)
    return _check_ragchecker(spec, judge, limit, aspect, repeats, temperature, k,  # type: ignore[arg-type]
                             progress, n_resamples, seed)
