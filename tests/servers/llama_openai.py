"""llama-cpp-python's own OpenAI-compatible server (``llama_cpp.server``), run for the tests: a real
server, not a stand-in.

``python -m servers.llama_openai --model FILE.gguf --port N [--alias NAME] [--api-key KEY]`` (with
``tests/`` on ``PYTHONPATH``) first makes llama.cpp load models without its extra buffer types
(:func:`ragworkbook.llm.llama_safety.disable_extra_buffers`: on CPUs with AMX the repacked weights
crash decode), then runs ``llama_cpp.server`` exactly as ``python -m llama_cpp.server`` would, with
the settings that make its answers reproducible: the model's own chat template (from the GGUF),
``n_ctx`` 4096 as the embedded backend, seed 0, one thread, ``127.0.0.1`` only, quiet.

:class:`LlamaServer` starts that process on a free loopback port, waits until ``GET /v1/models``
answers, and stops it (a context manager). The variables that would override the command line
(uvicorn's ``HOST`` and ``PORT``, the server's ``CONFIG_FILE``) are removed from its environment.
"""

from __future__ import annotations

import argparse
import os
import runpy
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
#: what the server is asked to load the model with (the embedded backend's context size)
N_CTX = 4096
#: seconds to wait for the server to load the model and answer (SmolLM2-135M loads in about 1 s)
START_TIMEOUT = 120.0
SERVER_PACKAGES = ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings", "yaml")


def missing_packages() -> list[str]:
    """The modules of llama-cpp-python's ``server`` extra that cannot be imported here."""
    import importlib.util

    return [name for name in SERVER_PACKAGES if importlib.util.find_spec(name) is None]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """The server process (see the module docstring): ``url`` is the API's base URL (``.../v1``)."""

    def __init__(self, model_path: str | os.PathLike[str], alias: str, api_key: str | None = None):
        self.model_path = str(model_path)
        self.alias = alias
        self.api_key = api_key
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _ready(self) -> bool:
        request = urllib.request.Request(f"{self.url}/models")
        if self.api_key:
            request.add_header("Authorization", f"Bearer {self.api_key}")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=2) as resp:
                return resp.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def log(self) -> str:
        """What the server printed so far (its stderr and stdout)."""
        if self._log is None:
            return ""
        self._log.flush()
        return Path(self._log.name).read_text(encoding="utf-8", errors="replace")

    def start(self) -> LlamaServer:
        env = {k: v for k, v in os.environ.items() if k not in ("HOST", "PORT", "CONFIG_FILE")}
        env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(TESTS.parent), env.get("PYTHONPATH", "")])
        cmd = [sys.executable, "-m", "servers.llama_openai", "--model", self.model_path, "--port",
               str(self.port), "--alias", self.alias]
        if self.api_key:
            cmd += ["--api-key", self.api_key]
        self._log = tempfile.NamedTemporaryFile("w+b", prefix="llama-server-", suffix=".log", delete=False)
        self.process = subprocess.Popen(cmd, env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = self.log()
                self.stop()
                raise RuntimeError(f"llama_cpp.server exited with status {self.process.returncode} before "
                                   f"answering:\n{log[-3000:]}")
            if self._ready():
                return self
            time.sleep(0.2)
        log = self.log()
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not answer within {START_TIMEOUT:g} s:\n{log[-3000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            Path(self._log.name).unlink(missing_ok=True)
            self._log = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    """Run ``llama_cpp.server`` on loopback with reproducible settings (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--api-key", default=None)
    args = parser.parse_args(argv)
    try:
        from ragworkbook.llm.llama_safety import disable_extra_buffers
    except ImportError:  # a package without it predates the AMX fix
        pass
    else:
        disable_extra_buffers()
    sys.argv = ["llama_cpp.server", "--model", args.model, "--model_alias", args.alias,
                "--host", "127.0.0.1", "--port", str(args.port), "--n_ctx", str(N_CTX), "--seed", "0",
                "--n_threads", "1", "--n_threads_batch", "1", "--verbose", "False"]
    if args.api_key:
        sys.argv += ["--api_key", args.api_key]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
