"""Choosing a generator: the backend, the model and the recording, from arguments and the environment.

:func:`get_generator` is the one entry point (the rules are in :mod:`ragworkbook.llm`'s docstring):
``backend=``, else ``$RAGWORKBOOK_BACKEND``, else ``auto`` (Ollama when a server answers
``GET /api/tags`` within 0.5 s, else embedded; ``openai`` only when asked for, with a model name);
``recording=`` with no backend chosen and
``$RAGWORKBOOK_RECORD`` unset is a strict replay; with ``$RAGWORKBOOK_RECORD=1`` the live backend
answers and every answer is recorded.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TypeAlias

from ragworkbook.llm.base import Generator
from ragworkbook.llm.defaults import BACKENDS, default_model
from ragworkbook.llm.embedded import EmbeddedGenerator
from ragworkbook.llm.host import ollama_host, ollama_models, redact_url
from ragworkbook.llm.ollama_backend import OllamaGenerator
from ragworkbook.llm.openai_backend import OpenAIGenerator, openai_base_url, openai_models
from ragworkbook.llm.replay import RecordingGenerator, ReplayGenerator

__all__ = ["get_generator"]

_TRUE = {"1", "true", "yes", "on"}
_announced: set[str] = set()


def _announce(line: str) -> None:
    if line not in _announced:
        _announced.add(line)
        print(line, file=sys.stdout, flush=True)


#: a backend constructor's keyword argument (host, stream, timeout, think, n_ctx, base_url, ...)
BackendOption: TypeAlias = str | int | float | bool | None

_BACKEND_KWARGS = {"ollama": {"host", "stream", "timeout", "think"},
                   "embedded": {"n_ctx", "n_threads", "timeout"},
                   "openai": {"base_url", "api_key", "timeout"}}


def _kwargs_for(backend: str, kwargs: dict[str, BackendOption], strict: bool) -> dict[str, BackendOption]:
    allowed = _BACKEND_KWARGS[backend]
    unknown = sorted(set(kwargs) - set().union(*_BACKEND_KWARGS.values()))
    wrong = sorted(set(kwargs) - allowed)
    if unknown or (strict and wrong):
        raise TypeError(f"get_generator() got option(s) {', '.join(unknown or wrong)} that the {backend} "
                        f"backend does not take; it takes: {', '.join(sorted(allowed))}")
    return {k: v for k, v in kwargs.items() if k in allowed}


def _live(backend: str, model: str | None, announce: bool, strict: bool = True,
          **kwargs: BackendOption) -> Generator:
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
        gen = OllamaGenerator(model or default_model("ollama"), **_kwargs_for("ollama", kwargs, strict))
    elif backend == "openai":
        kw = _kwargs_for("openai", kwargs, strict)
        gen = OpenAIGenerator(model or _no_openai_model(kw), **kw)
        if announce:
            _announce(f"ragworkbook: using openai backend ({gen.model}) at {gen.url}")
        return gen
    elif backend == "embedded":
        gen = EmbeddedGenerator(model, **_kwargs_for("embedded", kwargs, strict))
    else:  # pragma: no cover - checked by the caller
        raise ValueError(backend)
    if announce:
        _announce(f"ragworkbook: using {backend} backend ({gen.model})")
    return gen


def _no_openai_model(kwargs: dict[str, BackendOption]) -> str:
    """Raise the error of an openai backend without a model name, with the models its server lists."""
    message = ""
    try:
        default_model("openai")
    except ValueError as exc:
        message = str(exc)
    url = openai_base_url(kwargs.get("base_url"))
    served = openai_models(url, kwargs.get("api_key"), timeout=2.0)
    if served:
        message += f"; the server at {redact_url(url)} serves: {', '.join(served)}"
    elif served is None:
        message += f"; no server answers GET /models at {redact_url(url)} now (OPENAI_BASE_URL)"
    raise ValueError(message)


def get_generator(backend: str | None = None, model: str | None = None,
                  recording: str | os.PathLike[str] | None = None, *, announce: bool = True,
                  record_hint: str | None = None, **kwargs: BackendOption) -> Generator:
    """The generator to use: see the module docstring for how backend, model and recording are chosen.

    ``announce`` prints one line (once per process) saying which live backend was
    chosen; nothing is printed in replay or record mode, so notebook outputs are the
    same in both. Extra keyword arguments go to the backend's constructor:
    ``host``, ``stream``, ``timeout``, ``think`` for Ollama; ``base_url``, ``api_key``,
    ``timeout`` for openai; ``n_ctx``, ``n_threads``, ``timeout`` for embedded (with ``auto``,
    those of the other backends are ignored).
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
        # RAGWORKBOOK_MODEL picks a live model; a replay answers as the recorded model
        # unless model= is passed explicitly.
        return ReplayGenerator(Path(recording), model=model, hint=record_hint)

    model = model or os.environ.get("RAGWORKBOOK_MODEL", "").strip() or None

    if record and recording is not None:
        return RecordingGenerator(_live(chosen, model, False, **kwargs), Path(recording))
    return _live(chosen, model, announce and recording is None, **kwargs)
