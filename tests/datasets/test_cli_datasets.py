"""``ragworkbook datasets list | fetch | path | info``."""

from __future__ import annotations

import pytest
from conftest import free_port

from ragworkbook.cli import main
from ragworkbook.datasets import cache

pytestmark = pytest.mark.datasets("ragchecker")  # fetched into the session's cache (mirror)


@pytest.fixture()
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGWORKBOOK_CACHE", str(tmp_path / "c"))
    return tmp_path / "c" / "datasets"


def test_list_names_every_data_set(capsys):
    assert main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("trec_eval", "ragchecker", "wikieval", "ragtruth"):
        assert f"\n{name} " in out
    assert "cache: " in out


def test_fetch_then_path_then_info(capsys, own_cache):
    assert main(["datasets", "path", "ragchecker"]) == 2  # not cached yet
    assert "`ragworkbook datasets fetch ragchecker`" in capsys.readouterr().err
    assert main(["datasets", "fetch", "ragchecker", "--no-progress"]) == 0
    assert "5 files checked (sha256)" in capsys.readouterr().out
    assert main(["datasets", "path", "ragchecker"]) == 0
    assert capsys.readouterr().out.strip() == str(own_cache / "ragchecker_meta_eval")
    assert main(["datasets", "info", "ragchecker"]) == 0
    out = capsys.readouterr().out
    assert "Apache-2.0" in out and "6091f08c00e676e87a970f2aeb4a23a484746348" in out
    assert "cached:   yes" in out


def test_fetch_without_a_source_exits_2(capsys, own_cache, monkeypatch):
    monkeypatch.setenv(cache.MIRROR_ENV, f"http://127.0.0.1:{free_port()}")
    assert main(["datasets", "fetch", "wikieval", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "`ragworkbook datasets fetch wikieval`" in err


def test_an_unknown_name_exits_2(capsys):
    assert main(["datasets", "info", "wikival"]) == 2
    assert "unknown data set 'wikival'" in capsys.readouterr().err
