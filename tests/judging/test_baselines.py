"""The baselines beside every judge reproduce the figures measured in FINDINGS.md (nothing but counting)."""

from __future__ import annotations

import numpy as np
import pytest

from ragworkbook.judging.baselines import (
    BASELINES,
    RAGCHECKER_METRICS,
    ragchecker_baseline_table,
    ragchecker_correlations,
    ragchecker_verdicts,
    similar_sentence_share,
    unescape,
    wikieval_baseline_scores,
    word_overlap,
)
from ragworkbook.judging.check import DATASETS
from ragworkbook.judging.datasets import load_ragchecker, load_wikieval
from ragworkbook.stats.agreement import pairwise_accuracy


def _accuracy(scores):
    return pairwise_accuracy([g for g, _ in scores], [b for _, b in scores]).accuracy


def test_every_data_set_has_a_baseline():
    assert set(BASELINES) == set(DATASETS)


def test_word_overlap_matches_the_documented_faithfulness_figure():
    pairs = load_wikieval("faithfulness").pairs
    assert _accuracy(wikieval_baseline_scores("wikieval-faithfulness", pairs)) == 0.95  # RAGAS' gpt-3.5
    assert word_overlap("The cat sat.", "the cat") == pytest.approx(2 / 3)
    assert word_overlap("...", "the cat") is None


@pytest.mark.model
def test_embedding_baselines_on_answer_and_context_relevance():
    ar = load_wikieval("answer_relevance").pairs
    assert _accuracy(wikieval_baseline_scores("wikieval-answer-relevance", ar)) == 0.26  # below chance
    cr = load_wikieval("context_relevance").pairs
    assert _accuracy(wikieval_baseline_scores("wikieval-context-relevance", cr)) == 0.74


def test_similar_sentence_share_with_a_scripted_embedding():
    def embed(texts):  # the question, then sentences: "about" ones point the question's way
        return np.asarray([[1.0, 0.0] if "about" in t or t == "q" else [0.0, 1.0] for t in texts])

    shares = similar_sentence_share(["q", "q"], ["One about it. Two not.\\nThree about it.", ""], embed)
    assert shares == [pytest.approx(2 / 3), None]
    assert unescape(r"a\nb \'c\'") == "a\nb 'c'"
    with pytest.raises(ValueError, match="no WikiEval baseline"):
        wikieval_baseline_scores("ragchecker", [])


def test_ragchecker_metric_correlations_as_meta_eval_computes_them():
    """FINDINGS.md: token F1 51.15 / 52.01 overall, 40.07 / 41.03 correctness, 55.34 / 54.36 completeness;
    ROUGE-1 51.15 / 51.76; ROUGE-L 47.59 / 52.08 (correctness 39.62 / 43.18); BLEU 42.11 / 43.47; answer
    length 19.06 / 22.83."""
    c = ragchecker_correlations()
    assert c["overall"]["token_f1"] == (51.15, 52.01)
    assert c["correctness"]["token_f1"] == (40.07, 41.03)
    assert c["completeness"]["token_f1"] == (55.34, 54.36)
    assert c["overall"]["rouge1"] == (51.15, 51.76)
    assert c["overall"]["rouge_l"] == (47.59, 52.08) and c["correctness"]["rouge_l"] == (39.62, 43.18)
    assert c["overall"]["bleu"] == (42.11, 43.47)
    assert c["overall"]["length"] == (19.06, 22.83)
    assert "bertscore" not in c["overall"]  # needs the model: asked for by name
    rows = ragchecker_baseline_table(c)
    assert rows[0]["metric"] == "token_f1" and rows[0]["overall pearson"] == 51.15
    with pytest.raises(ValueError, match="unknown RAGChecker baseline metric 'meteor'"):
        ragchecker_correlations(metrics=["meteor"])
    assert set(RAGCHECKER_METRICS) >= {"token_f1", "rouge_l", "bleu", "bertscore"}


def test_ragchecker_verdicts_follow_the_token_f1_difference():
    pairs = load_ragchecker(predictions=False).pairs[:40]
    v = ragchecker_verdicts(pairs)
    assert set(v) <= {"A", "B", "tie"} and len(v) == 40 and {"A", "B"} <= set(v)


@pytest.mark.model
def test_bertscore_difference_correlates_positively():
    c = ragchecker_correlations(metrics=["bertscore"])
    pearson, spearman = c["overall"]["bertscore"]
    assert 0 < pearson < 70.09 and 0 < spearman < 68.89  # below human vs human, the ceiling
