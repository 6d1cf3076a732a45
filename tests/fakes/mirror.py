"""The public data sets' mirror for the tests: ``../shared/data`` served on a loopback HTTP server.

The project's reference copies of the public data sets live in ``../shared/data`` beside the
repository (or in ``$RAGWORKBOOK_SHARED_DATA``); they are never copied into the tree. Serving that
folder over HTTP and pointing ``RAGWORKBOOK_DATASETS_MIRROR`` at it runs the real download path of
:mod:`ragworkbook.datasets` (HTTP, progress, checksum, atomic rename into the cache) offline.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED_ENV = "RAGWORKBOOK_SHARED_DATA"


def shared_data() -> Path | None:
    """``$RAGWORKBOOK_SHARED_DATA``, else ``../shared/data`` from the repository's root (CI has it beside
    its clone; a worktree looks beside the main clone too); None when neither is a folder."""
    env = os.environ.get(SHARED_ENV, "").strip()
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "data", REPO.parents[1] / "shared" / "data"]
    return next((c for c in candidates if c.is_dir()), None)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve ``root`` read-only on 127.0.0.1 (a free port) from a daemon thread; yields its URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="datasets-mirror", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
