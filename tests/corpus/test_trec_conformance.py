"""trec_eval's own conformance suite, run through ragworkbook.

``tests/data/trec_eval/`` holds trec_eval's test qrels and runs, the exact
output of trec_eval for each command of its ``quicktest`` target
(``out.*``) and the Makefile lines behind them. For every command whose inputs
are in the suite, the flags are read from the Makefile (``-c``, ``-M``, ``-l``,
``-q``), every measure of the expected output that ragworkbook implements is
computed with the same options — through the columns engine ``ir-eval`` uses,
through the dict API, and through ``ragworkbook ir-eval --json`` itself — and
compared with trec_eval's printed value (4 decimals), per query and for ``all``.
A measure ragworkbook does not implement is skipped by name: the list is
:data:`NOT_IMPLEMENTED`, and a measure outside both lists fails the test.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ragworkbook.cli import main
from ragworkbook.corpus.trec import read_qrels, read_qrels_columns, read_run, read_run_columns
from ragworkbook.metrics.batch import evaluate_columns, evaluate_run
from ragworkbook.metrics.registry import parse_metric

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"

#: trec_eval measures ragworkbook does not implement (names as printed, cutoffs and parameters removed).
NOT_IMPLEMENTED = {
    "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "gm_map", "gm_bpref", "bpref", "infAP",
    "iprec_at_recall", "11pt_avg", "Rprec_mult", "relative_P", "set_P", "set_recall", "set_map", "set_F",
    "set_relative_P", "utility", "G", "binG", "Rndcg", "ndcg_rel", "rbp", "rbp_resid", "unj", "relstring",
    "runid",
    "ndcg_1=3,2=9,4=4.5",  # NDCG with a gain per grade given on the command line
}


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
        return [f for f in files if not (DATA / f).exists()]


def parse_makefile(path: Path) -> list[Command]:
    """The trec_eval commands of the ``quicktest`` target, with their flags."""
    lines = path.read_text().splitlines()
    body = []
    inside = False
    for line in lines:
        text = re.sub(r"^\d+[:-]", "", line)  # the excerpt carries grep's line numbers
        if text.startswith("quicktest:"):
            inside = True
            continue
        if inside and not text.strip():
            break
        if inside and "./trec_eval" in text:
            body.append(text.strip())
    commands = []
    for text in body:
        pipeline, out = text.split("| diff - ")
        words = shlex.split(pipeline)[1:]
        flags: dict[str, str] = {}
        files = []
        i = 0
        while i < len(words):
            w = words[i]
            if w.startswith("-") and len(w) >= 2:
                name, value = w[1], w[2:]
                if name in "mlMRZ" and not value:  # the value is the next word
                    i += 1
                    value = words[i]
                flags[name] = (flags[name] + " " + value) if name == "m" and name in flags else value
            else:
                files.append(w)
            i += 1
        strip = lambda f: f.removeprefix("test/")  # noqa: E731
        if "Z" in flags:
            flags["Z"] = strip(flags["Z"])
        commands.append(Command(text, strip(files[0]), strip(files[1]), strip(out.strip()), flags))
    return commands


COMMANDS = parse_makefile(DATA / "Makefile.quicktest.excerpt")
RUNNABLE = [c for c in COMMANDS if not c.missing_inputs and "R" not in c.flags and "Z" not in c.flags]


def expected_values(path: Path) -> dict[str, dict[str, str]]:
    """trec_eval's output as ``{measure: {qid or "all": printed value}}``."""
    out: dict[str, dict[str, str]] = {}
    for line in path.read_text().splitlines():
        name, qid, value = line.split()
        out.setdefault(name, {})[qid] = value
    return out


def measure_base(name: str) -> str:
    """``P_10`` -> ``P``, ``iprec_at_recall_0.10`` -> ``iprec_at_recall``, ``utility_2,-1,0,0`` ->
    ``utility``; a gain table (``ndcg_1=3,2=9,4=4.5``: NDCG with other gains) stays whole."""
    return name if "=" in name else re.sub(r"_[\d.,\-]+$", "", name)


def implemented(name: str) -> bool:
    try:
        parse_metric(name, "retrieval")
    except ValueError:
        return False
    return True


def options(cmd: Command) -> dict:
    return {"missing": "zero" if "c" in cmd.flags else "skip",
            "depth": int(cmd.flags["M"]) if "M" in cmd.flags else None,
            "relevance_level": float(cmd.flags["l"]) if "l" in cmd.flags else None}


def compare(expected: dict[str, dict[str, str]], per_query: dict[str, dict[str, float]],
            mean: dict[str, float], n_queries: int) -> int:
    """Assert every implemented measure's value as trec_eval prints it; return how many were compared."""
    checked = 0
    for name, by_qid in expected.items():
        if name == "num_q":
            assert n_queries == int(by_qid["all"])
            continue
        if not implemented(name):
            continue
        for qid, text in by_qid.items():
            ours = mean[name] if qid == "all" else per_query[qid][name]
            assert f"{ours:.4f}" == text, (name, qid, ours, text)
            checked += 1
    return checked


def test_the_excerpt_lists_the_suite():
    assert len(COMMANDS) == 15
    assert [c.out for c in RUNNABLE] == ["out.test", "out.test.a", "out.test.aq", "out.test.aqc",
                                         "out.test.aqcM", "out.test.aql", "out.test.meas_params"]
    flags = {c.out: c.flags for c in RUNNABLE}
    assert flags["out.test.aqcM"] == {"m": "all_trec", "q": "", "c": "", "M": "100"}
    assert flags["out.test.aql"]["l"] == "2"


@pytest.mark.parametrize("cmd", COMMANDS, ids=[c.out for c in COMMANDS])
def test_every_measure_we_implement_matches_trec_eval(cmd: Command):
    if cmd.missing_inputs:
        pytest.skip(f"inputs not in trec_eval's copied suite: {', '.join(cmd.missing_inputs)}")
    if "R" in cmd.flags:
        pytest.skip(f"-R {cmd.flags['R']}: a judgement format ragworkbook does not read")
    expected = expected_values(DATA / cmd.out)
    names = [n for n in expected if implemented(n)]
    unknown = {measure_base(n) for n in expected if not implemented(n) and n != "num_q"} - NOT_IMPLEMENTED
    assert not unknown, f"measures neither implemented nor listed as not implemented: {unknown}"
    assert names, "no measure of this output is implemented"
    opts = options(cmd)
    # the columns engine (what ir-eval runs)
    res = evaluate_columns(read_qrels_columns(DATA / cmd.qrels), read_run_columns(DATA / cmd.run), names,
                           **opts)
    checked = compare(expected, res.per_query, res.mean, res.n_queries)
    # the dict API gives the same
    res_dict = evaluate_run(read_qrels(DATA / cmd.qrels), read_run(DATA / cmd.run), names, **opts)
    assert compare(expected, res_dict.per_query, res_dict.mean, res_dict.n_queries) == checked
    per_query = "q" in cmd.flags
    n_values = sum(len(v) for n, v in expected.items() if implemented(n))
    assert checked == n_values == len(names) * (res.n_queries + 1 if per_query else 1)


@pytest.mark.parametrize("cmd", RUNNABLE, ids=[c.out for c in RUNNABLE])
def test_ir_eval_with_trec_eval_flags(cmd: Command, capsys):
    expected = expected_values(DATA / cmd.out)
    names = [n for n in expected if implemented(n)]
    argv = ["ir-eval", "--qrels", str(DATA / cmd.qrels), "--run", str(DATA / cmd.run), "--json",
            "--metric", ",".join(names)]
    for flag in "qc":
        if flag in cmd.flags:
            argv.append(f"-{flag}")
    for flag in "Ml":
        if flag in cmd.flags:
            argv.append(f"-{flag}{cmd.flags[flag]}")
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    compare(expected, data.get("per_query", {}), data["mean"], data["n_queries"])


def test_results_trunc_has_trailing_text_and_is_read():
    lines = (DATA / "results.trunc").read_text().splitlines()
    assert any(len(line.split()) > 6 for line in lines)
    run = read_run(DATA / "results.trunc")
    assert sorted(run) == ["301", "303"] and sum(map(len, run.values())) == len(lines)
    assert run["301"]["FBIS3-27619"] == 2.138276


def test_skipped_measures_are_exactly_the_not_implemented_list():
    seen = set()
    for cmd in RUNNABLE:
        seen |= {measure_base(n) for n in expected_values(DATA / cmd.out) if not implemented(n)}
    assert seen - {"num_q"} == NOT_IMPLEMENTED
