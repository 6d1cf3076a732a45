"""llama.cpp in a worker process: a native crash is an error for the caller, never its end.

A fault inside llama.cpp (a segmentation fault, the kernel's out-of-memory kill) ends the process
it happens in. Run in process, it would end the CLI with its unsaved work, a notebook's kernel or
pytest; so the embedded backend runs the model in a child process
(:mod:`ragworkbook.llm.worker_process`), as Ollama runs llama.cpp in a runner process.

Conventions:

- One worker per model file and settings (:func:`worker_for`): started on first use, reused across
  calls, stopped at exit (and it exits by itself when this process's end closes its input).
- One call at a time per worker (a lock), so concurrent callers queue; the answer depends on the
  request only (the context is reset per call), so temperature-0 answers are byte-identical across
  calls, workers and processes.
- A worker that dies during a call raises :class:`WorkerDied` (an ``LLMError``) naming the signal or
  exit status and the last lines it wrote to standard error; the call is counted as failed by the
  caller's usual ``LLMError`` handling, and the next call starts a new worker.
- A call that takes longer than its time limit (``timeout``: the generator's, else
  ``$RAGWORKBOOK_LLM_TIMEOUT``, else :data:`DEFAULT_TIMEOUT` seconds) stops the worker and raises
  :class:`WorkerTimeout`; so does a call its caller abandons (Ctrl-C, an exception while waiting),
  since the worker would still be busy with it.
- The worker runs in its own session: a Ctrl-C at the terminal reaches this process, which decides.
- Overhead per call: one pipe round trip of the request and reply as JSON (well under a
  millisecond; ``benchmarks/bench_embedded.py`` measures it against an in-process call).
"""

from __future__ import annotations

import atexit
import collections
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragworkbook._types import JSON, JSONObject
from ragworkbook._validate import seconds_setting
from ragworkbook.llm.base import BackendUnavailable, LLMError
from ragworkbook.llm.worker_process import read_frame, write_frame

__all__ = ["DEFAULT_TIMEOUT", "LOAD_TIMEOUT", "LlamaWorker", "WorkerDied", "WorkerTimeout", "call_timeout",
           "close_all", "worker_for"]

#: Seconds a call may take by default (a long prompt on a busy 2-core machine takes tens of seconds).
DEFAULT_TIMEOUT = 300.0
#: Seconds a new worker may take to import llama.cpp and load its model.
LOAD_TIMEOUT = 120.0
#: How much of the worker's standard error is kept for error messages.
STDERR_LINES = 40


class WorkerDied(LLMError):
    """The worker process ended during a call (a crash in llama.cpp, a kill, a failed load)."""


class WorkerTimeout(LLMError):
    """A call took longer than its time limit (or was abandoned); the worker was stopped."""


def call_timeout(timeout: float | None = None) -> float:
    """Seconds a call may take: ``timeout``, else ``$RAGWORKBOOK_LLM_TIMEOUT``, else 300."""
    return seconds_setting(timeout, "RAGWORKBOOK_LLM_TIMEOUT", DEFAULT_TIMEOUT)


def _last_words(lines: list[str], keep: int = 12) -> list[str]:
    """What to show of a dead worker's stderr: from faulthandler's "Fatal Python error" line (the
    crash and the innermost frames), else the last ``keep`` lines."""
    lines = [line for line in lines if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith("Fatal Python error"):
            return lines[i:i + keep]
    return lines[-keep:]


def _describe_end(returncode: int | None) -> str:
    if returncode is None:
        return "ended"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        why = {"SIGSEGV": " (a segmentation fault inside llama.cpp)",
               "SIGKILL": " (killed from outside: the kernel's out-of-memory killer sends it, so does "
                           "kill -9)",
               "SIGABRT": " (llama.cpp aborted: an internal check failed)",
               "SIGBUS": " (a bus error inside llama.cpp)",
               "SIGILL": " (an instruction this CPU lacks: llama-cpp-python was built for another CPU)"}
        return f"was killed by {name}{why.get(name, '')}"
    return f"exited with status {returncode}"


@dataclass(frozen=True)
class _Process:
    """One running worker process with its reply queue and the tail of its standard error."""

    popen: subprocess.Popen[bytes]
    replies: queue.Queue[JSONObject | None]
    stderr: collections.deque[str]
    owner: int  # the pid of the process that started it (a fork must not share it)


def worker_command(path: str, n_ctx: int, n_threads: int) -> list[str]:
    """The command line of a worker process (this interpreter, so the same llama-cpp-python)."""
    return [sys.executable, "-m", "ragworkbook.llm.worker_process", "--model", path, "--n-ctx", str(n_ctx),
            "--n-threads", str(n_threads)]


def _spawn(path: str, n_ctx: int, n_threads: int) -> _Process:
    """Start a worker process for the model (no waiting); its replies and stderr are read by threads."""
    popen = subprocess.Popen(worker_command(path, n_ctx, n_threads), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
    replies: queue.Queue[JSONObject | None] = queue.Queue()
    stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)

    def read_replies() -> None:
        assert popen.stdout is not None
        try:
            while (frame := read_frame(popen.stdout)) is not None:
                replies.put(frame)
        except (OSError, ValueError):
            pass
        replies.put(None)  # end of the stream: the worker is gone

    def read_stderr() -> None:
        assert popen.stderr is not None
        for raw in popen.stderr:
            stderr.append(raw.decode("utf-8", "replace").rstrip())

    for target, name in ((read_replies, "replies"), (read_stderr, "stderr")):
        threading.Thread(target=target, name=f"llama-worker-{popen.pid}-{name}", daemon=True).start()
    return _Process(popen, replies, stderr, os.getpid())


class LlamaWorker:
    """The worker process of one model file and settings; see the module docstring."""

    def __init__(self, path: str, n_ctx: int, n_threads: int):
        self.path, self.n_ctx, self.n_threads = path, n_ctx, n_threads
        self.info: JSONObject = {}  #: the worker's ready message (pid, chat_format, load_seconds, ...)
        self.started = 0  #: how many worker processes were started (a restart after a crash adds one)
        self._proc: _Process | None = None
        self._lock = threading.Lock()
        self._next_id = 0

    @property
    def pid(self) -> int | None:
        """The running worker's process id (None before the first call or after a stop)."""
        return self._proc.popen.pid if self._proc is not None else None

    def chat(self, messages: Sequence[Mapping[str, str]], kw: Mapping[str, JSON], *,
             timeout: float | None = None, stream: bool = False) -> JSON:
        """``create_chat_completion(messages, **kw)`` in the worker: the completion dict (with
        ``stream``, the list of chunks). ValueError for a Python error of llama-cpp-python
        (e.g. a prompt longer than the context), :class:`WorkerDied` / :class:`WorkerTimeout`."""
        return self._call({"op": "chat", "messages": [dict(m) for m in messages], "kw": dict(kw),
                           "stream": stream}, timeout)

    def ping(self, timeout: float | None = None) -> None:
        """One round trip with no model work (starts the worker if needed)."""
        self._call({"op": "ping"}, timeout)

    def _call(self, request: JSONObject, timeout: float | None) -> JSON:
        limit = call_timeout(timeout)
        with self._lock:
            proc = self._running()
            self._next_id += 1
            request["id"] = self._next_id
            try:
                assert proc.popen.stdin is not None
                write_frame(proc.popen.stdin, request)
            except OSError:
                pass  # the worker is gone: its end of the reply stream says how
            try:
                reply = proc.replies.get(timeout=limit)
            except queue.Empty:
                self._stop(proc)
                raise WorkerTimeout(
                    f"the embedded model did not answer within {limit:g} s; its worker process was stopped "
                    "and the next call starts a new one. Allow more time with RAGWORKBOOK_LLM_TIMEOUT "
                    "(seconds) or get_generator(backend='embedded', timeout=...), or send a shorter "
                    "request (fewer or smaller chunks, a smaller num_predict)."
                ) from None
            except BaseException:  # Ctrl-C while waiting: the worker is still busy with this call
                self._stop(proc)
                raise
            if reply is None:
                raise self._died(proc, "during a call")
            if reply.get("id") != request["id"]:  # pragma: no cover - the lock makes it impossible
                self._stop(proc)
                raise LLMError(f"the embedded model's worker answered request {reply.get('id')} to request "
                               f"{request['id']}; it was stopped, the next call starts a new one")
            if reply.get("ok"):
                return reply.get("result")
            if reply.get("type") == "ValueError":
                raise ValueError(reply.get("message", ""))
            raise LLMError(f"llama.cpp failed in the embedded model's worker: {reply.get('type')}: "
                           f"{reply.get('message')}")

    def _running(self) -> _Process:
        proc = self._proc
        if proc is not None and proc.owner == os.getpid() and proc.popen.poll() is None:
            return proc
        if proc is not None and proc.owner == os.getpid():
            self._stop(proc)
        proc = _spawn(self.path, self.n_ctx, self.n_threads)
        self.started += 1
        try:
            ready = proc.replies.get(timeout=LOAD_TIMEOUT)
        except queue.Empty:
            self._stop(proc)
            raise WorkerTimeout(f"the embedded model's worker did not load {self.path} within "
                                f"{LOAD_TIMEOUT:g} s (a very busy machine, or a stuck process)") from None
        except BaseException:
            self._stop(proc)
            raise
        if ready is None:
            raise self._died(proc, "while loading the model")
        if ready.get("op") != "ready":
            self._stop(proc)
            raise BackendUnavailable(f"the embedded model's worker could not load {self.path}: "
                                     f"{ready.get('type')}: {ready.get('message')}")
        self.info = ready
        self._proc = proc
        return proc

    def _died(self, proc: _Process, when: str) -> WorkerDied:
        try:
            code = proc.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        self._stop(proc)
        tail = "\n".join(f"    {line}" for line in _last_words(list(proc.stderr)))
        return WorkerDied(
            f"the embedded model's worker process (pid {proc.popen.pid}) {_describe_end(code)} {when}. "
            "This call is counted as failed; the next call starts a new worker. If it happens on every "
            "call, run `ragworkbook doctor` (it makes one real generation and says why it fails) or use "
            "another backend (--backend ollama / openai)."
            + (f"\n  its last words on stderr:\n{tail}" if tail else "")
        )

    def _stop(self, proc: _Process) -> None:
        if self._proc is proc:
            self._proc = None
        if proc.owner != os.getpid():
            return
        popen = proc.popen
        if popen.poll() is None:
            try:
                popen.kill()
            except ProcessLookupError:
                pass
        try:
            popen.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a kill that did not take
            pass
        for stream in (popen.stdin, popen.stdout, popen.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def close(self, wait: float = 2.0) -> None:
        """Ask the worker to exit; kill it after ``wait`` seconds."""
        with self._lock:
            proc = self._proc
            if proc is None or proc.owner != os.getpid():
                self._proc = None
                return
            try:
                assert proc.popen.stdin is not None
                write_frame(proc.popen.stdin, {"op": "exit"})
                proc.popen.wait(timeout=wait)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
            self._stop(proc)

    def __repr__(self) -> str:
        return f"<LlamaWorker {os.path.basename(self.path)} n_ctx={self.n_ctx} pid={self.pid}>"


_WORKERS: dict[tuple[str, int, int], LlamaWorker] = {}
_WORKERS_GUARD = threading.Lock()


def worker_for(path: str, n_ctx: int, n_threads: int) -> LlamaWorker:
    """The worker of this model file (an absolute path) and settings: one per process, started lazily."""
    key = (path, int(n_ctx), int(n_threads))
    with _WORKERS_GUARD:
        worker = _WORKERS.get(key)
        if worker is None:
            if not _WORKERS:
                atexit.register(close_all)
            worker = _WORKERS[key] = LlamaWorker(*key)
    return worker


def close_all() -> None:
    """Stop every worker (runs at exit)."""
    with _WORKERS_GUARD:
        workers = list(_WORKERS.values())
    for worker in workers:
        worker.close()
