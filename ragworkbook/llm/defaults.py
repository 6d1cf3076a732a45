"""The backends' names and default models: the facts every other module of :mod:`ragworkbook.llm` reads.

- :data:`BACKENDS`: what ``backend=`` / ``$RAGWORKBOOK_BACKEND`` / ``--backend`` accept;
- :func:`default_model`: the model a backend uses when neither ``model=`` nor
  ``$RAGWORKBOOK_MODEL`` names one (``qwen3:4b`` on Ollama, the documented pipeline's model;
  SmolLM2-135M-Instruct Q4_1 embedded and when replaying). The openai backend has none: servers
  name their models differently, so the name is always given (a ValueError says how).
"""

from __future__ import annotations

__all__ = ["BACKENDS", "DEFAULT_OLLAMA_MODEL", "DEFAULT_EMBEDDED_MODEL", "default_model"]

BACKENDS = ("auto", "ollama", "openai", "embedded", "replay")
DEFAULT_OLLAMA_MODEL = "qwen3:4b"
DEFAULT_EMBEDDED_MODEL = "SmolLM2-135M-Instruct.Q4_1"


def default_model(backend: str) -> str:
    """The model a backend uses when neither ``model=`` nor ``RAGWORKBOOK_MODEL`` says otherwise."""
    if backend == "ollama":
        return DEFAULT_OLLAMA_MODEL
    if backend in ("embedded", "replay"):
        return DEFAULT_EMBEDDED_MODEL
    if backend == "openai":
        raise ValueError("the openai backend has no default model: give the name the server serves it under "
                         "with --model NAME (or RAGWORKBOOK_MODEL=NAME, or get_generator(backend='openai', "
                         "model=NAME))")
    raise ValueError(f"unknown backend {backend!r}; choose one of: ollama, openai, embedded, replay")
