"""Every registered metric conforms to its spec (the registry-wide checks, as Hugging Face ``evaluate``
checks each metric's ``_compute`` against its declared inputs and scikit-learn's ``test_common.py`` runs
over every registered metric).

- Its implementation loads and is called the one way every family is, ``impl(*inputs, **params)``: its
  signature takes the family's inputs positionally, then exactly the spec's parameters (with the same
  defaults) and its ``optional_inputs``; a judged metric's is async.
- Every retrieval kernel with a readable one-query definition (the spec's ``reference``) equals it on
  random rankings and relevance judgements, for random values of the parameters both take.
- Every retrieval kernel stays within its spec's scale on random rankings.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragworkbook.metrics.ranked import Ranked
from ragworkbook.metrics.registry import MetricSpec, Param, specs

_EMPTY = inspect.Parameter.empty
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def signature_problems(spec: MetricSpec, fn: object, *, inputs: tuple[str, ...] | None = None) -> list[str]:
    """What is wrong with ``fn`` as the implementation of ``spec`` (empty: nothing)."""
    inputs = spec.inputs if inputs is None else inputs
    params = list(inspect.signature(fn).parameters.values())  # type: ignore[arg-type]
    out = []
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        out.append("takes *args or **kwargs: name its parameters, so that a dropped one is seen")
    head, rest = params[:len(inputs)], params[len(inputs):]
    if len(head) < len(inputs) or any(p.kind not in _POSITIONAL for p in head):
        out.append(f"does not take its inputs {inputs} positionally")
    declared = {p.name: p for p in spec.params}
    names = {p.name for p in rest}
    missing = sorted(set(declared) - names)
    extra = sorted(names - set(declared) - set(spec.optional_inputs))
    if missing:
        out.append(f"ignores its declared parameters {missing}")
    if extra:
        out.append(f"takes parameters its spec does not declare: {extra}")
    for p in rest:
        if p.name in declared:
            d = declared[p.name]
            if p.default is _EMPTY:
                if not d.required and d.default is None:
                    out.append(f"{p.name} has no default, but the spec lets it be None")
            elif p.default != d.default:
                out.append(f"{p.name} defaults to {p.default!r}, the spec to {d.default!r}")
        elif p.name in spec.optional_inputs and p.default is _EMPTY:
            out.append(f"optional input {p.name} has no default")
    return out


@pytest.mark.parametrize("spec", specs(), ids=lambda s: s.name)
def test_every_implementation_takes_its_inputs_and_exactly_its_declared_parameters(spec):
    fn = spec.implementation
    assert signature_problems(spec, fn) == [], spec.name
    if spec.family == "judged" and spec.derived_from is None:
        assert inspect.iscoroutinefunction(fn), f"{spec.name}: a judged metric's implementation is async"


@pytest.mark.parametrize("spec", [s for s in specs() if s.reference is not None], ids=lambda s: s.name)
def test_every_reference_takes_a_ranking_a_relevance_and_only_declared_parameters(spec):
    assert spec.family == "retrieval"
    ref = spec.reference_function
    assert all(p.name in {q.name for q in spec.params}
               for p in list(inspect.signature(ref).parameters.values())[2:]), spec.name


def test_a_dropped_parameter_is_caught():
    """The check itself: an implementation that swallows its parameters, or forgets one, fails."""
    spec = MetricSpec("x", "generation", "x", "a metric of a test",
                      params=(Param("weight", float, 0.5, "w"),), impl=lambda a, r, **kw: 0.0)
    assert "takes *args or **kwargs" in signature_problems(spec, spec.implementation)[0]

    def forgets(answer, reference):
        return 0.0

    def other_default(answer, reference, weight=0.7):
        return 0.0

    assert signature_problems(spec, forgets) == ["ignores its declared parameters ['weight']"]
    assert signature_problems(spec, other_default) == ["weight defaults to 0.7, the spec to 0.5"]


# --------------------------------------------------------------------------- kernels and references

_DOCS = [f"d{i}" for i in range(12)]
_ranking = st.lists(st.sampled_from(_DOCS), unique=True, max_size=12)
_relevance = st.dictionaries(st.sampled_from(_DOCS), st.integers(-1, 3))


def _value(p: Param, ref_param: inspect.Parameter | None) -> st.SearchStrategy:
    if p.choices:
        return st.sampled_from(p.choices)
    if p.type is int:
        numbers = st.integers(max(int(p.low or 0), 1), 14)
        optional = not p.required and (ref_param is None or ref_param.default is not _EMPTY)
        return st.one_of(st.none(), numbers) if optional and p.default is None else numbers
    if p.type is float:
        low = 0.0 if p.low is None else max(p.low, 0.0)
        return st.floats(low, 1.0 if p.high is None else p.high)
    raise AssertionError(f"no strategy for {p.name}")


@st.composite
def _case(draw: st.DrawFn, spec: MetricSpec) -> tuple[list[str], dict[str, int], dict[str, object]]:
    ref = inspect.signature(spec.reference_function).parameters
    values = {p.name: draw(_value(p, ref.get(p.name))) for p in spec.params if p.name in ref}
    return draw(_ranking), draw(_relevance), values


def _kernel_value(spec: MetricSpec, ranking, relevance, values) -> float:
    ranked = Ranked.from_rankings({"q": ranking}, {"q": relevance})
    return float(spec.bind(**values).compute(ranked)[0])


@pytest.mark.parametrize("spec", [s for s in specs() if s.reference is not None], ids=lambda s: s.name)
def test_every_kernel_equals_its_one_query_definition_on_random_rankings(spec):
    @settings(max_examples=150, deadline=None)
    @given(_case(spec))
    def check(case):
        ranking, relevance, values = case
        expected = spec.reference_function(ranking, relevance, **values)
        assert _kernel_value(spec, ranking, relevance, values) == pytest.approx(expected, abs=1e-12), values

    check()


def _retrieval_defaults(spec: MetricSpec) -> dict[str, object]:
    """Values for the parameters a spec requires (k = 5; the recall level 0.5)."""
    return {p.name: (5 if p.type is int else 0.5) for p in spec.params if p.required}


@pytest.mark.parametrize("spec", [s for s in specs("retrieval") if s.value == "float"], ids=lambda s: s.name)
def test_every_retrieval_kernel_stays_within_its_scale(spec):
    low, high = spec.scale
    metric = spec.bind(**_retrieval_defaults(spec))

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(_ranking, _relevance), min_size=1, max_size=4))
    def check(queries):
        rankings = {f"q{i}": r for i, (r, _) in enumerate(queries)}
        qrels = {f"q{i}": rel for i, (_, rel) in enumerate(queries)}
        try:
            values = np.asarray(metric.compute(Ranked.from_rankings(rankings, qrels)), dtype=float)
        except ValueError as exc:  # ERR: a grade above its scale's top is the documented error
            assert "max_grade" in str(exc)
            return
        assert values.shape == (len(queries),)
        assert np.all(np.isfinite(values))
        assert np.all(values >= low - 1e-12) and np.all(values <= (high if math.isfinite(high) else np.inf)
                                                          + 1e-12), values

    check()
