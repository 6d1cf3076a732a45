"""The lesson pictures draw what they are given: one box a chunk, one bar a window, one cell a token pair."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from ragworkbook.workbook.figures import (  # noqa: E402
    draw_counts,
    draw_course_map,
    draw_flow,
    draw_funnel,
    draw_intervals,
    draw_ngram_matches,
    draw_ranking,
    draw_similarity,
    draw_triad,
    draw_windows,
)


def _texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_a_ranking_is_a_row_of_boxes_with_its_ranks_cutoffs_and_misses():
    fig = draw_ranking(["a", "b", "c"], {"b": 1, "z": 1}, cutoffs=(2,), missing=["z"], ranks=[1, 2, 9])
    texts = _texts(fig)
    assert ["rank 1", "rank 2", "rank 9"] == [t for t in texts if t.startswith("rank")]
    assert "k = 2" in texts and "z" in texts and texts.count("relevant") == 1
    assert len(fig.axes[0].patches) == 4  # three retrieved, one never retrieved


def test_the_course_map_shows_every_lesson_and_its_minutes():
    fig = draw_course_map([("01", "Precision and recall", 15, True),
                           ("08", "Building an eval set", None, False)])
    texts = _texts(fig)
    assert "01" in texts and "08" in texts and "15 min" in texts and "core path" in texts


def test_windows_are_drawn_at_their_offsets():
    fig = draw_windows(1000, [(0, 400), (350, 750)], [(620, 625, "h = 8")])
    windows = sorted(p.get_x() for p in fig.axes[0].patches if p.get_width() == 400)
    assert windows == [0, 350] and "h = 8" in _texts(fig)


def test_ngram_matches_colour_each_pair_by_whether_the_reference_has_it():
    fig = draw_ngram_matches(["a", "b", "c"], ["a", "b", "d"], n=2)
    colours = [line.get_color() for line in fig.axes[0].lines]
    assert colours == ["#31a354", "#de2d26"]  # "a b" is in the reference, "b c" is not


@pytest.mark.parametrize("shape", [(2, 3), (4, 2)])
def test_the_similarity_matrix_outlines_each_rows_best_match(shape):
    m = np.arange(shape[0] * shape[1], dtype=float).reshape(shape) / 10
    fig = draw_similarity(m, [f"r{i}" for i in range(shape[0])], [f"c{j}" for j in range(shape[1])])
    outlined = [p for p in fig.axes[0].patches if not p.get_fill()]
    assert len(outlined) == shape[0] and all(p.get_x() == shape[1] - 1.5 for p in outlined)


def test_a_flow_is_one_box_a_step_with_an_arrow_between_two():
    fig = draw_flow(["question", "retrieve", "answer"], notes=["", "top 3", ""], highlight=[1])
    ax = fig.axes[0]
    arrows = [t for t in ax.texts if isinstance(t, matplotlib.text.Annotation)]
    assert len(ax.patches) == 3 and len(arrows) == 2
    assert "top 3" in _texts(fig)


def test_the_triad_names_its_three_corners_and_its_legs_with_their_scores():
    texts = _texts(draw_triad({"groundedness": "0.85"}))
    assert {"question", "context", "answer"} <= set(texts)
    assert "groundedness\n0.85" in texts and "context relevance" in texts


def test_a_funnel_draws_one_bar_a_stage_centred_and_labelled():
    fig = draw_funnel([("candidates", 300), ("kept", 30)])
    bars = fig.axes[0].patches
    assert [b.get_width() for b in bars] == [300, 30] and bars[1].get_x() == 135
    assert "kept: 30" in _texts(fig)


def test_a_table_of_counts_writes_each_count_in_its_cell():
    fig = draw_counts([[5, 1], [2, 7]], ["judge: yes", "judge: no"], ["label: yes", "label: no"])
    assert sorted(_texts(fig)) == ["1", "2", "5", "7"]


def test_intervals_are_drawn_from_low_to_high_with_the_reference():
    fig = draw_intervals([("judge", 0.4, 0.2, 0.6), ("baseline", 0.9, 0.8, 1.0)], reference=0.5,
                         reference_label="chance")
    spans = sorted(tuple(line.get_xdata()) for line in fig.axes[0].lines if len(line.get_xdata()) == 2
                   and line.get_xdata()[0] != line.get_xdata()[1])
    assert spans == [(0.2, 0.6), (0.8, 1.0)] and "chance" in _texts(fig)
