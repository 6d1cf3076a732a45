"""trec_eval's options in ``ragworkbook ir-eval``: -n, -J, -N, -Z, -D, -T, -R (qrels_jg: judgment groups;
prefs and qrels_prefs: preferences),
-o, -v, the long options, a run on standard input, means summed in query order and the last line's runid.

Two references, neither of them code of ours:
- trec_eval's own expected outputs (the ``trec_eval`` data set, :func:`trec_eval_suite`),
  for the options that leave them as they are or cut them predictably;
- the output of the C trec_eval 10 itself for every option on small inputs made here
  (``tests/data/trec_options``, written by ``scripts/make_trec_option_fixtures.py`` with the C program:
  ``COMMANDS.json`` lists each command and its expected output), byte for byte;
and pytrec_eval (trec_eval's code) value for value where it has the option (-J).
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from ragworkbook.cli import main

OPTIONS = Path(__file__).resolve().parents[1] / "data" / "trec_options"
MANIFEST = json.loads((OPTIONS / "COMMANDS.json").read_text(encoding="utf-8"))


def trec_eval_suite() -> Path:
    """trec_eval's conformance files (qrels, runs, ``out.*``): the ``trec_eval`` data set of
    :mod:`ragworkbook.datasets` (the session's mirror of ../shared/data in the tests). Fails under CI,
    skips otherwise, when it cannot be had."""
    from conftest import datasets

    return next(iter(datasets("trec_eval")["trec_eval"].values())).parent


def _run(argv: list[str], capsys, stdin: bytes | None = None, monkeypatch=None) -> str:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    assert main(["ir-eval", *argv]) == 0
    return capsys.readouterr().out


def test_the_fixtures_were_written_by_the_c_trec_eval():
    assert MANIFEST["trec_eval"] == "trec_eval version 10.0-rc3"
    flags = {a for c in MANIFEST["commands"] for a in c["args"] if a.startswith("-")}
    for flag in ("-n", "--nosummary", "-J", "-N", "-Z", "-D", "-T", "-R", "-o", "-c", "-M", "-l", "-q", "-"):
        assert flag in flags
    assert any("qrels_jg" in c["args"] for c in MANIFEST["commands"])  # judgment groups
    for form in ("prefs", "qrels_prefs"):  # preferences, with -q, -c, -M, -J, -n and -m
        assert any(form in c["args"] for c in MANIFEST["commands"])
    assert sum(c["expected"].startswith("out.rand") for c in MANIFEST["commands"]) == 8  # random cases


@pytest.mark.parametrize("cmd", MANIFEST["commands"], ids=[c["expected"] for c in MANIFEST["commands"]])
def test_each_option_prints_exactly_what_the_c_trec_eval_prints(cmd, capsys, monkeypatch):
    monkeypatch.chdir(OPTIONS)
    stdin = (OPTIONS / cmd["stdin"]).read_bytes() if cmd["stdin"] else None
    got = _run(cmd["args"], capsys, stdin, monkeypatch)
    expected = (OPTIONS / cmd["expected"]).read_text(encoding="utf-8")
    assert got.splitlines() == expected.splitlines()  # the diff, line by line, when it fails
    assert got == expected


def test_the_160_query_mean_is_summed_in_query_order():
    """P@5 over 160 queries sums to 32.6 (mean 0.20375): trec_eval adds the values one after another and
    prints 0.2037; numpy's pairwise sum rounds the other way (0.2038), which ir-eval printed before."""
    assert (OPTIONS / "out.160").read_text().splitlines()[0].endswith("\t0.2037")
    qrels = {}
    for line in (OPTIONS / "qrels160.txt").read_text().splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    p5 = [sum(qrels[q].values()) / 5 for q in sorted(qrels)]
    assert f"{float(np.mean(p5)):6.4f}" == "0.2038"  # the pairwise sum: the old last digit


def test_runid_is_the_last_lines_tag(capsys):
    run = (OPTIONS / "run.txt").read_text().splitlines()
    assert run[0].endswith(" first") and run[-1].endswith(" last")
    out = _run(["-m", "runid", str(OPTIONS / "qrels.txt"), str(OPTIONS / "run.txt")], capsys)
    assert out == "runid                 \tall\tlast\n"


def test_trec_eval_suite_outputs_under_the_options_that_keep_them(capsys, monkeypatch):
    suite = trec_eval_suite()
    qrels, run = str(suite / "qrels.test"), str(suite / "results.test")
    expected = (suite / "out.test.aq").read_text()
    assert _run(["-m", "all_trec", "-q", qrels, run], capsys) == expected
    # long options, -o, -T trec_results, -R qrels change nothing
    assert _run(["--measure", "all_trec", "--query_eval_wanted", "-o", "-T", "trec_results", "-R", "qrels",
                 qrels, run], capsys) == expected
    # the run on standard input
    assert _run(["-m", "all_trec", "-q", qrels, "-"], capsys, (suite / "results.test").read_bytes(),
                monkeypatch) == expected
    # -n: the per-query lines only
    per_query = "".join(line for line in expected.splitlines(keepends=True) if "\tall\t" not in line)
    assert _run(["-m", "all_trec", "-q", "-n", qrels, run], capsys) == per_query
    # -D LEVEL.QID: that query's lines, and a summary over it alone
    only = _run(["-m", "all_trec", "-q", "-D", "0.302", qrels, run], capsys)
    lines_302 = [line for line in expected.splitlines() if "\t302\t" in line]
    assert [line for line in only.splitlines() if "\tall\t" not in line] == lines_302
    summary = {line.split("\t")[0].strip(): line.split("\t")[2] for line in only.splitlines()
               if "\tall\t" in line}
    assert summary["num_q"] == "1"
    assert summary["map"] == next(line.split("\t")[2] for line in lines_302 if line.startswith("map "))
    # -N changes utility only by d x N
    base = _run(["-m", "utility.1,-1,0,0.001", "-q", qrels, run], capsys)
    sized = _run(["-m", "utility.1,-1,0,0.001", "-q", "-N", "1000", qrels, run], capsys)
    diffs = [float(b.split("\t")[2]) - float(a.split("\t")[2])
             for a, b in zip(base.splitlines(), sized.splitlines(), strict=True)]
    assert diffs == pytest.approx([1.0] * len(diffs))


@pytest.mark.reference
def test_judged_only_agrees_with_pytrec_eval(capsys):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="the dev extra has pytrec-eval-terrier")
    qrels: dict[str, dict[str, int]] = {}
    for line in (OPTIONS / "qrels.txt").read_text().splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    run: dict[str, dict[str, float]] = {}
    for line in (OPTIONS / "run.txt").read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    measures = {"map", "P_5", "P_10", "ndcg_cut_10", "recip_rank", "bpref", "num_ret"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P", "ndcg_cut", "recip_rank", "bpref",
                                                       "num_ret"}, judged_docs_only_flag=True)
    ref = evaluator.evaluate(run)
    out = _run(["-q", "-J", "-m", "map", "-m", "P.5,10", "-m", "ndcg_cut.10", "-m", "recip_rank", "-m",
                "bpref", "-m", "num_ret", "--score-precision", "float32", str(OPTIONS / "qrels.txt"),
                str(OPTIONS / "run.txt")], capsys)
    checked = 0
    for line in out.splitlines():
        name, qid, value = (x.strip() for x in line.split("\t"))
        if qid == "all" or name not in measures:
            continue
        assert float(value) == pytest.approx(ref[qid][name], abs=5e-5), (name, qid)
        checked += 1
    assert checked == 7 * len(ref)


def test_refused_formats_and_version(capsys):
    for flags, word in ((["-R", "prefs"], "needs preference measures"),  # trec_eval's default set: no
                        (["-R", "qrels_prefs", "-m", "map"], "cannot be computed from preferences"),
                        (["-R", "qrels_pref"], "illegal relevance format"),
                        (["-T", "trec_time"], "illegal retrieval results format")):
        assert main(["ir-eval", *flags, str(OPTIONS / "qrels.txt"), str(OPTIONS / "run.txt")]) == 2
        assert word in capsys.readouterr().err
    # prefs_avgjg_Rnonrel on a judgment group of several sub-groups: refused, naming the query and group
    assert main(["ir-eval", "-R", "prefs", "-m", "all_prefs", str(OPTIONS / "prefs.txt"),
                 str(OPTIONS / "run_prefs.txt")]) == 2
    err = capsys.readouterr().err
    assert "prefs_avgjg_Rnonrel: query 'p1', judgment group 'u1' has several sub-groups" in err
    assert main(["ir-eval", "-v"]) == 0
    assert capsys.readouterr().err.startswith("trec_eval version 10.0-rc3")
