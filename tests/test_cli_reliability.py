"""Issue 30's fault suite: outputs that never clobber, signals that keep the work, a gate that cannot be
fooled, secrets that stay put, and messages that name the file. One test (or more) per numbered item;
``scripts/probe_faults.py`` runs the same faults from the command line at full size."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ragworkbook.cli import main
from ragworkbook.evaluation.report import Report

pytestmark = pytest.mark.usefixtures("clean_env")

REPO = Path(__file__).resolve().parents[1]
JC = ["judge-check", "--dataset", "ff", "--judge", "word-support", "--limit", "5", "--no-progress"]


def _answers(tmp_path: Path, n: int = 8, name: str = "a.jsonl", **over) -> Path:
    path = tmp_path / name
    recs = []
    for i in range(n):
        rec = {
            "id": f"q{i}",
            "question": f"question {i}?",
            "answer": f"the answer is {i} apples",
            "contexts": [f"text {i}", f"the answer is {i} apples"],
            "context_ids": [f"x{i}", f"c{i}"],
            "relevant_ids": [f"c{i}"],
            "reference": f"the answer is {i} apples",
        }
        rec.update(over)
        recs.append(rec)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def _eval(a: Path, out, *extra: str) -> list[str]:
    return [
        "eval",
        "--answers",
        str(a),
        "--metric",
        "mrr@3,recall@3,token_f1",
        "--no-progress",
        "--out",
        str(out),
        *extra,
    ]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


# --- 1, 21: --out that is not a regular file, or empty ----------------------------------------------------
@pytest.mark.parametrize("command", ["eval", "judge-check"])
@pytest.mark.parametrize("kind", ["fifo", "device", "empty"])
def test_an_output_that_is_no_regular_file_is_refused_and_kept(tmp_path, capsys, command, kind):
    if kind == "fifo":
        out = tmp_path / "fifo"
        os.mkfifo(out)
    elif kind == "device":
        out = tmp_path / "null"
        try:
            os.mknod(out, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except OSError:
            pytest.skip("mknod needs root")
    else:
        out = ""
    argv = _eval(_answers(tmp_path), out) if command == "eval" else [*JC, "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    if kind == "empty":
        assert "--out is empty" in err
    else:
        assert "not a regular file" in err and str(out) in err
        assert not stat.S_ISREG(os.lstat(out).st_mode)


def test_an_output_through_a_symbolic_link_keeps_the_link(tmp_path, capsys):
    target = tmp_path / "target.json"
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert main(_eval(_answers(tmp_path), link)) == 0
    assert link.is_symlink() and Report.load(target).meta["n_questions"] == 8


# --- 2: an input named as the output ---------------------------------------------------------------------
def test_a_judge_check_named_as_the_output_is_refused(tmp_path, capsys):
    jc = tmp_path / "jc.json"
    assert main([*JC, "--out", str(jc)]) == 0
    before = jc.read_bytes()
    hard = tmp_path / "hard.json"
    os.link(jc, hard)
    for out in (jc, hard):
        argv = _eval(_answers(tmp_path), out, "--metric", "word_support", "--judge-check", str(jc))
        assert main(argv) == 2
        assert "--judge-check" in capsys.readouterr().err
    assert jc.read_bytes() == before


def test_judge_check_refuses_its_recording_as_the_output(tmp_path, capsys):
    rec = tmp_path / "rec.json"
    rec.write_bytes(
        (REPO / "ragworkbook/data/recordings/judge_check_wikieval_faithfulness.json").read_bytes()
    )
    before = rec.read_bytes()
    assert (
        main(
            [
                "judge-check",
                "--dataset",
                "ff",
                "--recording",
                str(rec),
                "--out",
                str(rec),
                "--limit",
                "5",
                "--no-progress",
            ]
        )
        == 2
    )
    assert "--recording" in capsys.readouterr().err and rec.read_bytes() == before


# --- 3: SIGTERM and SIGHUP save what was done, as SIGINT does -----------------------------------------------
@pytest.fixture()
def slow_server():
    from fakes.faulty_ollama import FaultyOllama

    with FaultyOllama(slow_seconds=0.2) as srv:
        srv.add_fault("slow", kind="answer")
        yield srv


def _eval_set(tmp_path: Path, n: int) -> Path:
    base = json.loads((REPO / "ragworkbook/data/eval_set.json").read_text(encoding="utf-8"))
    items = base["items"] if isinstance(base, dict) else base
    out = [
        dict(items[i % len(items)], id=f"q{i}", question=f"{items[i % len(items)]['question']} (#{i})")
        for i in range(n)
    ]
    path = tmp_path / "es.json"
    path.write_text(json.dumps(dict(base, items=out) if isinstance(base, dict) else out), encoding="utf-8")
    return path


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_saves_every_answer_and_resume_finishes(slow_server, tmp_path, sig):
    from fakes.faulty_ollama import FAKE_MODEL

    out = tmp_path / "r.json"
    argv = [
        "eval",
        "--backend",
        "ollama",
        "--model",
        FAKE_MODEL,
        "--retriever",
        "bm25",
        "--metric",
        "token_f1",
        "--no-progress",
        "--ollama-timeout",
        "30",
        "--out",
        str(out),
        "--eval-set",
        str(_eval_set(tmp_path, 40)),
    ]
    env = _env(OLLAMA_HOST=slow_server.url)
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragworkbook", *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while len(slow_server.requests) < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    asked = len(slow_server.requests)
    assert proc.returncode == 128 + sig, err
    assert "--resume" in err and "Traceback" not in err
    rep = Report.load(out)
    answered = sum(1 for r in rep.rows if not r.get("error"))
    assert (
        answered >= asked - 1 > 16 and rep.meta["complete"] is False
    )  # more than the 16-question checkpoint
    slow_server.clear_faults()
    done = subprocess.run(
        [sys.executable, "-m", "ragworkbook", *argv, "--resume"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rep = Report.load(out)
    assert rep.meta["complete"] and rep.meta["resumed"] == answered


def test_the_signal_policy_restores_the_handlers():
    from ragworkbook._signals import Stopped, exit_status, stop_like_interrupt

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Stopped) as got, stop_like_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(1)
    assert exit_status(got.value) == 143 and exit_status(KeyboardInterrupt()) == 130
    assert signal.getsignal(signal.SIGTERM) == before


# --- 4: two writers of one output --------------------------------------------------------------------------
def test_a_report_another_process_wrote_meanwhile_is_not_replaced(tmp_path):
    from ragworkbook._io import OutputConflict, atomic_write_text, check_output, release_outputs

    out = tmp_path / "r.json"
    try:
        check_output(out)
        atomic_write_text(out, "mine 1\n")  # this process's own writes follow each other
        atomic_write_text(out, "mine 2\n")
        out.write_text("another run's report\n")  # another process writes it meanwhile
        with pytest.raises(OutputConflict) as got:
            atomic_write_text(out, "mine 3\n")
        assert out.read_text() == "another run's report\n"
        assert got.value.saved_to.read_text() == "mine 3\n" and str(got.value.saved_to) in str(got.value)
        atomic_write_text(out, "mine 4\n")  # later writes of this run go beside too
        assert got.value.saved_to.read_text() == "mine 4\n"
    finally:
        release_outputs()


def test_two_eval_runs_with_one_out_lose_nothing(tmp_path):
    out = tmp_path / "r.json"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "ragworkbook", *_eval(_answers(tmp_path, n, f"a{n}.jsonl"), out)],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in (3000, 3001)
    ]
    for p in procs:
        p.communicate(timeout=300)
    sizes = sorted(Report.load(x).meta["n_questions"] for x in tmp_path.glob("r*.json"))
    assert sizes in ([3000, 3001], [3000], [3001])  # both kept, or (one after the other) the last one
    if len(sizes) == 1:
        assert sorted(p.returncode for p in procs) == [0, 0]


# --- 5: eval --answers saves as it goes and resumes ---------------------------------------------------------
def test_eval_answers_saves_partial_reports_and_resumes_to_the_same_numbers(tmp_path, monkeypatch, capsys):
    import ragworkbook.evaluation.outputs as outputs
    from ragworkbook.evaluation import scoring_run

    monkeypatch.setattr(outputs, "SAVE_EVERY", 5)
    a = _answers(tmp_path, 23)
    whole = tmp_path / "whole.json"
    assert main(_eval(a, whole)) == 0
    real = scoring_run.OutputsRun._merge
    calls = {"n": 0}

    def stop_after_two(self, got):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        real(self, got)

    monkeypatch.setattr(scoring_run.OutputsRun, "_merge", stop_after_two)
    out = tmp_path / "r.json"
    assert main(_eval(a, out)) == 130
    assert "--resume" in capsys.readouterr().err
    part = Report.load(out)
    assert part.meta["complete"] is False and part.aggregates["token_f1"].n == 10
    assert part.unscored("token_f1")["q22"].reason == "not_scored"
    monkeypatch.setattr(scoring_run.OutputsRun, "_merge", real)
    assert main([*_eval(a, out), "--resume"]) == 0
    done, ref = Report.load(out), Report.load(whole)
    assert done.meta["complete"] and done.meta["resumed"] == 10
    assert [r["metrics"] for r in done.rows] == [r["metrics"] for r in ref.rows]
    other = _answers(tmp_path, 23, "b.jsonl", reference="another")
    assert main([*_eval(other, out), "--resume"]) == 2
    assert "the records" in capsys.readouterr().err


# --- 6, 7: the gate -----------------------------------------------------------------------------------------
def _two(tmp_path: Path, change) -> tuple[Path, Path]:
    a = _answers(tmp_path, 20, "A.jsonl")
    recs = [json.loads(line) for line in a.read_text().splitlines()]
    for i, r in enumerate(recs):
        change(i, r)
    (tmp_path / "B.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    for x in "AB":
        assert main(_eval(tmp_path / f"{x}.jsonl", tmp_path / f"{x}.json")) == 0
    return tmp_path / "A.json", tmp_path / "B.json"


def _lose(i, r):
    if i < 14:
        r.update(answer="I do not know.", contexts=[], context_ids=[])
        r.pop("reference")


def test_questions_b_lost_fail_the_gate_unless_allowed(tmp_path, capsys):
    a, b = _two(tmp_path, _lose)
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--fail-if-worse", "mrr@3", "--fail-if-worse", "token_f1"]) == 1
    err = capsys.readouterr().err
    assert "B has no token_f1 value for 14 of 20 questions that A scored" in err
    assert "undefined (no_reference)" in err and "--allow-undefined" in err
    assert main(["compare", str(a), str(b), "--fail-if-worse", "token_f1", "--allow-undefined"]) == 0


def test_max_drop_fails_a_drop_the_test_cannot_call(tmp_path, capsys):
    a, b = _two(tmp_path, lambda i, r: r.update(answer="nothing") if i < 3 else None)
    assert main(["compare", str(a), str(b), "--max-drop", "token_f1=0.05"]) == 1
    assert "token_f1 dropped: B is worse than A by 0.1500" in capsys.readouterr().err
    assert main(["compare", str(a), str(b), "--max-drop", "token_f1=0.2"]) == 0
    assert main(["compare", str(a), str(b), "--max-drop", "token_f1"]) == 2


@pytest.mark.parametrize("field,value", [("relevant_ids", ["x3"]), ("reference", "something else")])
def test_rewritten_ground_truth_is_refused_naming_the_question(tmp_path, capsys, field, value):
    a, b = _two(tmp_path, lambda i, r: r.update({field: value}) if i == 3 else None)
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--fail-if-worse", "recall@3"]) == 2
    assert "question 'q3'" in capsys.readouterr().err


# --- 8: values outside their range, intervals that are not intervals ----------------------------------------
@pytest.mark.parametrize(
    "edit,said",
    [
        (
            lambda d: (
                [r["metrics"].update({"mrr@3": 5.0}) for r in d["rows"]]
                and d["aggregates"]["mrr@3"].update(mean=5.0, ci_low=5.0, ci_high=5.0)
            ),
            "mrr@3 = 5.0 is outside",
        ),
        (
            lambda d: d["aggregates"]["token_f1"].update(ci_low=99, ci_high=-99),
            "ci_low 99 is above ci_high -99",
        ),
        (lambda d: d["aggregates"]["token_f1"].update(ci_low=-3), "ci_low = -3 is outside"),
    ],
)
def test_a_hand_edited_report_out_of_range_is_refused(tmp_path, capsys, edit, said):
    out = tmp_path / "a.json"
    assert main(_eval(_answers(tmp_path), out)) == 0
    doc = json.loads(out.read_text())
    edit(doc)
    out.write_text(json.dumps(doc))
    assert main(["compare", str(out), str(out)]) == 2
    err = capsys.readouterr().err
    assert said in err and str(out) in err


# --- 9: loopback by address ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spelling", ["127.1", "2130706433", "0x7f.1", "localhost.", "LOCALHOST", "[::1]", "hostname"]
)
def test_loopback_spellings_are_local(spelling):
    from ragworkbook.llm.host import is_local

    name = socket.gethostname() if spelling == "hostname" else spelling
    assert is_local(f"http://{name}:11434")


def test_remote_and_unresolvable_hosts_are_not_local():
    from ragworkbook.llm.host import is_local

    assert not is_local("http://192.0.2.1:11434") and not is_local("http://no-such-host.invalid:1")


def test_a_proxy_sees_nothing_for_127_1(tmp_path, monkeypatch):
    from fakes.faulty_ollama import FAKE_MODEL, FaultyOllama
    from fakes.proxy import PROXY_VARIABLES, LoggingProxy

    with FaultyOllama() as srv, LoggingProxy() as px:
        for name in PROXY_VARIABLES:
            monkeypatch.setenv(name, px.url)
        monkeypatch.setenv("OLLAMA_HOST", "127.1:" + srv.url.rsplit(":", 1)[1])
        argv = [
            "eval",
            "--answers",
            str(_answers(tmp_path, 2)),
            "--judge",
            "--backend",
            "ollama",
            "--model",
            FAKE_MODEL,
            "--metric",
            "faithfulness",
            "--no-progress",
            "--ollama-timeout",
            "10",
        ]
        assert main(argv) == 0
        assert px.received == [] and srv.requests


# --- 11: modes kept -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["eval", "judge-check"])
def test_an_output_keeps_its_mode(tmp_path, command):
    out = tmp_path / "r.json"
    out.write_text("{}")
    os.chmod(out, 0o600)
    assert main(_eval(_answers(tmp_path), out) if command == "eval" else [*JC, "--out", str(out)]) == 0
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600 and out.stat().st_size > 10


# --- 12: credentials never printed --------------------------------------------------------------------------
def test_credentials_in_ollama_host_are_never_printed(monkeypatch, capsys):
    from ragworkbook.workbook.doctor import doctor_report, format_report

    monkeypatch.setenv("OLLAMA_HOST", "http://alice:S3CRETPW@127.0.0.1:99999")
    main(["eval", "--backend", "ollama", "--no-progress"])
    out, err = capsys.readouterr()
    report = doctor_report(load_models=False)
    shown = out + err + json.dumps(report) + format_report(report)
    assert "S3CRETPW" not in shown and "***@127.0.0.1:99999" in err


def test_redact_text():
    from ragworkbook.llm.host import redact_text

    shown = redact_text("http://u:pw1@h:1/x?api_key=pw2 and u:pw3@h and Bearer pw4 and me@example.com")
    assert not any(f"pw{i}" in shown for i in range(1, 5)) and "example.com" in shown


# --- 13, 14: pipes nothing writes to; deep nesting ----------------------------------------------------------
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_ir_eval_on_a_silent_fifo_is_an_error_not_a_hang(tmp_path, capsys, monkeypatch, which):
    monkeypatch.setattr("ragworkbook._io.PIPE_WAIT", 0.3)
    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    (tmp_path / "run").write_text("1 Q0 d1 1 2.0 r\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    files = [str(fifo), str(tmp_path / "run")] if which == "qrels" else [str(tmp_path / "qrels"), str(fifo)]
    t = time.monotonic()
    assert main(["ir-eval", *files]) == 2
    assert "nothing wrote to within 0.3 s" in capsys.readouterr().err and time.monotonic() - t < 10


def test_ir_eval_reads_a_pipe(tmp_path, capsys):
    (tmp_path / "run").write_text("1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n")
    fifo = tmp_path / "qrels"
    os.mkfifo(fifo)
    threading.Thread(target=lambda: fifo.write_text("1 0 d2 1\n"), daemon=True).start()
    assert main(["ir-eval", "-m", "recip_rank", str(fifo), str(tmp_path / "run")]) == 0
    assert "0.5000" in capsys.readouterr().out


@pytest.mark.parametrize("where", ["--judge-check", "--answers", "report"])
def test_deeply_nested_json_is_a_one_line_error(tmp_path, capsys, where):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    if where == "--judge-check":
        argv = _eval(
            _answers(tmp_path), tmp_path / "r.json", "--metric", "word_support", "--judge-check", str(deep)
        )
    elif where == "--answers":
        argv = _eval(deep, tmp_path / "r.json")
    else:
        argv = ["compare", str(deep), str(deep)]
    assert main(argv) == 2
    assert "deep.json" in capsys.readouterr().err


def test_a_csv_cell_nested_1200_deep_is_no_traceback(tmp_path, capsys):
    path = tmp_path / "a.csv"
    path.write_text('question,answer,contexts,reference\nq,a,"' + "[" * 1200 + '",r\n')
    assert main(_eval(path, tmp_path / "r.json", "--metric", "token_f1")) in (0, 2)


# --- 15: answers past the cap -------------------------------------------------------------------------------
def test_an_endless_answer_is_a_failed_row_not_a_huge_report(tmp_path, monkeypatch, capsys):
    import fakes.faulty_ollama as fo

    monkeypatch.setattr(fo, "plain_answer", lambda messages: "x" * 300_000)
    with fo.FaultyOllama() as srv:
        monkeypatch.setenv("OLLAMA_HOST", srv.url)
        out = tmp_path / "r.json"
        assert (
            main(
                [
                    "eval",
                    "--backend",
                    "ollama",
                    "--model",
                    fo.FAKE_MODEL,
                    "--retriever",
                    "bm25",
                    "--metric",
                    "token_f1",
                    "--no-progress",
                    "--out",
                    str(out),
                    "--eval-set",
                    str(_eval_set(tmp_path, 3)),
                ]
            )
            == 1
        )
    rep = Report.load(out)
    assert {r["error"]["reason"] for r in rep.rows} == {"answer_too_long"}
    assert out.stat().st_size < 100_000 and "100,000" in capsys.readouterr().err


# --- 16-20: messages ----------------------------------------------------------------------------------------
def test_a_utf16_jsonl_is_named_so(tmp_path, capsys):
    path = tmp_path / "a.jsonl"
    path.write_bytes((json.dumps({"question": "q", "answer": "a"}) + "\n").encode("utf-16"))
    assert main(_eval(path, tmp_path / "r.json")) == 2
    assert "UTF-16" in capsys.readouterr().err


@pytest.mark.parametrize(
    "data", [b"\x00\xff\xfe\x9c garbage", b"", b"[1, 2]", '{"card": {}}'.encode("utf-16")]
)
def test_judge_check_files_that_are_not_one_name_the_file(tmp_path, capsys, data):
    jc = tmp_path / "jc.json"
    jc.write_bytes(data)
    assert (
        main(
            _eval(
                _answers(tmp_path), tmp_path / "r.json", "--metric", "word_support", "--judge-check", str(jc)
            )
        )
        == 2
    )
    err = capsys.readouterr().err
    assert str(jc) in err and "codec" not in err


def test_a_corpus_from_a_pipe_is_read(tmp_path, capsys, monkeypatch):
    from fakes.faulty_ollama import FAKE_MODEL, FaultyOllama

    data = (REPO / "ragworkbook/data/attention_notes.json").read_bytes()
    fifo = tmp_path / "63"  # as /dev/fd/63: no suffix
    os.mkfifo(fifo)
    threading.Thread(target=lambda: fifo.write_bytes(data), daemon=True).start()
    with FaultyOllama() as srv:
        monkeypatch.setenv("OLLAMA_HOST", srv.url)
        assert (
            main(
                [
                    "eval",
                    "--corpus",
                    str(fifo),
                    "--backend",
                    "ollama",
                    "--model",
                    FAKE_MODEL,
                    "--retriever",
                    "bm25",
                    "--metric",
                    "token_f1",
                    "--no-progress",
                ]
            )
            == 0
        )


def test_a_full_disk_names_the_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    import errno

    from ragworkbook._io import DiskFull, atomic_write_text

    out = tmp_path / "r.json"
    out.write_text("old\n")
    real = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(DiskFull) as got:
        atomic_write_text(out, "new\n")
    monkeypatch.setattr(os, "fsync", real)
    assert str(out) in str(got.value) and "no space left" in str(got.value)
    assert out.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_judge_check_shows_the_servers_error(tmp_path, capsys, monkeypatch):
    from fakes.faulty_ollama import FAKE_MODEL, FaultyOllama

    out = tmp_path / "jc.json"
    with FaultyOllama() as srv:
        srv.add_fault("500")
        monkeypatch.setenv("OLLAMA_HOST", srv.url)
        assert (
            main(
                [
                    "judge-check",
                    "--dataset",
                    "ff",
                    "--backend",
                    "ollama",
                    "--model",
                    FAKE_MODEL,
                    "--limit",
                    "3",
                    "--repeats",
                    "0",
                    "--no-progress",
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
    said = capsys.readouterr().out
    assert "llama runner process has terminated" in said
    reasons = json.loads(out.read_text())["failure_reasons"]
    assert sum(r["count"] for r in reasons.values()) == 6


# --- 22: | head -----------------------------------------------------------------------------------------
def test_ir_eval_into_head_is_exit_141(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"{i} 0 d{i}-{j} {j % 2}\n" for i in range(3000) for j in range(10)))
    run.write_text("".join(f"{i} Q0 d{i}-{j} {j} {10 - j} r\n" for i in range(3000) for j in range(10)))
    cmd = f"{sys.executable} -m ragworkbook ir-eval -q {qrels} {run} | head -1 >/dev/null; "
    cmd += "echo ${PIPESTATUS[0]}"
    done = subprocess.run(["bash", "-c", cmd], env=_env(), capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "141" and done.stderr == ""
