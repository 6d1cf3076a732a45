"""ragworkbook.datasets.catalogue: each data set declared once, with pinned sources and checksums."""

from __future__ import annotations

import importlib
import re

import pytest

from ragworkbook.datasets.catalogue import CATALOGUE, get


def test_every_file_is_pinned_and_checksummed():
    for ds in CATALOGUE.values():
        assert re.fullmatch(r"[0-9a-f]{40}", ds.commit), ds.name
        assert ds.licence and ds.citation and ds.homepage.startswith("https://")
        relpaths = [f.relpath for f in ds.files]
        assert len(set(relpaths)) == len(relpaths)
        for f in ds.files:
            assert f.url.startswith("https://") and ds.commit in f.url, f.url
            assert re.fullmatch(r"[0-9a-f]{64}", f.sha256) and f.size > 0
            assert not f.relpath.startswith("/") and ".." not in f.relpath


def test_every_parser_resolves():
    for ds in CATALOGUE.values():
        module, func = ds.parser.split(":")
        assert callable(getattr(importlib.import_module(module), func)), ds.parser


def test_unknown_names_are_named():
    with pytest.raises(ValueError, match=r"unknown data set 'wikival'; known: trec_eval, ragchecker"):
        get("wikival")
    with pytest.raises(KeyError, match="has no file 'gg.csv'"):
        get("wikieval").file("gg.csv")


def test_the_layer_depends_on_nothing_above_it():
    """ragworkbook.datasets is a leaf: the readers import it, it imports none of them."""
    import ast
    from pathlib import Path

    import ragworkbook.datasets as pkg

    # below the layer: leaf modules that import nothing of ragworkbook
    allowed = {"ragworkbook._io", "ragworkbook._validate", "ragworkbook.paths"}
    for path in Path(pkg.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ragworkbook"):
                assert node.module in allowed or node.module.startswith("ragworkbook.datasets"), \
                    (path.name, node.module)
