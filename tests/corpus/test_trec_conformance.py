"""trec_eval's own conformance suite, run through ``ragworkbook ir-eval``: every output, byte for byte.

trec_eval's test qrels and runs, and the exact output of trec_eval 10 for each
command of its ``quicktest`` target (``out.*``), are the ``trec_eval`` data set
(:mod:`ragworkbook.datasets`: downloaded from usnistgov/trec_eval at a pinned
commit, checked, cached; never copied into this repository). :data:`COMMANDS`
holds those commands (written out here, from trec_eval's Makefile). For every command whose
inputs are in the data set, ``ragworkbook ir-eval`` runs with the same flags and
files, and its stdout must equal the ``out.*`` file exactly (an empty diff). The
dict API and the columns engine give the same values as the command, measure by
measure. A command whose inputs are not in the data set (trec_eval's z-score
file) is skipped with the file it lacks.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ragworkbook.cli import main
from ragworkbook.corpus.trec import read_qrels, read_qrels_columns, read_run, read_run_columns
from ragworkbook.datasets import fetch, get
from ragworkbook.metrics.batch import evaluate_columns, evaluate_run
from ragworkbook.metrics.trec_names import parse_trec_measures

pytestmark = pytest.mark.datasets("trec_eval")

#: trec_eval's quicktest commands: (flags, qrels, run, expected output).
QUICKTEST = [
    ("", "qrels.test", "results.test", "out.test"),
    ("-m all_trec", "qrels.test", "results.test", "out.test.a"),
    ("-m all_trec -q", "qrels.test", "results.test", "out.test.aq"),
    ("-m all_trec -q -c", "qrels.test", "results.trunc", "out.test.aqc"),
    ("-m all_trec -q -c -M100", "qrels.test", "results.trunc", "out.test.aqcM"),
    ("-m all_trec -mrelstring.20 -q -l2", "qrels.rel_level", "results.test", "out.test.aql"),
    ("-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 -m Rprec_mult.5.0,0.2,0.35 "
     "-mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20",
     "qrels.test", "results.test", "out.test.meas_params"),
    ("-q -m all_trec -Z zscores_file", "qrels.test", "results.test", "out.test.aqZ"),
]


class _Suite:
    """The data set's folder, fetched on first use (a test that cannot get it fails under CI)."""

    _dir: Path | None = None

    def __truediv__(self, name: str) -> Path:
        if _Suite._dir is None:
            _Suite._dir = next(iter(fetch("trec_eval", progress=False).values())).parent
        return _Suite._dir / name


DATA = _Suite()
FILES = {f.name for f in get("trec_eval").files}


@dataclass
class Command:
    """One line of the quicktest target: ``./trec_eval FLAGS QRELS RUN | diff - OUT``."""

    text: str
    qrels: str
    run: str
    out: str
    flags: dict[str, str] = field(default_factory=dict)

    @property
    def missing_inputs(self) -> list[str]:
        files = [self.qrels, self.run, self.out] + ([self.flags["Z"]] if "Z" in self.flags else [])
        return [f for f in files if f not in FILES]


def parse_flags(text: str) -> dict[str, str]:
    """trec_eval's flags as ``{letter: value}`` (``-m`` values joined by a space)."""
    flags: dict[str, str] = {}
    for name, value in _flag_words(shlex.split(text)):
        flags[name] = (flags[name] + " " + value) if name == "m" and name in flags else value
    return flags


def _flag_words(words: list[str]) -> list[tuple[str, str]]:
    out, i = [], 0
    while i < len(words):
        w = words[i]
        if w.startswith("-") and len(w) >= 2:
            name, value = w[1], w[2:]
            if name in "mlMRZ" and not value:  # the value is the next word
                i += 1
                value = words[i]
            out.append((name, value))
        i += 1
    return out


COMMANDS = [Command(flags, qrels, run, out, parse_flags(flags)) for flags, qrels, run, out in QUICKTEST]
RUNNABLE = [c for c in COMMANDS if not c.missing_inputs and "R" not in c.flags and "Z" not in c.flags]


def argv_of(cmd: Command) -> list[str]:
    """The ``ragworkbook ir-eval`` command line of a suite command: its flags as written, then the files."""
    return ["ir-eval", *shlex.split(cmd.text), str(DATA / cmd.qrels), str(DATA / cmd.run)]


def test_the_table_lists_the_suite():
    assert len(COMMANDS) == 8
    assert [c.out for c in RUNNABLE] == ["out.test", "out.test.a", "out.test.aq", "out.test.aqc",
                                         "out.test.aqcM", "out.test.aql", "out.test.meas_params"]
    flags = {c.out: c.flags for c in RUNNABLE}
    assert flags["out.test.aqcM"] == {"m": "all_trec", "q": "", "c": "", "M": "100"}
    assert flags["out.test.aql"]["l"] == "2"


@pytest.mark.parametrize("cmd", COMMANDS, ids=[f"{c.out}:{i}" for i, c in enumerate(COMMANDS)])
def test_ir_eval_prints_exactly_what_trec_eval_prints(cmd: Command, capsys):
    if cmd.missing_inputs:
        pytest.skip(f"inputs not in the trec_eval data set: {', '.join(cmd.missing_inputs)}")
    if "R" in cmd.flags:
        pytest.skip(f"-R {cmd.flags['R']}: a judgement format ragworkbook does not read")
    if "Z" in cmd.flags:  # pragma: no cover - the z-score file is not in the data set
        pytest.skip("-Z: its z-score file is not in the data set (tests/corpus/test_trec_options.py "
                    "checks -Z)")
    assert main(argv_of(cmd)) == 0
    got = capsys.readouterr().out
    expected = (DATA / cmd.out).read_text()
    assert got.splitlines() == expected.splitlines()  # the diff, line by line, when it fails
    assert got == expected  # byte for byte


def _printed(path: Path) -> dict[str, dict[str, str]]:
    """trec_eval's output as ``{measure: {qid or "all": printed value}}``."""
    out: dict[str, dict[str, str]] = {}
    for line in path.read_text().splitlines():
        name, qid, value = line.split("\t")
        out.setdefault(name.strip(), {})[qid] = value
    return out


@pytest.mark.parametrize("cmd", RUNNABLE, ids=[c.out for c in RUNNABLE])
def test_the_dict_api_gives_the_same_values(cmd: Command):
    """The dict path (``evaluate_run``) and the columns path agree with trec_eval value by value."""
    measures = [v for k, v in _flag_list(cmd) if k == "m"] or ["official"]
    request = parse_trec_measures(measures)
    opts = {"missing": "zero" if "c" in cmd.flags else "skip",
            "depth": int(cmd.flags["M"]) if "M" in cmd.flags else None,
            "relevance_level": float(cmd.flags["l"]) if "l" in cmd.flags else None}
    cols = evaluate_columns(read_qrels_columns(DATA / cmd.qrels), read_run_columns(DATA / cmd.run),
                            request.metrics, **opts)
    dicts = evaluate_run(read_qrels(DATA / cmd.qrels), read_run(DATA / cmd.run), request.metrics, **opts)
    assert dicts.query_ids == cols.query_ids
    expected = _printed(DATA / cmd.out)
    checked = 0
    for m in request.metrics:
        for res in (cols, dicts):
            if m.spec.aggregate != "none":
                value = res.mean[m.name]
                shown = f"{int(value)}" if m.spec.value == "count" else f"{value:6.4f}"
                assert shown == expected[m.name]["all"], (m.name, "all")
            if "q" in cmd.flags and m.spec.per_query:
                for qid, v in zip(res.query_ids, res.values[m.name].tolist(), strict=True):
                    shown = (f"'{v}'" if m.spec.value == "text" else f"{int(v)}" if m.spec.value == "count"
                             else f"{v:6.4f}")
                    assert shown == expected[m.name][qid], (m.name, qid)
                    checked += 1
    assert checked or "q" not in cmd.flags


def _flag_list(cmd: Command) -> list[tuple[str, str]]:
    return _flag_words(shlex.split(cmd.text))


def test_results_trunc_has_trailing_text_and_is_read():
    lines = (DATA / "results.trunc").read_text().splitlines()
    assert any(len(line.split()) > 6 for line in lines)
    run = read_run(DATA / "results.trunc")
    assert sorted(run) == ["301", "303"] and sum(map(len, run.values())) == len(lines)
    assert run["301"]["FBIS3-27619"] == 2.138276


#: measures checked against pytrec_eval (trec_eval 9's code) on the suite's qrels and run
PYTREC_MEASURES = ["map", "Rprec", "bpref", "recip_rank", "P_5", "P_10", "ndcg", "ndcg_cut_10", "recall_100",
                   "num_rel_ret"]


@pytest.mark.reference
def test_values_agree_with_pytrec_eval_on_the_suite():
    from conftest import reference

    pytrec_eval = reference("pytrec_eval")
    qrels, run = read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test")
    theirs = pytrec_eval.RelevanceEvaluator(
        {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()},
        {"map", "Rprec", "bpref", "recip_rank", "P", "ndcg", "ndcg_cut", "recall", "num_rel_ret"}).evaluate(
        {q: dict(docs) for q, docs in run.items()})
    request = parse_trec_measures(PYTREC_MEASURES)
    ours = evaluate_run(qrels, run, request.metrics)
    assert sorted(theirs) == ours.query_ids
    for m in request.metrics:
        for qid in ours.query_ids:
            assert ours.per_query[qid][m.name] == pytest.approx(theirs[qid][m.name], abs=1e-6), (m.name, qid)
