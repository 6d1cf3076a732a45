"""The examples in the metric modules' docstrings are run, so a wrong documented value fails."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["ragworkbook.metrics.retrieval", "ragworkbook.metrics.batch"])
def test_docstring_examples(module):
    res = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0
