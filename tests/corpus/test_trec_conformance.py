"""trec_eval's own conformance suite, run through ``ragworkbook ir-eval``: every output, byte for byte.

``tests/data/trec_eval/`` holds trec_eval's test qrels and runs, the exact
output of trec_eval for each command of its ``quicktest`` target (``out.*``)
and the Makefile lines behind them. For every command whose inputs are in the
suite, ``ragworkbook ir-eval`` runs with the same flags and files, and its
stdout must equal the ``out.*`` file exactly (an empty diff). The dict API and
the columns engine give the same values as the command, measure by measure.
A command whose inputs are not in the suite (trec_eval's preference and
z-score files were never copied) is skipped with the file it lacks.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ragworkbook.cli import main
from ragworkbook.corpus.trec import read_qrels, read_qrels_columns, read_run, read_run_columns
from ragworkbook.metrics.batch import evaluate_columns, evaluate_run
from ragworkbook.metrics.trec_names import parse_trec_measures

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"

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


def argv_of(cmd: Command) -> list[str]:
    """The ``ragworkbook ir-eval`` command line of a suite command: its flags as written, then the files."""
    words = shlex.split(cmd.text.split("| diff - ")[0])[1:]
    return ["ir-eval", *[w for w in words if not w.startswith("test/")], str(DATA / cmd.qrels),
            str(DATA / cmd.run)]


def test_the_excerpt_lists_the_suite():
    assert len(COMMANDS) == 15
    assert [c.out for c in RUNNABLE] == ["out.test", "out.test.a", "out.test.aq", "out.test.aqc",
                                         "out.test.aqcM", "out.test.aql", "out.test.meas_params"]
    flags = {c.out: c.flags for c in RUNNABLE}
    assert flags["out.test.aqcM"] == {"m": "all_trec", "q": "", "c": "", "M": "100"}
    assert flags["out.test.aql"]["l"] == "2"


@pytest.mark.parametrize("cmd", COMMANDS, ids=[f"{c.out}:{i}" for i, c in enumerate(COMMANDS)])
def test_ir_eval_prints_exactly_what_trec_eval_prints(cmd: Command, capsys):
    if cmd.missing_inputs:
        pytest.skip(f"inputs not in trec_eval's copied suite: {', '.join(cmd.missing_inputs)}")
    if "R" in cmd.flags:
        pytest.skip(f"-R {cmd.flags['R']}: a judgement format ragworkbook does not read")
    if "Z" in cmd.flags:  # pragma: no cover - the z-score file is not in the suite
        pytest.skip("-Z: its z-score file is not in the suite (tests/corpus/test_trec_options.py checks -Z)")
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
    words = shlex.split(cmd.text.split("| diff - ")[0])[1:]
    out, i = [], 0
    while i < len(words):
        w = words[i]
        if w.startswith("-") and len(w) >= 2:
            name, value = w[1], w[2:]
            if name in "mlMRZ" and not value:
                i += 1
                value = words[i]
            out.append((name, value))
        i += 1
    return out


def test_results_trunc_has_trailing_text_and_is_read():
    lines = (DATA / "results.trunc").read_text().splitlines()
    assert any(len(line.split()) > 6 for line in lines)
    run = read_run(DATA / "results.trunc")
    assert sorted(run) == ["301", "303"] and sum(map(len, run.values())) == len(lines)
    assert run["301"]["FBIS3-27619"] == 2.138276
