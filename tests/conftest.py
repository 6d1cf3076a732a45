"""Shared fixtures, fakes and markers for the test suite.

Markers (registered in ``pyproject.toml``):

- ``model``: loads a model (MiniLM / BERTScore through torch, or SmolLM2 through
  llama.cpp). Every other test is marked ``fast`` here, so ``pytest -m fast``
  runs the quick ones.
- ``reference``: a cross-check against a reference implementation (pytrec_eval,
  ranx, ir_measures, scikit-learn, statsmodels, scipy, ragas, the libraries the
  generation metrics wrap). Use :func:`reference` to import the reference
  library: on a developer machine without it the test is skipped, but under CI
  (``CI`` set) a missing reference library is a failure, never a silent skip.

The fakes (a stand-in Ollama server, rule-based judges) live in ``tests/fakes``.
"""

from __future__ import annotations

import importlib
import os
import types

import pytest


def in_ci() -> bool:
    """True under continuous integration (the ``CI`` environment variable is set and not "0"/"false")."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def reference(module: str) -> types.ModuleType:
    """Import a reference library for a cross-check.

    Outside CI a missing library skips the test (a developer without the extra);
    under CI it fails the test: a reference check must run there.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if in_ci():
            pytest.fail(f"reference library {module!r} is missing under CI ({exc}); install the dev "
                        "extras (`pip install -e .[dev]`)", pytrace=False)
        pytest.skip(f"reference library {module!r} is not installed ({exc})")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("model") is None and item.path.suffix == ".py":
            item.add_marker(pytest.mark.fast)


@pytest.fixture()
def fake_ollama():
    """A stand-in Ollama server on loopback, backed by the embedded model (see ``fakes.ollama_server``)."""
    from fakes.ollama_server import FakeOllama

    with FakeOllama() as server:
        yield server


@pytest.fixture(scope="session")
def carbon():
    """The carbon-pricing worked example (``data/carbon_pricing.json``)."""
    import json

    from ragworkbook.paths import data_path

    return json.loads(data_path("carbon_pricing.json").read_text(encoding="utf-8"))
