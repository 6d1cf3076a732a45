"""Nothing fetched is in the tree: no file of the repository has the bytes of a public data file, no
third-party source is here, and no recipe builds trec_eval.

The public files are those of the catalogue (:mod:`ragworkbook.datasets`, their sha256) and every file
of ``../shared/data``, the project's reference copies, except the two the project wrote itself
(:data:`PROJECT_OWN`: WikiEval's construction labels and the script that derives them, kept in both
places). The wheel is checked the same way in ``test_packaging.py``.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest
from conftest import in_ci
from fakes.mirror import shared_data

from ragworkbook.datasets import CATALOGUE

REPO = Path(__file__).resolve().parents[1]

#: Files of ../shared/data this project wrote (the shared README says so): not copies of anyone's.
PROJECT_OWN = {"wikieval/construction_labels.csv", "wikieval/derive_construction_labels.py"}

#: Recipes that would build (or fetch the source of) trec_eval.
BUILD_RECIPES = [r"trec_eval-src", r"make\s+-C\s+\S*trec_eval", r"TREC_EVAL=build", r"--trec-eval\s+build",
                 r"tarfile.*trec_eval", r"git clone\S*\s+\S*trec_eval"]


def public_digests() -> set[str]:
    """sha256 of every public data file: the catalogue's, and those of ../shared/data (not its own)."""
    digests = {f.sha256 for ds in CATALOGUE.values() for f in ds.files}
    root = shared_data()
    if root is None:
        if in_ci():
            pytest.fail("../shared/data is not beside the clone under CI (RAGWORKBOOK_SHARED_DATA)",
                        pytrace=False)
        return digests
    for path in root.rglob("*"):
        if path.is_file() and path.relative_to(root).as_posix() not in PROJECT_OWN and path.stat().st_size:
            digests.add(hashlib.sha256(path.read_bytes()).hexdigest())
    return digests


def tree_files() -> list[Path]:
    """The repository's files: tracked, and untracked ones git does not ignore."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=REPO, capture_output=True, check=True).stdout.decode()
        files = [REPO / name for name in out.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):  # not a git clone: every file but the usual caches
        skip = {".git", ".venv", ".cache", "__pycache__", ".pytest_cache", ".ruff_cache", "build", "dist"}
        files = [p for p in REPO.rglob("*") if not skip & set(p.relative_to(REPO).parts)]
    return [p for p in files if p.is_file()]


def test_the_catalogue_knows_the_shared_copies():
    root = shared_data()
    if root is None:
        pytest.skip("../shared/data is not beside the clone")
    for ds in CATALOGUE.values():
        for f in ds.files:
            copy = root / f.relpath
            assert copy.is_file(), f"{ds.name}: {f.relpath} is not in {root}"
            assert copy.stat().st_size == f.size and hashlib.sha256(copy.read_bytes()).hexdigest() == f.sha256


def test_no_file_of_the_tree_is_a_copy_of_a_public_data_file():
    digests = public_digests()
    copies = [str(p.relative_to(REPO)) for p in tree_files()
              if p.stat().st_size and hashlib.sha256(p.read_bytes()).hexdigest() in digests]
    assert copies == []


def test_no_third_party_source_or_archive():
    def c_source(p: Path) -> bool:  # a C file, not an output named after a flag (out.jg.J.c)
        return p.suffix in (".c", ".h") and b"#include" in p.read_bytes()

    suspicious = [str(p.relative_to(REPO)) for p in tree_files()
                  if c_source(p) or p.suffix in (".gz", ".tgz", ".zip", ".tar", ".xz", ".bz2")]
    assert suspicious == []
    assert not (REPO / "tests" / "data" / "trec_eval").exists()
    assert not (REPO / "ragworkbook" / "data" / "ragchecker").exists()


def test_no_recipe_builds_trec_eval():
    found = []
    for p in tree_files():
        if p.resolve() == Path(__file__).resolve() or p.suffix in (".json", ".png", ".pdf"):
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        found += [f"{p.relative_to(REPO)}: {m.group(0)}" for pattern in BUILD_RECIPES
                  for m in re.finditer(pattern, text)]
    assert found == []
