"""List cells of CSV files: every form a tool writes is read element by element, and what cannot be read
as exactly one list is refused with the fix (never glued, never guessed)."""

import numpy as np
import pytest

from ragworkbook.corpus.list_cells import ListCellError, parse_list_cell


@pytest.mark.parametrize("cell, expected", [
    ('["p7-c1", "p7-c2"]', ["p7-c1", "p7-c2"]),  # JSON
    ("['p7-c1', 'p7-c2']", ["p7-c1", "p7-c2"]),  # a Python literal (pandas' to_csv)
    ("['p7-c1' 'p7-c2']", ["p7-c1", "p7-c2"]),  # numpy's text (datasets' to_csv): two ids, not 'p7-c1p7-c2'
    ("[]", []),
    ("[1 2 -3]", [1, 2, -3]),
    ("[{'text': 'a', 'id': 1} {'text': 'b'}]", [{"text": "a", "id": 1}, {"text": "b"}]),
])
def test_each_form_reads_each_element(cell, expected):
    assert parse_list_cell(cell) == expected


def test_numpy_text_of_real_arrays_round_trips():
    """What numpy really prints: wrapped over lines past 75 characters, quotes and newlines escaped."""
    values = ["It's the warmup", 'say "hi"', "two\nlines", "Позиционное кодирование", "位置编码"] + [
        f"a long passage number {i} that makes numpy wrap the line" for i in range(6)]
    text = str(np.array(values))
    assert "\n" in text and "' '" in text  # the form that used to be glued
    assert parse_list_cell(text) == values
    assert parse_list_cell(str(np.array(["p7-c1", "p7-c2"], dtype=object))) == ["p7-c1", "p7-c2"]


@pytest.mark.parametrize("cell, why", [
    ("['a', 'b' 'c']", "without a comma"),  # Python would read ['a', 'bc']
    (str(np.array([f"id{i}" for i in range(1200)])), "numpy summarised"),  # '...' hides 1000+ elements
    ("p7-c1", "not a list"),
    ('{"a": 1}', "not a list"),
    ("['a' + 'b']", "not a literal"),
    ("['a'", "not a list"),
])
def test_ambiguous_or_lossy_cells_are_refused_with_the_fix(cell, why):
    with pytest.raises(ListCellError, match=why) as exc:
        parse_list_cell(cell)
    assert "JSON array" in str(exc.value)  # the fix


def test_a_declared_separator_splits_as_the_tool_reads_it():
    assert parse_list_cell("first passage|second, with a comma", "|") == ["first passage",
                                                                           "second, with a comma"]
    assert parse_list_cell("['not', 'a list here']", "|") == ["['not', 'a list here']"]
