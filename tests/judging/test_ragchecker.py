"""RAGChecker's documented numbers recomputed exactly from its shipped files, and its metrics by hand."""

from __future__ import annotations

import pytest

from ragworkbook.judging.ragchecker import checking_metrics, example_metrics, meta_eval_correlations

DOCUMENTED = {  # Pearson / Spearman x 100 (NUMBERS.md D1, D2)
    "correctness": {"ragchecker": (49.66, 46.95), "human": (63.67, 59.19)},
    "completeness": {"ragchecker": (60.67, 58.11), "human": (71.91, 68.36)},
    "overall": {"ragchecker": (61.93, 60.90), "human": (70.09, 68.89)},
}


def test_meta_evaluation_correlations_to_the_printed_digit():
    assert meta_eval_correlations() == DOCUMENTED


def test_committed_example_outputs_give_the_python_block_not_the_cli_block():
    m = example_metrics()
    assert m["overall"] == {"precision": 76.4, "recall": 62.5, "f1": 68.3}
    assert m["generator"]["faithfulness"] == 68.2
    assert m["retriever"] == {"claim_recall": 61.4, "context_precision": 87.5}
    cli_block = (73.3, 67.3, 70.8)
    assert (m["overall"]["precision"], m["overall"]["f1"], m["generator"]["faithfulness"]) != cli_block


def test_checking_metrics_by_hand():
    # 3 response claims: c1 correct and in chunk 1; c2 wrong but in chunk 2 (irrelevant); c3 wrong, nowhere
    # 2 ground-truth claims: g1 stated by the response and in chunk 1; g2 not stated, in no chunk
    result = {
        "answer2response": ["Entailment", "Neutral", "Contradiction"],
        "response2answer": ["Entailment", "Neutral"],
        "retrieved2answer": [["Entailment", "Neutral"], ["Neutral", "Neutral"]],
        "retrieved2response": [["Entailment", "Neutral"], ["Neutral", "Entailment"], ["Neutral", "Neutral"]],
    }
    m = checking_metrics(result)
    assert m["precision"] == pytest.approx(1 / 3) and m["recall"] == pytest.approx(1 / 2)
    assert m["f1"] == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    assert m["claim_recall"] == pytest.approx(1 / 2) and m["context_precision"] == pytest.approx(1 / 2)
    assert m["context_utilization"] == 1.0
    assert m["faithfulness"] == pytest.approx(2 / 3)
    assert m["hallucination"] == pytest.approx(1 / 3) and m["self_knowledge"] == 0.0
    assert m["noise_sensitivity_in_relevant"] == 0.0
    assert m["noise_sensitivity_in_irrelevant"] == pytest.approx(1 / 3)


def test_empty_claims_give_zero_as_ragchecker_does():
    m = checking_metrics({"answer2response": [], "response2answer": [], "retrieved2answer": [],
                          "retrieved2response": []})
    assert set(m.values()) == {0.0}
    with pytest.raises(ValueError, match="no checked result"):
        example_metrics([])
