"""Notebook 00's course table reads each lesson's title and stated minutes from the notebooks."""

from __future__ import annotations

import json

from ragworkbook.workbook.course import CORE_PATH, lessons


def _write(folder, name, first_markdown):
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": first_markdown}], "metadata": {},
          "nbformat": 4, "nbformat_minor": 5}
    (folder / name).write_text(json.dumps(nb), encoding="utf-8")


def test_lessons_then_appendices_with_their_titles_minutes_and_path(tmp_path):
    _write(tmp_path, "A1_extra.ipynb", "# A1 · An appendix\n\nReference material.")
    _write(tmp_path, "02_ranking.ipynb", "# 02 · Ranking metrics\n\n**Time:** about 25 minutes of reading.")
    _write(tmp_path, "01_basics.ipynb", "# 01 · Precision and recall\n\nNo time stated.")
    got = [(x.number, x.title, x.minutes, x.core) for x in lessons(tmp_path)]
    assert got == [("01", "Precision and recall", None, "01" in CORE_PATH),
                   ("02", "Ranking metrics", 25, "02" in CORE_PATH),
                   ("A1", "An appendix", None, False)]
