"""One vocabulary for what happened to a score: scored, failed or undefined.

Every per-question value in the package — a judged metric from the judge, a
row of a report, a pair in the comparison gate — has one of three outcomes:

- ``scored``: there is a number (possibly a special case with a reason, such
  as answer relevancy 0.0 because the answer is ``"noncommittal"``);
- ``failed``: the computation was attempted and broke (the judge's output did
  not parse, a request timed out, the generator failed); ``reason`` is a short
  code (``"output_parse_error"``, ``"timeout"``, ``"llm_error"``...) and
  ``message`` the full error;
- ``undefined``: the metric has no value for this input by definition (an
  answer without claims has no faithfulness, an empty reference no context
  recall); ``reason`` names the case (``"no_claims"``, ``"empty_reference"``).

Neither a failed nor an undefined value is ever a silent NaN or silently left
out: :class:`Aggregate` counts both beside the mean of the scored values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragworkbook._types import JSON, JSONObject

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.stats.resampling import ConfidenceInterval

__all__ = ["SCORED", "FAILED", "UNDEFINED", "OUTCOMES", "Unscored", "Aggregate", "aggregate"]

SCORED = "scored"
FAILED = "failed"
UNDEFINED = "undefined"
OUTCOMES = (SCORED, FAILED, UNDEFINED)


@dataclass(frozen=True)
class Unscored:
    """Why a value is missing: ``outcome`` (failed or undefined), a short ``reason`` code and
    the full ``message`` (for a failure: the error)."""

    outcome: str
    reason: str
    message: str = ""

    def __post_init__(self) -> None:
        if self.outcome not in (FAILED, UNDEFINED):
            raise ValueError(f"an unscored value is {FAILED!r} or {UNDEFINED!r}, got {self.outcome!r}")

    def to_dict(self) -> dict[str, str]:
        """``{"outcome", "reason", "message"}`` (the form stored in a report row)."""
        return {"outcome": self.outcome, "reason": self.reason, "message": self.message}

    @classmethod
    def from_dict(cls, d: JSON, where: str = "") -> Unscored:
        """Read the stored form back; ValueError naming ``where`` when it is malformed."""
        if not isinstance(d, dict) or not isinstance(d.get("outcome"), str) or not isinstance(
                d.get("reason"), str):
            raise ValueError(f"{where}: an unscored entry must be an object with string 'outcome' and "
                             f"'reason', got {d!r:.80}")
        return cls(d["outcome"], d["reason"], str(d.get("message", "")))

    def __str__(self) -> str:
        return f"{self.outcome} ({self.reason}{': ' + self.message if self.message else ''})"


@dataclass(frozen=True)
class Aggregate:
    """A metric over a set of items: the mean of the scored values and what was not scored.

    ``ci`` is the mean over the ``n`` scored items with its bootstrap confidence
    interval (read as ``mean``, ``ci_low``/``ci_high``, ``n``, ``confidence``:
    default 95%; zero width for one value; NaN when nothing was scored).
    ``failed`` and ``undefined`` count the other items, never averaged in.
    ``total = n + failed + undefined``.
    """

    ci: ConfidenceInterval
    failed: int = 0
    undefined: int = 0

    @property
    def mean(self) -> float:
        return self.ci.mean

    @property
    def ci_low(self) -> float:
        return self.ci.low

    @property
    def ci_high(self) -> float:
        return self.ci.high

    @property
    def n(self) -> int:
        return self.ci.n

    @property
    def confidence(self) -> float:
        return self.ci.confidence

    @property
    def total(self) -> int:
        """Every item: scored, failed and undefined."""
        return self.n + self.failed + self.undefined

    def to_dict(self) -> JSONObject:
        """JSON-ready form; NaN numbers become None."""
        return {"mean": _num_or_none(self.mean), "ci_low": _num_or_none(self.ci_low),
                "ci_high": _num_or_none(self.ci_high), "n": self.n, "failed": self.failed,
                "undefined": self.undefined, "confidence": self.confidence}

    def __str__(self) -> str:
        m = "n/a" if math.isnan(self.mean) else f"{self.mean:.3f}"
        return f"{m} over {self.n}/{self.total} ({self.failed} failed, {self.undefined} undefined)"


def _num_or_none(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def aggregate(values: Sequence[float | None], outcomes: Sequence[str | None] | None = None, *,
              confidence: float = 0.95, seed: int = 0) -> Aggregate:
    """Aggregate per-item values: the mean (with a bootstrap CI) of the scored ones, the rest counted.

    ``values[i]`` is a number or None; ``outcomes[i]`` says what a None is
    (``"failed"`` or ``"undefined"``). Without ``outcomes`` a None counts as
    failed (never hidden). A NaN value is a bug and raises ValueError, as does
    a None marked ``"scored"``. The interval is
    :func:`ragworkbook.stats.resampling.bootstrap_ci` over the scored values.
    """
    if outcomes is not None and len(outcomes) != len(values):
        raise ValueError(f"{len(values)} values but {len(outcomes)} outcomes")
    scored: list[float] = []
    failed = undefined = 0
    for i, v in enumerate(values):
        outcome = outcomes[i] if outcomes is not None else None
        if v is None:
            if outcome == SCORED:
                raise ValueError(f"item {i} is marked scored but has no value")
            if outcome == UNDEFINED:
                undefined += 1
            else:
                failed += 1
            continue
        x = float(v)
        if math.isnan(x):
            raise ValueError(f"item {i} has a NaN value: a missing value must be None with its outcome")
        scored.append(x)
    from ragworkbook.stats.resampling import ConfidenceInterval, bootstrap_ci

    if not scored:
        nan = float("nan")
        return Aggregate(ConfidenceInterval(nan, nan, nan, 0, confidence), failed, undefined)
    return Aggregate(bootstrap_ci(scored, confidence=confidence, seed=seed), failed, undefined)
