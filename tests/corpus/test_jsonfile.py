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


# --- BOM, nesting, lone surrogates, CSV: every reader the same way ----------------------------------------
BOM = b"\xef\xbb\xbf"


def test_a_utf8_byte_order_mark_is_skipped_by_every_reader(tmp_path):
    from ragworkbook.corpus.answers import load_answer_records

    item = {"id": "q1", "question": "How many heads?", "keyword": "heads", "reference": "8"}
    files = {
        "es.json": json.dumps({"items": [item]}), "es.jsonl": json.dumps(item) + "\n",
        "c.json": json.dumps({"pages": [{"page": 1, "text": "eight heads"}]}),
        "a.jsonl": json.dumps({"question": "Q?", "answer": "A"}) + "\n",
        "a.json": json.dumps([{"question": "Q?", "answer": "A"}]),
        "a.csv": "question,answer\nQ?,A\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_bytes(BOM + text.encode("utf-8"))
    assert load_eval_set(tmp_path / "es.json").ids == ["q1"] == load_eval_set(tmp_path / "es.jsonl").ids
    assert load_corpus(tmp_path / "c.json").pages[0].text == "eight heads"
    for name in ("a.jsonl", "a.json", "a.csv"):
        answers = load_answer_records(tmp_path / name)
        assert [r.question for r in answers] == ["Q?"], name


def test_utf16_is_named(tmp_path):
    path = tmp_path / "es.json"
    path.write_bytes('{"items": []}'.encode("utf-16"))
    with pytest.raises(DatasetError, match=r"not UTF-8 text: it is UTF-16 \(it starts with the byte-order "
                                           r"mark FF FE\); save it as UTF-8"):
        load_eval_set(path)


def test_json_nested_too_deep_is_an_error_not_a_recursion_error(tmp_path):
    from ragworkbook.corpus.answers import load_answer_records

    deep = "[" * 1000 + "]" * 1000
    (tmp_path / "es.json").write_text('{"items": ' + deep + "}")
    (tmp_path / "a.jsonl").write_text('{"question": "q", "answer": "a"}\n{"question": ' + deep + "}\n")
    with pytest.raises(DatasetError, match=r"es\.json: JSON nested too deeply \(over \d+ levels"):
        load_eval_set(tmp_path / "es.json")
    with pytest.raises(DatasetError, match=r"a\.jsonl, line 2: JSON nested too deeply"):
        load_answer_records(tmp_path / "a.jsonl")


def test_a_lone_surrogate_names_the_file_the_line_and_the_field(tmp_path):
    from ragworkbook.corpus.answers import load_answer_records

    path = tmp_path / "a.jsonl"
    path.write_text('{"question": "q", "answer": "fine \\ud83d\\ude00"}\n'  # a pair: a real character
                    '{"question": "q2", "answer": "cut \\ud83d", "contexts": ["x"]}\n')
    with pytest.raises(DatasetError) as err:
        load_answer_records(path)
    assert str(err.value).startswith(f"{path}, line 2: field 'answer' holds a lone surrogate escape "
                                     "'\\\\ud83d'")
    arr = tmp_path / "a.json"
    arr.write_text('[\n{"question": "q", "answer": "a",\n "contexts": ["ok", "bad \\udc00"]}\n]')
    with pytest.raises(DatasetError, match=r"a\.json, line 3: field '\[0\]\.contexts\[1\]' holds a lone "):
        load_answer_records(arr)


def test_csv_cells_of_any_size_and_their_lines(tmp_path):
    from ragworkbook.corpus.answers import load_answer_records

    big = "x" * 200_000  # over the csv module's 131,072-character limit
    path = tmp_path / "a.csv"
    path.write_text(f'question,answer\nq1,"{big}"\n"q2\nspans two lines",a\nq3,\n', encoding="utf-8")
    answers = load_answer_records(path)
    assert [len(r.answer) for r in answers] == [200_000, 1, 0] and [r.line for r in answers] == [2, 3, 5]
    import csv

    assert csv.field_size_limit() == 131072  # the process-wide limit is back


def test_csv_duplicate_headers_and_unclosed_quotes_are_named(tmp_path):
    from ragworkbook.corpus.answers import load_answer_records

    dup = tmp_path / "dup.csv"
    dup.write_text("question,answer,answer\nq,a,b\n")
    with pytest.raises(DatasetError, match=r"dup\.csv, line 1: the header names the column 'answer' twice"):
        load_answer_records(dup)
    open_quote = tmp_path / "q.csv"
    open_quote.write_text('question,answer\nq1,a\nq2,"never closed\nq3,c\nq4,d\n')
    with pytest.raises(DatasetError, match=r"q\.csv, line 3: a quoted cell of the row starting here is never "
                                           "closed"):
        load_answer_records(open_quote)
    junk = tmp_path / "j.csv"
    junk.write_text('question,answer\nq1,"a"b\n')
    with pytest.raises(DatasetError, match=r"j\.csv, line 2: malformed CSV"):
        load_answer_records(junk)


def test_a_repeated_eval_set_id_names_both_lines(tmp_path):
    path = tmp_path / "es.json"
    items = [{"id": "q1", "question": "a?", "reference": "a"},
             {"id": "q2", "question": "b?", "reference": "b"},
             {"id": "q1", "question": "c?", "reference": "c"}]
    path.write_text(json.dumps({"items": items}, indent=1))
    with pytest.raises(DatasetError) as err:
        load_eval_set(path)
    lines = element_lines(path.read_text(), "items")
    assert (f"{path}, line {lines[2]} (items[2]): field 'id': duplicate id 'q1' (first at {path}, line "
            f"{lines[0]} (items[0]))") in str(err.value)
