"""Argument checks shared by the package (one function per kind of argument)."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_k(k: Any, name: str = "k", optional: bool = False) -> int | None:
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
