"""RAGTruth's loader: the data set's three files give the 2,617 responses with their labels."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ragworkbook.corpus.jsonfile import DatasetError
from ragworkbook.judging.ragtruth import TASKS, load_ragtruth


@pytest.mark.datasets("ragtruth")
def test_the_data_set_loads_with_its_counts():
    s = load_ragtruth()
    assert len(s) == 2617 and sum(r.hallucinated for r in s) == 1079
    assert Counter(r.task for r in s) == {"QA": 817, "Summary": 900, "Data2txt": 900}
    assert Counter(r.task for r in s if r.hallucinated) == {"QA": 259, "Summary": 241, "Data2txt": 579}
    assert len({r.model for r in s}) == 6 and len({r.source_id for r in s}) == 439
    first = s.responses[0]
    assert first.id == "14300:gpt-4-0613" and first.question == "how do automotive technicians get paid"
    data2txt = next(r for r in s if r.task == "Data2txt")
    assert json.loads(data2txt.context)["name"] == "Finch & Fork"  # the record, as indented JSON
    for r in s:
        for span in r.spans:
            assert 0 <= span.start <= span.end


def _folder(tmp_path, qa_lines):
    for name in TASKS:
        (tmp_path / name).write_text("", encoding="utf-8")
    (tmp_path / "ragtruth_qa.jsonl").write_text("\n".join(qa_lines) + "\n", encoding="utf-8")
    return tmp_path


def test_a_small_folder_loads(tmp_path):
    rec = {"source_id": 1, "source": {"question": "q?", "passages": "p"},
           "responses": [{"response": "a", "model": "m", "labels": [{"start": 0, "end": 1, "text": "a",
                                                                      "label_type": "Evident Conflict"}]},
                         {"response": "b", "model": "n", "labels": []}]}
    s = load_ragtruth(_folder(tmp_path, [json.dumps(rec)]))
    assert [(r.id, r.hallucinated) for r in s] == [("1:m", True), ("1:n", False)]


@pytest.mark.parametrize("rec,message", [
    ({"source": {}}, r"line 2: expected an object with 'source_id'"),
    ({"source_id": 1, "source": "text", "responses": []}, r"line 2: a QA source needs"),
    ({"source_id": 1, "source": {"question": "q", "passages": "p"}, "responses": [{"response": "a"}]},
     r"line 2: every response needs 'response' and 'model'"),
    ({"source_id": 1, "source": {"question": "q", "passages": "p"},
      "responses": [{"response": "a", "model": "m", "labels": [{"start": "0", "end": 1}]}]},
     r"line 2: label 0 needs integer 'start' and 'end'"),
])
def test_malformed_records_are_named(tmp_path, rec, message):
    ok = json.dumps({"source_id": 0, "source": {"question": "q", "passages": "p"}, "responses": []})
    with pytest.raises(DatasetError, match=message):
        load_ragtruth(_folder(tmp_path, [ok, json.dumps(rec)]))
