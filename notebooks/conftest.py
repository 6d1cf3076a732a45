"""nbval hooks for the notebooks: a skipped cell says why it is skipped.

A cell marked ``# NBVAL_SKIP`` is never run under nbval (it needs something CI does not
have, such as the real PDF of the paper). nbval reports it as a bare "Skipped"; here the
cell's ``# skip reason: ...`` comment line becomes the reason pytest prints (``-rs``).
"""

from __future__ import annotations

import re

import pytest

_REASON = re.compile(r"^\s*#\s*skip reason:\s*(.+)$", re.MULTILINE)


def pytest_runtest_setup(item: pytest.Item) -> None:
    options = getattr(item, "options", None)
    cell = getattr(item, "cell", None)
    if not options or cell is None or not options.get("skip"):
        return
    m = _REASON.search(cell.source)
    pytest.skip(m.group(1).strip() if m else
                "marked # NBVAL_SKIP (add a '# skip reason: ...' comment line to say why)")
