"""Optional cross-check against the ragas library itself (skipped when ragas is not installed).

Only ragas's non-LLM pieces are used, so nothing calls a model or the network; telemetry is
switched off before import.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
ragas_cp = pytest.importorskip("ragas.metrics._context_precision")

from ragworkbook.judging.metrics import context_precision_from_verdicts  # noqa: E402

CASES = [[0, 1, 1, 1, 1], [1, 0, 1], [0, 0, 0, 1], [1], [1, 1, 0, 0, 1, 0]]


@pytest.mark.parametrize("verdicts", CASES)
def test_average_precision_matches_ragas(verdicts):
    metric = ragas_cp.NonLLMContextPrecisionWithReference()
    assert context_precision_from_verdicts(verdicts) == pytest.approx(
        metric._calculate_average_precision(verdicts), abs=1e-8)
