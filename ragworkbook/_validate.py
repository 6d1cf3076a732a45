"""Argument checks shared by the package (one function per kind of argument)."""

from __future__ import annotations

import os

import numpy as np


def check_k(k: object, name: str = "k", optional: bool = False) -> int | None:
    """Validate a cutoff or a count: a positive integer (``None`` allowed when ``optional``).

    Raises ``ValueError`` (never ``TypeError``) so that every caller, the command
    line included, reports it as bad input: ``k must be a positive integer, got 0``.
    """
    if k is None and optional:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"{name} must be a positive integer, got {k!r}")
    if k <= 0:
        raise ValueError(f"{name} must be a positive integer (>= 1), got {k}")
    return int(k)


def seconds_setting(timeout: float | None, variable: str, default: float) -> float:
    """``timeout``, else the environment ``variable``, else ``default``: a positive number of seconds
    (ValueError naming where a bad value came from). Every time-out setting of the package is read here."""
    where = "timeout"
    if timeout is None:
        raw = os.environ.get(variable, "").strip()
        if not raw:
            return default
        where = variable
        try:
            timeout = float(raw)
        except ValueError:
            raise ValueError(f"{variable} must be a number of seconds, got {raw!r}") from None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise ValueError(f"{where} must be a positive number of seconds, got {timeout!r}")
    return float(timeout)
