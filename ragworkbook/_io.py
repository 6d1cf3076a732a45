"""Small file helpers shared by the package: atomic writes, and read-merge-write under a lock.

- :func:`atomic_write_bytes` / ``_text`` / ``_json``: the data goes to a temporary file in the
  same folder, is flushed and fsynced, then renamed over the target. A reader never sees half a
  file; a write killed midway (even by ``kill -9``) leaves the old file intact. The temporary
  file's name carries the writer's process id, so a later write removes the leftovers of writers
  that died (never those of a live one).
- :func:`locked_update`: for files several processes add to (the judge cache, a recording):
  take an exclusive lock, read what is on disk now, merge, write atomically, release. Two
  processes adding entries at the same time lose nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_write_json", "file_lock", "locked_update"]


def _umask_mode() -> int:
    """0o666 less the process umask: the mode an ordinary ``open(path, "w")`` would give."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _remove_stale_temps(path: Path) -> None:
    """Delete ``.NAME.PID.*.tmp`` files next to ``path`` left by writers that are no longer running."""
    pattern = re.compile(r"^\." + re.escape(path.name) + r"\.(\d+)\..*\.tmp$")
    try:
        siblings = list(path.parent.iterdir())
    except OSError:
        return
    for other in siblings:
        m = pattern.match(other.name)
        if m and int(m.group(1)) != os.getpid() and not _pid_alive(int(m.group(1))):
            with contextlib.suppress(OSError):
                other.unlink()


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
    mode an ordinary write would (0666 less the umask). Temporary files left by
    writers that were killed are removed.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory; give a file path to write to")
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _umask_mode())  # mkstemp makes 0600 files
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def atomic_write_json(path: str | os.PathLike[str], obj: Any, indent: int | None = 2) -> Path:
    """Serialise ``obj`` as UTF-8 JSON (keys kept in insertion order) and write atomically."""
    text = json.dumps(obj, indent=indent, ensure_ascii=False) + "\n"
    return atomic_write_text(path, text)


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """An exclusive advisory lock on ``PATH.lock`` (``fcntl.flock``), held for the ``with`` block.

    Processes that update the same file through this lock take turns; the lock is released
    when the block ends or the process dies. Where ``fcntl`` is missing (Windows) the block
    runs unlocked.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(path.with_name(path.name + ".lock"), "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def locked_update(path: str | os.PathLike[str], read: Callable[[Path], Any],
                  merge: Callable[[Any], Any], write: Callable[[Path, Any], Any]) -> Any:
    """Read-merge-write ``path`` under :func:`file_lock`: ``write(path, merge(read(path)))``.

    ``read`` must cope with a missing file; ``merge`` gets what is on disk *now* (another
    process may have added to it since this one last read it) and returns what to write;
    ``write`` should be atomic. Returns the merged value.
    """
    path = Path(path)
    with file_lock(path):
        merged = merge(read(path))
        write(path, merged)
    return merged
