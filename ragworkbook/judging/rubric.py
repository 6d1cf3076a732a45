"""Rubric metrics: your own judged metric, declared as data (G-Eval style).

A :class:`Rubric` is a name, a criterion in plain words ("how well the answer cites
its sources"), an integer score scale (``1..5``), the evidence the judge reads
(any of the question, the answer, the retrieved contexts, the reference answer)
and, optionally, the evaluation steps the judge follows (G-Eval, Liu et al. 2023,
arXiv:2303.16634: criterion, then steps, then the score). :func:`rubric_metric`
turns it into a :class:`~ragworkbook.metrics.registry.MetricSpec` like any other
judged metric's; :func:`register_rubric` adds it to the registry, after which
``evaluate``, ``ragworkbook eval --metric NAME``, the saved report, ``compare``,
the ledger and ``judge-check --labels`` all find it by name.

The judge answers one JSON object, ``{"score": int, "reason": str}``, constrained by
a schema whose ``score`` is an integer of the scale. The metric's value is the score
**normalised to [0, 1]**: ``(score - low) / (high - low)``, so it sits beside every
other metric of the report on one scale; the score as the judge gave it is kept in
the result's ``detail["rating"]``. A sample missing a piece of its evidence (an
empty answer, no contexts, no reference) is undefined, with the reason
``"empty_<field>"``, never scored.

A rubric file (``eval --rubric FILE``, ``judge-check --rubric FILE``) is a JSON
object with these keys: ``name``, ``criterion``, and optionally ``scale``
(``[low, high]``, default ``[1, 5]``), ``evidence`` (default
``["question", "answer"]``), ``steps`` (a list of strings) and ``title``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragworkbook._types import JSON, JSONObject
from ragworkbook.judging.judge import Judge
from ragworkbook.judging.results import JudgedResult, JudgeSample, failed, scored, undefined
from ragworkbook.metrics.registry import REGISTRY, MetricSpec, register

__all__ = ["EVIDENCE", "Rubric", "rubric_prompt", "rubric_schema", "rubric_metric", "register_rubric",
           "load_rubric", "rubric_from_dict"]

#: The evidence a rubric may show the judge, in the order the prompt shows it.
EVIDENCE = ("question", "contexts", "reference", "answer")
_LABELS = {"question": "Question", "contexts": "Context", "reference": "Reference answer",
           "answer": "Answer"}
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_MAX_REASON = 200


@dataclass(frozen=True)
class Rubric:
    """A judged metric declared as data (see the module docstring).

    ``name``: the metric's name (lower case, letters, digits, underscores); ``criterion``:
    what the judge scores, in plain words; ``scale``: the integer scores ``(low, high)``, the
    higher the better; ``evidence``: the fields the judge reads (:data:`EVIDENCE`); ``steps``:
    the evaluation steps the judge is told to follow; ``title``: the name as printed.
    """

    name: str
    criterion: str
    scale: tuple[int, int] = (1, 5)
    evidence: tuple[str, ...] = ("question", "answer")
    steps: tuple[str, ...] = ()
    title: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(f"rubric name {self.name!r}: use lower-case letters, digits and underscores, "
                             "starting with a letter (e.g. 'cites_sources')")
        if not isinstance(self.criterion, str) or not self.criterion.strip():
            raise ValueError(f"rubric {self.name!r}: criterion is empty; say in plain words what the judge "
                             "scores, e.g. 'how well the answer cites its sources'")
        scale = tuple(self.scale)
        if (len(scale) != 2 or any(isinstance(x, bool) or not isinstance(x, int) for x in scale)
                or not scale[0] < scale[1]):
            raise ValueError(f"rubric {self.name!r}: scale must be two whole numbers [low, high] with "
                             f"low < high, e.g. [1, 5]; got {list(self.scale)!r}")
        if scale[1] - scale[0] > 100:
            raise ValueError(f"rubric {self.name!r}: scale {list(scale)} has more than 101 scores; a judge "
                             "cannot use so many (use e.g. [1, 5] or [0, 10])")
        evidence = tuple(self.evidence) if not isinstance(self.evidence, str) else (self.evidence,)
        unknown = [e for e in evidence if e not in EVIDENCE]
        if unknown or not evidence:
            raise ValueError(f"rubric {self.name!r}: evidence {list(evidence)!r} is not a non-empty list of "
                             f"{', '.join(EVIDENCE)}")
        if "answer" not in evidence and "contexts" not in evidence:
            raise ValueError(f"rubric {self.name!r}: evidence must include the answer or the contexts "
                             "(what else would the judge score?)")
        if isinstance(self.steps, str) or not all(isinstance(s, str) and s.strip() for s in self.steps):
            raise ValueError(f"rubric {self.name!r}: steps must be a list of non-empty strings")
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "evidence", tuple(e for e in EVIDENCE if e in evidence))
        object.__setattr__(self, "steps", tuple(s.strip() for s in self.steps))
        object.__setattr__(self, "criterion", self.criterion.strip())

    @property
    def low(self) -> int:
        return self.scale[0]

    @property
    def high(self) -> int:
        return self.scale[1]

    def normalise(self, rating: float) -> float:
        """A score of the scale mapped to [0, 1]: ``(rating - low) / (high - low)``."""
        return (float(rating) - self.low) / (self.high - self.low)

    def to_dict(self) -> JSONObject:
        """The rubric as a rubric file holds it."""
        return {"name": self.name, "criterion": self.criterion, "scale": list(self.scale),
                "evidence": list(self.evidence), "steps": list(self.steps), "title": self.title}


def rubric_schema(rubric: Rubric) -> JSONObject:
    """The judge's answer: ``{"score": int in the scale, "reason": str}`` (the score first, the reason
    capped, so a small model cannot spend its tokens on the reason and leave the JSON unfinished)."""
    return {"type": "object",
            "properties": {"score": {"type": "integer", "enum": list(range(rubric.low, rubric.high + 1))},
                           "reason": {"type": "string", "maxLength": _MAX_REASON}},
            "required": ["score", "reason"]}


def _evidence_text(field: str, sample: JudgeSample) -> str:
    if field == "contexts":
        return "\n".join(f"[{i}] {c}" for i, c in enumerate(sample.contexts, 1))
    return str(getattr(sample, field) or "")


def rubric_prompt(rubric: Rubric, sample: JudgeSample) -> str:
    """What the judge is asked: the criterion, the steps, the scale, then the evidence (one labelled
    field each, in :data:`EVIDENCE` order)."""
    steps = rubric.steps or ("Read the evidence below.",
                             "Decide how well it meets the criterion.",
                             f"Give a whole-number score from {rubric.low} to {rubric.high}.")
    lines = [f"Score the evidence below on this criterion: {rubric.criterion}",
             f"The score is a whole number from {rubric.low} (does not meet the criterion at all) to "
             f"{rubric.high} (meets it fully).", "", "Evaluation steps:"]
    lines += [f"{i}. {s}" for i, s in enumerate(steps, 1)]
    lines.append("")
    for f in rubric.evidence:
        text = _evidence_text(f, sample)
        lines += [f"{_LABELS[f]}:\n{text}" if f == "contexts" else f"{_LABELS[f]}: {text}", ""]
    lines += ["Reply in JSON with the keys \"score\" (a whole number) and \"reason\" (one short "
              "sentence)."]
    return "\n".join(lines)


def rubric_metric(name: str | Rubric, criterion: str = "", scale: Sequence[int] = (1, 5),
                  evidence: Sequence[str] = ("question", "answer"), steps: Sequence[str] = (),
                  title: str = "") -> MetricSpec:
    """The :class:`~ragworkbook.metrics.registry.MetricSpec` of a rubric metric (a :class:`Rubric`, or
    its fields): a judged metric whose implementation asks the judge one question per sample
    (:func:`rubric_prompt`, :func:`rubric_schema`) and scores ``(rating - low) / (high - low)``.
    Not registered: pass it to :func:`~ragworkbook.metrics.registry.register` (or use
    :func:`register_rubric`)."""
    rubric = name if isinstance(name, Rubric) else Rubric(name, criterion, tuple(scale), tuple(evidence),
                                                          tuple(steps), title)
    m = rubric.name

    async def impl(sample: JudgeSample, judge: Judge) -> JudgedResult:
        for f in rubric.evidence:
            value = sample.contexts if f == "contexts" else getattr(sample, f)
            if not value or (isinstance(value, str) and not value.strip()):
                return undefined(m, sample, f"empty_{'context' if f == 'contexts' else f}")
        call = await judge.acall(m, rubric_prompt(rubric, sample), rubric_schema(rubric))
        if not call.ok:
            return failed(m, sample, call)
        rating = int(call.data["score"])
        if not rubric.low <= rating <= rubric.high:  # a server that ignores the schema
            return JudgedResult(m, sample.sample_id, None, "failed", "output_out_of_scale", calls=[call],
                                error=f"{m}: score {rating} is outside the scale {rubric.low}..{rubric.high}")
        return scored(m, sample, rubric.normalise(rating), calls=[call],
                      detail={"rating": rating, "reason": call.data.get("reason", ""),
                              "scale": list(rubric.scale)})

    impl.__name__ = impl.__qualname__ = f"rubric_{m}"
    impl.__doc__ = f"Rubric metric {m!r}: {rubric.criterion}"
    impl.rubric = rubric  # type: ignore[attr-defined]
    needs = {"judge"} | ({"contexts"} if "contexts" in rubric.evidence else set()) | (
        {"reference"} if "reference" in rubric.evidence else set())
    return MetricSpec(m, "judged", rubric.title or m.replace("_", " "),
                      f"rubric ({rubric.low}-{rubric.high}, normalised to 0-1): {rubric.criterion}",
                      needs=frozenset(needs), impl=impl)


def spec_rubric(spec: MetricSpec) -> Rubric | None:
    """The :class:`Rubric` a spec was built from (None: not a rubric metric)."""
    return getattr(spec.impl, "rubric", None)


def register_rubric(rubric: Rubric | str, **fields: Any) -> MetricSpec:
    """Build the rubric's metric and add it to the registry; registering the same rubric again is a
    no-op, a different metric under a taken name a ValueError."""
    rubric = rubric if isinstance(rubric, Rubric) else Rubric(rubric, **fields)
    taken = REGISTRY.get(rubric.name)
    if taken is not None:
        if spec_rubric(taken) == rubric:
            return taken
        raise ValueError(f"a metric called {rubric.name!r} is already registered; give the rubric another "
                         "name")
    return register(rubric_metric(rubric))


def rubric_from_dict(data: Mapping[str, JSON], where: str = "rubric") -> Rubric:
    """A :class:`Rubric` from a rubric file's object; ValueError naming ``where`` and the field."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: a rubric is a JSON object with 'name' and 'criterion', got "
                         f"{type(data).__name__}")
    allowed = {"name", "criterion", "scale", "evidence", "steps", "title"}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown field {unknown[0]!r}; a rubric has {', '.join(sorted(allowed))}")
    for key in ("name", "criterion"):
        if key not in data:
            raise ValueError(f"{where}: missing field {key!r}")
    try:
        return Rubric(data["name"], data["criterion"], tuple(data.get("scale", (1, 5))),
                      tuple(data.get("evidence", ("question", "answer"))), tuple(data.get("steps", ())),
                      str(data.get("title", "")))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None


def load_rubric(path: str | Path) -> Rubric:
    """The rubric of a rubric file (JSON; see the module docstring); ValueError naming the file."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{p}: no such rubric file") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: not JSON (line {exc.lineno}: {exc.msg})") from None
    return rubric_from_dict(data, str(p))
