"""The suite's own machinery (tests/conftest.py): the dev-extra check and the fast-test model guard."""

from __future__ import annotations

import re

import pytest
from conftest import _GUARD, MODEL_LOADERS, ModelLoadedInFastTest, declared_in_extra


def test_declared_in_extra_reads_pyproject(tmp_path):
    p = tmp_path / "pyproject.toml"
    p.write_text('[project]\nname = "ragworkbook"\n[project.optional-dependencies]\n'
                 'dev = ["pytest>=8", "Scikit_Learn>=1.3"]\nragas = ["ragas>=0.2"]\n', encoding="utf-8")
    assert declared_in_extra("scikit-learn", "dev", p)  # names compare as pip compares them
    assert not declared_in_extra("ragas", "dev", p)
    assert declared_in_extra("ragas", "ragas", p)
    p.write_text('[project.optional-dependencies]\ndev = ["ragworkbook[ragas]"]\nragas = ["ragas>=0.2"]\n',
                 encoding="utf-8")
    assert declared_in_extra("ragas", "dev", p)  # through the self-reference
    assert not declared_in_extra("ranx", "dev", p)


@pytest.mark.parametrize("module, name, what", MODEL_LOADERS)
def test_a_fast_test_cannot_load_a_model(module, name, what, request):
    import importlib

    loader = getattr(importlib.import_module(module), name)
    assert _GUARD.nodeid == request.node.nodeid  # this test is a fast one: the guard is on
    with pytest.raises(ModelLoadedInFastTest, match=re.escape(f"loads {what} but is not marked")):
        loader()
    _GUARD.violations.pop(request.node.nodeid)  # expected here: do not fail this test for it
