"""Reading JSON data files: line numbers in linear time, repeated keys refused."""

from __future__ import annotations

import json

import pytest

from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.corpus.jsonfile import DatasetError, element_lines
from ragworkbook.corpus.pages import load_corpus


def _item(i: int) -> dict:
    return {"id": f"q{i}", "question": f"question {i}?", "keyword": "k", "reference": "r"}


def test_element_lines_are_the_lines_where_items_start():
    text = json.dumps({"name": "x", "items": [_item(i) for i in range(5)]}, indent=1)
    lines = element_lines(text, "items")
    starts = [n for n, line in enumerate(text.splitlines(), start=1) if line == "  {"]
    assert lines == starts and len(lines) == 5
    assert element_lines('{"items": []}', "items") == []
    assert element_lines('{"other": [1]}', "items") == []


def test_a_repeated_key_is_an_error_naming_file_line_and_field(tmp_path):
    p = tmp_path / "es.json"
    p.write_text('{"items": [\n {"id": "a", "question": "q", "keyword": "k", "reference": "r"},\n'
                 ' {"id": "b", "question": "q",\n'
                 '  "keyword": "k", "question": "again", "reference": "r"}\n]}\n')
    with pytest.raises(DatasetError, match=r"es.json, line 4: field 'question' appears twice in one object"):
        load_eval_set(p)
    q = tmp_path / "es.jsonl"
    q.write_text(json.dumps(_item(1)) + '\n{"id": "b", "id": "c", "question": "q", "keyword": "k", '
                 '"reference": "r"}\n')
    with pytest.raises(DatasetError, match=r"es.jsonl, line 2: field 'id' appears twice"):
        load_eval_set(q)
    c = tmp_path / "c.json"
    c.write_text('{"pages": [{"page": 1, "text": "a", "text": "b"}]}')
    with pytest.raises(DatasetError, match="field 'text' appears twice"):
        load_corpus(c)


def test_large_files_keep_exact_line_numbers_in_errors(tmp_path):
    """The 20,000th item is reported on its own line (the counting is incremental, not a rescan)."""
    items = [_item(i) for i in range(20_000)]
    items[19_999] = {"id": "last", "question": "q", "keyword": "k"}  # no reference (the keyword is optional)
    p = tmp_path / "big.json"
    p.write_text(json.dumps({"items": items}, indent=1))
    line = 2 + 6 * 19_999 + 1  # '{' + '"items": [' then 6 lines per item, this item's '{'
    with pytest.raises(DatasetError, match=rf"big.json, line {line} \(items\[19999\]\): item is missing "
                                           "the field 'reference'"):
        load_eval_set(p)
