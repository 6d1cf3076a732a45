"""trec_eval's measure syntax, its measure sets and its output format.

``ragworkbook ir-eval`` takes trec_eval's command line: ``-m P.5,10`` (the
measure ``P`` at cutoffs 5 and 10), ``-m ndcg_cut.10``, ``-m
iprec_at_recall..10,.50``, ``-m utility.2,-1,0,0``, ``-m ndcg.1=3,2=9`` (a gain
per grade), ``-m rbp.p=0.8``, the sets ``-m official`` (trec_eval's default when
no ``-m`` is given) and ``-m all_trec``, and prints what trec_eval prints:
``%-22s\\t%s\\t%6.4f`` lines, the queries first (``-q``) then ``all``, the
measures in trec_eval's order, counts as integers, ``runid`` from the run's
sixth column. Which metric each trec_eval measure is, with its default
parameters and its sets, is declared in its
:class:`~ragworkbook.metrics.registry.MetricSpec` (``trec``); this module holds
only trec_eval's own order of measures (its ``measures.c`` table) and the
parsing of its parameter strings, the same as trec_eval's ``meas_init.c``:
cutoff lists sorted, duplicates refused; other parameter strings kept as written
in the printed name (``utility_2,-1,0,0``).

A name that is not trec_eval's (``ndcg@10``, ``mrr``, ``err@20``) is parsed by
:func:`ragworkbook.metrics.registry.parse_metric` and printed as written, after
trec_eval's measures.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ragworkbook.metrics.registry import Metric, MetricSpec, ParamValue, TrecName, parse_metrics, specs

__all__ = ["TREC_ORDER", "SETS", "TrecRequest", "parse_trec_measures", "trec_lines"]

#: trec_eval's measures in the order it computes and prints them (its measures.c table), those
#: ragworkbook implements; ``runid`` is the run's name, not a metric.
TREC_ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj",
)
_RUNID = "runid"


def _trec_table() -> dict[str, tuple[MetricSpec, TrecName]]:
    table = {}
    for spec in specs("retrieval"):
        for tn in spec.trec:
            table[tn.name] = (spec, tn)
    return table


def _sets() -> dict[str, tuple[str, ...]]:
    table = _trec_table()
    out: dict[str, tuple[str, ...]] = {}
    for nickname in ("official", "all_trec"):
        members = tuple(n for n in TREC_ORDER if n in table and nickname in table[n][1].sets)
        out[nickname] = (_RUNID,) + members
    return out


#: trec_eval's measure sets, from the specs: ``official`` (its default) and ``all_trec``.
SETS = _sets()


@dataclass
class TrecRequest:
    """What ``-m`` asked for: the metrics in printing order, each labelled with trec_eval's printed name,
    and whether the ``runid`` line is printed."""

    metrics: list[Metric]
    runid: bool = False


def _numbers(text: str, whole: bool, measure: str) -> list[float]:
    """trec_eval's ``atol`` / ``atof`` of each comma-separated item (a prefix that is a number)."""
    out = []
    for item in text.split(","):
        item = item.strip()
        num = _prefix_number(item, whole)
        if num is None:
            raise ValueError(f"-m {measure}.{text}: {item!r} is not a number")
        out.append(num)
    return out


def _prefix_number(item: str, whole: bool) -> float | None:
    best = None
    for end in range(1, len(item) + 1):
        try:
            best = int(item[:end]) if whole else float(item[:end])
        except ValueError:
            if whole and best is not None:
                break
            continue
    return best


def _expand(spec: MetricSpec, tn: TrecName, params: str | None,
            defaults: Mapping[str, ParamValue]) -> list[Metric]:
    """One trec_eval measure with its parameter string (None: its defaults) -> the metrics it prints."""
    name = tn.name
    if tn.param is not None:
        p = spec.param(tn.param)
        assert p is not None
        if params is None:
            values = list(tn.defaults)
        else:
            values = sorted(_numbers(params, p.type is int, name))
            if p.type is int and values and values[0] <= 0:
                raise ValueError(f"-m {name}.{params}: cutoffs must be positive (trec_eval: Negative cutoff)")
            if any(a == b for a, b in zip(values, values[1:], strict=False)):
                raise ValueError(f"-m {name}.{params}: a cutoff is given twice")
        return [spec.bind(f"{name}_{tn.shown.format(p.type(v))}", defaults, **{tn.param: p.type(v)})
                for v in values]
    if params is None:
        return [spec.bind(name, defaults)]
    label = f"{name}_{params}"
    if tn.text is not None:
        p = spec.param(tn.text)
        assert p is not None
        value = params if p.type in (str, tuple) else (
            _numbers(params, p.type is int, name)[0] if p.type in (int, float) else params)
        return [spec.bind(label, defaults, **{tn.text: value})]
    if tn.pairs:
        given = {}
        for pair in params.split(","):
            key, eq, value = pair.partition("=")
            if not eq:
                raise ValueError(f"-m {name}.{params}: write its parameters as name=value pairs")
            if spec.param(key.strip()) is not None:
                given[key.strip()] = value
        return [spec.bind(label, defaults, **given)]
    raise ValueError(f"-m {name}.{params}: {name} takes no parameters")


def parse_trec_measures(args: Iterable[str], defaults: Mapping[str, ParamValue] | None = None) -> TrecRequest:
    """trec_eval's ``-m`` arguments (each ``measure``, ``measure.params`` or a set) -> the request.

    trec_eval's rules: a measure is printed once, in trec_eval's order, whatever the order
    of the ``-m``; parameters given for a measure replace its defaults even when a set also
    names it (``-m all_trec -m relstring.20``); a name that is not trec_eval's is parsed by
    :func:`ragworkbook.metrics.registry.parse_metrics` and printed after, as written.
    ``defaults``: values of parameters no measure sets (``{"gain": "exponential"}``).
    ValueError for an unknown measure or malformed parameters.
    """
    defaults = defaults or {}
    table = _trec_table()
    marked: set[str] = set()
    params: dict[str, str] = {}
    others: list[str] = []
    for arg in args:
        arg = arg.strip()
        if not arg:
            continue
        root, dot, rest = arg.partition(".")
        if root in SETS:
            marked.update(SETS[root])
        elif root == _RUNID or root in table:
            marked.add(root)
            if dot and root not in params:
                if not rest:
                    raise ValueError(f"-m {arg}: an empty parameter list (trec_eval: improper measure)")
                params[root] = rest
        else:
            others.append(arg)
    metrics: list[Metric] = []
    for name in TREC_ORDER:
        if name in marked and name != _RUNID:
            spec, tn = table[name]
            metrics += _expand(spec, tn, params.get(name), defaults)
    if others:
        for m in parse_metrics(others, "retrieval", defaults=defaults):
            if m not in metrics:
                metrics.append(m)
    return TrecRequest(metrics, _RUNID in marked)


def _format(value: object, form: str) -> str:
    if form == "count":
        return str(int(round(float(value))))  # type: ignore[arg-type]
    if form == "text":
        return f"'{value}'"
    return f"{float(value):6.4f}"  # type: ignore[arg-type]


def trec_lines(metrics: Sequence[Metric], query_ids: Sequence[str], values: dict[str, np.ndarray],
               summary: dict[str, float], *, per_query: bool, runid: str | None = None,
               show_summary: bool = True, zscores: bool = False) -> list[str]:
    """trec_eval's output: with ``per_query``, one line per query and metric (query by query), then the
    ``all`` lines (``runid`` first when given; none without ``show_summary``, trec_eval ``-n``).
    ``%-22s\\t%s\\t%6.4f``; counts as integers. ``zscores`` (trec_eval ``-Z``): each numeric measure's
    name printed after a ``Z``, every value (counts too) as ``%6.4f``."""
    lines = []
    shown = [m for m in metrics if m.spec.per_query]

    def name_form(m: Metric) -> tuple[str, str]:
        if zscores and m.spec.value != "text":
            return f"Z{m.name:<22}", "float"
        return f"{m.name:<22}", m.spec.value

    if per_query:
        cols = [(*name_form(m), values[m.name].tolist()) for m in shown]
        for i, qid in enumerate(query_ids):
            for name, form, vals in cols:
                lines.append(f"{name}\t{qid}\t{_format(vals[i], form)}")
    if not show_summary:
        return lines
    if runid is not None:
        lines.append(f"{_RUNID:<22}\tall\t{runid}")
    for m in metrics:
        if m.spec.aggregate == "none":
            continue
        name, form = name_form(m)
        lines.append(f"{name}\tall\t{_format(summary[m.name], form)}")
    return lines
