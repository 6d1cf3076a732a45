"""WikiEval and RAGChecker loaders: the data sets load, malformed files fail naming file, line, field.

WikiEval and RAGChecker's files come from :mod:`ragworkbook.datasets` (the session's mirror of
../shared/data in the tests); the construction labels are the project's own, in ragworkbook/data/wikieval."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys

import pytest

from ragworkbook.corpus.jsonfile import DatasetError
from ragworkbook.datasets import dataset_dir, fetch
from ragworkbook.judging.datasets import (
    CONSTRUCTION_LABELS,
    WIKIEVAL_SETS,
    load_ragchecker,
    load_wikieval,
    round_robin,
)
from ragworkbook.paths import data_path


@pytest.mark.parametrize("name", list(WIKIEVAL_SETS))
def test_bundled_wikieval_sets_have_50_pairs(name):
    s = load_wikieval(name)
    assert len(s) == 50 and [p.id for p in s][:2] == ["w01", "w02"]
    for p in s:
        assert p.good.good and not p.bad.good and p.good.question == p.bad.question == p.question
        assert {p.good.label, p.bad.label} == {0, 1}  # the file's column, kept as written
    first = s.pairs[0]
    if name == "faithfulness":
        assert first.good.answer and first.good.context and first.good.answer != first.bad.answer
    elif name == "answer_relevance":
        assert first.good.answer and first.good.context is None
    else:
        assert first.good.context and first.good.answer is None


#: How often the files' `label` 1 marks the good item (the construction label): near half, a slot
@pytest.mark.parametrize("name,agree", [("faithfulness", 26), ("answer_relevance", 22),
                                        ("context_relevance", 26)])
def test_the_label_column_is_not_the_truth(name, agree):
    s = load_wikieval(name)
    assert sum(p.good.label == 1 for p in s) == agree


def test_ff_pairs_5_to_7_are_grounded_under_label_0():
    """Read by eye: GPT-4's release date, Gaucho Americano's premiere, the human climate niche. The answer
    that copies its context is the good one, and the file puts it under label 0."""
    s = load_wikieval("faithfulness")
    for i, fact in ((5, "March 14, 2023"), (6, "April 29, 2021"), (7, "15 °C")):
        pair = s.pairs[i]
        assert pair.good.label == 0 and pair.bad.label == 1
        assert fact in pair.good.answer and fact in pair.good.context and fact not in pair.bad.answer


def _overlap(answer: str, context: str) -> float:
    """Share of the answer's words found in the context (written out here, independent of the package)."""
    words = [w for w in re.findall(r"[a-z0-9]+", answer.lower())]
    vocab = set(re.findall(r"[a-z0-9]+", context.lower()))
    return sum(w in vocab for w in words) / len(words)


def test_word_overlap_ranks_the_construction_good_answer_first_and_label_1_at_chance():
    """The check that would have caught the old reading of `label`."""
    s = load_wikieval("faithfulness")

    def accuracy(good_first):
        score = 0.0
        for p in s:
            a, b = (p.good, p.bad) if good_first(p) else (p.bad, p.good)
            da, db = _overlap(a.answer, a.context), _overlap(b.answer, b.context)
            score += 1.0 if da > db else 0.5 if da == db else 0.0
        return score / len(s)

    assert accuracy(lambda p: True) >= 0.9
    assert 0.35 <= accuracy(lambda p: p.good.label == 1) <= 0.65


@pytest.mark.datasets("wikieval")
def test_the_construction_labels_recompute_from_the_three_files(tmp_path):
    folder = data_path("wikieval")
    fetch("wikieval", progress=False)
    out = tmp_path / "labels.csv"
    subprocess.run([sys.executable, str(folder / "derive_construction_labels.py"), str(out)], check=True,
                   capture_output=True, env={**os.environ, "WIKIEVAL_DIR": str(dataset_dir("wikieval"))})
    assert out.read_bytes() == (folder / "construction_labels.csv").read_bytes()


def _write(tmp_path, text, name="x.csv"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _with_truth(tmp_path, text, goods, name="x.csv"):
    """A CSV and a construction-label file beside it (``goods``: the good flag of each data row)."""
    p = _write(tmp_path, text, name)
    rows = list(csv.DictReader(io.StringIO(text)))
    lines = ["file,row,question,good,evidence"]
    lines += [f"{name},{i},{r['question']},{g},test"
              for i, (r, g) in enumerate(zip(rows, goods, strict=False))]
    (tmp_path / CONSTRUCTION_LABELS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("text,goods,message", [
    ("question,label\nq,1\n", [1], r"x\.csv, line 1: the header has no column 'answer'"),
    ("question,answer,label\nq,a,1\nq,b,2\n", [1, 0],
     r"x\.csv, line 3: field 'label' must be 0 or 1, got '2'"),
    ("question,answer,label\nq,a,1\nq,,0\n", [1, 0], r"x\.csv, line 3: field 'answer' is empty"),
    ("question,answer,label\nq,a,1\nq,b,0\n", [1, 1],
     r"x\.csv, lines 2, 3: the question 'q' has 2 good and 0 bad items in construction_labels\.csv"),
    ('question,answer,label\n"q","multi\nline",1\nr,x,0\n', [1, 0],
     r"x\.csv, lines 2: the question 'q' has 1 good and 0 bad items"),
    ("question,answer,label\nq,a,1\nq,b,0\nq,c,0\n", [1, 0],
     r"x\.csv, line 4: construction_labels\.csv has no label for x\.csv row 2"),
    ("question,answer,label\nq,a,1,extra\n", [1], r"x\.csv, line 2: 4 fields where the header has 3"),
    ("question,answer,label\n", [], r"no records after the header"),
])
def test_wikieval_errors_name_file_line_field(tmp_path, text, goods, message):
    with pytest.raises(DatasetError, match=message):
        load_wikieval("answer_relevance", _with_truth(tmp_path, text, goods))


def test_wikieval_needs_its_construction_labels(tmp_path):
    with pytest.raises(DatasetError, match=r"no construction labels at .*construction_labels\.csv.*"
                                           r"'label' column is not a quality label"):
        load_wikieval("answer_relevance", _write(tmp_path, "question,answer,label\nq,a,1\nq,b,0\n"))


def test_wikieval_refuses_labels_of_another_file_version(tmp_path):
    p = _with_truth(tmp_path, "question,answer,label\nq,a,1\nq,b,0\n", [1, 0])
    p.write_text("question,answer,label\nq2,a,1\nq,b,0\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"x\.csv, line 2: the question differs from "
                                           r"construction_labels\.csv's for x\.csv row 0"):
        load_wikieval("answer_relevance", p)


def test_the_good_item_follows_the_construction_labels_not_label(tmp_path):
    text = 'question,answer,label\nq,"two\nlines",1\nq,b,0\n'
    s = load_wikieval("answer_relevance", _with_truth(tmp_path, text, [0, 1]))
    pair = s.pairs[0]
    assert (pair.good.answer, pair.good.label, pair.good.line) == ("b", 0, 4)
    assert (pair.bad.answer, pair.bad.label, pair.bad.line) == ("two\nlines", 1, 2)


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
