"""Answers files (the outputs of someone else's RAG system) and eval sets: field names, ids, all problems
at once, and the JSON Schemas that document them."""

import csv
import json

import pytest

from ragworkbook.corpus.answers import (
    FIELDS,
    answer_records,
    assign_ids,
    load_answer_records,
    question_id,
)
from ragworkbook.corpus.eval_set import EVAL_FIELDS, eval_set_from_records, load_eval_set
from ragworkbook.corpus.jsonfile import MAX_PROBLEMS, DatasetError
from ragworkbook.schemas import SCHEMAS, load_schema, record_problems, schema_text

RAGAS_01 = [
    {"question": "How many heads?", "answer": "Eight heads.", "contexts": ["h = 8 heads", "other"],
     "ground_truth": "8 heads"},
    {"question": "Which optimizer?", "answer": "SGD", "contexts": [], "ground_truth": "Adam"},
]
RAGAS_02 = [{"user_input": r["question"], "response": r["answer"], "retrieved_contexts": r["contexts"],
             "reference": r["ground_truth"]} for r in RAGAS_01]


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _fields(answers):
    return [(r.id, r.question, r.answer, r.contexts, r.context_ids, r.reference) for r in answers]


def test_ragas_01_02_and_workbook_names_read_the_same(tmp_path):
    a = load_answer_records(_jsonl(tmp_path / "a.jsonl", RAGAS_01))
    b = load_answer_records(_jsonl(tmp_path / "b.jsonl", RAGAS_02))
    own = [{"question": r["question"], "answer": r["answer"], "reference": r["ground_truth"],
            "contexts": [{"text": t} for t in r["contexts"]]} for r in RAGAS_01]
    c = answer_records(own)
    assert _fields(a) == _fields(b) == _fields(c)
    first = a.records[0]
    assert first.answer == "Eight heads." and first.reference == "8 heads"
    assert first.contexts == ["h = 8 heads", "other"] and first.context_ids == [None, None]
    assert a.ignored == [] and a.records[0].line == 1 and a.records[1].line == 2


def test_missing_ids_are_stable_distinct_and_documented():
    qs = ["Same?", "Other?", "Same?"]
    ids = assign_ids([None, None, None], qs)
    assert ids[0] == question_id("Same?") == "q-" + __import__("hashlib").sha256(b"Same?").hexdigest()[:10]
    assert ids[2] == f"{ids[0]}-r3"  # the same question again: its 1-based position appended
    assert len(set(ids)) == 3
    # an explicit id equal to a generated one keeps its id; the generated one moves aside
    ids = assign_ids([None, question_id("Same?")], ["Same?", "x"])
    assert ids == [f"{question_id('Same?')}-r1", question_id("Same?")]
    # stable across files: the same question gets the same id, so two systems' files pair up
    assert answer_records(RAGAS_01).ids == answer_records(RAGAS_02).ids
    # the rule is the one the schema documents
    assert "first 10 hex digits of the SHA-256" in load_schema("answers")["description"]


def test_contexts_with_ids_and_id_lists(tmp_path):
    recs = [{"id": 7, "question": "q?", "answer": "a", "contexts": [{"id": "c1", "text": "one", "rank": 1},
                                                                     {"id": 2, "text": "two"}]},
            {"id": "x", "user_input": "q2?", "response": "", "retrieved_contexts": ["t1", "t2"],
             "retrieved_context_ids": ["d1", 5], "reference_context_ids": ["d1"], "faithfulness": 0.3}]
    s = answer_records(recs)
    assert s.ids == ["7", "x"]
    assert s.records[0].context_ids == ["c1", "2"] and s.records[0].has_context_ids
    assert s.records[1].context_ids == ["d1", "5"] and s.records[1].relevant_ids == ["d1"]
    assert s.records[1].answer == "" and s.records[1].reference is None
    assert s.ignored == ["faithfulness"]


def test_csv_with_list_cells(tmp_path):
    path = tmp_path / "a.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["user_input", "response", "retrieved_contexts", "reference", "score"])
        w.writerow(["How many heads?", "Eight heads.", json.dumps(["h = 8 heads", "other"]), "8 heads",
                    "0.5"])
        # a Python list literal (what pandas writes for a list column), a multi-line cell, no reference
        w.writerow(["Which optimizer?", "SGD", str(["one", "two"]), "", "first line\nsecond line"])
        w.writerow(["Empty answer?", "", "[]", "r", ""])
    s = load_answer_records(path)
    assert [r.line for r in s] == [2, 3, 5]
    assert s.records[0].contexts == ["h = 8 heads", "other"]
    assert s.records[1].contexts == ["one", "two"] and s.records[1].reference is None
    assert s.records[2].answer == "" and s.records[2].contexts == []
    assert s.ignored == ["score"]


def test_json_array_and_object_forms(tmp_path):
    arr = tmp_path / "a.json"
    arr.write_text(json.dumps(RAGAS_01, indent=1), encoding="utf-8")
    obj = tmp_path / "b.json"
    obj.write_text(json.dumps({"format": "x", "answers": RAGAS_01}, indent=1), encoding="utf-8")
    assert _fields(load_answer_records(arr)) == _fields(load_answer_records(obj))
    second = arr.read_text(encoding="utf-8").splitlines().index(" {", 2) + 1
    assert load_answer_records(arr).records[1].line == second
    bad = tmp_path / "c.json"
    bad.write_text(json.dumps({"items": RAGAS_01}), encoding="utf-8")
    with pytest.raises(DatasetError, match="records under 'answers', 'rows', 'samples'"):
        load_answer_records(bad)
    with pytest.raises(DatasetError, match=r"\.jsonl, \.json, \.csv or \.parquet"):
        load_answer_records(_jsonl(tmp_path / "d.txt", RAGAS_01))


def test_three_problems_in_one_run_each_with_line_and_field(tmp_path):
    recs = [RAGAS_01[0],
            {"answer": "a", "contexts": []},                                   # line 2: no question
            {"question": "q", "answer": 3, "contexts": []},                     # line 3: answer not a string
            RAGAS_01[1],
            {"question": "r", "answer": "a", "contexts": ["ok", {"id": "c"}]}]  # line 5: context without text
    with pytest.raises(DatasetError) as err:
        load_answer_records(_jsonl(tmp_path / "bad.jsonl", recs))
    msg = str(err.value)
    assert msg.startswith(f"{tmp_path / 'bad.jsonl'}: 3 problems:")
    assert "bad.jsonl, line 2: record is missing the field 'question' (or 'user_input', 'input')" in msg
    assert "bad.jsonl, line 3: field 'answer' must be a string, got integer" in msg
    assert "bad.jsonl, line 5: field 'contexts[1]' is missing the field 'text'" in msg
    assert len(err.value.problems) == 3


def test_conflicts_duplicates_and_mismatched_ids():
    recs = [{"question": "a", "user_input": "b", "answer": "x", "contexts": []},
            {"id": "d", "question": "c", "answer": "x", "contexts": []},
            {"id": "d", "question": "e", "answer": "x", "contexts": []},
            {"question": "f", "answer": "x", "contexts": ["t"], "retrieved_context_ids": ["1", "2"]},
            {"question": "g", "answer": "x", "contexts": [{"id": "a", "text": "t"}], "context_ids": ["b"]},
            "not an object"]
    with pytest.raises(DatasetError) as err:
        answer_records(recs)
    problems = err.value.problems
    assert len(problems) == 5
    assert "record 1: fields 'question' and 'user_input' both give the question" in problems[0]
    assert "record 3: field 'id': duplicate id 'd' (first at <memory>, record 2)" in problems[1]
    assert "record 4: field 'retrieved_context_ids' has 2 ids for 1 contexts" in problems[2]
    assert "record 5: field 'context_ids' contradicts the ids inside the contexts" in problems[3]
    assert "record 6: a record must be a JSON object, got str" in problems[4]
    # the same value under two names is not a conflict
    assert answer_records([{"question": "a", "user_input": "a", "answer": "", "contexts": []}]).ids


def test_problems_are_capped():
    recs = [{"question": "", "answer": "a", "contexts": []} for _ in range(MAX_PROBLEMS + 5)]
    with pytest.raises(DatasetError) as err:
        answer_records(recs)
    msg = str(err.value)
    assert f"{MAX_PROBLEMS + 5} problems" in msg and "... and 5 more" in msg
    assert msg.count("field 'question' is empty") == MAX_PROBLEMS
    with pytest.raises(DatasetError, match="no records"):
        answer_records([])


def test_dataframe_records_with_nan_and_arrays():
    import numpy as np
    import pandas as pd

    df = pd.DataFrame({"user_input": ["q1?", "q2?"], "response": ["a", "b"],
                       "retrieved_contexts": [np.array(["c1", "c2"]), []],
                       "reference": ["r1", np.nan], "keyword": [None, "c"], "qid": [1, 2]})
    s = answer_records(df)
    assert s.ids == ["1", "2"]
    assert s.records[0].contexts == ["c1", "c2"] and s.records[1].reference is None
    assert s.records[0].keyword is None and s.records[1].keyword == "c"


def test_fields_table_matches_the_schemas():
    props = set(load_schema("answers")["properties"])
    assert props == {n for names in FIELDS.values() for n in names}
    assert set(load_schema("eval-set")["properties"]) == {n for names in EVAL_FIELDS.values() for n in names}
    from jsonschema import Draft202012Validator

    for name in SCHEMAS:
        assert json.loads(schema_text(name)) == load_schema(name)
        Draft202012Validator.check_schema(load_schema(name))  # a valid JSON Schema
    assert record_problems({"question": "q", "answer": "a", "contexts": []}, "answers", "x") == []


def test_eval_set_keyword_and_id_optional_ragas_names(tmp_path):
    es = eval_set_from_records([{"user_input": "How many heads?", "ground_truth": "8"},
                                {"id": "b", "question": "Q?", "reference": "R", "keyword": "k"}])
    assert es.ids == [question_id("How many heads?"), "b"]
    assert es[0].keyword is None and es[0].reference == "8" and es["b"].keyword == "k"
    path = _jsonl(tmp_path / "set.jsonl", [{"question": "Q1?", "reference": "R"},
                                           {"question": 3, "reference": "R"},
                                           {"question": "Q3?"},
                                           {"question": "Q4?", "reference": "R", "keyword": " "}])
    with pytest.raises(DatasetError) as err:
        load_eval_set(path)
    msg = str(err.value)
    assert "3 problems" in msg
    assert "set.jsonl, line 2: field 'question' must be a string" in msg
    assert "set.jsonl, line 3: item is missing the field 'reference' (or 'ground_truth')" in msg
    assert "set.jsonl, line 4: field 'keyword' is empty" in msg
    # the bundled set is unchanged
    assert load_eval_set()[0].keyword == "h = 8"


def _values():
    from hypothesis import strategies as st

    scalar = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.floats(allow_nan=False, width=16),
                       st.sampled_from(["", " ", "q", "x y"]))
    context = st.one_of(scalar, st.fixed_dictionaries({}, optional={"text": scalar, "id": scalar,
                                                                    "rank": scalar}))
    return st.one_of(scalar, st.lists(context, max_size=3))


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_the_fast_and_the_explaining_validators_agree(name):
    """fastjsonschema accepts, jsonschema explains: on any record they must give the same verdict."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ragworkbook.schemas import _validator, is_valid

    keys = sorted(load_schema(name)["properties"]) + ["extra"]

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(st.dictionaries(st.sampled_from(keys), _values(), max_size=6))
    def agree(rec):
        assert is_valid(rec, name) == _validator(name).is_valid(rec), rec
        assert (record_problems(rec, name, "x") == []) == is_valid(rec, name), rec

    agree()
    good = {"answers": {"user_input": "q", "response": "",
                        "retrieved_contexts": ["a", {"id": 1, "text": "b"}]},
            "eval-set": {"question": "q", "ground_truth": "r", "keyword": None},
            "report": {"format": "ragworkbook-report", "version": 2, "meta": {}, "metrics": [],
                       "aggregates": {}, "rows": []}}[name]
    assert is_valid(good, name) and _validator(name).is_valid(good)


# --- without contexts, ids only, texts too long, pipes, the fast path ---------------------------------------
def test_records_without_contexts_load_and_say_so(tmp_path):
    path = _jsonl(tmp_path / "a.jsonl", [{"question": "Q?", "answer": "A", "reference": "R"},
                                         {"question": "Q2?", "answer": "B", "contexts": []}])
    a, b = load_answer_records(path)
    assert not a.has_contexts and a.contexts == [] and a.context_ids == [] and a.reference == "R"
    assert b.has_contexts and b.contexts == []  # given, and empty: nothing was retrieved


def test_context_ids_alone_are_a_ranking(tmp_path):
    path = _jsonl(tmp_path / "a.jsonl", [{"question": "Q?", "answer": "A", "retrieved_context_ids": ["d2", 7],
                                          "reference_context_ids": ["d2"]}])
    (rec,) = load_answer_records(path)
    assert not rec.has_contexts and rec.context_ids == ["d2", "7"] and rec.relevant_ids == ["d2"]


def test_texts_over_the_cap_are_kept_and_flagged():
    from ragworkbook.corpus.answers import MAX_SCORED_CHARS

    (rec,) = answer_records([{"question": "Q?", "answer": "x" * (MAX_SCORED_CHARS + 1), "contexts": [],
                              "reference": "r"}])
    assert rec.too_long == ["answer"] and len(rec.answer) == MAX_SCORED_CHARS + 1
    (ok,) = answer_records([{"question": "Q?", "answer": "x" * MAX_SCORED_CHARS, "contexts": []}])
    assert ok.too_long == []


@pytest.mark.parametrize("text,kind", [
    ('{"question": "Q?", "answer": "A"}\n{"question": "Q2?", "answer": "B"}\n', "jsonl"),
    ('[{"question": "Q?", "answer": "A"}, {"question": "Q2?", "answer": "B"}]', "json"),
    ('{\n "answers": [{"question": "Q?", "answer": "A"}, {"question": "Q2?", "answer": "B"}]\n}', "json"),
    ("question,answer\nQ?,A\nQ2?,B\n", "csv"),
])
def test_a_pipe_or_a_file_without_suffix_is_read_by_its_content(tmp_path, text, kind):
    import os
    import threading

    plain = tmp_path / "answers"
    plain.write_text(text)
    assert [r.answer for r in load_answer_records(plain)] == ["A", "B"]
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)

    def write():
        with open(pipe, "w") as fh:
            fh.write(text)

    threading.Thread(target=write, daemon=True).start()
    assert [r.answer for r in load_answer_records(pipe)] == ["A", "B"]


def test_another_suffix_is_still_refused(tmp_path):
    (tmp_path / "a.xlsx").write_text("x")
    with pytest.raises(DatasetError,
                       match=r"an answers file is \.jsonl, \.json, \.csv or \.parquet, got '\.xlsx'"):
        load_answer_records(tmp_path / "a.xlsx")


FAST_CASES = [
    {"question": "Q?", "answer": ""},
    {"question": "Q?", "answer": "A", "contexts": ["a", {"text": "b", "id": 3}]},
    {"question": " ", "answer": "A"}, {"question": "\u00a0", "answer": "A"},
    {"question": "\ufeff", "answer": "A"},
    {"user_input": "Q?", "response": "A", "retrieved_contexts": [], "reference": None},
    {"question": "Q?", "answer": 5}, {"question": "Q?", "answer": "A", "contexts": "one"},
    {"question": "Q?", "answer": "A", "contexts": [{"id": 1}]}, {"question": "Q?", "answer": "A", "id": True},
    {"question": "Q?", "answer": "A", "id": ""}, {"question": "Q?", "answer": "A", "keyword": " "},
    {"question": "Q?", "answer": "A", "context_ids": ["a", ""]}, {"question": "Q?", "answer": "A", "id": 7},
    {"question": "Q?", "answer": "A", "reference": 3},
    {"question": "Q?", "answer": "A", "relevant_ids": [1.5]},
    {"question": "Q?"}, {"answer": "A"}, {"question": "Q?", "answer": "A", "other": {"deep": [1]}},
    {"question": "Q?", "answer": "A", "contexts": [{"text": "t", "id": None, "rank": 1}]},
    {"question": "Q?", "user_input": "Q?", "answer": "A"},
]


@pytest.mark.parametrize("record", FAST_CASES)
def test_the_fast_path_accepts_nothing_the_schema_refuses(record):
    from ragworkbook.corpus.answers import _fast_values
    from ragworkbook.schemas import is_valid

    clean = {k: v for k, v in record.items() if v is not None}  # null = absent, as the loader reads it
    if _fast_values(record) is not None:
        assert is_valid(clean, "answers"), record


def test_context_ids_of_contexts_without_ids_are_shared_and_read_only(tmp_path):
    path = _jsonl(tmp_path / "a.jsonl", [{"question": f"Q{i}?", "answer": "A", "contexts": ["x", "y"]}
                                         for i in range(3)])
    a, b, _ = load_answer_records(path)
    assert a.context_ids == [None, None] and a.context_ids is b.context_ids
    with pytest.raises(TypeError, match="shared and read-only; copy it"):
        a.context_ids.append("z")
    assert list(a.context_ids) + ["z"] == [None, None, "z"]


def test_repeated_ids_are_reported_in_file_order_with_their_first_line(tmp_path):
    path = _jsonl(tmp_path / "a.jsonl", [{"id": "x", "question": "Q?", "answer": "A"},
                                         {"id": "y", "question": "Q?", "answer": 5},
                                         {"id": "x", "question": "Q?", "answer": "B"}])
    with pytest.raises(DatasetError) as err:
        load_answer_records(path)
    problems = err.value.problems
    assert problems[0].startswith(f"{path}, line 2: field 'answer' must be a string")
    assert problems[1] == (f"{path}, line 3: field 'id': duplicate id 'x' (first at {path}, line 1); ids "
                           "must be unique")
