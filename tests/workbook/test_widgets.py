"""The widgets' pure functions and their ipywidgets, without a browser (the carbon-pricing example)."""

from __future__ import annotations

import math

import pytest


def test_k_slider_updates_metrics(carbon_ranking, carbon_grades):
    from ragworkbook.workbook.widgets import k_slider, metrics_at_k

    box = k_slider(carbon_ranking, carbon_grades, value=3)
    slider, out = box.children
    assert "precision@3 = 0.667" in out.value and "recall@3 = 0.500" in out.value
    slider.value = 5
    assert "precision@5 = 0.800" in out.value and "recall@5 = 1.000" in out.value
    assert round(metrics_at_k(carbon_ranking, carbon_grades, 5)["ndcg@5"], 3) == 0.689


def test_ranking_editor_moves_and_recomputes(carbon_ranking, carbon_grades):
    from ragworkbook.workbook.widgets import RankingEditor

    editor = RankingEditor(carbon_ranking, carbon_grades, k=5, gain="exponential")
    assert round(editor.scores["ndcg"], 3) == 0.632
    top = carbon_ranking[2]  # the grade-3 chunk
    editor.select.index = 2
    editor.up.click()
    editor.up.click()
    assert editor.order == [top, *carbon_ranking[:2], *carbon_ranking[3:]]
    assert editor.select.index == 0
    # grades 3, 0, 2, 1, 1 against the ideal 3, 2, 1, 1, 0, gain 2**g - 1, by hand
    dcg = 7 + 0 + 3 / 2 + 1 / math.log2(5) + 1 / math.log2(6)
    idcg = 7 + 3 / math.log2(3) + 1 / 2 + 1 / math.log2(5)
    assert editor.scores == pytest.approx({"dcg": dcg, "idcg": idcg, "ndcg": dcg / idcg})
    assert editor.out.value == (f"DCG@5 = {dcg:.3f} &nbsp; IDCG@5 = {idcg:.3f} &nbsp; "
                                f"<b>NDCG@5 = {dcg / idcg:.3f}</b> (exponential gain)")
    editor.move(0, -1)  # clamped at the top
    assert editor.order[0] == top
    editor.move(None, 1)  # nothing selected: nothing moves
    assert editor.order[0] == top
    editor.order = sorted(carbon_ranking, key=lambda d: -carbon_grades[d])
    assert editor.scores["ndcg"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="unknown gain"):
        RankingEditor(carbon_ranking, carbon_grades, gain="cubic")
