"""Where the workbook's data and caches live.

- ``data_dir()``: the bundled ``data/`` folder at the repository root, or the
  folder named by ``RAGWORKBOOK_DATA``.
- ``cache_dir()``: ``RAGWORKBOOK_CACHE`` if set, else ``~/.cache/ragworkbook``
  (embedding caches, the prepared WordNet copy).
"""

from __future__ import annotations

import os
from pathlib import Path


def repo_root() -> Path:
    """The repository root (the folder holding ``pyproject.toml`` and ``data/``)."""
    return Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """The data folder: ``$RAGWORKBOOK_DATA`` or ``<repo>/data``."""
    env = os.environ.get("RAGWORKBOOK_DATA")
    path = Path(env) if env else repo_root() / "data"
    if not path.is_dir():
        raise FileNotFoundError(
            f"ragworkbook data folder not found at {path}. Install the package from a clone "
            "of the repository with `pip install -e .`, or set RAGWORKBOOK_DATA to the "
            "folder holding eval_set.json."
        )
    return path


def data_path(*parts: str) -> Path:
    """A file inside :func:`data_dir`."""
    return data_dir().joinpath(*parts)


def cache_dir() -> Path:
    """The cache folder (created on first use): ``$RAGWORKBOOK_CACHE`` or ``~/.cache/ragworkbook``."""
    env = os.environ.get("RAGWORKBOOK_CACHE")
    path = Path(env) if env else Path.home() / ".cache" / "ragworkbook"
    path.mkdir(parents=True, exist_ok=True)
    return path
