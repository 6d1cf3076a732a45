"""Loading and validating eval sets and corpora: the bundled files and clear errors for bad ones."""

import json

import pytest

from ragworkbook.corpus.eval_set import EvalItem, eval_set_from_records, load_eval_set
from ragworkbook.corpus.jsonfile import DatasetError
from ragworkbook.corpus.pages import Corpus, Page, corpus_from_pages, load_corpus


def test_bundled_eval_set():
    es = load_eval_set()
    assert len(es) == 8
    assert es.ids == [f"q{i}" for i in range(1, 9)]
    assert es[0] == EvalItem(
        "q1",
        "How many attention heads did they use?",
        "h = 8",
        "The base model used 8 attention heads (h = 8).",
    )
    assert es["q5"].keyword == "28.4"
    assert "rag-cookbook" in es.source and "MIT" in es.source
    assert [it.keyword for it in es] == [
        "h = 8",
        "dmodel",
        "N = 6",
        "Adam",
        "28.4",
        "P100",
        "12 hours",
        "Pdrop",
    ]


def test_bundled_corpus():
    c = load_corpus()
    assert isinstance(c, Corpus)
    assert [p.page for p in c.pages] == list(range(1, len(c) + 1))
    assert 14 <= len(c) <= 18
    for p in c.pages:
        assert 1500 <= len(p.text) <= 2500, (p.page, len(p.text))
    assert "MIT" in c.licence
    assert "Attention Is All You Need" in c.title
    # every eval keyword is stated somewhere in the notes
    text = "\n".join(p.text for p in c.pages).lower()
    for it in load_eval_set():
        assert it.keyword.lower() in text, it.keyword


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


GOOD = {"id": "a", "question": "Q?", "keyword": "k", "reference": "R."}


def test_jsonl_eval_set_roundtrip(tmp_path):
    lines = [json.dumps({**GOOD, "id": f"x{i}"}) for i in range(3)]
    p = _write(tmp_path, "set.jsonl", "\n".join(lines[:2]) + "\n\n" + lines[2] + "\n")
    es = load_eval_set(p)
    assert es.ids == ["x0", "x1", "x2"]
    assert es.name == "set"


def test_jsonl_malformed_line_names_file_and_line(tmp_path):
    p = _write(tmp_path, "bad.jsonl", json.dumps(GOOD) + "\n" + '{"id": "b", "question": \n')
    with pytest.raises(DatasetError, match=r"bad\.jsonl, line 2: invalid JSON"):
        load_eval_set(p)


def test_jsonl_missing_field_names_line_and_field(tmp_path):
    rec = dict(GOOD, id="b")
    del rec["reference"]  # the keyword is optional (tests/corpus/test_answers.py); the reference is not
    p = _write(tmp_path, "miss.jsonl", json.dumps(GOOD) + "\n\n" + json.dumps(rec) + "\n")
    with pytest.raises(DatasetError) as err:
        load_eval_set(p)
    msg = str(err.value)
    assert "miss.jsonl, line 3" in msg and "'reference'" in msg


def test_json_missing_field_names_line_and_item(tmp_path):
    items = [GOOD, {k: v for k, v in GOOD.items() if k != "reference"} | {"id": "b"}]
    text = (
        '{\n  "name": "t",\n  "items": [\n' + ",\n".join("    " + json.dumps(i) for i in items) + "\n  ]\n}\n"
    )
    p = _write(tmp_path, "set.json", text)
    with pytest.raises(
        DatasetError, match=r"set\.json, line 5 \(items\[1\]\): item is missing the field 'reference'"
    ):
        load_eval_set(p)


def test_json_syntax_error_names_line(tmp_path):
    p = _write(tmp_path, "set.json", '{\n "items": [\n  {"id": "a",}\n ]\n}\n')
    with pytest.raises(DatasetError, match=r"set\.json, line 3, column \d+: invalid JSON"):
        load_eval_set(p)


@pytest.mark.parametrize(
    "bad, match",
    [
        ({**GOOD, "question": 3}, "field 'question' must be a string"),
        ({**GOOD, "keyword": "  "}, "field 'keyword' is empty"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_json_bad_fields(tmp_path, bad, match):
    p = _write(tmp_path, "s.json", json.dumps({"items": [bad]}))
    with pytest.raises(DatasetError, match=match):
        load_eval_set(p)


def test_duplicate_ids_and_empty(tmp_path):
    p = _write(tmp_path, "d.json", json.dumps({"items": [GOOD, GOOD]}))
    with pytest.raises(DatasetError, match="duplicate id 'a'"):
        load_eval_set(p)
    p = _write(tmp_path, "e.json", json.dumps({"items": []}))
    with pytest.raises(DatasetError, match="no items"):
        load_eval_set(p)
    p = _write(tmp_path, "f.json", json.dumps({"questions": []}))
    with pytest.raises(DatasetError, match="missing the field 'items'"):
        load_eval_set(p)


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_eval_set("/nonexistent/eval.json")


def test_int_ids_become_strings():
    es = eval_set_from_records([{**GOOD, "id": 7}])
    assert es.ids == ["7"]


def test_corpus_json_errors(tmp_path):
    text = '{\n "title": "t",\n "pages": [\n  {"page": 1, "text": "a"},\n  {"page": 0, "text": "b"}\n ]\n}\n'
    p = _write(tmp_path, "c.json", text)
    with pytest.raises(
        DatasetError, match=r"c\.json, line 5 \(pages\[1\]\): field 'page' must be a positive integer"
    ):
        load_corpus(p)
    p = _write(tmp_path, "c2.json", json.dumps({"title": "t", "pages": [{"page": 1}]}))
    with pytest.raises(DatasetError, match="page is missing the field 'text'"):
        load_corpus(p)
    p = _write(
        tmp_path, "c3.json", json.dumps({"pages": [{"page": 1, "text": "a"}, {"page": 1, "text": "b"}]})
    )
    with pytest.raises(DatasetError, match="duplicate page number 1"):
        load_corpus(p)
    p = _write(tmp_path, "c4.json", json.dumps({"title": "t"}))
    with pytest.raises(DatasetError, match="missing the field 'pages'"):
        load_corpus(p)


def test_not_utf8_and_wrong_top_level(tmp_path):
    bad = tmp_path / "latin1.json"
    bad.write_bytes('{"pages": [{"page": 1, "text": "caf\u00e9"}]}'.encode("latin-1"))
    with pytest.raises(DatasetError, match=r"latin1\.json: not UTF-8 text"):
        load_corpus(bad)
    with pytest.raises(DatasetError, match=r"latin1\.json: not UTF-8 text"):
        load_eval_set(bad)
    p = _write(tmp_path, "list.json", "[]")
    with pytest.raises(DatasetError, match=r"list\.json: a corpus must be a JSON object with 'pages'"):
        load_corpus(p)
    p = _write(tmp_path, "pages.json", '{"pages": {"page": 1}}')
    with pytest.raises(DatasetError, match=r"field 'pages' must be a list, got dict"):
        load_corpus(p)


def test_corpus_jsonl(tmp_path):
    p = _write(tmp_path, "notes.jsonl", '{"page": 1, "text": "one"}\n{"page": 2, "text": ""}\n')
    c = load_corpus(p)
    assert c.title == "notes" and c.pages == [Page(1, "one"), Page(2, "")]
    p = _write(tmp_path, "bad.jsonl", '{"page": 1, "text": "one"}\n{"page": "2", "text": "x"}\n')
    with pytest.raises(DatasetError, match=r"bad\.jsonl, line 2: field 'page' must be a positive integer"):
        load_corpus(p)


def test_corpus_from_pages_forms():
    c = corpus_from_pages(["a", "b"])
    assert c.pages == [Page(1, "a"), Page(2, "b")]
    c = corpus_from_pages([(3, "x"), {"page": 5, "text": "y"}, Page(7, "z")])
    assert [p.page for p in c] == [3, 5, 7]
    with pytest.raises(DatasetError, match="duplicate page number"):
        corpus_from_pages([(1, "a"), (1, "b")])
