"""The lesson pictures draw what they are given: one box a chunk, one bar a window, one cell a token pair."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from ragworkbook.workbook.figures import (  # noqa: E402
    draw_course_map,
    draw_ngram_matches,
    draw_ranking,
    draw_similarity,
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
