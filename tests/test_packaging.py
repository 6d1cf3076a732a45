"""The package stands alone: a wheel built from the tree carries its data and runs outside the clone.

The wheel is built from a copy of the package's sources (so no stale ``build/`` folder of a
developer's tree leaks into it), installed with ``--no-deps`` into a fresh virtual environment
that reuses this environment's dependencies (a ``.pth`` line naming its site-packages; the
editable install of the clone is not seen, because ``.pth`` files of a folder added that way
are not run), and its commands are run from a folder outside the repository with no
``RAGWORKBOOK_DATA`` and no ``PYTHONPATH``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from ragworkbook import __version__
from ragworkbook.paths import repo_root

pytestmark = pytest.mark.model  # reproduce's C3 row loads MiniLM

SOURCES = ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "ragworkbook")


def _build_wheel(dest: Path) -> Path:
    src = dest / "src"
    src.mkdir()
    for name in SOURCES:
        path = repo_root() / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)
    out = dest / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out), str(src)], check=True, capture_output=True, text=True)
    (wheel,) = out.glob("ragworkbook-*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, the fresh environment's bin folder, a work folder outside the repository)."""
    root = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(root)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    parents = [p for p in [*site.getsitepackages(), sysconfig.get_path("purelib")] if Path(p).is_dir()]
    (purelib / "_ragworkbook_test_parent_env.pth").write_text("\n".join(dict.fromkeys(parents)) + "\n")
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
                    str(wheel)], check=True, capture_output=True, text=True)
    work = root / "elsewhere"
    work.mkdir()
    return wheel, venv / "bin", work


def _run(installed, *args: str) -> subprocess.CompletedProcess[str]:
    _, bin_dir, work = installed
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAGWORKBOOK_DATA",
                                                            "RAGWORKBOOK_BACKEND", "RAGWORKBOOK_RECORD")}
    return subprocess.run([str(bin_dir / "ragworkbook"), *args], cwd=work, env=env, capture_output=True,
                          text=True, timeout=600)


def test_the_wheel_carries_the_data_and_the_licences(installed):
    wheel = installed[0]
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("ragworkbook/data/eval_set.json", "ragworkbook/data/attention_notes.json",
                   "ragworkbook/data/wikieval/construction_labels.csv",
                   "ragworkbook/data/recordings/judge_check_ragchecker.json",
                   "ragworkbook/data/recordings/14_documented_numbers.json",
                   "ragworkbook/datasets/catalogue.py",
                   "ragworkbook/schemas/answers.schema.json"):
        assert needed in names, needed
    licences = [n for n in names if "/licenses/" in n]
    # ours only: each public data set's licence comes with it, into the cache
    assert [n.rsplit("/licenses/", 1)[1] for n in licences] == ["LICENSE"]
    # no public data set inside: they are downloaded on demand (ragworkbook.datasets)
    assert not any(n.startswith(("ragworkbook/data/ragchecker/", "ragworkbook/data/ragtruth/"))
                   or n.endswith(("/ff.csv", "/ar.csv", "/cr.csv", "meta_eval.py")) for n in names)
    assert not any(n.startswith(("tests/", "notebooks/", "build/")) for n in names)
    assert wheel.name == f"ragworkbook-{__version__}-py3-none-any.whl"


def test_no_file_of_the_wheel_is_a_copy_of_a_public_data_file(installed):
    from test_no_copies import public_digests

    digests = public_digests()
    with zipfile.ZipFile(installed[0]) as zf:
        copies = [n for n in zf.namelist() if hashlib.sha256(zf.read(n)).hexdigest() in digests]
    assert copies == []


def test_the_installed_package_is_the_wheel_not_the_clone(installed):
    _, bin_dir, work = installed
    out = subprocess.run([str(bin_dir / "python"), "-c",
                          "import ragworkbook, ragworkbook.paths as p; print(ragworkbook.__file__); "
                          "print(p.data_dir())"], cwd=work, capture_output=True, text=True, check=True,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    module, data = out.stdout.split()
    assert str(repo_root()) not in module and str(bin_dir.parent) in module
    assert str(bin_dir.parent) in data


def test_judge_check_replays_from_the_installed_wheel(installed):
    # the data set comes from the mirror the test session serves (../shared/data), downloaded and checked
    result = _run(installed, "judge-check", "--dataset", "ragchecker", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["dataset"] == "ragchecker" and report["n"] > 0


def test_reproduce_runs_from_the_installed_wheel(installed):
    result = _run(installed, "reproduce", "--only", "B1", "--only", "C3", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "B1" in result.stdout and "C3" in result.stdout


def test_eval_answers_runs_from_the_installed_wheel(installed):
    work = installed[2]
    answers = work / "mine.jsonl"
    answers.write_text(json.dumps({"question": "What optimizer was used?", "answer": "They used Adam.",
                                   "contexts": ["The model was trained with the Adam optimizer."],
                                   "reference": "Adam."}) + "\n", encoding="utf-8")
    result = _run(installed, "eval", "--answers", str(answers), "--no-judge", "--metric", "token_f1",
                  "--out", str(work / "mine_report.json"), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert json.loads((work / "mine_report.json").read_text(encoding="utf-8"))


def test_python_dash_m_is_the_command(installed):
    _, bin_dir, work = installed
    out = subprocess.run([str(bin_dir / "python"), "-m", "ragworkbook", "--version"], cwd=work,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"ragworkbook {__version__}"
