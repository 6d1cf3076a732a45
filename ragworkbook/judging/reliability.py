"""What is known of a judge's reliability, carried beside the scores it produced.

A judged score is a measurement made with an instrument whose error is only
known if it was measured. A **reliability card** is a small dict that travels
with a judged metric in a :class:`~ragworkbook.evaluation.report.Report`
(``report.meta["judge_reliability"][metric]``):

- ``{"status": "unmeasured", "judge": "embedded:SmolLM2-..."}`` when nobody checked
  the judge (the default: evaluating with a judge says nothing about its quality);
- ``{"status": "measured", "judge", "model", "metric", "dataset", "n", "kappa":
  {"value", "low", "high", ...}, "pairwise_accuracy": ..., "agreement": ...}``
  from a :func:`ragworkbook.judging.check.judge_check` result
  (:meth:`~ragworkbook.judging.check.JudgeCheck.reliability`).

:func:`trusted` is the one rule the targets view and the regression gate apply:
a judged metric is rated (or gated) only when its card is measured, was measured
on the same judge model, and its Cohen's kappa against the human labels is at
least ``min_kappa`` (default :data:`~ragworkbook.judging.check.RELIABILITY_MIN_KAPPA`,
0.6: "substantial" agreement). Otherwise it says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ragworkbook.judging.check import RELIABILITY_MIN_KAPPA, resolve_dataset
from ragworkbook.metrics.registry import parse_metric

__all__ = ["UNMEASURED", "unmeasured", "card_metric", "cards_for", "trusted", "describe"]

UNMEASURED = "unmeasured"

#: The data set that measures each judged metric (what ``judge-check`` to run).
CHECKS = {"faithfulness": "wikieval-faithfulness", "answer_relevancy": "wikieval-answer-relevance",
          "context_relevance": "wikieval-context-relevance"}


def unmeasured(judge: str = "", model: str = "") -> dict[str, Any]:
    """The card of a judge nobody measured."""
    return {"status": UNMEASURED, "judge": judge, "model": model}


def card_metric(metric: str) -> str:
    """The metric whose judge-check applies to ``metric``: the one whose judgments it is derived from
    (the registry's ``derived_from``: ``hallucination`` -> ``faithfulness``), else itself (aliases
    resolved: ``groundedness`` -> ``faithfulness``)."""
    try:
        spec = parse_metric(metric).spec
    except ValueError:
        return metric
    return spec.derived_from or spec.name


def _model_of(judge_name: str) -> str:
    """``SmolLM2-...`` from ``embedded:SmolLM2-... (replayed from x.json)``."""
    core = judge_name.split(" (", 1)[0]
    return core.split(":", 1)[1] if ":" in core else core


def cards_for(metrics: Iterable[str], checks: Any, judge: str, model: str) -> dict[str, dict[str, Any]]:
    """The card of every judged metric in ``metrics`` for a run judged by ``judge`` (``backend:model``).

    ``checks`` is None, a :class:`~ragworkbook.judging.check.JudgeCheck`, a card dict
    (``JudgeCheck.reliability()`` or the JSON of ``judge-check --json``), or a list of
    them. A metric without a matching card is ``unmeasured``; a card measured on
    another model than ``model`` is kept but marked ``"other_judge"``.
    """
    if checks is None:
        items: list[Any] = []
    elif isinstance(checks, (list, tuple)):
        items = list(checks)
    else:
        items = [checks]
    cards: dict[str, dict[str, Any]] = {}
    for c in items:
        card = c.reliability() if hasattr(c, "reliability") else _from_mapping(c)
        cards[card["metric"]] = card
    out = {}
    for m in metrics:
        card = cards.get(card_metric(m))
        if card is None:
            out[m] = unmeasured(judge, model)
            continue
        card = dict(card)
        if card.get("model") and model and card["model"] != model:
            card["status"] = "other_judge"
        out[m] = card
    return out


def _from_mapping(c: Any) -> dict[str, Any]:
    if not isinstance(c, Mapping):
        raise TypeError(f"a judge reliability is a JudgeCheck or its JSON (a dict), got {type(c).__name__}")
    if c.get("status") in (UNMEASURED, "measured", "other_judge"):
        return dict(c)
    if "metric" not in c or "dataset" not in c:
        raise ValueError("a judge reliability dict needs 'metric' and 'dataset' (the JSON of "
                         "`ragworkbook judge-check --json`)")
    card = {"status": "measured", "judge": c.get("judge", ""), "model": c.get("model") or _model_of(
        str(c.get("judge", ""))), "metric": c["metric"], "dataset": c["dataset"], "n": c.get("n"),
        "failures": c.get("failures")}
    for key in ("kappa", "agreement", "pairwise_accuracy"):
        if key in c:
            card[key] = c[key]
    return card


def trusted(card: Mapping[str, Any] | None, min_kappa: float = RELIABILITY_MIN_KAPPA) -> tuple[bool, str]:
    """Whether a judged metric with this card may be rated or gated, and if not, why (one sentence)."""
    if card is None or card.get("status", UNMEASURED) == UNMEASURED:
        metric = (card or {}).get("metric", "")
        hint = CHECKS.get(card_metric(metric), "") if metric else ""
        return False, ("judge reliability unmeasured: nobody checked this judge against human labels "
                       f"(`ragworkbook judge-check --dataset {hint or 'NAME'}`), so its score is not rated")
    if card.get("status") == "other_judge":
        return False, (f"judge reliability was measured on another judge ({card.get('judge')}), not on "
                       "the one that produced this score; not rated")
    kappa = (card.get("kappa") or {}).get("value")
    if kappa is None:
        return False, f"the judge's kappa on {card.get('dataset')} is undefined; not rated"
    if kappa < min_kappa:
        return False, (f"judge agreement too low to rate: Cohen's kappa {kappa:.2f} on {card.get('dataset')} "
                       f"(n = {card.get('n')}) is below {min_kappa:.2f}")
    return True, ""


def describe(card: Mapping[str, Any] | None) -> str:
    """One line for a table: ``kappa 0.12 [-0.20, 0.41], wikieval-faithfulness, n = 50`` or ``unmeasured``."""
    if card is None:
        return ""
    status = card.get("status", UNMEASURED)
    if status == UNMEASURED:
        return "unmeasured"
    k = card.get("kappa") or {}
    if k.get("value") is None:
        text = "kappa n/a"
    elif k.get("low") is None:
        text = f"kappa {k['value']:.2f}"
    else:
        text = f"kappa {k['value']:.2f} [{k['low']:.2f}, {k['high']:.2f}]"
    pa = card.get("pairwise_accuracy") or {}
    if pa.get("value") is not None:
        text += f", pairwise accuracy {pa['value']:.2f}"
    text += f" ({card.get('dataset')}, n = {card.get('n')})"
    return text + (" - measured on another judge" if status == "other_judge" else "")


def check_name(metric: str) -> str:
    """The ``judge-check`` data set that measures ``metric`` ('' when none does)."""
    name = CHECKS.get(card_metric(metric), "")
    return resolve_dataset(name).name if name else ""
