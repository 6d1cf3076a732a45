"""The gate's ground-truth rule (ragworkbook.evaluation.gate.check_same_ground_truth): on one corpus and
chunking the relevance judgements must be the same; another chunking has other chunk ids, so its qrels
differ of necessity and are not held against it."""

from __future__ import annotations

import pytest

from ragworkbook.evaluation.gate import check_same_ground_truth
from ragworkbook.evaluation.report import Report


def _report(qrels: str, chunks: str | None) -> Report:
    settings = {"qrels": qrels} if chunks is None else {"qrels": qrels, "corpus_chunks": chunks}
    rows = [{"id": "q1", "metrics": {"recall@3": 1.0}, "reference": "r"}]
    return Report(rows, ["recall@3"], meta={"settings": settings})


def test_other_qrels_on_the_same_chunks_are_refused():
    with pytest.raises(ValueError, match="relevance judgements differ"):
        check_same_ground_truth(_report("sha256:a", "sha256:c"), _report("sha256:b", "sha256:c"))


@pytest.mark.parametrize("chunks", [("sha256:c", "sha256:d"), (None, None)])
def test_other_chunks_or_unknown_chunks_may_have_other_qrels(chunks):
    check_same_ground_truth(_report("sha256:a", chunks[0]), _report("sha256:b", chunks[1]))
