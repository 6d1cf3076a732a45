"""One signal policy for every long command: SIGTERM and SIGHUP stop a run the way Ctrl-C does.

By default SIGTERM (``kill``, ``timeout``, a container stopping) and SIGHUP (the terminal
closed) end a Python process at once, so a run saves nothing; SIGINT raises KeyboardInterrupt,
which the long commands catch to save the work done so far. :func:`stop_like_interrupt`
makes the other two raise :class:`Stopped` (a KeyboardInterrupt carrying the signal number)
for the duration of a ``with`` block, so one ``except KeyboardInterrupt`` (or the checkpoint
of ``except BaseException``) covers all three; :func:`exit_status` is the conventional status
of a command a signal stopped (128 + n: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["Stopped", "exit_status", "stop_like_interrupt"]

#: the signals handled like SIGINT (those this platform has)
SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopped(KeyboardInterrupt):
    """A run stopped by a signal: ``signum`` says which."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Stopped(signum)


@contextlib.contextmanager
def stop_like_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Stopped` inside the block (main thread only; elsewhere the
    block runs unchanged); the previous handlers come back after it. A signal the user set to be
    ignored (``nohup``) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {}
    for sig in SIGNALS:
        previous = signal.getsignal(sig)
        if previous is signal.SIG_IGN:
            continue
        old[sig] = previous
        signal.signal(sig, _raise)
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


def exit_status(exc: KeyboardInterrupt) -> int:
    """128 + the number of the signal that stopped the command (130 for Ctrl-C)."""
    return 128 + (exc.signum if isinstance(exc, Stopped) else int(signal.SIGINT))
