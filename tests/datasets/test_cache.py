"""ragworkbook.datasets.cache: a download is checked, atomic, time-bounded, and used offline once cached."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import free_port
from fakes.mirror import serve, shared_data

from ragworkbook.datasets import cache
from ragworkbook.datasets.cache import ChecksumMismatch, DatasetMissing, dataset_file, fetch, is_cached
from ragworkbook.datasets.catalogue import get

SMALL = ("ragchecker", "NOTICE")  # 67 bytes


@pytest.fixture()
def empty_cache(tmp_path, monkeypatch) -> Path:
    """An empty ``$RAGWORKBOOK_CACHE``; no mirror and no time-out from the environment."""
    monkeypatch.setenv("RAGWORKBOOK_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(cache.MIRROR_ENV, raising=False)
    monkeypatch.delenv(cache.TIMEOUT_ENV, raising=False)
    return tmp_path / "cache" / "datasets"


@pytest.fixture()
def shared(empty_cache, monkeypatch) -> str:
    """../shared/data served over loopback HTTP as the mirror (the tests' CI-like set-up)."""
    root = shared_data()
    if root is None:
        from conftest import _no_data

        _no_data("../shared/data is not beside the clone (set RAGWORKBOOK_SHARED_DATA)")
    with serve(root) as url:
        monkeypatch.setenv(cache.MIRROR_ENV, url)
        yield url


def _fake_mirror(tmp_path: Path, content: bytes) -> Path:
    folder = tmp_path / "mirror"
    f = get(SMALL[0]).file(SMALL[1])
    (folder / f.relpath).parent.mkdir(parents=True, exist_ok=True)
    (folder / f.relpath).write_bytes(content)
    return folder


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_a_download_from_the_http_mirror_lands_checked_in_the_cache(shared, empty_cache):
    path = dataset_file("ragchecker", "human_labeled_data.json", progress=False)
    assert path == empty_cache / "ragchecker_meta_eval" / "human_labeled_data.json"
    assert path.stat().st_size == get("ragchecker").file("human_labeled_data.json").size
    assert _leftovers(path.parent) == ["human_labeled_data.json"]  # no temporary file left


def test_a_checksum_mismatch_is_refused_and_deleted(tmp_path, empty_cache, monkeypatch):
    wrong = b"Copyright Amazon.com, Inc. or its affiliates. All Rights Reserved!\n"  # 67 bytes, not the same
    assert len(wrong) == get("ragchecker").file("NOTICE").size
    monkeypatch.setenv(cache.MIRROR_ENV, str(_fake_mirror(tmp_path, wrong)))
    with pytest.raises(ChecksumMismatch, match="refused and deleted"):
        dataset_file(*SMALL, progress=False)
    assert _leftovers(empty_cache) == []
    with serve(tmp_path / "mirror") as url:  # over HTTP too
        monkeypatch.setenv(cache.MIRROR_ENV, url)
        with pytest.raises(ChecksumMismatch):
            dataset_file(*SMALL, progress=False)
    assert _leftovers(empty_cache) == []


def test_a_corrupted_cached_file_is_never_used(shared, empty_cache):
    path = dataset_file(*SMALL, progress=False)
    path.write_bytes(b"x" * path.stat().st_size)  # same size, other bytes
    cache._VERIFIED.clear()  # a new process
    again = dataset_file(*SMALL, progress=False)  # refused, deleted, downloaded again
    assert again.read_bytes().startswith(b"Copyright Amazon.com")


def test_an_interrupted_download_leaves_nothing(tmp_path, empty_cache, monkeypatch):
    monkeypatch.setenv(cache.MIRROR_ENV, str(_fake_mirror(tmp_path, b"partial")))

    def broken(path, out, progress):
        out.write(b"Copyright")
        raise ConnectionResetError("the connection dropped")

    monkeypatch.setattr(cache, "_stream_file", broken)
    with pytest.raises(DatasetMissing, match="ConnectionResetError"):
        dataset_file(*SMALL, progress=False)
    assert _leftovers(empty_cache) == []


def test_the_file_appears_whole_by_rename(shared, empty_cache, monkeypatch):
    seen = []
    real = os.replace

    def spy(src, dst):
        seen.append((Path(src), Path(dst), Path(dst).exists()))
        return real(src, dst)

    monkeypatch.setattr(cache.os, "replace", spy)
    path = dataset_file(*SMALL, progress=False)
    (src, dst, existed), = seen
    assert dst == path and src.parent == dst.parent and src.name.startswith(".NOTICE.") and not existed


def test_offline_once_cached(shared, empty_cache, monkeypatch):
    paths = fetch("wikieval", progress=False)
    assert is_cached("wikieval") and set(paths) == {"ff.csv", "ar.csv", "cr.csv", "LICENSE"}
    monkeypatch.setenv(cache.MIRROR_ENV, f"http://127.0.0.1:{free_port()}")  # nothing listens: no network
    cache._VERIFIED.clear()
    assert dataset_file("wikieval", "ff.csv", progress=False) == paths["ff.csv"]
    from ragworkbook.judging.datasets import load_wikieval

    assert len(load_wikieval("faithfulness")) == 50


def test_without_data_and_source_the_error_is_one_line_naming_the_command(empty_cache, monkeypatch):
    monkeypatch.setenv(cache.MIRROR_ENV, f"http://127.0.0.1:{free_port()}")
    with pytest.raises(DatasetMissing) as info:
        dataset_file(*SMALL, progress=False)
    message = str(info.value)
    assert "\n" not in message and "`ragworkbook datasets fetch ragchecker`" in message
    with pytest.raises(DatasetMissing, match="datasets fetch wikieval"):
        dataset_file("wikieval", "ff.csv", download=False)


@pytest.fixture()
def silent_server():
    """A loopback server that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    stop.set()
    thread.join(2)
    for c in held:
        c.close()
    sock.close()


def test_a_silent_server_times_out_within_the_bound(empty_cache, monkeypatch, silent_server):
    monkeypatch.setenv(cache.MIRROR_ENV, silent_server)
    monkeypatch.setenv(cache.TIMEOUT_ENV, "1")
    start = time.monotonic()
    with pytest.raises(DatasetMissing, match="Timeout"):
        dataset_file(*SMALL, progress=False)
    assert time.monotonic() - start < 10
    assert _leftovers(empty_cache) == []


@pytest.mark.parametrize("raw,said", [
    ("soon", "RAGWORKBOOK_DATASETS_TIMEOUT must be a number of seconds, got 'soon'"),
    ("0", "RAGWORKBOOK_DATASETS_TIMEOUT must be a positive number of seconds, got 0.0"),
])
def test_a_bad_timeout_setting_is_named(empty_cache, monkeypatch, raw, said):
    monkeypatch.setenv(cache.TIMEOUT_ENV, raw)
    monkeypatch.setenv(cache.MIRROR_ENV, "http://127.0.0.1:9")
    with pytest.raises(ValueError, match=re.escape(said)):
        dataset_file(*SMALL, progress=False)


def test_a_command_that_needs_missing_data_exits_2_with_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("RAGWORKBOOK_BACKEND", "RAGWORKBOOK_RECORD")}
    env.update(RAGWORKBOOK_CACHE=str(tmp_path / "cache"), RAGWORKBOOK_DATASETS_MIRROR=f"http://127.0.0.1:{free_port()}",
               PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    for argv, name in ((["judge-check", "--dataset", "ragchecker"], "ragchecker"),
                       (["judge-check", "--dataset", "ff", "--judge", "word-support"], "wikieval")):
        done = subprocess.run([sys.executable, "-m", "ragworkbook", *argv], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert lines[0].startswith(f"ragworkbook {argv[0]}: error: ")
        assert f"`ragworkbook datasets fetch {name}`" in lines[0]
