"""What is known of a judge's reliability, carried beside the scores it produced.

A judged score is a measurement made with an instrument whose error is only
known if it was measured. A **reliability card** is a small dict that travels
with a judged metric in a :class:`~ragworkbook.evaluation.report.Report`
(``report.meta["judge_reliability"][metric]``):

- ``{"status": "unmeasured", "judge": "embedded:SmolLM2-..."}`` when nobody checked
  the judge (the default: evaluating with a judge says nothing about its quality);
- ``{"status": "measured", "judge", "model", "metric", "dataset", "n", "n_pairs",
  "kappa": {"value", "low", "high", "method", ...}, "pairwise_accuracy": ..., "agreement":
  ..., "baseline": {"name", "pairwise_accuracy", "difference", "p_value", "verdict"}}``
  from a :func:`ragworkbook.judging.check.judge_check` result
  (:meth:`~ragworkbook.judging.check.JudgeCheck.reliability`; ``ragworkbook judge-check
  --out FILE`` saves it, ``ragworkbook eval --judge-check FILE`` attaches it).

:func:`trusted` is the one rule the targets view and the regression gate apply. A
judged metric is rated (or gated) only when its card

1. is measured, on the same judge model that produced the scores;
2. was measured on at least :data:`~ragworkbook.judging.check.MIN_LABELLED_PAIRS`
   (30) labelled pairs scored on both items, so that luck cannot carry it (two pairs
   agree perfectly by chance one time in sixteen);
3. has a Cohen's kappa interval whose **lower bound** is above ``min_kappa``
   (default :data:`~ragworkbook.judging.check.RELIABILITY_MIN_KAPPA`, 0.6: the
   judge is then "substantial" or better on the Landis & Koch bands of
   :data:`ragworkbook.stats.agreement.KAPPA_BANDS`, with 95% confidence);
4. beats its data set's baseline: the judge-minus-baseline difference of pairwise
   accuracy has an interval above 0 (:mod:`ragworkbook.judging.baselines`).

Otherwise it says which condition failed, with the figures.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeAlias, runtime_checkable

from ragworkbook._types import JSON, JSONObject
from ragworkbook.judging.check_catalogue import MIN_LABELLED_PAIRS, RELIABILITY_MIN_KAPPA
from ragworkbook.metrics.registry import Metric, parse_metric

__all__ = ["UNMEASURED", "unmeasured", "card_metric", "cards_for", "trusted", "describe", "read_check"]

UNMEASURED = "unmeasured"


@runtime_checkable
class HasReliability(Protocol):
    """A measured judge-check (:class:`~ragworkbook.judging.check.JudgeCheck`): it gives its card."""

    def reliability(self) -> JSONObject: ...


#: What ``cards_for`` takes for one check: a judge-check result, or its JSON (a card, or the whole document).
CheckGiven: TypeAlias = HasReliability | Mapping[str, JSON]


def unmeasured(judge: str = "", model: str = "") -> JSONObject:
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


def _check_of(metric: str) -> str:
    """The ``judge-check`` data set that measures ``metric``'s judge (its spec's ``check``), or ''."""
    try:
        return parse_metric(card_metric(metric)).spec.check
    except ValueError:
        return ""


def _model_of(judge_name: str) -> str:
    """``SmolLM2-...`` from ``embedded:SmolLM2-... (replayed from x.json)``."""
    core = judge_name.split(" (", 1)[0]
    return core.split(":", 1)[1] if ":" in core else core


def read_check(path: str | Path) -> JSONObject:
    """A saved judge-check (``ragworkbook judge-check --out FILE``) as a card; ValueError naming the file
    when it is not one (missing, a folder, unreadable, not UTF-8 text, not JSON, nested too deeply,
    another document), and a pipe nothing writes to is an error, not a hang."""
    from ragworkbook.corpus.jsonfile import read_text

    p = Path(path)
    expected = "expected the file `ragworkbook judge-check --dataset NAME --out FILE` writes"
    try:
        text = read_text(p)
    except FileNotFoundError:
        raise ValueError(f"{p}: no such file (save a judge-check with `ragworkbook judge-check --dataset "
                         "NAME --out FILE`)") from None
    except (OSError, ValueError) as exc:  # a folder, unreadable, not UTF-8, a silent pipe: already named
        msg = str(exc)
        raise ValueError(msg if str(p) in msg else f"{p}: {msg}") from None
    if not text.strip():
        raise ValueError(f"{p}: the file is empty; {expected}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: not JSON ({exc.msg}, line {exc.lineno}); {expected}") from None
    except RecursionError:
        raise ValueError(f"{p}: not a judge-check result: JSON nested too deeply; {expected}") from None
    if not isinstance(doc, Mapping) or ("card" not in doc and not {"metric", "dataset"} <= set(doc)):
        raise ValueError(f"{p}: not a judge-check result (no 'card', 'metric' or 'dataset'); {expected}")
    try:
        return _from_mapping(doc)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{p}: not a judge-check result ({exc}); {expected}") from None


def cards_for(metrics: Iterable[Metric], checks: CheckGiven | Sequence[CheckGiven] | None, judge: str,
              model: str) -> dict[str, JSONObject]:
    """The card of every judged metric in ``metrics`` for a run judged by ``judge`` (``backend:model``).

    ``checks`` is None, a :class:`~ragworkbook.judging.check.JudgeCheck`, a card dict
    (``JudgeCheck.reliability()``, the JSON of ``judge-check --json`` or its ``--out`` file),
    or a list of them. A metric without a matching card is ``unmeasured``; a card measured
    on another model than ``model`` is kept but marked ``"other_judge"`` (not for metrics
    computed without an LLM, such as ``word_support``).
    """
    if checks is None:
        items: list[CheckGiven] = []
    elif isinstance(checks, (list, tuple)):
        items = list(checks)
    else:
        items = [checks]
    cards: dict[str, JSONObject] = {}
    for c in items:
        card = c.reliability() if isinstance(c, HasReliability) else _from_mapping(c)
        cards[str(card["metric"])] = card
    out = {}
    for m in metrics:
        kind = m.spec.derived_from or m.spec.name
        llm = m.spec.uses_judge  # a metric computed without an LLM: its card is its own, whoever judged
        card = cards.get(kind)
        if card is None:
            out[m.name] = unmeasured(judge if llm else f"deterministic:{kind}", model if llm else kind)
            continue
        card = dict(card)
        if llm and card.get("model") and model and card["model"] != model:
            card["status"] = "other_judge"
        out[m.name] = card
    return out


def _from_mapping(c: object) -> JSONObject:
    if not isinstance(c, Mapping):
        raise TypeError(f"a judge reliability is a JudgeCheck or its JSON (a dict), got {type(c).__name__}")
    if isinstance(c.get("card"), Mapping):
        return dict(c["card"])
    if c.get("status") in (UNMEASURED, "measured", "other_judge"):
        return dict(c)
    if "metric" not in c or "dataset" not in c:
        raise ValueError("a judge reliability dict needs 'metric' and 'dataset' (the JSON of "
                         "`ragworkbook judge-check --json`)")
    pa = c.get("pairwise_accuracy") or {}
    card = {"status": "measured", "judge": c.get("judge", ""), "model": c.get("model") or _model_of(
        str(c.get("judge", ""))), "metric": c["metric"], "dataset": c["dataset"], "n": c.get("n"),
        "n_pairs": pa.get("n", 0) if isinstance(pa, Mapping) else 0, "failures": c.get("failures")}
    for key in ("kappa", "agreement", "pairwise_accuracy"):
        if key in c:
            card[key] = c[key]
    if isinstance(c.get("baseline"), Mapping):
        card["baseline"] = {k: c["baseline"].get(k) for k in ("name", "pairwise_accuracy", "difference",
                                                                "p_value", "verdict")}
    return card


def _finite(x: JSON) -> float | None:
    if x is None or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def trusted(card: Mapping[str, JSON] | None, min_kappa: float = RELIABILITY_MIN_KAPPA,
            min_pairs: int = MIN_LABELLED_PAIRS) -> tuple[bool, str]:
    """Whether a judged metric with this card may be rated or gated, and if not, why (one sentence).

    The four conditions are in the module docstring: measured on the same judge, at least
    ``min_pairs`` labelled pairs, the kappa interval's lower bound above ``min_kappa``, and a
    judge-minus-baseline difference whose interval lies above 0."""
    if card is None or card.get("status", UNMEASURED) == UNMEASURED:
        metric = (card or {}).get("metric", "")
        hint = _check_of(metric) if metric else ""
        return False, ("judge reliability unmeasured: nobody checked this judge against labelled data "
                       f"(`ragworkbook judge-check --dataset {hint or 'NAME'} --out FILE`, then "
                       "`eval --judge-check FILE`), so its score is not rated")
    if card.get("status") == "other_judge":
        return False, (f"judge reliability was measured on another judge ({card.get('judge')}), not on "
                       "the one that produced this score; not rated")
    where = card.get("dataset")
    pairs = card.get("n_pairs")
    if pairs is None:
        pairs = (card.get("pairwise_accuracy") or {}).get("n") or 0
    if int(pairs) < min_pairs:
        return False, (f"too few labelled pairs to trust the judge: {int(pairs)} scored pairs on {where}, "
                       f"fewer than {min_pairs} (with so few, agreement can be perfect by luck); not rated")
    k = card.get("kappa") or {}
    value, low = _finite(k.get("value")), _finite(k.get("low"))
    if value is None or low is None:
        why = "too few items" if k.get("note") else "undefined"
        return False, f"the judge's kappa on {where} is {why}; not rated"
    if low <= min_kappa:
        return False, (f"judge agreement not shown high enough to rate: Cohen's kappa {value:.2f} "
                       f"[{low:.2f}, {_finite(k.get('high')) or 0:.2f}] on {where} "
                       f"(n = {card.get('n')} pairs); "
                       f"its lower bound must be above {min_kappa:.2f}")
    base = card.get("baseline")
    if not isinstance(base, Mapping) or not isinstance(base.get("difference"), Mapping):
        return False, (f"no baseline comparison in the judge's card ({where}): re-run `ragworkbook "
                       "judge-check` so that the card says whether the judge beats its baseline; not rated")
    d = base["difference"]
    d_value, d_low = _finite(d.get("value")), _finite(d.get("low"))
    if d_value is None or d_low is None or d_low <= 0:
        shown = "n/a" if d_value is None else f"{d_value:+.2f}"
        interval = "" if d_low is None else f" [{d_low:+.2f}, {(_finite(d.get('high')) or 0):+.2f}]"
        return False, (f"the judge is not shown better than its baseline ({base.get('name')}): pairwise "
                       f"accuracy difference {shown}{interval} on {where}; not rated")
    return True, ""


def describe(card: Mapping[str, JSON] | None) -> str:
    """One line for a table: ``kappa 0.12 [-0.20, 0.41], pairwise accuracy 0.44 (baseline word overlap
    0.95), wikieval-faithfulness, n = 30`` or ``unmeasured``."""
    if card is None:
        return ""
    status = card.get("status", UNMEASURED)
    if status == UNMEASURED:
        return "unmeasured"
    k = card.get("kappa") or {}
    if k.get("value") is None:
        text = "kappa too few" if k.get("note") else "kappa n/a"
    elif k.get("low") is None:
        text = f"kappa {k['value']:.2f}"
    else:
        text = f"kappa {k['value']:.2f} [{k['low']:.2f}, {k['high']:.2f}]"
    pa = card.get("pairwise_accuracy") or {}
    if pa.get("value") is not None:
        text += f", pairwise accuracy {pa['value']:.2f}"
        base = card.get("baseline") or {}
        bpa = (base.get("pairwise_accuracy") or {}).get("value")
        if bpa is not None:
            text += f" (baseline {base.get('name')} {bpa:.2f})"
    text += f" ({card.get('dataset')}, n = {card.get('n')})"
    return text + (" - measured on another judge" if status == "other_judge" else "")
