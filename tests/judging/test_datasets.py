"""WikiEval and RAGChecker loaders: the bundled files load, malformed files fail naming file, line, field."""

from __future__ import annotations

import json

import pytest

from ragworkbook.corpus.jsonfile import DatasetError
from ragworkbook.judging.datasets import WIKIEVAL_SETS, load_ragchecker, load_wikieval, round_robin


@pytest.mark.parametrize("name", list(WIKIEVAL_SETS))
def test_bundled_wikieval_sets_have_50_pairs(name):
    s = load_wikieval(name)
    assert len(s) == 50 and [p.id for p in s][:2] == ["w01", "w02"]
    for p in s:
        assert (p.good.label, p.bad.label) == (1, 0) and p.good.question == p.bad.question == p.question
    first = s.pairs[0]
    if name == "faithfulness":
        assert first.good.answer and first.good.context and first.good.answer != first.bad.answer
    elif name == "answer_relevance":
        assert first.good.answer and first.good.context is None
    else:
        assert first.good.context and first.good.answer is None
    assert first.bad.line == 2  # the bad items come first in the files, the good ones after


def _write(tmp_path, text, name="x.csv"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize("text,message", [
    ("question,label\nq,1\n", r"x\.csv, line 1: the header has no column 'answer'"),
    ("question,answer,label\nq,a,1\nq,b,2\n", r"x\.csv, line 3: field 'label' must be 0 or 1, got '2'"),
    ("question,answer,label\nq,a,1\nq,,0\n", r"x\.csv, line 3: field 'answer' is empty"),
    ("question,answer,label\nq,a,1\nq,b,1\n", r"x\.csv, lines 2, 3: the question 'q' has labels \[1, 1\]"),
    ('question,answer,label\n"q","multi\nline",1\nr,x,0\n',
     r"x\.csv, lines 2: the question 'q' has labels \[1\]"),
    ("question,answer,label\nq,a,1,extra\n", r"x\.csv, line 2: 4 fields where the header has 3"),
    ("question,answer,label\n", r"no records after the header"),
])
def test_wikieval_errors_name_file_line_field(tmp_path, text, message):
    with pytest.raises(DatasetError, match=message):
        load_wikieval("answer_relevance", _write(tmp_path, text))


def test_wikieval_line_numbers_count_multiline_fields(tmp_path):
    text = 'question,answer,label\n"q","two\nlines",1\nq,b,0\n'
    s = load_wikieval("answer_relevance", _write(tmp_path, text))
    assert (s.pairs[0].good.line, s.pairs[0].bad.line) == (2, 4)


def test_unknown_wikieval_set():
    with pytest.raises(ValueError, match="unknown WikiEval set 'ff'; choose one of: faithfulness"):
        load_wikieval("ff")


def test_bundled_ragchecker_pairs_and_predictions():
    meta = load_ragchecker()
    assert len(meta) == 280
    p = meta.pairs[0]
    assert p.id == "r000" and p.labels["overall"] == (1, 1) and p.line == 2
    assert p.system1 == "bm25_llama3_8b" and p.answer1 and p.answer2 and p.reference
    assert p.predictions["correctness"] == pytest.approx((0.047619047619047616, 0.52))
    assert load_ragchecker(predictions=False).pairs[0].predictions == {}
    rr = round_robin(meta.pairs)
    assert len(rr) == 280 and len({q.dataset for q in rr[:10]}) == 10


def _rec(iid=0, **over):
    rec = {"instance_id": iid, "dataset": "d", "query": "q?", "gt_answer": "ref",
           "model1": {"model_name": "s1", "response": "a1"}, "model2": {"model_name": "s2", "response": "a2"},
           "correctness_label": 1, "completeness_label": 0, "overall_label": -1}
    rec.update(over)
    return rec


@pytest.mark.parametrize("records,message", [
    ([_rec()], r"1 records; expected two per pair"),
    ([_rec(), _rec(query="other?")],
     r"h\.json, line 19 \(record 1\): field 'query' differs from .*line 2 \(record 0\)"),
    ([_rec(), _rec(overall_label=3)], r"\(record 1\): field 'overall_label' must be an integer from -2 to 2"),
    ([_rec(), _rec(model2={"model_name": "s2", "response": "changed"})], r"the answers differ"),
    ([_rec(), {k: v for k, v in _rec().items() if k != "completeness_label"}],
     r"\(record 1\): record is missing the field 'completeness_label'"),
    ([_rec(model1="text"), _rec()], r"field 'model1' must be an object"),
])
def test_ragchecker_errors_name_the_record(tmp_path, records, message):
    path = tmp_path / "h.json"
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        load_ragchecker(path, predictions=False)


def test_ragchecker_predictions_must_follow_the_pairs(tmp_path):
    h = tmp_path / "h.json"
    h.write_text(json.dumps([_rec(), _rec()]), encoding="utf-8")
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps([{"instance_id": 9, "model1": {}, "model2": {}}]), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"expected the record of instance_id 0"):
        load_ragchecker(h, predictions=pred)
    pred.write_text(json.dumps([{"instance_id": 0, "model1": {"ragchecker": {}}, "model2": {}}]),
                    encoding="utf-8")
    with pytest.raises(DatasetError, match=r"field 'model2' has no 'ragchecker' scores"):
        load_ragchecker(h, predictions=pred)
