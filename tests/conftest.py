"""Shared fixtures, fakes and markers for the test suite.

Markers (registered in ``pyproject.toml``):

- ``model``: loads a model (MiniLM / BERTScore through torch, or SmolLM2 through
  llama.cpp). Every other test is marked ``fast`` here, so ``pytest -m fast``
  runs the quick ones. A ``fast`` test that reaches one of the model loaders
  fails with a message saying to mark it (see :data:`MODEL_LOADERS`).
- ``reference``: a cross-check against a reference implementation (pytrec_eval,
  ranx, ir_measures, scikit-learn, statsmodels, scipy, ragas, the libraries the
  generation metrics wrap). Use :func:`reference` to import the reference
  library: on a developer machine without it the test is skipped, but under CI
  (``CI`` set) a missing reference library is a failure, never a silent skip.
  A core dependency of the package (llama_cpp, sentence-transformers, the
  embedded model) is imported directly: without it a test fails, never skips.

The fakes (a stand-in Ollama server, rule-based judges, a table-driven pipeline)
live in ``tests/fakes``; the shared data (the carbon-pricing example, the bundled
corpus, chunks and eval set) are the fixtures below.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import socket
import sys
import types
from pathlib import Path

import pytest
from fakes.model_guard import _GUARD, MODEL_LOADERS, ModelLoadedInFastTest, _install_guard  # noqa: F401

# pytest imports this file as ``tests.conftest``; the tests import it as ``conftest`` (``pythonpath =
# tests``). Both names are this one module, so the model guard below has one state.
sys.modules.setdefault("conftest", sys.modules[__name__])

REPO = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- reference libraries


def in_ci() -> bool:
    """True under continuous integration (the ``CI`` environment variable is set and not "0"/"false")."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def reference(module: str, extra: str = "dev") -> types.ModuleType:
    """Import a reference library for a cross-check; ``extra`` is the extra of ``pyproject.toml``
    that declares it (named in the message when it is missing).

    Outside CI a missing library skips the test (a developer without the extra);
    under CI it fails the test: a reference check must run there.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        extras = "dev" if extra == "dev" else f"dev,{extra}"
        if in_ci():
            pytest.fail(f"reference library {module!r} is missing under CI ({exc}); install the {extras} "
                        f"extras (`pip install -e \".[{extras}]\"`; `make test` does)", pytrace=False)
        pytest.skip(f"reference library {module!r} is not installed ({exc}); the {extra} extra has it")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_in_extra(package: str, extra: str = "dev", pyproject: Path | None = None) -> bool:
    """Whether ``pyproject.toml`` (the repository's by default) lists ``package`` in the
    optional dependencies ``extra``.

    A self-reference (``ragworkbook[ragas]`` inside ``dev``) counts: the extras it
    names are followed.
    """
    import tomllib
    from packaging.requirements import Requirement

    extras = tomllib.loads((pyproject or REPO / "pyproject.toml").read_text(encoding="utf-8"))
    extras = extras.get("project", {}).get("optional-dependencies", {})
    seen: set[str] = set()

    def lists(name: str) -> bool:
        if name in seen:
            return False
        seen.add(name)
        for spec in extras.get(name, []):
            req = Requirement(spec)
            if _canonical(req.name) == _canonical(package):
                return True
            if _canonical(req.name) == "ragworkbook" and any(lists(e) for e in req.extras):
                return True
        return False

    return lists(extra)


# --------------------------------------------------------------------------- fast / model markers

def pytest_configure(config: pytest.Config) -> None:
    _install_guard()
    _start_datasets_mirror()


# --------------------------------------------------------------------------- public data sets
#
# The public data sets (WikiEval, RAGChecker's meta-evaluation, RAGTruth, trec_eval's suite) are not in
# the tree: ragworkbook.datasets downloads them. Unless RAGWORKBOOK_DATASETS_MIRROR is already set (CI
# serves ../shared/data itself), the session serves ../shared/data on a loopback HTTP server and points
# the mirror at it, so the tests run the real download-and-check path offline. A test that cannot get
# its data fails under CI and skips, saying why, otherwise: mark it ``@pytest.mark.datasets("NAME", ...)``
# or call :func:`datasets`; a DatasetMissing raised anywhere in a test is treated the same way.

_MIRROR: list[contextlib.AbstractContextManager[str]] = []


def _start_datasets_mirror() -> None:
    from fakes.mirror import serve, shared_data

    from ragworkbook.datasets import MIRROR_ENV

    if os.environ.get(MIRROR_ENV, "").strip() or _MIRROR:
        return
    root = shared_data()
    if root is None:
        return
    ctx = serve(root)
    os.environ[MIRROR_ENV] = ctx.__enter__()
    _MIRROR.append(ctx)


def pytest_unconfigure(config: pytest.Config) -> None:
    while _MIRROR:
        _MIRROR.pop().__exit__(None, None, None)


def _no_data(message: str) -> None:
    if in_ci():
        pytest.fail(f"public data set unavailable under CI: {message}", pytrace=False)
    pytest.skip(f"public data set unavailable: {message}")


def datasets(*names: str) -> dict[str, dict[str, Path]]:
    """Fetch (or find cached) the named data sets: ``{name: {file: path}}``. When one cannot be had the
    test fails under CI and is skipped, with the reason, otherwise."""
    from ragworkbook.datasets import DatasetMissing, fetch

    out = {}
    for name in names:
        try:
            out[name] = fetch(name, progress=False)
        except DatasetMissing as exc:
            _no_data(str(exc))
    return out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("model") is None and item.path.suffix == ".py":
            item.add_marker(pytest.mark.fast)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # set before any fixture of the test is built, module-scoped ones included
    with _GUARD.lock:
        _GUARD.nodeid = item.nodeid if item.get_closest_marker("model") is None else None
    for marker in item.iter_markers("datasets"):
        datasets(*marker.args)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None and not in_ci():
        from ragworkbook.datasets import DatasetMissing

        if call.excinfo.errisinstance(DatasetMissing):  # no data, no source: skipped, saying why
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0,
                               f"Skipped: public data set unavailable: {call.excinfo.value}")
    message = _GUARD.violations.get(item.nodeid)
    if message and report.passed and report.when in ("setup", "call"):
        # the code under test caught the guard's exception: the test still fails
        report.outcome = "failed"
        report.longrepr = message


# --------------------------------------------------------------------------- environment


@pytest.fixture()
def clean_env(monkeypatch):
    """No backend, record, model or timeout choice from the developer's environment."""
    for name in ("RAGWORKBOOK_BACKEND", "RAGWORKBOOK_RECORD", "RAGWORKBOOK_MODEL",
                 "RAGWORKBOOK_OLLAMA_TIMEOUT", "RAGWORKBOOK_OPENAI_TIMEOUT", "OPENAI_BASE_URL",
                 "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def no_ollama(monkeypatch) -> str:
    """``OLLAMA_HOST`` points at a port nothing listens on: no Ollama server. Returns that host."""
    host = f"127.0.0.1:{free_port()}"
    monkeypatch.setenv("OLLAMA_HOST", host)
    return host


@pytest.fixture()
def hide_package(monkeypatch):
    """``hide_package("name")``: ``importlib.util.find_spec("name")`` answers None, as if not installed."""
    import importlib.util

    hidden: set[str] = set()
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in hidden else real(name, *a))
    return hidden.add


@pytest.fixture()
def no_network(monkeypatch):
    """Any network connection or ``nltk.download`` fails the test."""
    import nltk

    def refuse(*args, **kwargs):
        raise AssertionError("a test tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(nltk, "download", refuse)


@pytest.fixture()
def fake_ollama():
    """A stand-in Ollama server on loopback, backed by the embedded model (see ``fakes.ollama_server``)."""
    from fakes.ollama_server import FakeOllama

    with FakeOllama() as server:
        yield server


#: the model name the tests' llama.cpp server serves the embedded SmolLM2 file under
LLAMA_SERVER_MODEL = "smollm2-135m-instruct"


@pytest.fixture(scope="session")
def llama_server():
    """llama-cpp-python's real OpenAI-compatible server (``llama_cpp.server``) serving the embedded
    SmolLM2 file on loopback, for the whole session (see ``servers.llama_openai``); it takes an API
    key, ``llama_server.api_key``. For ``model`` tests only. Without the packages of llama-cpp-python's
    ``server`` extra (in the ``dev`` extra) the test is skipped, and fails under CI."""
    import secrets

    from servers.llama_openai import LlamaServer, missing_packages

    from ragworkbook.llm.embedded import gguf_path

    missing = missing_packages()
    if missing:
        message = (f"llama_cpp.server needs {', '.join(missing)} (llama-cpp-python's server extra, listed in "
                   "the dev extra: `pip install -e \".[dev]\"`)")
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    with LlamaServer(gguf_path(), LLAMA_SERVER_MODEL, api_key=f"sk-test-{secrets.token_hex(12)}") as server:
        yield server


# --------------------------------------------------------------------------- shared data


@pytest.fixture(scope="session")
def carbon() -> dict:
    """The carbon-pricing worked example (``ragworkbook/data/carbon_pricing.json``)."""
    from ragworkbook.paths import data_path

    return json.loads(data_path("carbon_pricing.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def carbon_ranking(carbon) -> list[str]:
    """The carbon example's five retrieved chunk ids, in rank order (grades 0, 2, 3, 1, 1)."""
    return [c["id"] for c in sorted(carbon["chunks"], key=lambda c: c["rank"])]


@pytest.fixture(scope="session")
def carbon_grades(carbon) -> dict[str, int]:
    """The carbon example's graded relevance, chunk id -> grade."""
    return {c["id"]: c["grade"] for c in carbon["chunks"]}


@pytest.fixture(scope="session")
def corpus():
    """The bundled corpus (notes on "Attention Is All You Need")."""
    from ragworkbook.corpus.pages import load_corpus

    return load_corpus()


@pytest.fixture(scope="session")
def chunks(corpus):
    """The bundled corpus in the documented 400/50/40 chunks."""
    from ragworkbook.corpus.chunking import chunk_pages

    return chunk_pages(corpus)


@pytest.fixture(scope="session")
def eval_set():
    """The bundled eval set (eight questions)."""
    from ragworkbook.corpus.eval_set import load_eval_set

    return load_eval_set()


@pytest.fixture(scope="session")
def sentence_transformer():
    """The local MiniLM loaded by sentence-transformers itself (not through ``ragworkbook.embeddings``),
    once per session: the reference for cosine checks. Only for tests marked ``model``."""
    from sentence_transformers import SentenceTransformer

    from ragworkbook.embeddings import minilm_path

    return SentenceTransformer(str(minilm_path()), device="cpu")

