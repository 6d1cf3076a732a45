"""The widgets' pure functions and their ipywidgets, without a browser."""

from __future__ import annotations

import pytest

CARBON = ["c1", "c2", "c3", "c4", "c5"]
CARBON_GRADES = {"c1": 0, "c2": 2, "c3": 3, "c4": 1, "c5": 1}


def test_k_slider_updates_metrics():
    from ragworkbook.workbook.widgets import k_slider, metrics_at_k

    box = k_slider(CARBON, CARBON_GRADES, value=3)
    slider, out = box.children
    assert "precision@3 = 0.667" in out.value and "recall@3 = 0.500" in out.value
    slider.value = 5
    assert "precision@5 = 0.800" in out.value and "recall@5 = 1.000" in out.value
    assert round(metrics_at_k(CARBON, CARBON_GRADES, 5)["ndcg@5"], 3) == 0.689


def test_ranking_editor_moves_and_recomputes():
    from ragworkbook.workbook.widgets import RankingEditor

    editor = RankingEditor(CARBON, CARBON_GRADES, k=5, gain="exponential")
    assert round(editor.scores["ndcg"], 3) == 0.632
    editor.select.index = 2  # c3, the grade-3 chunk
    editor.up.click()
    editor.up.click()
    assert editor.order[:3] == ["c3", "c1", "c2"]
    assert editor.select.index == 0
    assert "NDCG@5 = " in editor.out.value
    editor.move(0, -1)  # clamped at the top
    assert editor.order[0] == "c3"
    editor.order = ["c3", "c2", "c4", "c5", "c1"]
    assert editor.scores["ndcg"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="unknown gain"):
        RankingEditor(CARBON, CARBON_GRADES, gain="cubic")
