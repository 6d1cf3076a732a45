"""Cross-check against the ragas library itself (the ``ragas`` extra).

Only ragas's non-LLM pieces are used, so nothing calls a model or the network; telemetry is
switched off before import.

Until ``ragas`` is declared in the ``dev`` extra of ``pyproject.toml`` (directly, or as
``ragworkbook[ragas]``), these tests are skipped: CI installs the dev extra only. Once it is
declared, they are reference checks like the others: a missing ragas skips them on a developer's
machine and fails them under CI.
"""

from __future__ import annotations

import os

import pytest
from conftest import declared_in_extra, reference

from ragworkbook.judging.metrics import context_precision_from_verdicts

pytestmark = [
    pytest.mark.reference,
    pytest.mark.skipif(not declared_in_extra("ragas", "dev"),
                       reason="ragas is not in the dev extra of pyproject.toml yet"),
]

CASES = [[0, 1, 1, 1, 1], [1, 0, 1], [0, 0, 0, 1], [1], [1, 1, 0, 0, 1, 0]]


@pytest.mark.parametrize("verdicts", CASES)
def test_average_precision_matches_ragas(verdicts):
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    metric = reference("ragas.metrics._context_precision").NonLLMContextPrecisionWithReference()
    assert context_precision_from_verdicts(verdicts) == pytest.approx(
        metric._calculate_average_precision(verdicts), abs=1e-8)
