"""`ragworkbook eval` against a misbehaving Ollama server (fakes.faulty_ollama, no model): every fault
ends in a report with the failures counted and their reasons; the output path is checked before any
work and never overwrites an input; a proxy in the environment never sees a request to a loopback server;
a run killed at random points leaves a report that loads and resumes; bad inputs (pipes nothing writes
to, a bad OLLAMA_HOST, a malformed report) and a gate that cannot compare, or is given a mostly failed
or interrupted run, say so in one line."""

from __future__ import annotations

import io
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import threading
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
    with FaultyOllama(slow_seconds=5.0) as srv:
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
            "--no-progress", "--ollama-timeout", "2", "--out", str(out), *(["--judge"] if judge else []),
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
    assert entries and Q1 not in rec.read_text(encoding="utf-8")  # no prompt is recorded (format 2)
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
    real = Path.read_bytes

    def read_bytes(self, *a, **kw):
        if self == locked:
            raise PermissionError(13, "Permission denied")
        return real(self, *a, **kw)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
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


# --- a proxy in the environment: loopback traffic never goes through it -----------------------------------
@pytest.fixture()
def proxy(monkeypatch):
    from fakes.proxy import PROXY_VARIABLES, LoggingProxy

    with LoggingProxy() as p:
        for name in PROXY_VARIABLES:
            monkeypatch.setenv(name, p.url)
        for name in ("no_proxy", "NO_PROXY"):
            monkeypatch.delenv(name, raising=False)
        yield p


def test_a_proxy_in_the_environment_receives_nothing_for_a_loopback_server(ollama, proxy, tmp_path, capsys):
    import urllib.request

    from ragworkbook.workbook.doctor import doctor_report

    with pytest.raises(OSError):  # the proxy is live: a client that honours http_proxy reaches it
        urllib.request.build_opener().open(ollama.url + "/api/tags", timeout=5)  # reads the proxy now
    assert len(proxy.received) == 1
    proxy.received.clear()
    before = len(ollama.requests)
    assert main(eval_argv(tmp_path / "r.json", "--ollama-timeout", "30", judge=True)) == 0
    assert len(ollama.requests) - before > 8  # every answer and judgment went to the server itself
    status = doctor_report(load_models=False, chat_timeout=30)["backends"]["ollama"]
    assert status["server"] and status["models"] == [FAKE_MODEL]
    assert proxy.received == []  # no prompt, no probe, nothing went through the proxy
    rep = Report.load(tmp_path / "r.json")
    assert rep.aggregates["faithfulness"].n == 8 and not rep.aggregates["faithfulness"].failed


# --- --out equal to an input: refused before any work, the input untouched --------------------------------
def _answers(tmp_path):
    path = tmp_path / "mine.jsonl"
    record = {"question": Q1, "answer": "8", "contexts": ["h = 8"], "reference": "8"}
    path.write_text(json.dumps(record) + "\n")
    return path


@pytest.mark.parametrize("via", ["same path", "symbolic link", "hard link", "other spelling"])
def test_out_equal_to_the_answers_file_is_refused_and_the_file_is_kept(tmp_path, capsys, via):
    src = _answers(tmp_path)
    before = src.read_bytes()
    out = {"same path": src, "symbolic link": tmp_path / "link.jsonl", "hard link": tmp_path / "hard.jsonl",
           "other spelling": tmp_path / "sub" / ".." / "mine.jsonl"}[via]
    if via == "symbolic link":
        out.symlink_to(src)
    elif via == "hard link":
        os.link(src, out)
    elif via == "other spelling":
        (tmp_path / "sub").mkdir()
    argv = ["eval", "--answers", str(src), "--metric", "token_f1", "--no-progress", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ragworkbook eval: error: --out {out} is the input given as --answers")
    assert "the report would overwrite it" in err and err.count("\n") == 1
    assert src.read_bytes() == before


@pytest.mark.usefixtures("no_ollama")
@pytest.mark.parametrize("option", ["--recording", "--eval-set", "--corpus", "--qrels"])
def test_out_equal_to_any_input_of_a_pipeline_run_is_refused_before_any_work(tmp_path, capsys, monkeypatch,
                                                                             option):
    from ragworkbook.paths import data_path

    src = tmp_path / {"--recording": "rec.json", "--eval-set": "es.json", "--corpus": "notes.json",
                      "--qrels": "q.txt"}[option]
    shutil.copy({"--recording": data_path("recordings", "12_end_to_end.json"),
                 "--eval-set": data_path("eval_set.json"),
                 "--corpus": data_path("attention_notes.json")}.get(option, data_path("eval_set.json")), src)
    before = src.read_bytes()
    loaded = []
    monkeypatch.setattr("ragworkbook.retrieval.runs.build_retriever", lambda *a, **k: loaded.append(a))
    argv = ["eval", "--backend", "replay", "--recording", str(tmp_path / "other.json"), "--retriever", "bm25",
            "--no-progress", option, str(src), "--out", str(src)]
    if option == "--recording":
        argv[3:5] = []
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--out {src} is the input given as {option}" in err and err.count("\n") == 1
    assert src.read_bytes() == before and loaded == []


def test_out_equal_to_the_bundled_eval_set_is_refused(capsys, no_ollama):
    from ragworkbook.paths import data_path

    out = data_path("eval_set.json")
    before = out.read_bytes()
    assert main(["eval", "--backend", "ollama", "--no-progress", "--out", str(out)]) == 2
    assert "is the input given as --eval-set" in capsys.readouterr().err and out.read_bytes() == before


# --- the gate on a run that mostly failed, or did not finish -----------------------------------------------
def _gate_reports(tmp_path, b_values, complete=True, not_run=0):
    def report(values, done=True, skipped=0):
        rs = []
        for i, v in enumerate(values):
            r = {"id": f"q{i}", "question": f"q{i}?", "reference": "r", "answer": "a",
                 "metrics": {"recall@3": v},
                 "unscored": {} if v is not None else
                 {"recall@3": {"outcome": "failed", "reason": "generation_error", "message": "HTTP 500"}}}
            if i >= len(values) - skipped:
                r["error"] = {"reason": "not_run", "message": "not asked: the run was interrupted"}
            rs.append(r)
        return Report(rows=rs, metrics=["recall@3"], meta={"complete": done})

    a = report([1.0, 0.5, 1.0, 0.5, 1.0, 0.5, 1.0, 0.5]).save(tmp_path / "a.json")
    b = report(b_values, complete, not_run).save(tmp_path / "b.json")
    return str(a), str(b)


def test_the_gate_fails_when_b_mostly_failed(tmp_path, capsys):
    a, b = _gate_reports(tmp_path, [1.0] + [None] * 7)  # one pair compared: the test could never say "worse"
    assert main(["compare", a, b, "--fail-if-worse", "recall@3"]) == 1
    err = capsys.readouterr().err
    assert "GATE FAILED: cannot compare recall@3: only 1 pair compared (7 failed, 0 undefined)" in err
    assert "needs at least 6 pairs" in err and "eval --resume" in err
    a, b = _gate_reports(tmp_path, [1.0, 0.5, 1.0, 0.5, 1.0, 0.5, 1.0, None])  # 7 pairs, 1 failed: fine
    assert main(["compare", a, b, "--fail-if-worse", "recall@3"]) == 0


def test_the_gate_refuses_an_interrupted_report_unless_allowed(tmp_path, capsys):
    a, b = _gate_reports(tmp_path, [1.0, 0.5, 1.0, None, None, None, None, None], complete=False, not_run=5)
    assert main(["compare", a, b, "--fail-if-worse", "recall@3", "--min-pairs", "3"]) == 1
    err = capsys.readouterr().err
    assert (f"GATE FAILED: report B ({b}) is incomplete: it was saved by an interrupted run (complete: "
            "false, 5 of 8 questions not run)") in err and "--resume" in err and "--allow-incomplete" in err
    assert main(["compare", a, b, "--fail-if-worse", "recall@3", "--min-pairs", "3",
                 "--allow-incomplete"]) == 1  # still: more failed (5) than compared (3)
    assert "more values failed (5) than were compared (3)" in capsys.readouterr().err


def test_a_metric_only_b_lacks_is_named_as_such(tmp_path, capsys):
    a, _ = _gate_reports(tmp_path, [1.0] * 8)
    rows = [{"id": f"q{i}", "question": f"q{i}?", "reference": "r", "answer": "a",
             "metrics": {"token_f1": 1.0}} for i in range(8)]
    b = Report(rows=rows, metrics=["token_f1"]).save(tmp_path / "b2.json")
    assert main(["compare", a, str(b), "--fail-if-worse", "recall@3"]) == 2
    err = capsys.readouterr().err
    assert "report B has no 'recall@3' value, report A has: B was run without recall@3 (its metrics: " \
           "token_f1); run it again with --metric recall@3" in err
    assert "unknown metric" not in err


def test_compare_on_a_report_whose_meta_is_malformed_is_a_one_line_error(tmp_path, capsys):
    a, b = _gate_reports(tmp_path, [1.0] * 8)
    for bad in ("unmeasured", ["faithfulness"]):
        data = json.loads(Path(b).read_text())
        data["meta"]["judge_reliability"] = bad
        Path(b).write_text(json.dumps(data))
        assert main(["compare", a, b]) == 2
        err = capsys.readouterr().err
        assert "meta 'judge_reliability' must be an object" in err and err.count("\n") == 1, err


# --- pipes, FIFOs, a closed stdout, a bad OLLAMA_HOST ------------------------------------------------------
def _fifo(tmp_path, name, content=None):
    path = tmp_path / name
    os.mkfifo(path)
    if content is not None:
        def write():
            with open(path, "wb") as fh:
                fh.write(content)
        threading.Thread(target=write, daemon=True).start()
    return path


def test_answers_from_a_pipe_are_read(tmp_path, capsys):
    data = _answers(tmp_path).read_bytes()
    pipe = _fifo(tmp_path, "answers", data)  # no suffix: the format is read from the content
    assert main(["eval", "--answers", str(pipe), "--metric", "token_f1", "--no-progress"]) == 0
    assert f"1 answers from {pipe}, scored as given" in capsys.readouterr().out


def test_a_fifo_nothing_writes_to_is_an_error_not_a_hang(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("ragworkbook._io.PIPE_WAIT", 0.3)
    answers = _answers(tmp_path)
    for option, name, said in (("--qrels", "q.txt", "a pipe that nothing wrote to within 0.3 s"),
                               ("--answers", "a.jsonl", "a pipe that nothing wrote to within 0.3 s")):
        fifo = _fifo(tmp_path, name)
        argv = ["eval", "--metric", "token_f1", "--no-progress", option, str(fifo)]
        if option == "--qrels":
            argv += ["--answers", str(answers)]
        t = time.monotonic()
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert said in err and str(fifo) in err and time.monotonic() - t < 10
    fifo = _fifo(tmp_path, "rec.json")
    assert main(["eval", "--backend", "replay", "--recording", str(fifo), "--retriever", "bm25",
                 "--metric", "token_f1", "--no-progress"]) == 2
    assert f"recording {fifo} is a pipe; a recording is a regular file" in capsys.readouterr().err


def test_qrels_from_a_pipe_are_read_and_errors_name_the_pipe(tmp_path, capsys):
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"id": "q1", "question": Q1, "answer": "8", "contexts": ["h = 8", "x"],
                                   "context_ids": ["c1", "c2"], "reference": "8"}) + "\n")
    pipe = _fifo(tmp_path, "q.txt", b"q1 0 c1 1\n")
    assert main(["eval", "--answers", str(answers), "--qrels", str(pipe), "--metric", "precision@1",
                 "--no-progress", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["precision@1"]["mean"] == 1.0
    pipe = _fifo(tmp_path, "bad.txt", b"q1 0 c1\n")
    assert main(["eval", "--answers", str(answers), "--qrels", str(pipe), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert str(pipe) in err and ".ragworkbook-pipe" not in err


def test_a_closed_stdout_pipe_ends_quietly(tmp_path):
    """`| head -c 1` closes the pipe while the command still writes: the output (per-query values of 30,000
    queries, far more than a pipe holds) cannot all be written before head exits, so the EPIPE is certain."""
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(30000)))
    run.write_text("".join(f"q{i} Q0 d{i} 1 1.0 r\n" for i in range(30000)))
    repo = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([repo, os.environ.get("PYTHONPATH", "")])}
    cmd = (f"{shlex.quote(sys.executable)} -m ragworkbook ir-eval -q --qrels {shlex.quote(str(qrels))} "
           f"--run {shlex.quote(str(run))} --metric ndcg@10 | head -c 1")
    done = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], env=env, capture_output=True, text=True,
                          timeout=120)
    # Nothing on stderr (it was "[Errno 32] Broken pipe" with exit 2). Whether the writer sees EPIPE at all
    # depends on the kernel (on some sandboxes the write after the reader left succeeds silently, exit 0);
    # when it does, the status is 141 as for `cat`: the next test shows that path on its own.
    assert done.stdout == "n" and done.stderr == "" and done.returncode in (0, 141)


class _ClosedPipe(io.StringIO):
    """A stdout whose reader has gone: every write and flush raises BrokenPipeError."""

    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_broken_pipe_is_exit_141_and_silent(tmp_path, monkeypatch, capsys):
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text("q1 Q0 d1 1 1.0 r\n")
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["ir-eval", str(qrels), str(run)]) == 141
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("value,said", [("127.0.0.1:99999", "port out of range 0-65535"),
                                        ("localhost:abc", "port could not be cast to integer"),
                                        ("ftp://127.0.0.1", "unknown scheme 'ftp'")])
def test_a_bad_ollama_host_names_the_variable(monkeypatch, capsys, value, said):
    monkeypatch.setenv("OLLAMA_HOST", value)
    assert main(["eval", "--backend", "ollama", "--retriever", "bm25", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ragworkbook eval: error: OLLAMA_HOST={value!r} is not an Ollama server address")
    assert said in err and "127.0.0.1:11434" in err and err.count("\n") == 1
    from ragworkbook.workbook.doctor import doctor_report

    status = doctor_report(load_models=False)["backends"]["ollama"]  # doctor says so too, no traceback
    assert f"OLLAMA_HOST={value!r}" in status["error"] and not status["server"]


# --- replay: no recording given, a miss that says what changed, a hint that spares the bundled file --------
def test_replay_without_a_recording_says_which_option(capsys):
    assert main(["eval", "--backend", "replay", "--retriever", "bm25", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--backend replay answers from a recording: give --recording FILE" in err
    assert "get_generator" not in err


def test_a_replay_miss_on_a_bundled_recording_says_to_record_into_a_copy(tmp_path, capsys):
    from ragworkbook.paths import data_path

    bundled = data_path("recordings", "12_end_to_end.json")
    before = bundled.read_bytes()
    es = tmp_path / "es.json"
    es.write_text(json.dumps({"items": [{"id": "n1", "question": "What colour is the sky in the notes?",
                                         "reference": "Blue."}]}))
    argv = ["eval", "--backend", "replay", "--recording", str(bundled), "--eval-set", str(es),
            "--retriever", "bm25", "--metric", "token_f1", "--no-progress"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "This prompt was never recorded" in err and "a question that is not in the recording" in err
    assert "options changed" not in err
    assert "--recording my_recording.json" in err and f"cp {bundled} my_recording.json" in err
    assert bundled.read_bytes() == before


# --- resume: the refusal shows where the settings differ --------------------------------------------------
def test_a_resume_refusal_shows_the_part_that_differs(ollama, tmp_path, capsys, monkeypatch):
    out = tmp_path / "r.json"
    assert main(eval_argv(out)) == 0
    with FaultyOllama() as other:
        monkeypatch.setenv("OLLAMA_HOST", other.url)
        assert main(eval_argv(out, "--resume")) == 2
    err = capsys.readouterr().err
    old_port, new_port = ollama.url.rsplit(":", 1)[1], other.url.rsplit(":", 1)[1]
    assert "cannot resume" in err and f":{old_port}" in err and f":{new_port}" in err


# --- an answers file without contexts, and one that gives nothing to score --------------------------------
def test_answers_without_contexts_are_scored_on_what_needs_none(ollama, tmp_path, capsys):
    path = tmp_path / "export.csv"
    path.write_text(f"question,answer,reference\n{Q1},Eight heads.,8 heads\nWhich optimizer?,Adam,Adam\n")
    out = tmp_path / "r.json"
    argv = ["eval", "--answers", str(path), "--backend", "ollama", "--model", FAKE_MODEL, "--judge",
            "--metric", "token_f1,faithfulness,context_relevance,recall@3", "--qrels", str(_qrels(tmp_path)),
            "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    rep = Report.load(out)
    assert rep.aggregates["token_f1"].n == 2
    for m in ("faithfulness", "context_relevance", "recall@3"):
        assert rep.aggregates[m].undefined == 2 and {u.reason for u in rep.unscored(m).values()} == {
            "no_contexts"}
    assert "no_contexts" in capsys.readouterr().out


def _qrels(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 c1 1\n")
    return path


def test_nothing_to_score_says_what_each_family_needs(tmp_path, capsys):
    path = tmp_path / "bare.jsonl"
    path.write_text(json.dumps({"question": "Q?", "answer": "A"}) + "\n")
    out = tmp_path / "r.json"
    assert main(["eval", "--answers", str(path), "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"nothing to score in {path}" in err
    for family, need in (("retrieval", "relevance judgements (--qrels FILE"),
                         ("generation", "a reference answer (per record reference or ground_truth)"),
                         ("judged", "an LLM judge (--judge")):
        assert any(line.startswith(f"  {family} (") and need in line for line in err.splitlines()), family
    assert not out.exists()


def test_a_ten_megabyte_answer_is_kept_and_not_scored(tmp_path, capsys):
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps({"question": Q1, "answer": "eight heads " * 900_000, "contexts": ["h = 8"],
                                "reference": "8 heads"}) + "\n")
    out = tmp_path / "r.json"
    assert main(["eval", "--answers", str(path), "--metric", "meteor,token_f1", "--no-progress",
                 "--out", str(out)]) == 0
    rep = Report.load(out)
    why = rep.unscored("meteor")[rep.ids[0]]
    assert why.reason == "text_too_long" and "the answer has 10,800,000 characters" in why.message
    assert len(rep.rows[0]["answer"]) == 10_800_000
