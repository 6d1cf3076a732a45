"""Small file helpers shared by the package: atomic writes, and read-merge-write under a lock.

- :func:`atomic_write_bytes` / ``_text`` / ``_json``: the data goes to a temporary file in the
  same folder, is flushed and fsynced, then renamed over the target. A reader never sees half a
  file; a write killed midway (even by ``kill -9``) leaves the old file intact. The temporary
  file's name carries the writer's process id, so a later write removes the leftovers of writers
  that died (never those of a live one).
- :func:`check_writable`: before a long run, whether its output path can be written at all (not
  a folder, not under a file, in a folder this process may write to), so a run never ends in
  an error at its last step.
- :func:`locked_update`: for files several processes add to (the judge cache, a recording):
  take an exclusive lock, read what is on disk now, merge, write atomically, release. Two
  processes adding entries at the same time lose nothing.
- :func:`check_not_input`: an output path that is one of the run's inputs (the same path, or
  the same file through a symbolic or hard link) is refused before any work, so a report never
  overwrites the answers, recording or eval set it was made from.
- :func:`read_input`: the bytes of an input file, which may also be a pipe (``<(cat f)``, a
  named FIFO): a pipe is read once something writes to it, and one nothing writes to is an
  error after :data:`PIPE_WAIT` seconds (``$RAGWORKBOOK_PIPE_WAIT``) instead of a hang.
  :func:`is_pipe` tells one; :func:`as_regular_file` hands a pipe's content to a reader that
  opens paths itself.
- :func:`check_output`: the one check of a command's output path before any work: not empty,
  not a folder, a device, a pipe or a socket, writable, none of the command's inputs; a
  symbolic link is written through (the link stays, its target gets the data). The path is
  then *claimed*: each later atomic write to it first checks, under :func:`file_lock`, that the
  file on disk is still the one this process last saw or wrote. When another process wrote it
  meanwhile (two runs with one ``--out``), nothing is replaced: the data goes to a file beside
  it (``NAME.PID.EXT``) and :class:`OutputConflict` says where.

Every atomic write keeps the mode of the file it replaces (a 0600 report stays 0600), and a
full disk is a :class:`DiskFull` error naming the path, the old file left as it was.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import select
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias, TypeVar

from ragworkbook._types import JSON

__all__ = ["PIPE_WAIT", "DiskFull", "OutputConflict", "as_regular_file", "atomic_write_bytes", "saved_first",
           "atomic_write_text", "atomic_write_json", "check_output", "check_writable", "check_not_input",
           "file_lock", "is_pipe", "locked_update", "read_input", "release_outputs"]

#: Seconds :func:`read_input` waits for a pipe's writer to send something before giving up
#: (``$RAGWORKBOOK_PIPE_WAIT`` overrides it).
PIPE_WAIT = 30.0

#: A path as the commands and functions take it.
StrPath: TypeAlias = str | os.PathLike[str]
#: The files a command reads, by option (:func:`check_output`): a path, the paths of a repeatable
#: option, or None (not given).
Inputs: TypeAlias = Mapping[str, StrPath | list[StrPath] | tuple[StrPath, ...] | None]

_T = TypeVar("_T")


class DiskFull(OSError):
    """A write that found no space left (ENOSPC, EDQUOT): the message names the file; the file as it
    was before the write is kept."""


class OutputConflict(OSError):
    """Another process wrote a claimed output (:func:`check_output`) while this one ran: this
    process's data went to :attr:`saved_to` instead, nothing was replaced."""

    def __init__(self, message: str, saved_to: Path):
        super().__init__(message)
        self.saved_to = saved_to


def _pipe_wait() -> float:
    raw = os.environ.get("RAGWORKBOOK_PIPE_WAIT", "").strip()
    try:
        value = float(raw) if raw else PIPE_WAIT
    except ValueError:
        return PIPE_WAIT
    return value if value > 0 else PIPE_WAIT


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


def _error(cls: type[OSError], code: int, message: str) -> OSError:
    """``cls(message)`` with ``errno`` set: printed as the message alone (no ``[Errno N]``)."""
    exc = cls(message)
    exc.errno = code
    return exc


def _kind(mode: int) -> str | None:
    """What a non-regular file is ("a folder", "a pipe (FIFO)", ...), None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _target(path: Path) -> Path:
    """Where a write to ``path`` lands: ``path``, or for a symbolic link the file it points to (so the
    link is kept); OSError for a link loop."""
    if not path.is_symlink():
        return path
    try:
        return path.resolve(strict=False)
    except RuntimeError:  # pragma: no cover - Python < 3.13 on a loop
        raise _error(OSError, errno.ELOOP, f"{path}: a symbolic link loop") from None


def _state(path: Path) -> tuple[int, int, int, int] | None:
    """What identifies the current version of ``path`` (device, inode, size, mtime), None when missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class _Claim:
    """An output claimed by :func:`check_output`: the state of its file last seen or written
    (:func:`_state`), and where this run's data goes instead after a conflict."""

    state: tuple[int, int, int, int] | None
    redirect: Path | None = None


#: claimed outputs (:func:`check_output`), by target path
_CLAIMS: dict[str, _Claim] = {}


def _beside(path: Path) -> Path:
    """``NAME.PID.EXT`` next to ``path``: where a conflicting write goes."""
    return path.with_name(f"{path.stem}.{os.getpid()}{path.suffix}")


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically.

    The data goes to a temporary file in the same directory, is flushed and
    fsynced, then renamed over ``path``; a reader never sees a half-written
    file and an interrupted write leaves the old file intact. A new file gets the
    mode an ordinary write would (0666 less the umask), a replaced file keeps its
    mode. A symbolic link is written through (the link stays). Refused: a folder,
    a device, a pipe, a socket (never replaced by a regular file). A full disk is
    :class:`DiskFull` naming the path (the old file kept). A path claimed by
    :func:`check_output` that another process wrote meanwhile is not replaced
    (:class:`OutputConflict`). Temporary files left by writers that were killed are
    removed.
    """
    path = _target(Path(path))
    claim = _CLAIMS.get(os.path.abspath(path))
    if claim is not None and claim.redirect is not None:
        path = claim.redirect  # an earlier conflict: this run's data goes beside
        claim = None
    if claim is None:
        _write_file(path, data)
        return path
    with file_lock(path):
        now = _state(path)
        if now != claim.state:
            other = _beside(path)
            _write_file(other, data)
            claim.redirect = other
            raise OutputConflict(
                f"{path} was written by another process while this one ran (two runs with the same output?): "
                f"it is left as that process wrote it, and this run's output is in {other}; run such "
                "commands one after the other, or give each its own output file", other)
        _write_file(path, data)
        claim.state = _state(path)
    return path


def _write_file(path: Path, data: bytes) -> None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError:
        st = None
    if st is not None and (what := _kind(st.st_mode)) is not None:
        if what == "a folder":
            raise IsADirectoryError(f"{path} is a directory; give a file path to write to")
        raise _error(OSError, errno.EINVAL, f"{path} is {what}, not a regular file: it is never replaced; "
                     "give the path of a regular file to write to")
    mode = stat.S_IMODE(st.st_mode) if st is not None else _umask_mode()
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            view = memoryview(data)
            while view:  # a full write, however large (write() may take part of it)
                view = view[fh.write(view[: 1 << 24]):]
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)  # mkstemp makes 0600 files
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            kept = "the file as it was is kept" if st is not None else "nothing was written"
            raise _error(DiskFull, exc.errno, f"cannot write {path}: no space left on the device of "
                         f"{path.parent} ({len(data):,} bytes to write; {kept}): free some space, or write "
                         "to another folder") from None
        raise


def check_output(path: str | os.PathLike[str] | None, inputs: Inputs | None = None,
                 option: str = "--out") -> Path | None:
    """The output path of a command checked before any work, and claimed (see the module docstring).

    None stays None. ValueError for an empty path or one of ``inputs`` (option -> path or list of
    paths; :func:`check_not_input`); IsADirectoryError for a folder; OSError for a device, a pipe or a
    socket (which a report would replace: ``--out /dev/null`` must not turn /dev/null into a file);
    :func:`check_writable`'s errors. A symbolic link is checked and written through. Returns the path
    the data will land on.
    """
    if path is None:
        return None
    if str(path).strip() == "":
        raise ValueError(f"{option} is empty: give the path of the file to write (or leave {option} out)")
    given = Path(path)
    target = _target(given)
    try:
        st = os.stat(target)
    except OSError:
        st = None
    if st is not None and (what := _kind(st.st_mode)) is not None:
        via = f" (through the link {given})" if target != given else ""
        if what == "a folder":
            raise IsADirectoryError(f"{option} {target} is a folder{via}; give a file path to write the "
                                    "output to")
        raise _error(OSError, errno.EINVAL, f"{option} {target} is {what}{via}, not a regular file: the "
                     "output would replace it; give the path of a regular file")
    check_writable(target)
    flat: dict[str, StrPath | None] = {}
    for name, value in (inputs or {}).items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for n, v in enumerate(values):
            flat[name if n == 0 else f"{name} ({n + 1})"] = v
    check_not_input(given, flat, option)
    if target != given:
        check_not_input(target, flat, option)
    _CLAIMS[os.path.abspath(target)] = _Claim(_state(target))
    return target


def release_outputs() -> None:
    """Forget every claim of :func:`check_output` (a command ended, in a process that goes on)."""
    _CLAIMS.clear()


def check_writable(path: str | os.PathLike[str]) -> Path:
    """``path`` if a file can be written there, else an OSError naming the problem and the fix.

    Refused: a folder (IsADirectoryError); a path under a file (NotADirectoryError, naming the
    file); a folder this process may not write to (PermissionError; checked by creating and
    removing a temporary file in the nearest existing folder). Missing folders are fine (an
    atomic write creates them) and are not created here.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder; give a file path to write the output to")
    folder = path.parent
    while not folder.exists():
        if folder == folder.parent:
            break
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(f"cannot write {path}: {folder} is a file, not a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        why = exc.strerror or exc
        raise PermissionError(f"cannot write {path}: the folder {folder} is not writable ({why})") from None
    os.close(fd)
    os.unlink(probe)
    return path


def atomic_write_json(path: str | os.PathLike[str], obj: JSON, indent: int | None = 2) -> Path:
    """Serialise ``obj`` as UTF-8 JSON (keys kept in insertion order) and write atomically."""
    text = json.dumps(obj, indent=indent, ensure_ascii=False) + "\n"
    return atomic_write_text(path, text)


#: folders whose lock this process holds (:func:`file_lock` is reentrant), with the depth
_HELD: dict[tuple[str, int], int] = {}


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """An exclusive advisory lock (``fcntl.flock``) for updating ``path``, held for the ``with`` block.

    The lock is taken on the folder that holds ``path``, so no lock file is left beside it (a
    recording folder stays clean); writers of other files in that folder take turns too, which
    costs nothing for writes this short. Processes that update the same file through this lock
    take turns; the lock is released when the block ends or the process dies. Where ``fcntl`` is
    missing (Windows) the block runs unlocked.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    key = (str(path.parent.resolve()), threading.get_ident())
    if _HELD.get(key):  # this process holds it already (a nested update): flock would wait for itself
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _HELD[key] = 1
        try:
            yield
        finally:
            _HELD.pop(key, None)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def locked_update(path: str | os.PathLike[str], read: Callable[[Path], _T],
                  merge: Callable[[_T], _T], write: Callable[[Path, _T], object]) -> _T:
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


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file: the same resolved path, or (both existing) the same
    device and inode (a hard link, a symbolic link, another spelling of the path)."""
    try:
        if a.resolve() == b.resolve():
            return True
    except (OSError, RuntimeError):  # a symlink loop
        pass
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_not_input(out: str | os.PathLike[str], inputs: Mapping[str, str | os.PathLike[str] | None],
                    option: str = "--out") -> None:
    """ValueError when the output path ``out`` is one of ``inputs`` (option name -> path; None skipped):
    writing there would destroy the input. Same path, or the same file through a link."""
    target = Path(out)
    for name, path in inputs.items():
        if path is None or str(path) == "":
            continue
        if _same_file(target, Path(path)):
            how = "" if str(path) == str(out) else f" (through a link: {out} and {path} are one file)"
            raise ValueError(f"{option} {out} is the input given as {name}{how}: the report would overwrite "
                             f"it; write the report to another file")


def is_pipe(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a pipe: a named FIFO, or ``/dev/fd/N`` of a shell's ``<(...)``."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def read_input(path: str | os.PathLike[str], what: str = "file", wait: float | None = None) -> bytes:
    """The bytes of the input file ``path``, which may be a pipe (see :func:`is_pipe`).

    FileNotFoundError when nothing is there, IsADirectoryError for a folder; a pipe is read
    once its writer sends something, and a pipe nothing writes to within ``wait`` seconds
    (default :data:`PIPE_WAIT`, or ``$RAGWORKBOOK_PIPE_WAIT``) is a TimeoutError naming it (instead of a
    hang).
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a folder, not a {what}")
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such {what}")
    if not is_pipe(path):
        return path.read_bytes()
    limit = _pipe_wait() if wait is None else wait
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # opening a FIFO for reading blocks until a writer
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP)
        if not poller.poll(int(limit * 1000)):
            raise TimeoutError(f"{path}: a pipe that nothing wrote to within {limit:g} s; start the program "
                               f"that writes the {what} first, or give a regular file")
        os.set_blocking(fd, True)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


@contextlib.contextmanager
def as_regular_file(path: str | os.PathLike[str], what: str = "file") -> Iterator[Path]:
    """``path`` itself when it is not a pipe; for a pipe, a temporary regular file holding what the pipe
    sent (:func:`read_input`: a pipe nothing writes to is a TimeoutError, not a hang), removed when
    the block ends. For readers that open a path themselves (and would block on a silent FIFO)."""
    path = Path(path)
    if not is_pipe(path):
        yield path
        return
    data = read_input(path, what)
    fd, tmp = tempfile.mkstemp(prefix=".ragworkbook-pipe.", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        yield Path(tmp)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


@contextlib.contextmanager
def saved_first(save: Callable[[], object]) -> Iterator[None]:
    """Run the block; when it is interrupted (Ctrl-C, SIGTERM, SIGHUP) or fails, call ``save`` before the
    error goes on, so the work done is kept. A failure of ``save`` itself does not hide the original error."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception):
            save()
        raise
