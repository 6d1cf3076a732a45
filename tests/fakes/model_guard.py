"""The fast-test model guard's state, in one module that every copy of ``tests/conftest.py`` shares.

(pytest may import ``conftest.py`` under two names when the notebooks' conftest is collected too;
state kept here is the same object for both.)
"""

from __future__ import annotations

import functools
import importlib
import threading

#: The functions through which the package loads a model, with what they load.
#: ``_spawn`` is below the checks of ``model_worker`` (a missing llama_cpp is
#: reported without loading anything, and is a fast test).
MODEL_LOADERS = (
    ("ragworkbook.embeddings", "get_model", "MiniLM (sentence-transformers)"),
    ("ragworkbook.metrics.generation", "get_bertscorer", "BERTScore (torch)"),
    ("ragworkbook.llm.worker", "_spawn", "SmolLM2 (llama.cpp, in its worker process)"),
)


class ModelLoadedInFastTest(BaseException):
    """A test without the ``model`` marker reached a model loader.

    A BaseException, so an ``except Exception`` in the code under test does not hide it.
    """


class _Guard:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.nodeid: str | None = None  # the running test, when it is a fast one
        self.violations: dict[str, str] = {}

    def check(self, what: str) -> None:
        with self.lock:
            nodeid = self.nodeid
            if nodeid is None:
                return
            message = (f"{nodeid} loads {what} but is not marked @pytest.mark.model: mark it, so that "
                       "`pytest -m fast` loads no model")
            self.violations.setdefault(nodeid, message)
        raise ModelLoadedInFastTest(message)


_GUARD = _Guard()


def _guarded(func, what: str):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _GUARD.check(what)
        return func(*args, **kwargs)

    for attr in ("cache_info", "cache_clear"):  # lru_cache's helpers are not copied by wraps
        if hasattr(func, attr):
            setattr(wrapper, attr, getattr(func, attr))
    return wrapper


def _install_guard() -> None:
    for module, name, what in MODEL_LOADERS:
        mod = importlib.import_module(module)
        func = getattr(mod, name)
        if not getattr(func, "_fast_guard", False):
            wrapped = _guarded(func, what)
            wrapped._fast_guard = True
            setattr(mod, name, wrapped)
