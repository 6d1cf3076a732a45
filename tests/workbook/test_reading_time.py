"""The reading count: prose at 180 words a minute, code at 12 lines, output at 40 lines; the opening."""

from __future__ import annotations

import pytest

from ragworkbook.workbook.reading_time import (
    ReadingTime,
    figure_count,
    has_opening_picture,
    missing_opening_parts,
    opening_minutes,
    prose_words,
    reading_time,
    stated_minutes,
)


def md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def code(text, *outputs):
    return {"cell_type": "code", "metadata": {}, "source": text, "outputs": list(outputs),
            "execution_count": 1}


def stream(text):
    return {"output_type": "stream", "name": "stdout", "text": text}


def display(**data):
    return {"output_type": "display_data", "metadata": {}, "data": data}


OPENING = md("# 03 Chunking\n\n**You will do:** cut pages into windows.\n\n**You will learn:** why overlap "
             "matters.\n\n**You need:** notebook 01.\n\n**Time:** about 25 minutes.")


def test_prose_words_leave_out_images_tags_and_urls():
    assert prose_words("Two words ![a picture](figures/x.png) <b>bold</b> https://example.org/x") == 3
    assert prose_words("$\\mathrm{DCG} = \\sum_i g_i$ — a formula, 3 symbols") == 7


def test_the_count_reads_prose_code_and_what_a_learner_sees_of_the_outputs():
    nb = {"cells": [md(" ".join(["word"] * 360)),
                    code("x = 1\n\ny = 2\n", stream("a\nb\n")),
                    code("show()", display(**{"image/png": "...", "text/plain": "<Figure>"}),
                         display(**{"application/vnd.jupyter.widget-view+json": {"model_id": "m"},
                                    "text/plain": "VBox(children=(IntSlider(...)))"}),
                         display(**{"text/html": "<table>", "text/plain": "   a\n0  1\n1  2"}))]}
    t = reading_time(nb)
    assert t == ReadingTime(words=360, code_lines=3, output_lines=5)
    assert t.minutes == pytest.approx(2 + 3 / 12 + 5 / 40)
    assert figure_count(nb) == 1


@pytest.mark.parametrize("minutes,stated", [(0.5, 5), (5.0, 5), (5.01, 10), (24.2, 25), (29.9, 30)])
def test_a_lesson_states_its_count_rounded_up_to_five_minutes(minutes, stated):
    assert stated_minutes(minutes) == stated


def test_the_opening_states_what_the_learner_does_learns_needs_and_how_long():
    picture = md("![the windows](figures/03_windows.png)")
    nb = {"cells": [OPENING, picture, code("x = 1")]}
    assert missing_opening_parts(nb) == [] and opening_minutes(nb) == 25 and has_opening_picture(nb)
    bare = {"cells": [md("# 03 Chunking\n\nSome text."), code("x = 1"), code("y = 2"), picture]}
    assert missing_opening_parts(bare) == ["You will do", "You will learn", "You need", "Time"]
    assert opening_minutes(bare) is None and not has_opening_picture(bare)
    drawn = {"cells": [OPENING, code("plot()", display(**{"image/png": "..."}))]}
    assert has_opening_picture(drawn)
