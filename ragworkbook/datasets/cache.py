"""Public data sets on demand: downloaded once, checked, cached, then used offline.

:func:`dataset_file` is what a reader calls: it returns the cached file, downloading it first when
it is not in the cache. A download goes to a temporary file beside its target, is hashed as it
arrives and is renamed into place (:func:`os.replace`) only when its size and sha256 are those of
the catalogue; a file that does not match is deleted and refused (:class:`ChecksumMismatch`), never
used. A cached file is checked again the first time a process reads it.

Where files come from: ``$RAGWORKBOOK_DATASETS_MIRROR`` when set, a folder or an ``http(s)://``
URL laid out like the project's ``../shared/data`` (``<mirror>/<relpath>``; CI, air-gapped users);
otherwise the upstream URL of each file, at its pinned commit. Network time-outs are bounded
(:data:`TIMEOUT`, ``$RAGWORKBOOK_DATASETS_TIMEOUT`` seconds): without the data, without a mirror
and without a network, a reader gets :class:`DatasetMissing` within seconds, whose one-line
message names the command that gets the data (``ragworkbook datasets fetch NAME``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from ragworkbook._io import _remove_stale_temps, _umask_mode
from ragworkbook._validate import seconds_setting
from ragworkbook.datasets.catalogue import DataFile, Dataset, get

__all__ = ["DatasetMissing", "ChecksumMismatch", "MIRROR_ENV", "TIMEOUT_ENV", "TIMEOUT", "cache_root",
           "dataset_dir", "dataset_file", "fetch", "is_cached", "mirror", "source_of"]

MIRROR_ENV = "RAGWORKBOOK_DATASETS_MIRROR"
TIMEOUT_ENV = "RAGWORKBOOK_DATASETS_TIMEOUT"
#: Seconds to wait to connect, and between two chunks of a download.
TIMEOUT = 20.0
_CHUNK = 1 << 16


class DatasetMissing(FileNotFoundError):
    """A data set is neither cached nor downloadable now; the message (one line) names the command
    that gets it."""


class ChecksumMismatch(ValueError):
    """A downloaded (or cached) file does not have the catalogue's bytes; it was deleted."""


def cache_root() -> Path:
    """``$RAGWORKBOOK_CACHE/datasets`` (``~/.cache/ragworkbook/datasets`` by default)."""
    from ragworkbook.paths import cache_dir

    return cache_dir() / "datasets"


def dataset_dir(name: str) -> Path:
    """The cache folder holding data set ``name`` (the folder of its files; it may not exist yet)."""
    ds = get(name)
    return cache_root() / Path(ds.files[0].relpath).parent


def mirror() -> str | None:
    """``$RAGWORKBOOK_DATASETS_MIRROR``, or None when unset or empty."""
    value = os.environ.get(MIRROR_ENV, "").strip()
    return value or None


def _timeout() -> float:
    return seconds_setting(None, TIMEOUT_ENV, TIMEOUT)


def source_of(f: DataFile) -> str:
    """Where ``f`` is downloaded from now: the mirror's copy when a mirror is set, else upstream."""
    m = mirror()
    if m is None:
        return f.url
    if m.startswith(("http://", "https://")):
        return m.rstrip("/") + "/" + f.relpath
    return str(Path(m).expanduser() / f.relpath)


_VERIFIED: set[tuple[str, int, int]] = set()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _is_good(path: Path, f: DataFile) -> bool:
    """Whether the cached ``path`` holds ``f``'s bytes (hashed once per process and file version);
    a cached file with other bytes is deleted."""
    try:
        st = path.stat()
    except OSError:
        return False
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key in _VERIFIED:
        return True
    if st.st_size == f.size and _sha256(path) == f.sha256:
        _VERIFIED.add(key)
        return True
    with contextlib.suppress(OSError):
        path.unlink()  # a corrupted or foreign file: never used
    return False


def is_cached(name: str) -> bool:
    """Whether every file of data set ``name`` is in the cache with the catalogue's bytes."""
    ds = get(name)
    return all(_is_good(cache_root() / f.relpath, f) for f in ds.files)


def _missing(ds: Dataset, f: DataFile, reason: str) -> DatasetMissing:
    where = mirror() and f"the mirror {MIRROR_ENV}={mirror()}"
    return DatasetMissing(
        f"data set {ds.name!r} ({f.name}) is not in the cache {cache_root()} and could not be downloaded "
        f"from {where or 'its upstream URL'} ({reason}); get it with `ragworkbook datasets fetch {ds.name}` "
        f"(or set {MIRROR_ENV} to a folder or http(s) URL laid out like ../shared/data)")


def _stream_http(url: str, out: IO[bytes], progress: Callable[[int], None] | None, timeout: float) -> None:
    import httpx

    limits = httpx.Timeout(timeout, connect=min(timeout, 10.0))
    with httpx.stream("GET", url, timeout=limits, follow_redirects=True) as response:
        if response.status_code != 200:
            raise OSError(f"HTTP {response.status_code} for {url}")
        for chunk in response.iter_bytes(_CHUNK):
            out.write(chunk)
            if progress:
                progress(len(chunk))


def _stream_file(path: Path, out: IO[bytes], progress: Callable[[int], None] | None) -> None:
    with open(path, "rb") as src:
        for chunk in iter(lambda: src.read(_CHUNK), b""):
            out.write(chunk)
            if progress:
                progress(len(chunk))


@contextlib.contextmanager
def _temp_beside(target: Path) -> Iterator[tuple[IO[bytes], Path]]:
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh, Path(tmp)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)  # still there only when the download did not make it into place


def _download(ds: Dataset, f: DataFile, progress: bool) -> Path:
    """Download ``f`` into the cache: temp file, size and sha256 checked, then renamed into place."""
    target = cache_root() / f.relpath
    source = source_of(f)
    timeout = _timeout()  # a bad setting is named, not taken for a network failure
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=f.size, unit="B", unit_scale=True, desc=f"{ds.name}/{f.name}", leave=False,
                   file=sys.stderr, disable=None)
    try:
        with _temp_beside(target) as (fh, tmp):
            try:
                if source.startswith(("http://", "https://")):
                    _stream_http(source, fh, bar.update if bar else None, timeout)
                else:
                    _stream_file(Path(source), fh, bar.update if bar else None)
            except Exception as exc:  # network down, time-out, HTTP error, no such file in the mirror
                if isinstance(exc, (KeyboardInterrupt, MemoryError)):  # pragma: no cover
                    raise
                raise _missing(ds, f, f"{type(exc).__name__}: {exc}".splitlines()[0]) from None
            fh.flush()
            os.fsync(fh.fileno())
            got_size = tmp.stat().st_size
            got = _sha256(tmp)
            if got_size != f.size or got != f.sha256:
                raise ChecksumMismatch(
                    f"{source}: {got_size} bytes with sha256 {got}, expected {f.size} bytes with sha256 "
                    f"{f.sha256}; the download was refused and deleted (a changed upstream file or a wrong "
                    f"mirror: check {MIRROR_ENV})")
            os.chmod(tmp, _umask_mode())
            os.replace(tmp, target)
    finally:
        if bar is not None:
            bar.close()
    st = target.stat()
    _VERIFIED.add((str(target), st.st_size, st.st_mtime_ns))
    return target


def dataset_file(name: str, file: str, *, download: bool = True, progress: bool = True) -> Path:
    """The cached path of ``file`` of data set ``name``, downloaded (and checked) first when it is not
    cached. ``download=False``: DatasetMissing instead of downloading."""
    ds = get(name)
    f = ds.file(file)
    target = cache_root() / f.relpath
    if _is_good(target, f):
        return target
    if not download:
        raise DatasetMissing(
            f"data set {ds.name!r} ({f.name}) is not in the cache {cache_root()}; get it with "
            f"`ragworkbook datasets fetch {ds.name}`")
    return _download(ds, f, progress)


def fetch(name: str, *, progress: bool = True) -> dict[str, Path]:
    """Make every file of data set ``name`` cached and checked; ``{file name: cached path}``."""
    ds = get(name)
    return {f.name: dataset_file(name, f.name, progress=progress) for f in ds.files}


def remove(name: str) -> None:
    """Delete data set ``name`` from the cache."""
    shutil.rmtree(dataset_dir(name), ignore_errors=True)
