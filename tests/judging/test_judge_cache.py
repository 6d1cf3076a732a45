"""The judge's disk cache: damaged entries are one-line errors naming the file and the entry; what
another process wrote meanwhile is merged, not overwritten."""

from __future__ import annotations

import json

import pytest
from fakes.judges import CARBON, RuleJudge

from ragworkbook.judging.judge import Judge
from ragworkbook.judging.metrics import faithfulness
from ragworkbook.judging.prompts import verdict_schema


def cached(tmp_path):
    path = tmp_path / "judge_cache.json"
    faithfulness(CARBON, Judge(RuleJudge(), cache_path=path))
    return path


@pytest.mark.parametrize("change,problem", [
    (lambda e: [e], "is an array, not an object"),
    (lambda e: "yes", "is a string, not an object"),
    (lambda e: {**e, "raw_outputs": "x"}, "has a string as 'raw_outputs'"),
    (lambda e: {**e, "attempts": "two"}, "has a string as 'attempts'"),
])
def test_a_damaged_entry_names_the_file_and_the_entry(tmp_path, change, problem):
    path = cached(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    key = sorted(doc["entries"])[0]
    doc["entries"][key] = change(doc["entries"][key])
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError) as err:
        Judge(RuleJudge(), cache_path=path)
    assert str(err.value) == (f"judge cache {path}: entry {key!r} {problem}; delete that entry (or the file) "
                              "and its judgment is asked again")


def test_a_binary_file_is_a_clear_error(tmp_path):
    path = tmp_path / "judge_cache.json"
    path.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(ValueError, match="is not a UTF-8 text file; delete it"):
        Judge(RuleJudge(), cache_path=path)


def test_entries_another_judge_wrote_meanwhile_are_kept_and_used(tmp_path):
    path = tmp_path / "judge_cache.json"
    one, two = Judge(RuleJudge(), cache_path=path), Judge(RuleJudge(), cache_path=path)
    a = one.call("p", "Question: a?\nContext: a b\nAnswer: a b", verdict_schema())
    b = two.call("p", "Question: b?\nContext: c d\nAnswer: c d", verdict_schema())  # two never read a's
    assert a.ok and b.ok
    entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
    assert set(entries) == {a.key, b.key}  # b's write merged a's entry instead of dropping it
    assert a.key in two._cache  # and two now knows a's answer


@pytest.mark.parametrize("data,problem", [("x", "has a string as 'data'"), (None, "has null as 'data'")])
def test_a_cached_judgment_that_is_not_an_object_is_refused_when_read(tmp_path, data, problem):
    path = cached(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    key = sorted(doc["entries"])[0]
    doc["entries"][key]["data"] = data
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError) as err:
        Judge(RuleJudge(), cache_path=path)
    assert str(err.value).startswith(f"judge cache {path}: entry {key!r} {problem} (a judgment is a JSON "
                                     "object); delete that entry")


def test_a_cached_judgment_that_does_not_fit_its_schema_is_asked_again(tmp_path):
    path = cached(tmp_path)
    first = faithfulness(CARBON, Judge(RuleJudge(), cache_path=path))
    doc = json.loads(path.read_text(encoding="utf-8"))
    for entry in doc["entries"].values():
        entry["data"] = {"foo": 1}  # an object, of no prompt's schema
    path.write_text(json.dumps(doc), encoding="utf-8")
    judge = Judge(RuleJudge(), cache_path=path)
    again = faithfulness(CARBON, judge)  # no TypeError / KeyError: every judgment is asked again
    assert again.score == first.score is not None and judge.n_model_calls == len(doc["entries"])
    healed = json.loads(path.read_text(encoding="utf-8"))["entries"]
    assert all(e["data"] != {"foo": 1} for e in healed.values())  # and the bad entries are replaced


def test_a_cache_nested_too_deeply_is_a_clear_error(tmp_path):
    path = tmp_path / "judge_cache.json"
    path.write_text('{"entries": ' + "[" * 3000 + "]" * 3000 + "}")
    with pytest.raises(ValueError, match="is nested too deeply to be a judge cache; delete it"):
        Judge(RuleJudge(), cache_path=path)
