"""Small file helpers shared by the package: atomic writes."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def _umask_mode() -> int:
    """0o666 less the process umask: the mode an ordinary ``open(path, "w")`` would give."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_write_bytes`).

    Newlines are written as given (no platform translation).
    """
    return atomic_write_bytes(path, text.encode(encoding))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically.

    The data goes to a temporary file in the same directory, is flushed and
    fsynced, then renamed over ``path``; a reader never sees a half-written
    file and an interrupted write leaves the old file intact. The file gets the
    mode an ordinary write would (0666 less the umask).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _umask_mode())  # mkstemp makes 0600 files
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_json(path: str | os.PathLike[str], obj: Any, indent: int | None = 2) -> Path:
    """Serialise ``obj`` as UTF-8 JSON (keys kept in insertion order) and write atomically."""
    text = json.dumps(obj, indent=indent, ensure_ascii=False) + "\n"
    return atomic_write_text(path, text)
