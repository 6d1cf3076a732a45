"""The embedded model's worker process: a crash or a hang inside llama.cpp is an error, never the end.

Every test here uses the real model in a real worker process and kills it for real (SIGKILL,
SIGSEGV), or lets a call run past its time limit; the test process itself must survive, get the
error, and get an answer from the next call.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from ragworkbook.llm import LLMError, get_generator
from ragworkbook.llm import embedded as emb
from ragworkbook.llm.llama_safety import has_amx
from ragworkbook.llm.worker import WorkerDied, WorkerTimeout, call_timeout

pytestmark = pytest.mark.model

LONG = "Count from 1 to 300, one number per line."  # keeps the model busy for seconds
LONG_OPTS = {"num_predict": 1000}


@pytest.fixture
def gen():
    """A generator with a worker of its own (another n_ctx than the shared one), stopped afterwards."""
    g = get_generator(backend="embedded", n_ctx=2048, announce=False)
    yield g
    g.worker.close()


def _kill_during_the_call(g, sig: int, after: float = 0.5):
    """Start a long call, send ``sig`` to its worker ``after`` seconds in; the call's exception."""
    g.worker.ping()  # the worker is up before the clock starts
    pid = g.worker.pid
    timer = threading.Timer(after, os.kill, (pid, sig))
    timer.start()
    try:
        with pytest.raises(WorkerDied) as info:
            g.chat(LONG, options=LONG_OPTS)
    finally:
        timer.cancel()
    return pid, info.value


def test_the_model_loads_without_extra_buffer_types(gen):
    """The AMX fault (llama.cpp issue 20824) comes from weights repacked into extra buffers: the
    worker loads with them off, on every CPU (checked here on any machine)."""
    gen.worker.ping()
    info = gen.worker.info
    assert info["extra_buffers_disabled"] is True
    assert info["pid"] == gen.worker.pid != os.getpid()
    assert info["chat_format"] == "chat_template.default" and "<|im_start|>" in info["chat_template"]


@pytest.mark.skipif(not has_amx(), reason="this CPU has no AMX, so llama.cpp's AMX fault cannot happen "
                    "here; test_the_model_loads_without_extra_buffer_types checks the setting that avoids it")
def test_a_cpu_with_amx_generates():
    """On an AMX CPU, without extra buffers off, this first decode is a segmentation fault."""
    g = get_generator(backend="embedded", announce=False)
    assert g.chat("Say hello.", options={"num_predict": 8}).text
    assert g.chat("Is Paris in France?", schema={"type": "object", "properties": {"a": {"type": "boolean"}},
                                                  "required": ["a"]}, options={"num_predict": 16}).data


def test_sigkill_during_a_call_is_an_error_and_the_next_call_answers(gen):
    answer = gen.chat("Say hi.", options={"num_predict": 6}).text
    started = gen.worker.started
    pid, err = _kill_during_the_call(gen, signal.SIGKILL)
    msg = str(err)
    assert isinstance(err, LLMError)
    assert f"(pid {pid}) was killed by SIGKILL" in msg and "out-of-memory" in msg
    assert "counted as failed; the next call starts a new worker" in msg
    assert gen.worker.pid is None  # the dead worker is forgotten
    assert gen.chat("Say hi.", options={"num_predict": 6}).text == answer  # a new worker, the same answer
    assert gen.worker.pid not in (None, pid) and gen.worker.started == started + 1


def test_a_segfault_names_itself_and_shows_the_native_stack(gen):
    _pid, err = _kill_during_the_call(gen, signal.SIGSEGV)
    msg = str(err)
    assert "was killed by SIGSEGV (a segmentation fault inside llama.cpp)" in msg
    assert "Fatal Python error: Segmentation fault" in msg  # faulthandler's report, from its stderr
    assert gen.chat("Say hi.", options={"num_predict": 4}).text


def test_a_call_over_its_time_limit_stops_the_worker():
    g = get_generator(backend="embedded", n_ctx=2048, timeout=0.5, announce=False)
    try:
        g.worker.ping()
        pid = g.worker.pid
        t0 = time.perf_counter()
        with pytest.raises(WorkerTimeout, match=r"within 0\.5 s; its worker process was stopped"):
            g.chat(LONG, options=LONG_OPTS)
        assert time.perf_counter() - t0 < 5
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # gone, not left running in the background
        g.timeout = 60.0
        assert g.chat("Say hi.", options={"num_predict": 2}).text  # a new worker answers
    finally:
        g.worker.close()


def test_the_time_limit_comes_from_the_argument_or_the_environment(monkeypatch):
    monkeypatch.delenv("RAGWORKBOOK_LLM_TIMEOUT", raising=False)
    assert call_timeout() == 300 and call_timeout(2.5) == 2.5
    monkeypatch.setenv("RAGWORKBOOK_LLM_TIMEOUT", "30")
    assert call_timeout() == 30
    monkeypatch.setenv("RAGWORKBOOK_LLM_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="RAGWORKBOOK_LLM_TIMEOUT must be a number of seconds"):
        call_timeout()
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        get_generator(backend="embedded", timeout=0, announce=False)


def test_a_run_counts_the_crashed_call_as_failed_and_goes_on():
    """The evaluate loop meets a worker crash on the first question: that question is failed, the
    second is answered by a new worker, the report keeps both."""
    from ragworkbook.corpus.chunking import chunk_pages
    from ragworkbook.corpus.eval_set import load_eval_set
    from ragworkbook.corpus.pages import load_corpus
    from ragworkbook.evaluation.evaluate import evaluate
    from ragworkbook.llm.embedded import EmbeddedGenerator
    from ragworkbook.pipeline.naive import NaiveRAG
    from ragworkbook.retrieval.bm25 import BM25Retriever

    class CrashOnce(EmbeddedGenerator):
        crashed = False

        def _chat_once(self, messages, options, schema):
            if not self.crashed:
                self.crashed = True
                self.worker.ping()
                threading.Timer(0.3, os.kill, (self.worker.pid, signal.SIGSEGV)).start()
                long = [{"role": "user", "content": LONG}]
                return super()._chat_once(long, {**options, **LONG_OPTS}, schema)
            return super()._chat_once(messages, options, schema)

    items = load_eval_set().items[:2]
    chunks = chunk_pages(load_corpus())
    gen = CrashOnce(n_ctx=2048)
    started = gen.worker.started
    try:
        report = evaluate(NaiveRAG(BM25Retriever(chunks), gen, k=3), items, k=3, progress=False)
    finally:
        gen.worker.close()
    rows = report.rows
    assert rows[0]["error"] and "SIGSEGV" in rows[0]["error"]["message"]
    assert not rows[1].get("error") and rows[1]["answer"]
    assert gen.worker.started == started + 2  # the one that crashed, and the one after it


def test_a_notebook_kernel_survives_a_worker_crash(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cells = [
        "import os, signal, threading\n"
        "from ragworkbook.llm import get_generator\n"
        "g = get_generator(backend='embedded', n_ctx=2048, announce=False)\n"
        "g.worker.ping()",
        f"threading.Timer(0.5, os.kill, (g.worker.pid, signal.SIGSEGV)).start()\n"
        f"g.chat({LONG!r}, options={LONG_OPTS!r})",
        "print('kernel alive:', bool(g.chat('Say hi.', options={'num_predict': 4}).text), os.getpid())",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    error = [o for o in nb.cells[1].outputs if o["output_type"] == "error"]
    assert error and error[0]["ename"] == "WorkerDied" and "SIGSEGV" in error[0]["evalue"]
    printed = "".join(o.get("text", "") for o in nb.cells[2].outputs)
    assert printed.startswith("kernel alive: True")


def test_the_worker_ends_when_its_parent_is_killed(tmp_path):
    """A caller killed with SIGKILL runs no atexit: the worker sees its input close and exits."""
    code = ("import json, sys\nfrom ragworkbook.llm import get_generator\n"
            "g = get_generator(backend='embedded', n_ctx=2048, announce=False)\n"
            "g.worker.ping()\nprint(json.dumps(g.worker.pid), flush=True)\nsys.stdin.read()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    worker_pid = json.loads(proc.stdout.readline())
    proc.kill()
    proc.wait(timeout=10)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.kill(worker_pid, 0)
        except ProcessLookupError:
            break
        try:  # a zombie of a dead parent is reaped by init; it may show up here until then
            with open(f"/proc/{worker_pid}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":
                    break
        except OSError:
            break
        time.sleep(0.2)
    else:
        pytest.fail(f"worker {worker_pid} still running 20 s after its parent was killed")


def test_llama_cpp_python_errors_still_read_as_before(gen):
    small = get_generator(backend="embedded", n_ctx=256, announce=False)
    try:
        with pytest.raises(LLMError, match=r"too long for the embedded model's context of 256 tokens"):
            small.chat("word " * 400, options={"num_predict": 4})
        pid = small.worker.pid
        assert small.chat("Say hi.", options={"num_predict": 2}).text
        assert small.worker.pid == pid  # the same worker goes on
    finally:
        small.worker.close()
    assert emb.model_worker(None, 256) is small.worker
