"""The metric registry: every fact about a metric, declared once, in its :class:`MetricSpec`.

Every metric the package computes is one :class:`MetricSpec` here: its
canonical name, aliases (including trec_eval's and ir_measures' names), family,
typed parameters with their defaults and choices (:class:`Param`: the cutoff
``k``, the ``gain``, ERR's ``max_grade``, ...), direction, what it needs
(relevance judgements, a reference answer, an LLM judge), whether it reads
graded relevance or the count of *every* relevant document (which keyword
relevance cannot give), whether :func:`ragworkbook.evaluation.evaluate.evaluate`
computes it by default, how its per-query values aggregate (mean, geometric
mean, sum) and, for retrieval metrics, its trec_eval name and the trec_eval
measure sets it belongs to. Nothing else in the package keeps a list of metric
names or of metric facts: the engines, the evaluate loop, the comparison gate,
the targets, the widgets and every command read them from here.

A parsed metric is a :class:`Metric`: the spec with every parameter bound
(those not given take the spec's default) and the text the user wrote. The
engines receive :class:`Metric` objects and call the metric's implementation
with its bound parameters as keyword arguments.

Names
-----
``base``, ``base@x`` (also ``base_x``, ``base.x`` and trec_eval's
``ndcg_cut_10``) where ``x`` binds the spec's first parameter (the cutoff ``k``
of P@k; ``level`` of ``iprec_at_recall@0.5``), then optionally other
parameters in parentheses: ``ndcg@10(gain=exponential)``,
``err(max_grade=3)@20``. ``base`` is matched case-insensitively against the
canonical names and aliases. :attr:`Metric.name` is the text as written
(``ir-eval --metric ndcg_cut_10`` answers ``ndcg_cut_10``); :attr:`Metric.key`
the canonical spelling with every parameter that differs from its default
(``ndcg@10``, ``ndcg@10(gain=exponential)``). Two spellings of the same metric
with the same parameters are the same metric: the first one asked for is kept.
trec_eval's own measure syntax (``-m P.5,10``, ``all_trec``) is read by
:mod:`ragworkbook.metrics.trec_names`.

Adding a metric
---------------
One :class:`MetricSpec` in :data:`_SPECS` (or, from outside the package, a call
of :func:`register`) naming its implementation, ``impl=`` (a function, or
``"module:function"`` for one imported when first used). Every family calls it
the same way, ``impl(*inputs, **metric.params)`` (:meth:`Metric.compute`):

- retrieval: ``(ranked, **params) -> one float per query`` over
  :class:`ragworkbook.metrics.ranked.Ranked` (the rank-ordered grades of every
  query); declare ``graded=True`` if it reads the grades, not only relevant /
  not relevant, and ``all_relevant=True`` if it needs the number of relevant
  documents of the query (recall, NDCG, AP: keyword relevance cannot give it);
  ``reference=`` names its readable one-query definition in
  :mod:`ragworkbook.metrics.retrieval`, if it has one, and a property test holds
  the kernel to it on random rankings;
- generation: ``(answer, reference, **params) -> float``, or with
  ``batched=True`` ``(answers, references, **params) -> one float per pair``
  (the model metrics, run as one batch);
- judged: an async ``(sample, judge, **params) -> JudgedResult``; ``derived_from=``
  for a metric computed from another's judgments, its ``impl`` then
  ``(result of that metric) -> JudgedResult``.

Further keyword inputs an implementation accepts besides its parameters (the
run's embedding function ``embed``, claims extracted elsewhere ``claims``) are
listed in ``optional_inputs``. Each parameter is a :class:`Param` (name, type,
default, choices, bounds, one line of documentation): it is checked when a name
is parsed, bound into the :class:`Metric` and shown in its key when not the
default. No other file changes: ``ir-eval``, ``eval``, ``compare``, the targets
(``targets=``), the judge reliability checks (``check=``), the metric cards
(``ragworkbook metrics``) and the widgets all find the new metric through
:func:`parse_metric`. ``tests/metrics/test_conformance.py`` checks every
implementation's signature against its spec's inputs and parameters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Awaitable

    import numpy as np

    from ragworkbook.judging.results import JudgedResult

#: A parameter's value once checked: a whole number, a number, text, numbers (utility's
#: coefficients), or None (not set: a cutoff of None = the whole ranking).
ParamValue: TypeAlias = "int | float | str | tuple[float, ...] | None"
#: What an implementation returns: a retrieval kernel its per-query array, a generation metric a
#: value (or an array over a batch), a judged metric its result (awaited from an LLM flow).
MetricOutput: TypeAlias = "float | np.ndarray | JudgedResult | Awaitable[JudgedResult]"
#: A metric's implementation: its inputs positional, its parameters by keyword.
Implementation: TypeAlias = "Callable[..., MetricOutput]"

__all__ = [
    "ParamValue",
    "MetricOutput",
    "Implementation",
    "FAMILIES",
    "NEEDS",
    "AGGREGATES",
    "Param",
    "Band",
    "TrecName",
    "INPUTS",
    "MetricSpec",
    "Metric",
    "REGISTRY",
    "get_spec",
    "specs",
    "parse_metric",
    "parse_metrics",
    "split_names",
    "find_metric",
    "known_names",
    "register",
    "registered",
]

#: The three families of metrics.
FAMILIES = ("retrieval", "generation", "judged")
#: What a metric can need: relevance judgements (qrels), a reference answer, an LLM judge, the retrieved
#: contexts (their texts for a judge or a keyword, their ids for relevance by id).
NEEDS = ("relevance", "reference", "judge", "contexts")
#: How per-query values become one figure: their mean; their geometric mean (trec_eval's gm_map,
#: with per-query values floored at 1e-5); their sum (trec_eval's num_ret); none (a per-query string).
AGGREGATES = ("mean", "geometric", "sum", "none")
#: The forms a value takes when printed the trec_eval way: ``%6.4f``, an integer, a quoted string.
VALUE_FORMS = ("float", "count", "text")


@dataclass(frozen=True)
class Param:
    """One typed parameter of a metric.

    ``type`` is ``int``, ``float``, ``str`` or ``tuple`` (a tuple of numbers, e.g.
    utility's four coefficients). ``default`` is its value when not given; ``None``
    means "not set" (a cutoff ``k`` of None = the whole ranking). ``required``: the
    metric cannot be computed without it (P@k). ``choices``: the only values
    accepted (``gain``). ``low`` / ``high``: inclusive bounds of a number.
    ``option``: the run-wide option that sets it when a name does not (``"gain"``:
    ``ir-eval --gain``; ``"max_grade"``: ``--max-grade``); a parameter without one
    takes only its own default, whatever the run's options, so a new metric's
    ``max_grade`` is never set by the option documented for ERR's.
    """

    name: str
    type: type
    default: ParamValue = None
    doc: str = ""
    choices: tuple[ParamValue, ...] = ()
    required: bool = False
    low: float | None = None
    high: float | None = None
    option: str | None = None

    def check(self, value: object, shown: str) -> ParamValue:
        """``value`` converted to the parameter's type, or ValueError naming the metric ``shown``."""
        if value is None:
            return None
        try:
            if self.type is tuple:
                items = value.split(",") if isinstance(value, str) else list(value)  # type: ignore[call-overload]
                v: ParamValue = tuple(float(x) for x in items)
            elif self.type is int:
                if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                    raise ValueError
                v = int(value) if not isinstance(value, str) else int(value.strip())  # type: ignore[call-overload]
            elif self.type is float:
                if isinstance(value, bool):
                    raise ValueError
                v = float(value)  # type: ignore[arg-type]
                if not math.isfinite(v):
                    raise ValueError
            else:
                v = str(value).strip()
        except (TypeError, ValueError):
            raise ValueError(f"metric {shown!r}: {self.name} must be {_type_word(self.type)}, "
                             f"got {value!r}") from None
        if self.choices and v not in self.choices:
            raise ValueError(f"metric {shown!r}: {self.name} must be one of "
                             f"{', '.join(map(str, self.choices))}; got {v!r}")
        if self.low is not None and not v >= self.low:
            what = "the cutoff k" if self.name == "k" else self.name
            raise ValueError(f"metric {shown!r}: {what} must be >= {self.low:g}, got {v!r}")
        if self.high is not None and not v <= self.high:
            raise ValueError(f"metric {shown!r}: {self.name} must be <= {self.high:g}, got {v!r}")
        return v


def _type_word(t: type) -> str:
    return {int: "a whole number", float: "a finite number", tuple: "numbers separated by commas"}.get(
        t, "text")


@dataclass(frozen=True)
class TrecName:
    """How trec_eval names a retrieval metric.

    ``name`` is trec_eval's measure (``"P"``, ``"ndcg_cut"``); ``param`` the spec
    parameter its ``.x,y`` list sets (``"k"``; None: the measure takes none, or takes
    its parameters as one string, ``text``); ``defaults`` the values trec_eval
    computes when none are given (P: 5, 10, 15, 20, 30, 100, 200, 500, 1000);
    ``shown`` how a value of ``param`` is printed in the measure's name (``"{:d}"``:
    ``P_5``; ``"{:3.2f}"``: ``iprec_at_recall_0.10``). ``text``: the parameter
    that receives trec_eval's parameter string whole (``utility.2,-1,0,0``: printed
    ``utility_2,-1,0,0``). ``pairs``: the parameter string is ``name=value`` pairs
    setting the spec's parameters of those names (``rbp.p=0.8``). ``sets``: the
    trec_eval measure sets (``-m official``, ``-m all_trec``) that include it.
    """

    name: str
    param: str | None = None
    defaults: tuple[ParamValue, ...] = ()
    shown: str = "{}"
    text: str | None = None
    pairs: bool = False
    sets: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Band:
    """A metric's row of the targets table (:mod:`ragworkbook.evaluation.targets`).

    ``low`` and ``high`` bound the acceptable band (inclusive); ``label`` is the row
    as printed (``"Recall@10"``); ``k`` the cutoff the source states, if any;
    ``domain`` the table it belongs to (``"general"``, or ``"strict"`` for medical
    and legal work, which falls back to the general row).
    """

    label: str
    low: float
    high: float
    k: int | None = None
    domain: str = "general"


#: The positional inputs of an implementation, by family (generation: pointwise, else ``batched``).
INPUTS = {"retrieval": ("ranked",), "generation": ("answer", "reference"), "judged": ("sample", "judge")}
_BATCHED_INPUTS = ("answers", "references")
_DERIVED_INPUTS = ("result",)


def _resolve(target: str | Implementation, owner: str) -> Implementation:
    """``"module:function"`` imported (a function is returned as it is)."""
    if callable(target):
        return target
    import importlib

    module, _, attr = target.partition(":")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"metric {owner!r}: its implementation {target!r} cannot be loaded ({exc}); "
                         "write it as 'package.module:function'") from None


def _t(name: str, param: str | None = None, defaults: tuple[ParamValue, ...] = (), shown: str = "{}", *,
       text: str | None = None, pairs: bool = False,
       sets: frozenset[str] = frozenset()) -> tuple[TrecName, ...]:
    return (TrecName(name, param, defaults, shown, text, pairs, sets),)


_CUTOFF = Param("k", int, None, "the cutoff: only the first k documents of the ranking count "
                "(None: all of them)", low=1)
_REQUIRED_CUTOFF = Param("k", int, None, "the cutoff: the first k documents of the ranking", required=True,
                         low=1)
_GAINS = Param("gains", str, None, "trec_eval's gain table: grade=gain pairs, e.g. 1=3,2=9 (grades not "
                "listed keep their grade as gain)")
_GAIN = Param("gain", str, "linear", "gain of a grade: linear = grade (trec_eval ndcg), exponential = "
              "2^grade - 1 (ranx ndcg_burges)", choices=("linear", "exponential"), option="gain")


@dataclass(frozen=True)
class MetricSpec:
    """The declaration of one metric: every fact about it.

    ``name`` is canonical (``"ndcg"``); ``title`` the name as printed in prose
    (``"NDCG@k"``); ``definition`` one line stating it. ``aliases`` are other
    accepted spellings (lower case). ``params``: its typed parameters, the first one
    set by ``name@x``. ``higher_is_better`` gives the direction the comparison gate
    and the targets use. ``needs`` lists what must be given to compute it.
    ``graded``: it reads the relevance grades themselves (DCG, NDCG, ERR), not only
    relevant / not relevant. ``all_relevant``: it needs the number (or grades) of
    every relevant document of the query, not only of the retrieved ones (recall,
    NDCG, AP), so keyword relevance, which judges only the retrieved contexts,
    cannot give it. ``scale`` is its range. ``default``: computed by
    :func:`ragworkbook.evaluation.evaluate.evaluate` when no metric is named and
    its needs are met. ``derived_from``: the metric whose judgments it is computed
    from (hallucination from faithfulness). ``aggregate`` (:data:`AGGREGATES`) and
    ``value`` (:data:`VALUE_FORMS`): how per-query values are summarised and
    printed; ``per_query``: False when only the summary is meaningful (trec_eval's
    gm_map). ``trec``: its trec_eval names (:class:`TrecName`: ``map`` is trec_eval's
    ``map`` without a cutoff and ``map_cut`` with one), if trec_eval has it.
    """

    name: str
    family: str
    title: str
    definition: str
    aliases: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    higher_is_better: bool = True
    needs: frozenset[str] = field(default_factory=frozenset)
    graded: bool = False
    all_relevant: bool = False
    scale: tuple[float, float] = (0.0, 1.0)
    default: bool = False
    derived_from: str | None = None
    aggregate: str = "mean"
    value: str = "float"
    per_query: bool = True
    trec: tuple[TrecName, ...] = ()
    impl: str | Implementation | None = field(default=None, compare=False)
    reference: str | Callable[..., float] | None = field(default=None, compare=False)
    batched: bool = False
    optional_inputs: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    check: str = ""
    targets: tuple[Band, ...] = ()

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"{self.name}: family must be one of {FAMILIES}, got {self.family!r}")
        unknown = set(self.needs) - set(NEEDS)
        if unknown:
            raise ValueError(f"{self.name}: unknown needs {sorted(unknown)}")
        if self.aggregate not in AGGREGATES:
            raise ValueError(f"{self.name}: aggregate must be one of {AGGREGATES}, got {self.aggregate!r}")
        if self.value not in VALUE_FORMS:
            raise ValueError(f"{self.name}: value must be one of {VALUE_FORMS}, got {self.value!r}")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: two parameters share a name: {names}")

    @property
    def implementation(self) -> Implementation:
        """The function that computes it (``impl``, imported on first use)."""
        if self.impl is None:
            raise ValueError(f"metric {self.name!r} has no implementation: give its spec impl=...")
        return _resolve(self.impl, self.name)

    @property
    def reference_function(self) -> Callable[..., float] | None:
        """Its readable one-query definition (retrieval), or None."""
        return None if self.reference is None else _resolve(self.reference, self.name)

    @property
    def inputs(self) -> tuple[str, ...]:
        """The positional inputs of its implementation (``("ranked",)``, ``("answer", "reference")``,
        ``("answers", "references")``, ``("sample", "judge")``; a derived metric's ``("result",)``)."""
        if self.reads:  # a metric of other fields than its family's (the contexts, say)
            return self.reads
        if self.derived_from is not None:
            return _DERIVED_INPUTS
        if self.family == "generation" and self.batched:
            return _BATCHED_INPUTS
        return INPUTS[self.family]

    @property
    def usage(self) -> str:
        """How it is written: ``precision@k`` (a required first parameter), ``mrr[@k]`` (an optional
        one, a cutoff or a retrieval metric's trec_eval-style ``.x``), else its name (``rouge_l``; its
        parameters go in parentheses, ``rouge_l(measure=recall)``)."""
        first = self.params[0] if self.params else None
        if first is None or not (first.required or first.name == "k" or self.family == "retrieval"):
            return self.name
        return f"{self.name}@{first.name}" if first.required else f"{self.name}[@{first.name}]"

    @property
    def uses_judge(self) -> bool:
        """Whether it needs an LLM judge (word support, a judged metric, needs none)."""
        return "judge" in self.needs

    def target(self, domain: str = "general") -> Band | None:
        """Its row of the targets table of ``domain`` (the general row when ``domain`` has none)."""
        rows = {b.domain: b for b in self.targets}
        return rows.get(domain) or rows.get("general")

    def param(self, name: str) -> Param | None:
        """The parameter called ``name``, or None."""
        return next((p for p in self.params if p.name == name), None)

    @property
    def cutoff(self) -> str:
        """``"required"`` (P@k), ``"optional"`` (mrr or mrr@k) or ``"none"``: how it takes a cutoff ``k``."""
        k = self.param("k")
        return "none" if k is None else ("required" if k.required else "optional")

    def bind(self, label: str = "", defaults: Mapping[str, ParamValue] | None = None,
             **values: object) -> Metric:
        """This metric with ``values`` bound (checked); every other parameter takes the run-wide option it
        declares (:attr:`Param.option`) from ``defaults`` (``{"gain": "exponential"}``), or else its
        spec's default."""
        return _bind(self, values, label, defaults or {})

    def with_k(self, k: int | None) -> Metric:
        """This metric at cutoff ``k`` (validated like a parsed name)."""
        return self.bind(k=k) if self.param("k") is not None or k is not None else self.bind()


@dataclass(frozen=True)
class Metric:
    """A metric as asked for: its ``spec``, every parameter bound (``params``, in the spec's
    order) and the ``label`` written.

    Equality and hashing use ``spec`` and ``params`` only: ``P@3`` and ``precision@3``
    are the same metric; ``ndcg@3`` with the linear and with the exponential gain are not.
    """

    spec: MetricSpec
    params: tuple[tuple[str, ParamValue], ...] = ()
    label: str = field(default="", compare=False)

    @property
    def kwargs(self) -> dict[str, ParamValue]:
        """The bound parameters as keyword arguments of the metric's implementation."""
        return dict(self.params)

    def compute(self, *inputs: object, **extra: object) -> MetricOutput:
        """Its implementation called the one way every family is: ``impl(*inputs, **params, **extra)``
        (``extra``: the spec's ``optional_inputs``, such as ``embed``)."""
        return self.spec.implementation(*inputs, **self.kwargs, **extra)

    @property
    def k(self) -> int | None:
        """The cutoff, when the metric takes one (None: the whole ranking, or no cutoff)."""
        return dict(self.params).get("k")

    @property
    def key(self) -> str:
        """The canonical spelling: ``precision@3``, ``mrr``, ``ndcg@10(gain=exponential)``: the first
        parameter after ``@``, the others in parentheses when they differ from their defaults."""
        first, rest = None, []
        for i, (name, value) in enumerate(self.params):
            p = self.spec.params[i]
            if i == 0 and p.name == "k" or (i == 0 and p.required):
                first = value
            elif value != p.default:
                rest.append(f"{name}={_show(value)}")
        text = self.spec.name if first is None else f"{self.spec.name}@{_show(first)}"
        return text + (f"({','.join(rest)})" if rest else "")

    @property
    def name(self) -> str:
        """The name as the user wrote it (the canonical :attr:`key` when built from a spec)."""
        return self.label or self.key

    @property
    def kind(self) -> str:
        """The canonical name without parameters (``"ndcg"``): the key of its implementation."""
        return self.spec.name

    @property
    def family(self) -> str:
        """``"retrieval"``, ``"generation"`` or ``"judged"``."""
        return self.spec.family

    @property
    def higher_is_better(self) -> bool:
        """The direction: True unless a smaller value is better (hallucination)."""
        return self.spec.higher_is_better

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Metric({self.key!r})" if not self.label or self.label == self.key else (
            f"Metric({self.key!r}, label={self.label!r})")


def _show(value: ParamValue) -> str:
    if isinstance(value, tuple):
        return ",".join(f"{v:g}" for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _bind(spec: MetricSpec, given: Mapping[str, object], label: str,
          defaults: Mapping[str, ParamValue]) -> Metric:
    """Check ``given`` against ``spec``'s parameters; the others take the run-wide option they declare
    from ``defaults`` (``gain=``), else the spec's own defaults."""
    shown = label or spec.name
    unknown = [n for n in given if spec.param(n) is None]
    if unknown:
        if unknown == ["k"]:
            hint = " (its cutoff is R)" if spec.name == "r_precision" else ""
            raise ValueError(f"metric {shown!r}: {spec.name} takes no cutoff{hint}; write {spec.name!r}")
        takes = ", ".join(p.name for p in spec.params) or "none"
        raise ValueError(f"metric {shown!r}: {spec.name} has no parameter {unknown[0]!r} (its parameters: "
                         f"{takes})")
    bound = []
    for p in spec.params:
        if p.name in given:
            value = p.check(given[p.name], shown)
        else:
            run_wide = defaults.get(p.option) if p.option is not None else None
            value = p.check(run_wide, shown) if run_wide is not None else p.default
        if value is None and p.required:
            example = f"{spec.name}@10" if p.name == "k" else f"{spec.name}({p.name}=...)"
            raise ValueError(f"metric {shown!r} needs a cutoff, e.g. '{example}'" if p.name == "k" else
                             f"metric {shown!r} needs its parameter {p.name}, e.g. '{example}'")
        bound.append((p.name, value))
    return Metric(spec, tuple(bound), label)


def _relevance(all_relevant: bool = False, graded: bool = False) -> dict[str, bool | frozenset[str]]:
    """What a retrieval metric needs: relevance judgements and the retrieved contexts (their ids)."""
    return {"needs": frozenset({"relevance", "contexts"}), "all_relevant": all_relevant, "graded": graded}


def _needs(*needs: str) -> frozenset[str]:
    return frozenset(needs)


_KERNEL = "ragworkbook.metrics.kernels:"
_REFERENCE = "ragworkbook.metrics.retrieval:"
_GENERATION = "ragworkbook.metrics.generation:"
_CONTEXT_TEXT = "ragworkbook.metrics.context_text:"
_TEXT_THRESHOLD = Param("threshold", float, 0.5, "how similar (1 - normalised Levenshtein distance) a "
                        "context must be to a reference context to count as the same", low=0.0, high=1.0)
_JUDGED = "ragworkbook.judging.metrics:"
_ROUGE_MEASURE = Param("measure", str, "fmeasure", "which ROUGE figure: fmeasure, precision (shared / answer "
                       "n-grams) or recall (shared / reference n-grams)",
                       choices=("fmeasure", "precision", "recall"))
_MAX_STATEMENTS = Param("max_statements", int, 10, "the most claims extracted from an answer", low=1)
_MIN_CHARS = Param("min_chars", int, 25, "context sentences shorter than this are joined to the next",
                   low=1)
_OFFICIAL = frozenset({"official", "all_trec"})
_ALL_TREC = frozenset({"all_trec"})
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _count(name: str, title: str, definition: str, trec_sets: frozenset[str], all_relevant: bool = False,
           *, impl: str, per_query: bool = True) -> MetricSpec:
    """A count trec_eval sums over queries (num_ret, num_rel, ...)."""
    return MetricSpec(name, "retrieval", title, definition, aggregate="sum", value="count",
                      scale=(0.0, math.inf), trec=_t(name, sets=trec_sets),
                      **_relevance(all_relevant=all_relevant), per_query=per_query, impl=impl)


_SPECS: tuple[MetricSpec, ...] = (
    # --- retrieval: the workbook's metrics ------------------------------------------------
    MetricSpec("precision", "retrieval", "Precision@k",
               "relevant documents among the first k, divided by k",
               aliases=("p", "prec"), params=(_REQUIRED_CUTOFF,), default=True, **_relevance(),
               trec=_t("P", "k", _CUTS, "{:d}", sets=_OFFICIAL),
               impl=_KERNEL + "precision", reference=_REFERENCE + "precision_at_k"),
    MetricSpec("recall", "retrieval", "Recall@k",
               "relevant documents among the first k, divided by all relevant documents",
               aliases=("r",), params=(_REQUIRED_CUTOFF,), default=True, **_relevance(all_relevant=True),
               trec=_t("recall", "k", _CUTS, "{:d}", sets=_ALL_TREC),
               impl=_KERNEL + "recall", reference=_REFERENCE + "recall_at_k",
               targets=(Band("Recall@10", 0.60, 0.80, 10),)),
    MetricSpec("hit_rate", "retrieval", "Hit Rate@k",
               "1 if any of the first k documents is relevant, else 0",
               aliases=("hitrate", "hit", "hits", "hr"), params=(_REQUIRED_CUTOFF,), default=True,
               **_relevance(), trec=_t("success", "k", (1, 5, 10), "{:d}", sets=_ALL_TREC),
               impl=_KERNEL + "hit_rate", reference=_REFERENCE + "hit_rate_at_k"),
    MetricSpec("mrr", "retrieval", "MRR",
               "1 / rank of the first relevant document (0 if none within the cutoff); its mean is MRR",
               aliases=("rr", "reciprocal_rank"), params=(_CUTOFF,), default=True, **_relevance(),
               trec=_t("recip_rank", sets=_OFFICIAL),
               impl=_KERNEL + "mrr", reference=_REFERENCE + "reciprocal_rank",
               targets=(Band("MRR", 0.30, 0.50),)),
    MetricSpec("map", "retrieval", "MAP",
               "mean of Precision@i over the ranks i of the relevant documents, divided by all relevant",
               aliases=("ap", "average_precision"), params=(_CUTOFF,), **_relevance(all_relevant=True),
               trec=(TrecName("map", sets=_OFFICIAL),
                     TrecName("map_cut", "k", _CUTS, "{:d}", sets=_ALL_TREC)),
               impl=_KERNEL + "average_precision", reference=_REFERENCE + "average_precision"),
    MetricSpec("r_precision", "retrieval", "R-precision",
               "Precision@R, R = the number of relevant documents of the query",
               aliases=("rprec", "r-precision"), **_relevance(all_relevant=True),
               trec=_t("Rprec", sets=_OFFICIAL),
               impl=_KERNEL + "r_precision", reference=_REFERENCE + "r_precision"),
    MetricSpec("dcg", "retrieval", "DCG@k",
               "sum of gain(grade) / log2(rank + 1) over the first k",
               params=(_CUTOFF, _GAIN), scale=(0.0, math.inf), **_relevance(graded=True),
               impl=_KERNEL + "dcg", reference=_REFERENCE + "dcg_at_k"),
    MetricSpec("ndcg", "retrieval", "NDCG@k",
               "DCG@k divided by the DCG@k of the ideal ranking of every judged document",
               params=(_CUTOFF, _GAIN,
                       Param("gains", str, None, "trec_eval's gain table: grade=gain pairs, e.g. 1=3,2=9 "
                             "(grades not listed keep their grade as gain)")),
               default=True, **_relevance(all_relevant=True, graded=True),
               trec=(TrecName("ndcg", text="gains", sets=_ALL_TREC),
                     TrecName("ndcg_cut", "k", _CUTS, "{:d}", sets=_ALL_TREC)),
               impl=_KERNEL + "ndcg", reference=_REFERENCE + "ndcg_at_k",
               targets=(Band("NDCG@10", 0.50, 0.70, 10),)),
    MetricSpec("err", "retrieval", "ERR@k",
               "expected reciprocal rank (Chapelle et al. 2009): sum over ranks r of "
               "R_r / r * prod_{i<r} (1 - R_i), R = (2^grade - 1) / 2^max_grade",
               aliases=("expected_reciprocal_rank",),
               params=(_CUTOFF, Param("max_grade", float, 4.0, "the top grade of the relevance scale "
                                      "(4: the TREC Web track's 0-4 scale, gdeval.pl's MAX_JUDGMENT)",
                                      low=1e-300, option="max_grade")),
               **_relevance(graded=True), impl=_KERNEL + "err"),
    # --- retrieval: the rest of trec_eval's measures (-m all_trec), in trec_eval's order ---
    _count("num_q", "number of queries", "the number of queries evaluated (1 per query, summed)", _OFFICIAL,
           per_query=False, impl=_KERNEL + "num_q"),
    _count("num_ret", "retrieved documents", "documents retrieved for the query (after -M)", _OFFICIAL,
    impl=_KERNEL + "num_ret"),
    _count("num_rel", "relevant documents", "relevant documents of the query in the qrels", _OFFICIAL,
           all_relevant=True, impl=_KERNEL + "num_rel"),
    _count("num_rel_ret", "relevant retrieved", "relevant documents retrieved", _OFFICIAL,
    impl=_KERNEL + "num_rel_ret"),
    MetricSpec("gm_map", "retrieval", "GM-MAP",
               "average precision, averaged over queries by the geometric mean (values below 1e-5 count "
               "as 1e-5)", aggregate="geometric", per_query=False, **_relevance(all_relevant=True),
               trec=_t("gm_map", sets=_OFFICIAL), impl=_KERNEL + "gm_average_precision"),
    MetricSpec("bpref", "retrieval", "bpref",
               "binary preference (Buckley & Voorhees 2004): 1 - (judged non-relevant documents above "
               "each relevant one, at most R) / min(R, judged non-relevant), averaged over the R relevant",
               **_relevance(all_relevant=True), trec=_t("bpref", sets=_OFFICIAL), impl=_KERNEL + "bpref"),
    MetricSpec("iprec_at_recall", "retrieval", "interpolated precision at recall",
               "the highest precision at any rank where recall >= level (trec_eval's 11-point curve)",
               params=(Param("level", float, None, "the recall level, 0 to 1", required=True, low=0.0,
                             high=1.0),),
               **_relevance(all_relevant=True),
               trec=_t("iprec_at_recall", "level", _RECALL_LEVELS, "{:3.2f}", sets=_OFFICIAL),
               impl=_KERNEL + "iprec_at_recall"),
    MetricSpec("relstring", "retrieval", "relevance string",
               "the grades of the first k documents as characters: the grade 0-9, '>' above 9, '-' not "
               "judged, '.' in the pool but unjudged", aggregate="none", value="text",
               params=(Param("k", int, 10, "how many ranks", low=0),), **_relevance(),
               trec=_t("relstring", text="k", sets=_ALL_TREC), impl=_KERNEL + "relstring"),
    MetricSpec("infap", "retrieval", "infAP",
               "inferred average precision (Yilmaz & Aslam 2006) for a sampled pool (negative grades: "
               "pooled, not judged)", **_relevance(all_relevant=True),
               trec=_t("infAP", sets=_ALL_TREC), impl=_KERNEL + "infap"),
    MetricSpec("gm_bpref", "retrieval", "GM-bpref", "bpref averaged by the geometric mean",
               aggregate="geometric", per_query=False, **_relevance(all_relevant=True),
               trec=_t("gm_bpref", sets=_ALL_TREC), impl=_KERNEL + "bpref"),
    MetricSpec("rprec_mult", "retrieval", "R-precision at a multiple of R",
               "precision at rank ceil(mult x R - 0.1) (trec_eval's Rprec_mult)",
               params=(Param("mult", float, None, "the multiple of R", required=True, low=0.0),),
               **_relevance(all_relevant=True),
               trec=_t("Rprec_mult", "mult", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
                             "{:3.2f}", sets=_ALL_TREC), impl=_KERNEL + "rprec_mult"),
    MetricSpec("utility", "retrieval", "utility",
               "a x relevant retrieved + b x non-relevant retrieved + c x relevant missed + d x "
               "non-relevant missed (trec_eval; d needs the collection size, taken as 0)",
               params=(Param("coefficients", tuple, (1.0, -1.0, 0.0, 0.0), "a, b, c, d"),),
               scale=(-math.inf, math.inf), **_relevance(all_relevant=True),
               trec=_t("utility", text="coefficients", sets=_ALL_TREC), impl=_KERNEL + "utility"),
    MetricSpec("11pt_avg", "retrieval", "11-point average precision",
               "the mean of the interpolated precision at the recall levels (0, 0.1, ..., 1)",
               aliases=("eleven_point_average",),
               params=(Param("levels", tuple, _RECALL_LEVELS, "the recall levels"),),
               **_relevance(all_relevant=True),
               trec=_t("11pt_avg", text="levels", sets=_ALL_TREC), impl=_KERNEL + "eleven_point_average"),
    MetricSpec("bing", "retrieval", "binary G", "trec_eval's binG: sum over relevant retrieved documents of "
               "1 / log2(2 + non-relevant above it), divided by R", **_relevance(all_relevant=True),
               trec=_t("binG", sets=_ALL_TREC), impl=_KERNEL + "binary_g"),
    MetricSpec("g", "retrieval", "G", "trec_eval's G: gain discounted by log2 of the cost so far, over the "
               "ideal gain", params=(_GAINS,),
               **_relevance(all_relevant=True, graded=True), trec=_t("G", text="gains", sets=_ALL_TREC),
               impl=_KERNEL + "trec_g"),
    MetricSpec("ndcg_rel", "retrieval", "NDCG averaged over relevant documents",
               "NDCG at each relevant document's rank, summed, divided by R (trec_eval's ndcg_rel)",
               params=(_GAINS,),
               **_relevance(all_relevant=True, graded=True),
               trec=_t("ndcg_rel", text="gains", sets=_ALL_TREC), impl=_KERNEL + "ndcg_rel"),
    MetricSpec("rndcg", "retrieval", "R-NDCG", "NDCG at rank R, R = the number of relevant documents "
               "(trec_eval's Rndcg)", params=(_GAINS,),
               **_relevance(all_relevant=True, graded=True),
               trec=_t("Rndcg", text="gains", sets=_ALL_TREC), impl=_KERNEL + "rndcg"),
    MetricSpec("relative_p", "retrieval", "relative precision",
               "relevant among the first k divided by min(k, R)", params=(_REQUIRED_CUTOFF,),
               **_relevance(all_relevant=True),
               trec=_t("relative_P", "k", _CUTS, "{:d}", sets=_ALL_TREC),
               impl=_KERNEL + "relative_precision"),
    MetricSpec("set_p", "retrieval", "set precision", "relevant retrieved / retrieved (the whole ranking "
               "as a set)", **_relevance(), trec=_t("set_P", sets=_ALL_TREC), impl=_KERNEL + "set_precision"),
    MetricSpec("set_relative_p", "retrieval", "set relative precision",
               "relevant retrieved / min(retrieved, R)", **_relevance(all_relevant=True),
               trec=_t("set_relative_P", sets=_ALL_TREC), impl=_KERNEL + "set_relative_precision"),
    MetricSpec("set_recall", "retrieval", "set recall", "relevant retrieved / R",
               **_relevance(all_relevant=True), trec=_t("set_recall", sets=_ALL_TREC),
               impl=_KERNEL + "set_recall"),
    MetricSpec("set_map", "retrieval", "set MAP", "set precision x set recall",
               **_relevance(all_relevant=True), trec=_t("set_map", sets=_ALL_TREC), impl=_KERNEL + "set_map"),
    MetricSpec("set_f", "retrieval", "set F", "F-measure of set precision and set recall, weight beta",
               params=(Param("beta", float, 1.0, "the weight of recall", low=0.0),),
               **_relevance(all_relevant=True), trec=_t("set_F", text="beta", sets=_ALL_TREC),
               impl=_KERNEL + "set_f"),
    _count("num_nonrel_judged_ret", "judged non-relevant retrieved",
           "retrieved documents judged non-relevant", _ALL_TREC, impl=_KERNEL + "num_nonrel_judged_ret"),
    MetricSpec("rbp", "retrieval", "rank-biased precision",
               "(1 - p) x sum over relevant ranks r of p^(r-1) (Moffat & Zobel 2008)",
               params=(Param("p", float, 0.9, "the persistence", low=0.0, high=1.0),),
               **_relevance(), trec=_t("rbp", pairs=True, sets=_ALL_TREC), impl=_KERNEL + "rbp"),
    MetricSpec("rbp_resid", "retrieval", "RBP residual",
               "rank-biased precision plus the weight of the unjudged documents and of the ranks after the "
               "last (its upper bound)", params=(Param("p", float, 0.9, "the persistence", low=0.0,
                                                       high=1.0),),
               **_relevance(), trec=_t("rbp_resid", pairs=True, sets=_ALL_TREC), impl=_KERNEL + "rbp_resid"),
    MetricSpec("unj", "retrieval", "unjudged@k", "share of the first k documents with no judgement",
               params=(_REQUIRED_CUTOFF,), higher_is_better=False, **_relevance(),
               trec=_t("unj", "k", (5, 10, 20), "{:d}", sets=_ALL_TREC), impl=_KERNEL + "unjudged"),
    # --- generation (reference-based) ------------------------------------------------------
    MetricSpec("bleu", "generation", "BLEU", "sacrebleu sentence BLEU of the answer against the reference",
               aliases=("sacrebleu",), needs=_needs("reference"), scale=(0.0, 100.0), default=True,
               impl=_GENERATION + "bleu"),
    MetricSpec("rouge_l", "generation", "ROUGE-L", "ROUGE-L (longest common subsequence, stemmed)",
               aliases=("rougel", "rouge-l"), params=(_ROUGE_MEASURE,), needs=_needs("reference"),
               default=True, impl=_GENERATION + "rouge_l"),
    # ROUGE-1 and ROUGE-2 are taught beside ROUGE-L but not computed by default: the three move together
    MetricSpec("rouge_1", "generation", "ROUGE-1", "ROUGE-1 (unigram overlap, stemmed)",
               aliases=("rouge1", "rouge-1"), params=(_ROUGE_MEASURE,), needs=_needs("reference"),
               impl=_GENERATION + "rouge_1"),
    MetricSpec("rouge_2", "generation", "ROUGE-2", "ROUGE-2 (bigram overlap, stemmed)",
               aliases=("rouge2", "rouge-2"), params=(_ROUGE_MEASURE,), needs=_needs("reference"),
               impl=_GENERATION + "rouge_2"),
    MetricSpec("meteor", "generation", "METEOR", "NLTK METEOR with WordNet synonyms",
               needs=_needs("reference"), default=True, impl=_GENERATION + "meteor"),
    MetricSpec("embedding_similarity", "generation", "embedding similarity",
               "cosine of the MiniLM embeddings of answer and reference",
               aliases=("semantic_similarity", "cosine"), needs=_needs("reference"), scale=(-1.0, 1.0),
               default=True, impl=_GENERATION + "embedding_similarities", batched=True),
    MetricSpec("bertscore_f1", "generation", "BERTScore F1",
               "BERTScore F1 on the local MiniLM (no baseline rescaling)",
               aliases=("bertscore",), needs=_needs("reference"), impl=_GENERATION + "bertscore_f1",
               batched=True),
    MetricSpec("exact_match", "generation", "exact match",
               "1 if the SQuAD-normalised answer equals the normalised reference",
               aliases=("em",), needs=_needs("reference"), impl=_GENERATION + "exact_match"),
    MetricSpec("token_f1", "generation", "token F1",
               "SQuAD token F1: harmonic mean of bag-of-token precision and recall",
               aliases=("f1",), needs=_needs("reference"), default=True, impl=_GENERATION + "token_f1"),
    MetricSpec("string_presence", "generation", "string presence",
               "1 if the reference occurs in the answer as written (ragas StringPresence)",
               aliases=("string_present",), needs=_needs("reference"),
               impl=_CONTEXT_TEXT + "string_presence"),
    MetricSpec("non_llm_context_precision", "generation", "context precision by text",
               "average precision of the retrieved contexts, one relevant when its Levenshtein similarity "
               "to a reference context is >= the threshold (ragas NonLLMContextPrecisionWithReference)",
               aliases=("non_llm_context_precision_with_reference",), needs=_needs("contexts"),
               params=(_TEXT_THRESHOLD,), impl=_CONTEXT_TEXT + "non_llm_context_precision",
               reads=("contexts", "reference_contexts")),
    MetricSpec("non_llm_context_recall", "generation", "context recall by text",
               "share of the reference contexts with a retrieved context of Levenshtein similarity above the "
               "threshold (ragas NonLLMContextRecall)", needs=_needs("contexts"),
               params=(_TEXT_THRESHOLD,), impl=_CONTEXT_TEXT + "non_llm_context_recall",
               reads=("contexts", "reference_contexts")),
    # --- judged ---------------------------------------------------------------------------
    MetricSpec("faithfulness", "judged", "faithfulness",
               "claims of the answer supported by the retrieved context / all claims",
               aliases=("groundedness",), params=(_MAX_STATEMENTS,), needs=_needs("judge", "contexts"),
               default=True, impl=_JUDGED + "afaithfulness", optional_inputs=("claims",),
               check="wikieval-faithfulness",
               targets=(Band("Faithfulness", 0.80, 0.90), Band("Faithfulness", 0.80, 0.95, domain="strict"))),
    MetricSpec("answer_relevancy", "judged", "answer relevancy",
               "mean cosine of questions generated back from the answer to the question; 0 if noncommittal",
               aliases=("answer_relevance",),
               params=(Param("strictness", int, 3, "how many questions are generated back from the answer",
                             low=1),),
               needs=_needs("judge"), default=True, impl=_JUDGED + "aanswer_relevancy",
               optional_inputs=("embed",), check="wikieval-answer-relevance"),
    MetricSpec("context_precision", "judged", "context precision",
               "position-weighted precision of chunks judged useful for the reference answer",
               aliases=("context_precision_with_reference",), needs=_needs("judge", "reference", "contexts"),
               default=True, impl=_JUDGED + "acontext_precision_with_reference"),
    MetricSpec("context_precision_without_reference", "judged", "context precision (no reference)",
               "position-weighted precision of chunks judged useful for the system's answer",
               needs=_needs("judge", "contexts"), impl=_JUDGED + "acontext_precision_without_reference"),
    MetricSpec("context_recall", "judged", "context recall",
               "sentences of the reference attributable to the retrieved context / all sentences",
               needs=_needs("judge", "reference", "contexts"), default=True,
               impl=_JUDGED + "acontext_recall"),
    MetricSpec("context_relevance", "judged", "context relevance",
               "mean of per-chunk relevance verdicts against the question (the triad's first leg)",
               needs=_needs("judge", "contexts"), impl=_JUDGED + "acontext_relevance",
               check="wikieval-context-relevance"),
    MetricSpec("completeness", "judged", "completeness",
               "relevant context sentences the answer uses / relevant context sentences",
               params=(_MIN_CHARS,), needs=_needs("judge", "contexts"),
               impl="ragworkbook.judging.coverage:acompleteness"),
    MetricSpec("utilization", "judged", "utilization",
               "context sentences the answer uses / all context sentences",
               aliases=("context_utilization",), params=(_MIN_CHARS,), needs=_needs("judge", "contexts"),
               impl="ragworkbook.judging.coverage:autilization"),
    MetricSpec("nli_faithfulness", "judged", "NLI faithfulness",
               "claims of the answer the context entails / all claims (entailment/contradiction/neutral)",
               aliases=("nli_entailment",), params=(_MAX_STATEMENTS,), needs=_needs("judge", "contexts"),
               impl="ragworkbook.judging.nli:anli_faithfulness", optional_inputs=("claims",)),
    MetricSpec("nli_contradiction", "judged", "NLI contradiction rate",
               "claims of the answer the context contradicts / all claims",
               aliases=("contradiction_rate",), params=(_MAX_STATEMENTS,), higher_is_better=False,
               needs=_needs("judge", "contexts"), impl="ragworkbook.judging.nli:anli_contradiction",
               optional_inputs=("claims",)),
    MetricSpec("questeval", "judged", "QuestEval-style precision",
               "mean token F1 of the answer's own answers to questions generated from it and the answers "
               "read from the context",
               aliases=("questeval_precision",),
               params=(Param("n_questions", int, 3, "how many questions are generated from the answer",
                             low=1),),
               needs=_needs("judge", "contexts"), impl="ragworkbook.judging.questeval:aquesteval"),
    MetricSpec("hallucination", "judged", "hallucination",
               "1 when faithfulness < 1 (at least one unsupported claim); its mean is the hallucination rate",
               aliases=("hallucination_rate",), higher_is_better=False, needs=_needs("judge", "contexts"),
               default=True, derived_from="faithfulness", impl=_JUDGED + "hallucination",
               targets=(Band("Hallucination rate", 0.05, 0.10),
                        Band("Hallucination rate", 0.02, 0.10, domain="strict"))),
    # The deterministic, reference-free faithfulness signal: no LLM, so "judge" is not among its needs;
    # its judge is measured like any other (`ragworkbook judge-check --dataset ff --judge word-support`).
    MetricSpec("word_support", "judged", "word support",
               "content words of the answer found in the retrieved context (stemmed) / content words of the "
               "answer; no LLM",
               aliases=("content_word_support", "word-support"), needs=_needs("contexts"),
               impl=_JUDGED + "aword_support", check="wikieval-faithfulness"),
)

#: Canonical name -> spec, in declaration order (the order reports list metrics in).
REGISTRY: dict[str, MetricSpec] = {}
_ALIASES: dict[str, MetricSpec] = {}


def _names_of(spec: MetricSpec) -> set[str]:
    names = {spec.name, *spec.aliases}
    for tn in spec.trec:
        names.add(tn.name)
        if tn.param == "k" and tn.name.endswith("_cut"):
            names.add(tn.name[: -len("_cut")])
    return {n.lower() for n in names}


def _add(spec: MetricSpec) -> None:
    names = _names_of(spec)
    for n in names:
        other = _ALIASES.get(n)
        if other is not None and other is not spec:
            raise ValueError(f"metric alias {n!r} names both {other.name} and {spec.name}")
    if spec.name in REGISTRY:
        raise ValueError(f"a metric called {spec.name!r} is already registered")
    REGISTRY[spec.name] = spec
    for n in names:
        _ALIASES[n] = spec


for _spec in _SPECS:
    _add(_spec)


def register(spec: MetricSpec) -> MetricSpec:
    """Add ``spec`` to the registry (its implementation goes into its family's table, see the module
    docstring). ValueError when its name or an alias is taken."""
    _add(spec)
    return spec


def unregister(name: str) -> None:
    """Remove the metric called ``name`` (a test fixture's, registered with :func:`register`)."""
    spec = REGISTRY.pop(name)
    for n in _names_of(spec):
        if _ALIASES.get(n) is spec:
            del _ALIASES[n]


@contextmanager
def registered(spec: MetricSpec) -> Iterator[MetricSpec]:
    """Register ``spec`` for a ``with`` block (a test fixture's metric)."""
    register(spec)
    try:
        yield spec
    finally:
        unregister(spec.name)


# base, an optional first parameter written @x, _x, .x or trec_eval's _cut_x, optional (p=v, ...) before
# or after it
_NAME_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9_\-]*?)(?:\((?P<pre>[^()]*)\))?(?:_cut)?"
                      r"(?:\s*[@_.]\s*(?P<first>\d+(?:\.\d*)?|\.\d+))?(?:\((?P<post>[^()]*)\))?\s*$")


def get_spec(name: str) -> MetricSpec:
    """The spec of a metric named without parameters (canonical name or alias); ValueError if unknown."""
    spec = _ALIASES.get(str(name).strip().lower())
    if spec is None:
        raise ValueError(_unknown(name, None))
    return spec


def specs(family: str | None = None) -> list[MetricSpec]:
    """Every spec (of one family), in declaration order."""
    if family is not None and family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}: use one of {', '.join(FAMILIES)}")
    return [s for s in REGISTRY.values() if family is None or s.family == family]


def known_names(family: str | None = None) -> str:
    """The metrics of ``family`` as a comma-separated list for messages (``precision@k, mrr[@k], ...``)."""
    return ", ".join(s.usage for s in specs(family))


def _unknown(name: object, family: str | None) -> str:
    return f"unknown metric {name!r}; known metrics: {known_names(family)}"


def _assignments(text: str | None, shown: str) -> dict[str, str]:
    out: dict[str, str] = {}
    if not text:
        return out
    for part in re.split(r",(?=\s*[A-Za-z_]\w*\s*=)", text):
        if "=" not in part:
            raise ValueError(f"metric {shown!r}: write parameters as name=value, "
                             "e.g. 'ndcg@10(gain=exponential)'")
        key, value = part.split("=", 1)
        out[key.strip()] = value.strip().strip("'\"")
    return out


def parse_metric(name: str | Metric, family: str | None = None, *,
                 defaults: Mapping[str, ParamValue] | None = None) -> Metric:
    """Parse one metric name into a :class:`Metric` (see the module docstring for the syntax).

    ``family`` restricts the accepted metrics (``"retrieval"`` for ``ir-eval``); a
    metric of another family is refused with a message saying what it is.
    ``defaults``: the run's options (``{"gain": "exponential"}``), the values of the
    parameters that declare them (:attr:`Param.option`) when the name does not set them.
    ValueError for an unknown name, a missing or unexpected parameter, or a value out of
    its range.
    """
    if isinstance(name, Metric):
        metric = name
    else:
        if not isinstance(name, str):
            raise TypeError(f"a metric name must be a string like 'ndcg@10', got {name!r}")
        text = name.strip()
        spec = _ALIASES.get(text.lower())
        given: dict[str, object] = {}
        if spec is None:
            m = _NAME_RE.match(text)
            if m:
                spec = _ALIASES.get(m.group(1).lower().rstrip("_-"))
                if spec is not None:
                    given = {**_assignments(m.group("pre"), text), **_assignments(m.group("post"), text)}
                    if m.group("first") is not None:
                        first = spec.params[0].name if spec.params else "k"
                        given[first] = m.group("first")
        if spec is None:
            raise ValueError(_unknown(name, family))
        metric = _bind(spec, given, text, defaults or {})
    if family is not None and metric.family != family:
        raise ValueError(f"metric {metric.name!r} is a {metric.family} metric; only {family} metrics "
                         f"apply here: {known_names(family)}")
    return metric


def parse_at_cutoff(name: str | Metric, k: int) -> Metric:
    """``name`` parsed (:func:`parse_metric`); a metric that takes a cutoff and was given none gets ``k``,
    its other parameters kept (the name then shows the cutoff: ``recall`` -> ``recall@3``)."""
    try:
        metric = parse_metric(name)
    except ValueError:
        spec = _ALIASES.get(name.strip().lower()) if isinstance(name, str) else None
        if spec is None or spec.cutoff == "none":
            raise
        return spec.with_k(k)  # "recall": a required cutoff, taken at k
    if metric.spec.cutoff != "none" and metric.k is None:
        return metric.spec.bind(**{**metric.kwargs, "k": k})
    return metric


def parse_metrics(names: str | Metric | Iterable[str | Metric], family: str | None = None, *,
                  defaults: Mapping[str, ParamValue] | None = None) -> list[Metric]:
    """Parse one name, a comma-separated string, or a list of names (each possibly
    comma-separated) into a list of :class:`Metric` without repeats (the first
    spelling of a metric is kept), in the order given. ValueError when empty."""
    if isinstance(names, (str, Metric)):
        names = [names]
    out: list[Metric] = []
    for item in names:
        parts = split_names(item) if isinstance(item, str) else [item]
        for part in parts:
            if isinstance(part, str) and not part.strip():
                continue
            metric = parse_metric(part, family, defaults=defaults)
            if metric not in out:
                out.append(metric)
    if not out:
        raise ValueError("no metric given: pass names like 'ndcg@10', 'mrr', 'recall@10'")
    return out


def split_names(text: str) -> list[str]:
    """Split at the commas outside parentheses: ``"ndcg@3(gain=exponential),mrr"`` is two names."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def find_metric(metric: str | Metric, names: Iterable[str]) -> str | None:
    """The entry of ``names`` that denotes the same metric as ``metric``: the same spelling,
    else the same metric and parameters under another spelling (``ndcg_cut_3`` finds ``ndcg@3``);
    None when there is none. ``metric`` must be a known name (ValueError otherwise)."""
    names = list(names)
    if isinstance(metric, str) and metric in names:
        return metric
    wanted = parse_metric(metric)
    for n in names:
        try:
            if parse_metric(n) == wanted:
                return n
        except ValueError:
            continue
    return None
