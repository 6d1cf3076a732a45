"""`ragworkbook eval` against a misbehaving Ollama server (fakes.faulty_ollama, no model): every fault
ends in a report with the failures counted and their reasons; the output path is checked before any
work; a run killed at random points leaves a report that loads and resumes; bad inputs and a gate that
cannot compare say so in one line."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes.faulty_ollama import FAKE_MODEL, FaultyOllama

from ragworkbook.cli import main
from ragworkbook.evaluation.report import Report
from ragworkbook.llm.replay import Recording

pytestmark = pytest.mark.usefixtures("clean_env")

Q1 = "How many attention heads did they use?"  # the eval set's q1: the question the faults hit
METRICS = "token_f1,bleu"
JUDGED = "faithfulness,context_precision,context_recall,context_relevance,hallucination"
REASON = {"500": "generation_error", "invalid_json": "generation_error", "bad_shape": "generation_error",
          "drop": "generation_error", "cut": "generation_error", "slow": "generation_error"}
JUDGE_REASON = {"500": "llm_error", "invalid_json": "llm_error", "bad_shape": "llm_error",
                "drop": "llm_error", "cut": "llm_error", "slow": "llm_error", "schema": "output_parse_error"}


@pytest.fixture(scope="module")
def server():
    with FaultyOllama(slow_seconds=1.5) as srv:
        yield srv


@pytest.fixture()
def ollama(server, monkeypatch):
    server.clear_faults()
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    yield server
    server.clear_faults()


def eval_argv(out, *extra, judge=False):
    metrics = METRICS + ("," + JUDGED if judge else "")
    return ["eval", "--backend", "ollama", "--model", FAKE_MODEL, "--retriever", "bm25", "--metric", metrics,
            "--no-progress", "--ollama-timeout", "0.5", "--out", str(out), *(["--judge"] if judge else []),
            *extra]


def rows(report):
    return {r["id"]: r for r in report.rows}


# --- every fault, without a judge: the question it hits is a failed row, the rest is scored --------------
@pytest.mark.parametrize("fault", list(REASON))
def test_a_generation_fault_is_a_counted_failed_row(ollama, tmp_path, capsys, fault):
    ollama.add_fault(fault, match=Q1, kind="answer")
    out = tmp_path / "r.json"
    assert main(eval_argv(out)) == 0
    _, err = capsys.readouterr()
    assert f"1 of 8 questions have no answer (1 {REASON[fault]}); the other rows are kept" in err
    assert "--resume" in err and "Traceback" not in err
    rep = Report.load(out)
    q1 = rows(rep)["q1"]
    assert q1["error"]["reason"] == REASON[fault] and ollama.url in q1["error"]["message"]
    for m in METRICS.split(","):
        a = rep.aggregates[m]
        assert (a.n, a.failed, a.undefined) == (7, 1, 0)
        assert rep.unscored(m)["q1"].reason == REASON[fault]
    assert rep.meta["complete"] and rep.meta["failed_questions"] == 1


def test_a_reply_that_breaks_a_schema_is_no_failure_when_none_was_asked(ollama, tmp_path):
    """A plain answer has no schema: a JSON-looking answer is just an answer (scored, if badly)."""
    ollama.add_fault("schema", match=Q1, kind="answer")
    out = tmp_path / "r.json"
    assert main(eval_argv(out)) == 0
    assert rows(Report.load(out))["q1"]["answer"] == '{"unexpected": "field"}'


# --- every fault, with a judge -------------------------------------------------------------------------
@pytest.mark.parametrize("fault", list(JUDGE_REASON))
def test_a_judge_fault_fails_the_judged_metrics_of_that_question_only(ollama, tmp_path, fault):
    ollama.add_fault(fault, match=Q1, kind="judge")
    out = tmp_path / "r.json"
    assert main(eval_argv(out, judge=True)) == 0
    rep = Report.load(out)
    assert not any(r.get("error") for r in rep.rows)  # every answer was generated
    for m in JUDGED.split(","):
        u = rep.unscored(m)
        assert u["q1"].outcome == "failed" and u["q1"].reason == JUDGE_REASON[fault], (m, u["q1"])
        assert all(x.outcome != "failed" for q, x in u.items() if q != "q1")
        assert rep.aggregates[m].failed == 1
    for m in METRICS.split(","):  # the other metrics of q1 are there
        assert rows(rep)["q1"]["metrics"][m] is not None


@pytest.mark.parametrize("fault", list(REASON))
def test_a_generation_fault_with_a_judge(ollama, tmp_path, fault):
    ollama.add_fault(fault, match=Q1, kind="answer")
    out = tmp_path / "r.json"
    assert main(eval_argv(out, judge=True)) == 0
    rep = Report.load(out)
    for m in (METRICS + "," + JUDGED).split(","):
        assert rep.unscored(m)["q1"].reason == REASON[fault]
        assert rep.aggregates[m].failed == 1


def test_an_unknown_model_stops_the_run_with_the_pull_command_and_a_report(ollama, tmp_path, capsys):
    ollama.add_fault("unknown_model")
    out = tmp_path / "r.json"
    before = len(ollama.requests)
    assert main(eval_argv(out, judge=True)) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ragworkbook eval: error: model '{FAKE_MODEL}' is not available on the Ollama")
    assert f"ollama pull {FAKE_MODEL}" in err and "8 of 8 questions have no answer (8 model_not_found)" in err
    assert len(ollama.requests) - before == 1  # asked once, not eight times
    rep = Report.load(out)
    assert not rep.meta["complete"] and rep.aggregates["bleu"].failed == 8
    assert rep.unscored("faithfulness")["q8"].message.startswith("not asked: the run stopped asking")
    # pulled now: --resume asks the eight questions
    ollama.clear_faults()
    assert main(eval_argv(out, "--resume", judge=True)) == 0
    rep = Report.load(out)
    assert rep.meta["complete"] and rep.aggregates["bleu"].n == 8


def test_a_judge_model_that_is_missing_keeps_the_answers(ollama, tmp_path, capsys):
    ollama.add_fault("unknown_model", kind="judge")
    out = tmp_path / "r.json"
    assert main(eval_argv(out, judge=True)) == 1
    err = capsys.readouterr().err
    assert "ragworkbook eval: error: the judge stopped at question 'q1'" in err and "ollama pull" in err
    rep = Report.load(out)
    assert all(r["answer"] for r in rep.rows) and rep.aggregates["bleu"].n == 8
    assert rep.aggregates["faithfulness"].failed == 8
    assert {u.reason for u in rep.unscored("faithfulness").values()} == {"model_not_found"}


def test_nothing_failed_is_recorded_as_an_answer(ollama, tmp_path, monkeypatch):
    """Recording while the server fails: the failed requests leave no entry; a strict replay of the same
    command finds the answers that were given and fails, counted, where none was."""
    for fault in ("500", "invalid_json", "drop"):
        ollama.add_fault(fault, match=Q1, kind="answer")
    ollama.add_fault("500", match=Q1, kind="judge")
    rec = tmp_path / "rec.json"
    monkeypatch.setenv("RAGWORKBOOK_RECORD", "1")
    assert main(eval_argv(tmp_path / "live.json", "--recording", str(rec), judge=True)) == 0
    entries = Recording(rec).entries.values()
    assert entries and not any(Q1 in m["content"] for e in entries for m in e["messages"])
    assert all("error" not in e for e in entries)  # no failure of this run was kept as anything
    monkeypatch.delenv("RAGWORKBOOK_RECORD")
    argv = eval_argv(tmp_path / "replay.json", "--recording", str(rec), judge=True)
    argv[argv.index("--backend") + 1] = "replay"
    assert main(argv) == 0
    rep = Report.load(tmp_path / "replay.json")
    assert rows(rep)["q1"]["error"]["reason"] == "replay_miss" and rep.aggregates["bleu"].n == 7


# --- the output path, checked before any work -----------------------------------------------------------
def _unwritable_folder(tmp_path: Path) -> Path:
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o500)
        return folder
    if not Path("/sys").is_dir():  # pragma: no cover - root outside Linux
        pytest.skip("no folder is unwritable for root here")
    return Path("/sys")  # read-only even for root


@pytest.mark.usefixtures("no_ollama")
@pytest.mark.parametrize("where,said", [
    ("folder", "is a folder; give a file path to write the output to"),
    ("under_file", "is a file, not a folder"),
    ("unwritable", "is not writable"),
])
def test_an_output_path_that_cannot_be_written_fails_before_any_work(tmp_path, capsys, where, said):
    (tmp_path / "notes.txt").write_text("x")
    out = {"folder": tmp_path, "under_file": tmp_path / "notes.txt" / "r.json",
           "unwritable": _unwritable_folder(tmp_path) / "r.json"}[where]
    # the dense retriever would load MiniLM and the Ollama backend would find no server: neither happens
    argv = ["eval", "--backend", "ollama", "--judge", "--no-progress", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ragworkbook eval: error: ") and said in err and err.count("\n") == 1


def test_resume_needs_out(capsys):
    assert main(["eval", "--resume"]) == 2
    assert "--resume continues the report written to --out: give --out PATH" in capsys.readouterr().err


# --- unreadable inputs ----------------------------------------------------------------------------------
@pytest.mark.parametrize("option,folder_said", [
    ("--eval-set", "is a folder, not a file"),
    ("--corpus", "no PDF or text file (.pdf, .txt, .md) in this folder"),
])
def test_unreadable_inputs_are_one_line_errors(tmp_path, capsys, monkeypatch, option, folder_said):
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    locked = tmp_path / "locked.json"
    locked.write_text("{}")
    real = Path.read_text

    def read_text(self, *a, **kw):
        if self == locked:
            raise PermissionError(13, "Permission denied")
        return real(self, *a, **kw)

    monkeypatch.setattr(Path, "read_text", read_text)
    for path, said in ((tmp_path, folder_said), (binary, "not UTF-8 text"),
                       (locked, "cannot be read (Permission denied)")):
        assert main(["eval", option, str(path), "--retriever", "bm25", "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"ragworkbook eval: error: {path}") and said in err and err.count("\n") == 1


def test_a_folder_given_as_a_report(tmp_path, capsys):
    assert main(["compare", str(tmp_path), str(tmp_path)]) == 2
    assert f"{tmp_path} is a folder; give the path of a report file" in capsys.readouterr().err


# --- the gate when B has no value for the gated metric (item 1, at the command line) ----------------------
def test_the_gate_fails_and_says_why_when_b_has_no_value_for_the_metric(tmp_path, capsys):
    def report(values):
        rs = [{"id": f"q{i}", "question": f"q{i}?", "reference": "r", "answer": "a",
               "metrics": {"bleu": v, "token_f1": 0.5},
               "unscored": {} if v is not None else
               {"bleu": {"outcome": "failed", "reason": "generation_error", "message": "HTTP 500"}}}
              for i, v in enumerate(values)]
        return Report(rows=rs, metrics=["bleu", "token_f1"])

    a = report([10.0, 20.0, 30.0, 40.0, 50.0, 60.0]).save(tmp_path / "a.json")
    b = report([None] * 6).save(tmp_path / "b.json")
    assert main(["compare", str(a), str(b), "--fail-if-worse", "bleu"]) == 1
    err = capsys.readouterr().err
    assert "GATE FAILED: cannot compare bleu:" in err
    assert main(["compare", str(a), str(b), "--fail-if-worse", "token_f1"]) == 0  # comparable: passes


# --- kill -9 during a run: the report on disk always loads, and --resume finishes it -------------------
def test_a_run_killed_at_random_points_leaves_a_report_that_loads_and_resumes(server, tmp_path):
    server.clear_faults()
    items = [{"id": f"q{i}", "question": f"What is said about attention in part {i}?", "keyword": "attention",
              "reference": "Attention weighs the values."} for i in range(600)]
    es = tmp_path / "big.json"
    es.write_text(json.dumps({"name": "big", "items": items}))
    out = tmp_path / "r.json"
    repo = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "OLLAMA_HOST": server.url,
           "PYTHONPATH": os.pathsep.join([repo, os.environ.get("PYTHONPATH", "")])}
    for name in ("RAGWORKBOOK_BACKEND", "RAGWORKBOOK_RECORD", "RAGWORKBOOK_MODEL"):
        env.pop(name, None)
    argv = [sys.executable, "-m", "ragworkbook", "eval", "--backend", "ollama", "--model", FAKE_MODEL,
            "--retriever", "bm25", "--metric", "recall,token_f1", "--eval-set", str(es), "--no-progress",
            "--out", str(out), "--json", "--resume"]
    rng = random.Random(3)
    answered = 0
    for _ in range(6):
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        stamp = out.stat().st_mtime_ns if out.exists() else None
        deadline = time.monotonic() + 60  # wait for this run's first checkpoint, then kill at a random moment
        while (out.stat().st_mtime_ns if out.exists() else None) == stamp and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        rep = Report.load(out)  # never torn, never invalid
        assert len(rep.rows) == 600
        n = sum(1 for r in rep.rows if not r.get("error"))
        assert n >= answered  # what was answered stays answered
        answered = n
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rep = Report.load(out)
    assert rep.meta["complete"] and rep.aggregates["token_f1"].n == 600
    assert 0 < answered < 600 and rep.meta["resumed"] == answered  # the kills landed mid-run
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
