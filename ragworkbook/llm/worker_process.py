"""The embedded model's worker process: ``python -m ragworkbook.llm.worker_process --model PATH ...``.

Started by :mod:`ragworkbook.llm.worker` (never by hand). It loads one GGUF file with llama.cpp
(extra buffer types off: :mod:`ragworkbook.llm.llama_safety`), says it is ready, then answers one
request at a time until its standard input closes or it is told to exit.

Frames, both ways: a 4-byte big-endian length, then that many bytes of UTF-8 JSON. Requests come
on standard input; replies go to a copy of the original standard output, and file descriptor 1 is
pointed at standard error first, so nothing llama.cpp prints can corrupt a reply.

- ready: ``{"op": "ready", "pid", "load_seconds", "chat_format", "chat_template", "n_ctx",
  "n_threads", "extra_buffers_disabled", "llama_cpp_python"}``, or ``{"op": "error", "type",
  "message"}`` when the model does not load (then the process exits 1).
- ``{"op": "chat", "id", "messages", "kw", "stream"}``: ``create_chat_completion(messages, **kw)``
  on a reset context; the reply ``{"id", "ok": true, "result"}`` carries the completion (with
  ``stream``: the list of chunks), or ``{"id", "ok": false, "type", "message"}`` for a Python
  exception.
- ``{"op": "ping", "id"}``: ``{"id", "ok": true, "result": null}`` (the round trip alone, for the
  overhead benchmark).
- ``{"op": "exit"}`` or end of input: the process exits 0.

SIGINT is ignored (the parent decides when a call is abandoned, and stops the worker then), and
Python's faulthandler writes a native crash's Python stack to standard error, which the parent
keeps for its error message.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import signal
import struct
import sys
import time
from typing import IO, TYPE_CHECKING

from ragworkbook._types import JSON, JSONObject

if TYPE_CHECKING:
    import llama_cpp

_HEADER = struct.Struct(">I")


def read_frame(stream: IO[bytes]) -> JSON | None:
    """The next JSON frame from ``stream``, or None at the end of the stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    body = stream.read(size)
    if len(body) < size:
        return None
    return json.loads(body.decode("utf-8"))


def write_frame(stream: IO[bytes], obj: JSON) -> None:
    """Write ``obj`` as one JSON frame and flush."""
    body = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


def _load(path: str, n_ctx: int, n_threads: int) -> llama_cpp.Llama:
    import llama_cpp

    from ragworkbook.llm.llama_safety import disable_extra_buffers

    disable_extra_buffers()
    return llama_cpp.Llama(model_path=path, n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                           seed=0, verbose=False)


def _ready(llm: llama_cpp.Llama, seconds: float, n_ctx: int, n_threads: int) -> JSONObject:
    import importlib.metadata

    from ragworkbook.llm.llama_safety import extra_buffers_disabled

    return {"op": "ready", "pid": os.getpid(), "load_seconds": round(seconds, 3),
            "chat_format": llm.chat_format, "chat_template": llm.metadata.get("tokenizer.chat_template"),
            "n_ctx": n_ctx, "n_threads": n_threads, "extra_buffers_disabled": extra_buffers_disabled(llm),
            "llama_cpp_python": importlib.metadata.version("llama-cpp-python")}


def serve(llm: llama_cpp.Llama, requests: IO[bytes], replies: IO[bytes]) -> int:
    """Answer requests until the input ends or an ``exit`` request; returns the exit status."""
    while True:
        req = read_frame(requests)
        if req is None or req.get("op") == "exit":
            return 0
        rid = req.get("id")
        if req.get("op") == "ping":
            write_frame(replies, {"id": rid, "ok": True, "result": None})
            continue
        try:
            llm.reset()  # no prompt-prefix reuse: the answer depends on this request only
            if req.get("stream"):
                result: JSON = list(llm.create_chat_completion(messages=req["messages"], stream=True,
                                                              **req["kw"]))
            else:
                result = llm.create_chat_completion(messages=req["messages"], **req["kw"])
        except Exception as exc:
            write_frame(replies, {"id": rid, "ok": False, "type": type(exc).__name__, "message": str(exc)})
            continue
        write_frame(replies, {"id": rid, "ok": True, "result": result})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ragworkbook.llm.worker_process")
    parser.add_argument("--model", required=True)
    parser.add_argument("--n-ctx", type=int, required=True)
    parser.add_argument("--n-threads", type=int, required=True)
    args = parser.parse_args(argv)

    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # native prints to stdout land on stderr, never inside a reply
    sys.stdout = sys.stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    faulthandler.enable()
    requests = sys.stdin.buffer

    t0 = time.perf_counter()
    try:
        llm = _load(args.model, args.n_ctx, args.n_threads)
    except Exception as exc:
        write_frame(replies, {"op": "error", "type": type(exc).__name__, "message": str(exc)})
        return 1
    write_frame(replies, _ready(llm, time.perf_counter() - t0, args.n_ctx, args.n_threads))
    try:
        return serve(llm, requests, replies)
    finally:
        llm.close()


if __name__ == "__main__":
    sys.exit(main())
