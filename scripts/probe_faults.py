#!/usr/bin/env python
"""Probes of issue 30: every numbered defect reproduced from the command line, each probe ok or FAIL.

Run from the repository root (the package importable, e.g. PYTHONPATH=.)::

    python scripts/probe_faults.py            # every probe; exit 1 if any fails
    python scripts/probe_faults.py -k 9 -v    # the probes of item 9, with details

Each probe runs ``python -m ragworkbook ...`` in a fresh temporary folder against a fault: a
device, a FIFO or a link as ``--out``, an input named as the output, SIGTERM / SIGHUP / SIGINT
mid-run, two writers of one file, a stand-in Ollama server (tests/fakes) that is slow, fails or
sends huge answers, a logging proxy, a full file system (an 8 KB tmpfs, root only), bad bytes.
Item 10 (recordings under RAGWORKBOOK_DATA) is covered elsewhere. Probes that need root (a
character device, a tmpfs) are skipped without it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

PROBES: list[tuple[str, str, Callable[[Path], tuple[bool, str]]]] = []


class Skip(Exception):
    """A probe that cannot run here (not root, no mknod)."""


def probe(item: str, name: str) -> Callable:
    def deco(fn: Callable[[Path], tuple[bool, str]]) -> Callable:
        PROBES.append((item, name, fn))
        return fn

    return deco


def env(**extra: str) -> dict[str, str]:
    e = {
        k: v
        for k, v in os.environ.items()
        if "proxy" not in k.lower() and not k.startswith(("RAGWORKBOOK_", "OLLAMA_", "OPENAI_"))
    }
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    e["RAGWORKBOOK_PIPE_WAIT"] = "2"
    e.update(extra)
    return e


def rw(
    *args: str,
    cwd: Path,
    timeout: float = 120,
    extra_env: dict[str, str] | None = None,
    stdin: int | None = subprocess.DEVNULL,
) -> subprocess.CompletedProcess:
    """``ragworkbook ARGS`` in ``cwd`` -> the completed process (TimeoutExpired: a hang)."""
    return subprocess.run(
        [sys.executable, "-m", "ragworkbook", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(**(extra_env or {})),
        stdin=stdin,
    )


def start(*args: str, cwd: Path, extra_env: dict[str, str] | None = None, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ragworkbook", *args],
        cwd=cwd,
        env=env(**(extra_env or {})),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def tail(p: subprocess.CompletedProcess | str) -> str:
    text = p if isinstance(p, str) else (p.stderr or p.stdout or "")
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return (f"exit {p.returncode}: " if not isinstance(p, str) else "") + (lines[-1][:300] if lines else "")


def clean(p: subprocess.CompletedProcess) -> bool:
    return "Traceback" not in (p.stderr or "") + (p.stdout or "")


# --- inputs ------------------------------------------------------------------------------------------------
Q = "How many attention heads did they use?"


def answers(tmp: Path, n: int = 8, name: str = "a.jsonl", **over) -> Path:
    path = tmp / name
    recs = []
    for i in range(n):
        rec = {
            "id": f"q{i}",
            "question": f"{Q} ({i})",
            "answer": f"they used {i % 8 + 1} heads",
            "contexts": [f"the model uses {i % 8 + 1} heads", "unrelated text"],
            "context_ids": [f"c{i}", f"x{i}"],
            "relevant_ids": [f"c{i}"],
            "reference": f"{i % 8 + 1} heads",
        }
        rec.update(over)
        recs.append(rec)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def eval_answers(a: Path, out: str | Path, *extra: str) -> list[str]:
    return [
        "eval",
        "--answers",
        str(a),
        "--metric",
        "mrr@3,token_f1",
        "--no-progress",
        "--out",
        str(out),
        *extra,
    ]


JC = ["judge-check", "--dataset", "ff", "--judge", "word-support", "--limit", "5", "--no-progress"]


def fifo(tmp: Path, name: str = "fifo") -> Path:
    path = tmp / name
    os.mkfifo(path)
    return path


def chardev(tmp: Path) -> Path:
    path = tmp / "nulldev"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a private /dev/null node
    except (PermissionError, OSError) as exc:
        raise Skip(f"mknod: {exc}") from None
    return path


@contextlib.contextmanager
def server(slow: float = 0.0, answer: Callable | None = None) -> Iterator:
    """The stand-in Ollama server of tests/fakes (answers ``slow`` seconds late; ``answer`` replaces
    its plain answers)."""
    import fakes.faulty_ollama as fo

    old = fo.plain_answer
    if answer is not None:
        fo.plain_answer = answer
    try:
        with fo.FaultyOllama(slow_seconds=slow or 3.0) as srv:
            if slow:
                srv.add_fault("slow", kind="answer")
            yield srv
    finally:
        fo.plain_answer = old


def eval_set(tmp: Path, n: int) -> Path:
    base = json.loads((ROOT / "ragworkbook/data/eval_set.json").read_text(encoding="utf-8"))
    items = base["items"] if isinstance(base, dict) else base
    out = []
    for i in range(n):
        it = dict(items[i % len(items)])
        it["id"] = f"q{i}"
        it["question"] = f"{it['question']} (#{i})"
        out.append(it)
    doc = dict(base, items=out) if isinstance(base, dict) else out
    path = tmp / "es.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def pipeline_args(srv, out: Path, *extra: str) -> tuple[list[str], dict[str, str]]:
    return (
        [
            "eval",
            "--backend",
            "ollama",
            "--model",
            "fake:1b",
            "--retriever",
            "bm25",
            "--metric",
            "token_f1",
            "--no-progress",
            "--ollama-timeout",
            "30",
            "--out",
            str(out),
            *extra,
        ],
        {"OLLAMA_HOST": srv.url},
    )


# === 1: --out that is not a regular file ===================================================================
def _out_kinds():
    return {
        "chardev": lambda t: chardev(t),
        "fifo": lambda t: fifo(t),
        "symlink": lambda t: (t / "target.json").write_text("{}") and None or _link(t),
        "dir": lambda t: (t / "d").mkdir() or (t / "d"),
    }


def _link(t: Path) -> Path:
    link = t / "link.json"
    link.symlink_to(t / "target.json")
    return link


for _cmd in ("eval", "judge-check"):
    for _kind, _make in _out_kinds().items():

        def _p(tmp, cmd=_cmd, kind=_kind, make=_make):
            out = make(tmp)
            before = os.lstat(out)
            if cmd == "eval":
                p = rw(*eval_answers(answers(tmp), out), cwd=tmp, timeout=20 if kind == "fifo" else 120)
            else:
                p = rw(*JC, "--out", str(out), cwd=tmp, timeout=20 if kind == "fifo" else 120)
            after = os.lstat(out)
            if kind == "symlink":  # the link kept, the report written to its target
                target_ok = json.loads((tmp / "target.json").read_text() or "{}") != {}
                ok = stat.S_ISLNK(after.st_mode) and p.returncode == 0 and target_ok
            else:
                ok = (
                    stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode)
                    and p.returncode == 2
                    and clean(p)
                )
            return ok, tail(p)

        probe("1", f"{_cmd} --out on a {_kind}")(_p)


# === 2: inputs named as the output ==========================================================================
@probe("2", "judge-check --recording rec.json --out rec.json")
def _(tmp):
    rec = tmp / "rec.json"
    shutil.copy(ROOT / "ragworkbook/data/recordings/judge_check_wikieval_faithfulness.json", rec)
    before = rec.read_bytes()
    p = rw(
        "judge-check",
        "--dataset",
        "ff",
        "--recording",
        str(rec),
        "--out",
        str(rec),
        "--limit",
        "5",
        "--repeats",
        "0",
        "--no-progress",
        cwd=tmp,
    )
    return p.returncode == 2 and rec.read_bytes() == before and "--recording" in p.stderr, tail(p)


def _jc_file(tmp: Path) -> Path:
    """A judge-check result of word support (what `judge-check --judge word-support --out` writes, short)."""
    jc = tmp / "jc.json"
    card = {
        "status": "measured",
        "judge": "deterministic:word_support",
        "model": "word_support",
        "metric": "word_support",
        "dataset": "wikieval-faithfulness",
        "n": 50,
        "n_pairs": 50,
        "failures": 0,
    }
    jc.write_text(json.dumps({"dataset": "wikieval-faithfulness", "metric": "word_support", "card": card}))
    return jc


for _how in ("same path", "hard link", "symlink"):

    def _p(tmp, how=_how):
        jc = _jc_file(tmp)
        out = jc
        if how == "hard link":
            out = tmp / "hl.json"
            os.link(jc, out)
        elif how == "symlink":
            out = tmp / "sl.json"
            out.symlink_to(jc)
        before = jc.read_bytes()
        p = rw(
            *eval_answers(answers(tmp), out, "--metric", "word_support", "--judge-check", str(jc)), cwd=tmp
        )
        return p.returncode == 2 and jc.read_bytes() == before and "--judge-check" in p.stderr, tail(p)

    probe("2", f"eval --judge-check jc.json --out jc.json ({_how})")(_p)


@probe("2", "eval --qrels q.txt --out q.txt")
def _(tmp):
    q = tmp / "q.txt"
    q.write_text("".join(f"q{i} 0 c{i} 1\n" for i in range(8)))
    before = q.read_bytes()
    p = rw(*eval_answers(answers(tmp), q, "--qrels", str(q)), cwd=tmp)
    return p.returncode == 2 and q.read_bytes() == before, tail(p)


# === 3: SIGTERM / SIGHUP / SIGINT save the work done ========================================================
def _signal_probe(tmp: Path, sig: int) -> tuple[bool, str]:
    es = eval_set(tmp, 48)
    out = tmp / "r.json"
    with server(slow=0.25) as srv:
        argv, extra = pipeline_args(srv, out, "--eval-set", str(es))
        proc = start(*argv, cwd=tmp, extra_env=extra)
        deadline = time.monotonic() + 60
        while len(srv.requests) < 22 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            return False, "no exit within 30 s of the signal"
        asked = len(srv.requests)
    if not out.exists():
        return False, f"exit {proc.returncode}, no report; {tail(err)}"
    rep = json.loads(out.read_text())
    answered = sum(1 for r in rep["rows"] if not r.get("error"))
    ok = proc.returncode == 128 + sig and answered >= min(asked - 1, 47) and "Traceback" not in err
    return ok, f"exit {proc.returncode}, {answered} answered of {asked} asked; {tail(err)}"


for _sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    probe("3", f"eval pipeline killed by {_sig.name} keeps every answer")(
        lambda tmp, s=_sig: _signal_probe(tmp, s)
    )


@probe("3", "timeout 10 eval (TERM) saves the report and --resume finishes it")
def _(tmp):
    es = eval_set(tmp, 48)
    out = tmp / "r.json"
    with server(slow=0.25) as srv:
        argv, extra = pipeline_args(srv, out, "--eval-set", str(es))
        p = subprocess.run(
            ["timeout", "12", sys.executable, "-m", "ragworkbook", *argv],
            cwd=tmp,
            capture_output=True,
            text=True,
            env=env(**extra),
            timeout=60,
        )
        if p.returncode != 124 or not out.exists():
            return False, f"timeout exit {p.returncode}, report {out.exists()}; {tail(p)}"
        first = sum(1 for r in json.loads(out.read_text())["rows"] if not r.get("error"))
        srv.clear_faults()
        q = rw(*argv, "--resume", cwd=tmp, extra_env=extra)
    rep = json.loads(out.read_text())
    return (
        q.returncode == 0 and rep["meta"]["complete"] and rep["meta"]["resumed"] == first and first > 0,
        f"first run kept {first}; resume: {tail(q)}",
    )


# === 4: two writers of one --out ============================================================================
@probe("4", "two eval runs with one --out: nothing lost")
def _(tmp):
    a1 = answers(tmp, 4000, "a1.jsonl")
    a2 = answers(tmp, 4001, "a2.jsonl")
    out = tmp / "r.json"
    procs = [start(*eval_answers(a, out), cwd=tmp) for a in (a1, a2)]
    res = [p.communicate(timeout=300) for p in procs]
    saved = [json.loads(x.read_text())["meta"].get("n_questions") for x in tmp.glob("r*.json")]
    said = sum("report saved" in o for o, _ in res)
    ok = sorted(saved) == [4000, 4001] or (said == 1 and len(saved) == 1)
    return (
        ok,
        f"exits {[p.returncode for p in procs]}, 'report saved' x{said}, files hold {saved}; "
        + "; ".join(tail(e) for _, e in res if e.strip()),
    )


@probe("4", "a report written over by another run is not silently replaced")
def _(tmp):
    es = eval_set(tmp, 40)
    out = tmp / "r.json"
    with server(slow=0.15) as srv:
        argv, extra = pipeline_args(srv, out, "--eval-set", str(es))
        proc = start(*argv, cwd=tmp, extra_env=extra)
        deadline = time.monotonic() + 60
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        p2 = rw(*eval_answers(answers(tmp), out), cwd=tmp)
        _, err = proc.communicate(timeout=120)
    files = {x.name: json.loads(x.read_text())["meta"].get("n_questions") for x in tmp.glob("r*.json")}
    ok = sorted(files.values()) == [8, 40]
    return ok, f"exits {proc.returncode}/{p2.returncode}, files {files}; {tail(err)}"


# === 5: eval --answers saves as it goes, shows progress, resumes ============================================
def _big(tmp: Path, n: int = 30000) -> Path:
    return answers(tmp, n, "big.jsonl")


@probe("5", "SIGINT into a long eval --answers leaves a partial report")
def _(tmp):
    a = _big(tmp)
    out = tmp / "r.json"
    proc = start(*eval_answers(a, out), cwd=tmp)
    deadline = time.monotonic() + 120  # scoring under way: a first partial report, or 30 s
    t0 = time.monotonic()
    while not out.exists() and time.monotonic() < deadline and proc.poll() is None:
        if time.monotonic() - t0 > 30:
            break
        time.sleep(0.05)
    time.sleep(0.5)
    if proc.poll() is not None:
        return False, f"finished before the signal: make the probe bigger ({tail(proc.stderr.read())})"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    if not out.exists():
        return False, f"exit {proc.returncode}, no report; {tail(err)}"
    rep = json.loads(out.read_text())
    n = rep["aggregates"]["token_f1"]["n"]
    return proc.returncode == 130 and 0 < n < 30000 and rep["meta"].get(
        "complete"
    ) is False, f"exit {proc.returncode}, {n} scored"


@probe("5", "eval --answers --resume finishes an interrupted run with the same numbers")
def _(tmp):
    a = answers(tmp, 6000, "mid.jsonl")
    whole = tmp / "whole.json"
    p = rw(*eval_answers(a, whole), cwd=tmp)
    out = tmp / "r.json"
    proc = start(*eval_answers(a, out, "--save-every", "500") if False else eval_answers(a, out), cwd=tmp)
    deadline = time.monotonic() + 60
    while not out.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    q = rw(*eval_answers(a, out), "--resume", cwd=tmp)
    if q.returncode != 0:
        return False, tail(q)
    x, y = json.loads(whole.read_text()), json.loads(out.read_text())
    same = x["aggregates"] == y["aggregates"] and [r["metrics"] for r in x["rows"]] == [
        r["metrics"] for r in y["rows"]
    ]
    return same and y["meta"]["complete"] and p.returncode == 0, f"resumed {y['meta'].get('resumed')}"


@probe("5", "eval --answers shows progress on a terminal")
def _(tmp):
    import fcntl
    import pty
    import struct
    import termios

    a = _big(tmp, 20000)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a new pty is 0 columns wide
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragworkbook", "eval", "--answers", str(a), "--metric", "token_f1"],
        cwd=tmp,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=slave,
    )
    import select

    seen = b""  # the slave stays open here: a pty's last output is lost once every slave fd is closed
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            seen += os.read(master, 65536)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=10)
    os.close(slave)
    os.close(master)
    return b"%|" in seen or b"it/s" in seen or b"record/s" in seen, f"{len(seen)} bytes on the terminal"


# === 6-8: the gate ==========================================================================================
def _two_reports(tmp: Path, b_over: Callable[[int, dict], None], n: int = 20) -> tuple[Path, Path]:
    recs = []
    for i in range(n):
        recs.append(
            {
                "id": f"q{i}",
                "question": f"question {i}?",
                "answer": f"the answer is {i} apples",
                "contexts": [f"text {i}", f"the answer is {i} apples"],
                "context_ids": [f"x{i}", f"c{i}"],
                "relevant_ids": [f"c{i}"],
                "reference": f"the answer is {i} apples",
            }
        )
    (tmp / "A.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    for i, r in enumerate(recs):
        b_over(i, r)
    (tmp / "B.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    for x in "AB":
        p = rw(
            "eval",
            "--answers",
            f"{x}.jsonl",
            "--metric",
            "mrr@3,recall@3,token_f1",
            "--out",
            f"{x}.json",
            "--no-progress",
            cwd=tmp,
        )
        if p.returncode != 0:
            raise RuntimeError(tail(p))
    return tmp / "A.json", tmp / "B.json"


def _lose(i: int, r: dict) -> None:
    if i < 14:
        r.update(answer="I do not know.", contexts=[], context_ids=[])
        r.pop("reference")


@probe("6", "a B that lost 14 of 20 questions fails the gate")
def _(tmp):
    a, b = _two_reports(tmp, _lose)
    p = rw("compare", str(a), str(b), "--fail-if-worse", "mrr@3", "--fail-if-worse", "token_f1", cwd=tmp)
    return p.returncode == 1 and "14" in p.stderr, tail(p)


@probe("6", "--allow-undefined lets the gate pass it")
def _(tmp):
    a, b = _two_reports(tmp, _lose)
    p = rw(
        "compare",
        str(a),
        str(b),
        "--fail-if-worse",
        "token_f1",
        "--allow-undefined",
        "--min-pairs",
        "6",
        cwd=tmp,
    )
    return p.returncode == 0, tail(p)


@probe("6", "--max-drop token_f1=0.05 fails a drop of 0.2 the test cannot see")
def _(tmp):
    def drop(i, r):
        if i < 4:
            r["answer"] = "nothing"

    a, b = _two_reports(tmp, drop)
    p = rw("compare", str(a), str(b), "--max-drop", "token_f1=0.05", cwd=tmp)
    q = rw("compare", str(a), str(b), "--max-drop", "token_f1=0.5", cwd=tmp)
    return p.returncode == 1 and q.returncode == 0 and "token_f1" in p.stderr, f"{tail(p)} | {tail(q)}"


@probe("7", "B's relevant ids rewritten: refused")
def _(tmp):
    def rewrite(i, r):
        if i == 3:
            r["relevant_ids"] = [f"x{i}"]

    a, b = _two_reports(tmp, rewrite)
    p = rw("compare", str(a), str(b), "--fail-if-worse", "recall@3", cwd=tmp)
    return p.returncode == 2 and "q3" in p.stderr, tail(p)


@probe("7", "B's references rewritten: refused")
def _(tmp):
    def rewrite(i, r):
        if i == 5:
            r["reference"] = "something else"

    a, b = _two_reports(tmp, rewrite)
    p = rw("compare", str(a), str(b), "--fail-if-worse", "token_f1", cwd=tmp)
    return p.returncode == 2 and "q5" in p.stderr, tail(p)


def _edited(tmp: Path, edit: Callable[[dict], None]) -> Path:
    a, _ = _two_reports(tmp, lambda i, r: None)
    doc = json.loads(a.read_text())
    edit(doc)
    a.write_text(json.dumps(doc))
    return a


def _mrr5(doc):
    for r in doc["rows"]:
        r["metrics"]["mrr@3"] = 5.0
    agg = doc["aggregates"]["mrr@3"]
    agg.update(mean=5.0, ci_low=5.0, ci_high=5.0)


def _negative_recall(doc):
    for r in doc["rows"]:
        r["metrics"]["recall@3"] = -1.0
    doc["aggregates"]["recall@3"].update(mean=-1.0, ci_low=-1.0, ci_high=-1.0)


def _ci_inverted(doc):
    doc["aggregates"]["token_f1"].update(ci_low=99, ci_high=-99)


def _ci_outside(doc):
    doc["aggregates"]["token_f1"].update(ci_low=-3, ci_high=4)


for _name, _edit in (
    ("mrr@3 = 5.0 on every row", _mrr5),
    ("recall@3 = -1 on every row", _negative_recall),
    ("ci_low 99 > ci_high -99", _ci_inverted),
    ("an interval outside [0, 1]", _ci_outside),
):

    def _p(tmp, edit=_edit):
        a = _edited(tmp, edit)
        p = rw("compare", str(a), str(a), cwd=tmp)
        return p.returncode == 2 and clean(p) and "a.json" in p.stderr.lower(), tail(p)

    probe("8", f"a report with {_name} is refused")(_p)


# === 9: loopback by address =================================================================================
def _loopback_probe(tmp: Path, spelling: Callable[[int], str]) -> tuple[bool, str]:
    from fakes.proxy import PROXY_VARIABLES, LoggingProxy

    with server() as srv, LoggingProxy() as px:
        port = int(srv.url.rsplit(":", 1)[1])
        extra = {v: px.url for v in PROXY_VARIABLES}
        extra["OLLAMA_HOST"] = spelling(port)
        a = answers(tmp, 2)
        p = rw(
            "eval",
            "--answers",
            str(a),
            "--judge",
            "--backend",
            "ollama",
            "--model",
            "fake:1b",
            "--metric",
            "faithfulness",
            "--no-progress",
            "--ollama-timeout",
            "10",
            cwd=tmp,
            extra_env=extra,
        )
        rw("doctor", cwd=tmp, extra_env=extra, timeout=120)
        got = list(px.received)
    return not got, f"proxy received {len(got)} request(s); eval {tail(p)}"


for _name, _spell in (
    ("127.1", lambda port: f"127.1:{port}"),
    ("2130706433", lambda port: f"2130706433:{port}"),
    ("localhost.", lambda port: f"localhost.:{port}"),
    ("0x7f.1", lambda port: f"0x7f.1:{port}"),
    ("the machine's hostname", lambda port: f"{socket.gethostname()}:{port}"),
):
    probe("9", f"OLLAMA_HOST={_name}:PORT never goes through the proxy")(
        lambda tmp, s=_spell: _loopback_probe(tmp, s)
    )


# === 11: modes kept =========================================================================================
for _cmd in ("eval", "judge-check"):

    def _p(tmp, cmd=_cmd):
        out = tmp / "r.json"
        out.write_text("{}")
        os.chmod(out, 0o600)
        p = (
            rw(*eval_answers(answers(tmp), out), cwd=tmp)
            if cmd == "eval"
            else rw(*JC, "--out", str(out), cwd=tmp)
        )
        mode = stat.S_IMODE(os.stat(out).st_mode)
        return p.returncode == 0 and mode == 0o600, f"{tail(p)}; mode {oct(mode)}"

    probe("11", f"{_cmd} --out over a 0600 file keeps 0600")(_p)


@probe("11", "a checkpointed pipeline report keeps 0600")
def _(tmp):
    out = tmp / "r.json"
    es = eval_set(tmp, 20)
    with server() as srv:
        argv, extra = pipeline_args(srv, out, "--eval-set", str(es))
        p = rw(*argv, cwd=tmp, extra_env=extra)
        os.chmod(out, 0o600)
        q = rw(*argv, "--resume", cwd=tmp, extra_env=extra)
    mode = stat.S_IMODE(os.stat(out).st_mode)
    return p.returncode == 0 and q.returncode == 0 and mode == 0o600, f"mode {oct(mode)}"


# === 12: credentials never printed ==========================================================================
SECRET = "S3CRETPW"
for _where, _args in (
    ("doctor", ["doctor"]),
    ("doctor --json", ["doctor", "--json"]),
    ("eval", ["eval", "--backend", "ollama", "--no-progress"]),
):
    for _host in (
        f"http://alice:{SECRET}@127.0.0.1:99999",
        f"http://alice:{SECRET}@127.0.0.1:1",
        f"alice:{SECRET}@127.0.0.1:abc",
    ):

        def _p(tmp, args=_args, host=_host):
            p = rw(*args, cwd=tmp, extra_env={"OLLAMA_HOST": host}, timeout=180)
            leaked = SECRET in p.stdout + p.stderr
            return not leaked and clean(p), ("LEAKED; " if leaked else "") + tail(p)

        probe("12", f"{_where} with OLLAMA_HOST={_host}")(_p)


@probe("12", "an OpenAI key is never printed")
def _(tmp):
    p = rw(
        "eval",
        "--backend",
        "openai",
        "--model",
        "m",
        "--no-progress",
        cwd=tmp,
        timeout=60,
        extra_env={"OPENAI_BASE_URL": f"http://u:{SECRET}@127.0.0.1:1/v1", "OPENAI_API_KEY": SECRET},
    )
    d = rw(
        "doctor",
        cwd=tmp,
        timeout=180,
        extra_env={"OPENAI_BASE_URL": f"http://u:{SECRET}@127.0.0.1:1/v1", "OPENAI_API_KEY": SECRET},
    )
    leaked = SECRET in p.stdout + p.stderr + d.stdout + d.stderr
    return not leaked, ("LEAKED; " if leaked else "") + tail(p)


# === 13: FIFOs nothing writes to ============================================================================
def _run_files(tmp: Path) -> tuple[Path, Path]:
    (tmp / "qrels").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp / "run").write_text("1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n")
    return tmp / "qrels", tmp / "run"


for _name, _argv in (
    ("ir-eval QRELS=FIFO", lambda t, f: ["ir-eval", str(f), str(_run_files(t)[1])]),
    ("ir-eval RUN=FIFO", lambda t, f: ["ir-eval", str(_run_files(t)[0]), str(f)]),
    (
        "eval --judge-check FIFO",
        lambda t, f: eval_answers(
            answers(t), t / "r.json", "--metric", "word_support", "--judge-check", str(f)
        ),
    ),
    ("eval --answers FIFO", lambda t, f: eval_answers(f, t / "r.json")),
    ("eval --qrels FIFO", lambda t, f: eval_answers(answers(t), t / "r.json", "--qrels", str(f))),
    (
        "eval --eval-set FIFO",
        lambda t, f: [
            "eval",
            "--eval-set",
            str(f),
            "--backend",
            "replay",
            "--recording",
            str(t / "none.json"),
            "--no-progress",
        ],
    ),
    (
        "eval --corpus FIFO",
        lambda t, f: [
            "eval",
            "--corpus",
            str(f),
            "--backend",
            "replay",
            "--recording",
            str(t / "none.json"),
            "--no-progress",
        ],
    ),
    ("compare FIFO", lambda t, f: ["compare", str(f), str(f)]),
):

    def _p(tmp, argv=_argv):
        f = fifo(tmp)
        try:
            p = rw(*argv(tmp, f), cwd=tmp, timeout=25)
        except subprocess.TimeoutExpired:
            return False, "hung (no exit in 25 s)"
        return p.returncode == 2 and clean(p) and "fifo" in p.stderr, tail(p)

    probe("13", f"{_name} that nothing writes to")(_p)


# === 14: deep nesting =======================================================================================
@probe("14", "a CSV contexts cell with 1,200 nested [")
def _(tmp):
    path = tmp / "a.csv"
    path.write_text('question,answer,contexts,reference\nq,a,"' + "[" * 1200 + '",r\n')
    p = rw(*eval_answers(path, tmp / "r.json"), cwd=tmp)
    return p.returncode in (0, 2) and clean(p), tail(p)


for _opt in ("--judge-check", "--answers", "--eval-set", "report"):

    def _p(tmp, opt=_opt):
        deep = tmp / "deep.json"
        deep.write_text("[" * 100_000 + "]" * 100_000)
        if opt == "--judge-check":
            argv = eval_answers(
                answers(tmp), tmp / "r.json", "--metric", "word_support", "--judge-check", str(deep)
            )
        elif opt == "--answers":
            argv = eval_answers(deep, tmp / "r.json")
        elif opt == "--eval-set":
            argv = [
                "eval",
                "--eval-set",
                str(deep),
                "--backend",
                "replay",
                "--recording",
                "x.json",
                "--no-progress",
            ]
        else:
            argv = ["compare", str(deep), str(deep)]
        p = rw(*argv, cwd=tmp)
        return p.returncode == 2 and clean(p), tail(p)

    probe("14", f"a 100,000-deep JSON file as {_opt}")(_p)


# === 15: huge answers =======================================================================================
def _huge_probe(tmp: Path, size: int) -> tuple[bool, str]:
    out = tmp / "r.json"
    es = eval_set(tmp, 4)
    with server(answer=lambda messages: "x" * size) as srv:
        argv, extra = pipeline_args(srv, out, "--eval-set", str(es))
        code = (
            "import resource, runpy, sys; sys.argv = ['ragworkbook'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('ragworkbook', run_name='__main__')\n"
            "finally:\n"
            "    print('MAXRSS', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
        )
        p = subprocess.run(
            [sys.executable, "-c", code, *argv],
            cwd=tmp,
            capture_output=True,
            text=True,
            env=env(**extra),
            timeout=300,
        )
    rss = next((int(ln.split()[1]) for ln in p.stderr.splitlines() if ln.startswith("MAXRSS")), 0)
    if not out.exists():
        return False, tail(p)
    rep = json.loads(out.read_text())
    reasons = {(r.get("error") or {}).get("reason") for r in rep["rows"]}
    ok = reasons == {"answer_too_long"} and out.stat().st_size < 1_000_000 and rss < 600_000 and clean(p)
    return (
        ok,
        f"exit {p.returncode}, reasons {reasons}, report {out.stat().st_size:,} bytes, peak {rss // 1024} MB",
    )


probe("15", "an Ollama answer of 200,000 characters is a failed row")(lambda tmp: _huge_probe(tmp, 200_000))
probe("15", "an Ollama answer of 10 MB: a small report, bounded memory")(
    lambda tmp: _huge_probe(tmp, 10_000_000)
)


# === 16-22: messages ========================================================================================
for _suffix in (".jsonl", ".json", ".csv"):

    def _p(tmp, suffix=_suffix):
        path = tmp / f"a{suffix}"
        text = (
            json.dumps({"question": "q", "answer": "a", "contexts": ["c"]}) + "\n"
            if suffix == ".jsonl"
            else json.dumps([{"question": "q", "answer": "a"}])
            if suffix == ".json"
            else "question,answer\nq,a\n"
        )
        path.write_bytes(text.encode("utf-16"))
        p = rw(*eval_answers(path, tmp / "r.json"), cwd=tmp)
        return p.returncode == 2 and "UTF-16" in p.stderr and clean(p), tail(p)

    probe("16", f"a {_suffix} answers file in UTF-16 is named so")(_p)


for _name, _data in (
    ("garbage bytes", b"\x00\xff\xfe\x9c garbage"),
    ("UTF-16 JSON", '{"card": {}}'.encode("utf-16")),
    ("an empty file", b""),
    ("a JSON list", b"[1, 2]"),
):

    def _p(tmp, data=_data):
        jc = tmp / "jc.json"
        jc.write_bytes(data)
        p = rw(
            *eval_answers(answers(tmp), tmp / "r.json", "--metric", "word_support", "--judge-check", str(jc)),
            cwd=tmp,
        )
        return p.returncode == 2 and "jc.json" in p.stderr and "codec" not in p.stderr and clean(p), tail(p)

    probe("17", f"--judge-check on {_name} names the file")(_p)


@probe("17", "--judge-check on a missing file names the file")
def _(tmp):
    p = rw(
        *eval_answers(answers(tmp), tmp / "r.json", "--metric", "word_support", "--judge-check", "nope.json"),
        cwd=tmp,
    )
    return p.returncode == 2 and "nope.json" in p.stderr and clean(p), tail(p)


@probe("17", "--judge-check on an unreadable file names the file")
def _(tmp):
    jc = _jc_file(tmp)
    os.chmod(jc, 0)
    if os.access(jc, os.R_OK):
        p = rw(
            *eval_answers(
                answers(tmp), tmp / "r.json", "--metric", "word_support", "--judge-check", str(tmp)
            ),
            cwd=tmp,
        )
    else:
        p = rw(
            *eval_answers(answers(tmp), tmp / "r.json", "--metric", "word_support", "--judge-check", str(jc)),
            cwd=tmp,
        )
    return p.returncode == 2 and clean(p), tail(p)


def _bash(cmd: str, tmp: Path, extra_env: dict[str, str] | None = None, timeout: float = 120):
    return subprocess.run(
        ["bash", "-c", cmd],
        cwd=tmp,
        capture_output=True,
        text=True,
        env=env(**(extra_env or {})),
        timeout=timeout,
    )


PY = f"{sys.executable} -m ragworkbook"


@probe("18", "--corpus <(cat corpus.json) is read")
def _(tmp):
    shutil.copy(ROOT / "ragworkbook/data/attention_notes.json", tmp / "c.json")
    with server() as srv:
        p = _bash(
            f"{PY} eval --corpus <(cat c.json) --backend ollama --model fake:1b --retriever bm25 "
            f"--metric token_f1 --no-progress --out r.json",
            tmp,
            {"OLLAMA_HOST": srv.url},
        )
    return p.returncode == 0 and "no such file" not in p.stderr, tail(p)


@probe("18", "--corpus <(cat notes.txt) is read")
def _(tmp):
    (tmp / "notes.txt").write_text(
        "The Transformer uses eight attention heads in each layer of the model. " * 20
    )
    with server() as srv:
        p = _bash(
            f"{PY} eval --corpus <(cat notes.txt) --backend ollama --model fake:1b --retriever bm25 "
            f"--metric token_f1 --no-progress --out r.json",
            tmp,
            {"OLLAMA_HOST": srv.url},
        )
    return p.returncode == 0 and "no such file" not in p.stderr, tail(p)


@probe("18", "--eval-set <(cat es.json) is read")
def _(tmp):
    eval_set(tmp, 8)
    with server() as srv:
        p = _bash(
            f"{PY} eval --eval-set <(cat es.json) --backend ollama --model fake:1b --retriever bm25 "
            f"--metric token_f1 --no-progress --out r.json",
            tmp,
            {"OLLAMA_HOST": srv.url},
        )
    return p.returncode == 0 and "no such file" not in p.stderr, tail(p)


@contextlib.contextmanager
def tiny_fs(tmp: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        raise Skip("a tmpfs needs root")
    mnt = tmp / "full"
    mnt.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", str(mnt)], capture_output=True, text=True
    )
    if r.returncode:
        raise Skip(f"mount: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


for _cmd in ("eval", "judge-check"):

    def _p(tmp, cmd=_cmd):
        with tiny_fs(tmp) as mnt:
            out = mnt / "r.json"
            out.write_text('{"old": true}\n')
            if cmd == "eval":
                p = rw(*eval_answers(answers(tmp, 400), out), cwd=tmp)
            else:
                p = rw(*JC, "--out", str(out), cwd=tmp)
            kept = out.read_text() == '{"old": true}\n'
            leftovers = [x.name for x in mnt.iterdir() if x.name != "r.json"]
        ok = p.returncode == 2 and str(out) in p.stderr and clean(p) and kept and not leftovers
        return ok, f"{tail(p)}; old file kept {kept}; leftovers {leftovers}"

    probe("19", f"{_cmd} --out on a full disk names the path and keeps the old file")(_p)


@probe("20", "judge-check against HTTP 500 shows the server's error")
def _(tmp):
    with server() as srv:
        srv.add_fault("500")
        p = rw(
            "judge-check",
            "--dataset",
            "ff",
            "--backend",
            "ollama",
            "--model",
            "fake:1b",
            "--limit",
            "5",
            "--repeats",
            "0",
            "--no-progress",
            "--out",
            "jc.json",
            cwd=tmp,
            extra_env={"OLLAMA_HOST": srv.url},
        )
    saved = (tmp / "jc.json").read_text() if (tmp / "jc.json").exists() else ""
    said = "llama runner process has terminated" in p.stdout + p.stderr
    return said and "llama runner process has terminated" in saved, tail(p)


@probe("20", "judge-check --json against HTTP 500 has the failure reasons")
def _(tmp):
    with server() as srv:
        srv.add_fault("500")
        p = rw(
            "judge-check",
            "--dataset",
            "ff",
            "--backend",
            "ollama",
            "--model",
            "fake:1b",
            "--limit",
            "5",
            "--repeats",
            "0",
            "--json",
            cwd=tmp,
            extra_env={"OLLAMA_HOST": srv.url},
        )
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return False, tail(p)
    return bool(doc.get("failure_reasons")), json.dumps(doc.get("failure_reasons"))[:200]


for _cmd in ("eval", "judge-check"):

    def _p(tmp, cmd=_cmd):
        p = (
            rw(*eval_answers(answers(tmp), ""))
            if False
            else (
                rw(*eval_answers(answers(tmp), ""), cwd=tmp)
                if cmd == "eval"
                else rw(*JC, "--out", "", cwd=tmp)
            )
        )
        return p.returncode == 2 and "--out" in p.stderr, tail(p)

    probe("21", f'{_cmd} --out "" is an error')(_p)


for _q in ("-q", "-q -m recip_rank"):

    def _p(tmp, q=_q):
        lines = "".join(f"{i} 0 d{i}-{j} {j % 2}\n" for i in range(3000) for j in range(10))
        (tmp / "qrels").write_text(lines)
        (tmp / "run").write_text(
            "".join(f"{i} Q0 d{i}-{j} {j} {10 - j} r\n" for i in range(3000) for j in range(10))
        )
        p = _bash(f'{PY} ir-eval {q} qrels run | head -1 >/dev/null; echo "status=${{PIPESTATUS[0]}}"', tmp)
        return "status=141" in p.stdout and "Traceback" not in p.stderr, p.stdout.strip() + " " + tail(
            p.stderr
        )

    probe("22", f"ir-eval {_q} BIG | head exits 141".replace("  ", " "))(_p)


# --- runner -------------------------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "-k", default=None, help="only the probes of this item (e.g. 9) or whose name has this text"
    )
    ap.add_argument("-v", action="store_true", help="print each probe's detail")
    args = ap.parse_args()
    # a probe run in the background (`nohup ... &`) has SIGHUP and SIGINT ignored, and its children would
    # inherit that: give them the defaults, as from a terminal
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    chosen = [p for p in PROBES if args.k is None or p[0] == args.k or args.k in p[1]]
    ok = fail = skipped = 0
    for item, name, fn in chosen:
        tmp = Path(tempfile.mkdtemp(prefix="probe-"))
        t0 = time.monotonic()
        try:
            good, detail = fn(tmp)
        except Skip as exc:
            skipped += 1
            print(f"skip  [{item:>2}] {name}: {exc}")
            continue
        except Exception as exc:  # a probe that crashed is a failure, with what crashed
            good, detail = False, f"probe error: {type(exc).__name__}: {exc}"
            if args.v:
                traceback.print_exc()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        ok, fail = ok + good, fail + (not good)
        print(
            f"{'ok  ' if good else 'FAIL'}  [{item:>2}] {name} ({time.monotonic() - t0:.1f} s)"
            + (f": {detail}" if args.v or not good else ""),
            flush=True,
        )
    print(f"\n{ok} ok, {fail} failed, {skipped} skipped of {len(chosen)} probes")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
