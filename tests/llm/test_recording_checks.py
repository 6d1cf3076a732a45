"""Recordings that are damaged, edited or replayed where they do not fit: one-line errors naming the
file and the entry, counted failures where a judgment failed, and hints that fit where they are shown."""

from __future__ import annotations

import json
import sys
import types

import pytest
from fakes.generators import Echo
from fakes.judges import CARBON, RuleJudge

from ragworkbook.cli import main
from ragworkbook.judging.judge import Judge
from ragworkbook.judging.metrics import faithfulness
from ragworkbook.llm import OutputParseError, ReplayMissError, get_generator
from ragworkbook.llm.replay import (
    NOTEBOOK_RECORD_HINT,
    SCRIPT_RECORD_HINT,
    Recording,
    RecordingGenerator,
    ReplayGenerator,
    add_checksums,
    bundled_dir,
    entry_checksum,
    is_bundled,
)

pytestmark = pytest.mark.usefixtures("clean_env")

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def recorded(tmp_path, name="run.json"):
    path = tmp_path / name
    rec = RecordingGenerator(Echo(), path)
    rec.chat("first question")
    rec.chat("count me", schema=SCHEMA)
    return path


def edit(path, change):
    doc = json.loads(path.read_text(encoding="utf-8"))
    key = sorted(doc["entries"])[0]
    doc["entries"][key] = change(doc["entries"][key])
    path.write_text(json.dumps(doc), encoding="utf-8")
    return key


@pytest.mark.parametrize("change,problem", [
    (lambda e: {**e, "error": "boom"}, 'has a string as "error"; a recorded failure is {"type": ..., '
                                       '"message": "..."}'),
    (lambda e: [e], "is an array, not an object"),
    (lambda e: {k: v for k, v in e.items() if k != "text"}, 'has no "text" (the answer) and no "error"'),
    (lambda e: {**e, "text": 42}, 'has a number as "text", not a string'),
    (lambda e: {**e, "text": e["text"] + " (improved by hand)"}, "does not match its checksum: it was "
                                                                 "changed after it was recorded"),
])
def test_a_damaged_or_edited_entry_names_the_file_and_the_entry(tmp_path, change, problem):
    path = recorded(tmp_path)
    key = edit(path, change)
    with pytest.raises(ValueError) as err:
        ReplayGenerator(path)
    msg = str(err.value)
    assert msg.startswith(f"recording {path}: entry {key} ") and problem in msg and "re-record it" in msg


def test_the_cli_says_it_in_one_line_with_exit_2(tmp_path, capsys):
    path = recorded(tmp_path)
    key = edit(path, lambda e: {**e, "error": "boom"})
    assert main(["reproduce", "--only", "B7", "--recording", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ragworkbook reproduce: error: recording {path}: entry {key} has a string")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_entries_recorded_before_checksums_are_accepted_and_get_one_when_re_recorded(tmp_path):
    path = recorded(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    for e in doc["entries"].values():
        assert e["checksum"] == entry_checksum(e)
        del e["checksum"]  # as in the files recorded before checksums
    path.write_text(json.dumps(doc), encoding="utf-8")
    stamps = {k: e["recorded_at"] for k, e in doc["entries"].items()}
    assert Recording(path).unchecked() == 2
    assert ReplayGenerator(path).chat("first question").text.startswith("noitseuq tsrif")
    rec = RecordingGenerator(Echo(), path)  # re-recording: the same answers
    rec.chat("first question")
    rec.chat("count me", schema=SCHEMA)
    after = json.loads(path.read_text(encoding="utf-8"))["entries"]
    assert Recording(path).unchecked() == 0
    assert {k: e["recorded_at"] for k, e in after.items()} == stamps  # answers and times unchanged


def test_a_recorded_judge_answer_that_breaks_its_schema_is_a_counted_failure(tmp_path):
    """The entry parses as JSON but not as the schema the request asks (e.g. edited before checksums):
    the judgment fails with the file and the entry named, the run goes on."""
    path = tmp_path / "judge.json"
    faithfulness(CARBON, Judge(RecordingGenerator(RuleJudge(), path)))
    doc = json.loads(path.read_text(encoding="utf-8"))
    key, entry = next((k, e) for k, e in doc["entries"].items() if "verdicts" in e["text"])
    entry["text"] = json.dumps({"verdicts": "all good"})
    del entry["checksum"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(OutputParseError) as err:
        gen = ReplayGenerator(path)
        gen.chat(entry["messages"], schema=entry["schema"], options=entry["options"])
    said = f"recording {path}, entry {key}: the recorded answer does not match the JSON schema"
    assert said in str(err.value)
    r = faithfulness(CARBON, Judge(ReplayGenerator(path)))
    assert (r.outcome, r.reason) == ("failed", "output_parse_error")
    assert str(path) in r.error and key in r.error


def test_several_models_say_what_works_in_a_strict_replay(tmp_path):
    path = recorded(tmp_path)
    RecordingGenerator(Echo("echo-2"), path).chat("hi")
    with pytest.raises(ValueError) as err:
        get_generator(recording=path)
    msg = str(err.value)
    assert 'model="echo-1"' in msg and "--model echo-1 on the command line" in msg
    assert "RAGWORKBOOK_MODEL does not apply" in msg and "or set RAGWORKBOOK_MODEL" not in msg
    assert get_generator(recording=path, model="echo-2").chat("hi").model == "echo-2"


def test_a_replay_miss_hint_fits_where_it_is_shown(tmp_path, capsys, monkeypatch):
    path = recorded(tmp_path)
    # a script: the environment variables, no notebook
    with pytest.raises(ReplayMissError) as err:
        ReplayGenerator(path).chat("never recorded")
    assert SCRIPT_RECORD_HINT in str(err.value) and "nbconvert" not in str(err.value)
    # inside a Jupyter kernel: the notebook command
    class ZMQInteractiveShell:  # what get_ipython() returns in a Jupyter kernel
        pass

    kernel = types.SimpleNamespace(get_ipython=ZMQInteractiveShell)
    with monkeypatch.context() as m, pytest.raises(ReplayMissError) as err:
        m.setitem(sys.modules, "IPython", kernel)
        ReplayGenerator(path).chat("never recorded")
    assert NOTEBOOK_RECORD_HINT in str(err.value)
    # the command line: this command, with the variable and a live backend
    empty = tmp_path / "none.json"
    assert main(["reproduce", "--only", "B7", "--recording", str(empty), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "nbconvert" not in err and "notebook" not in err
    assert (f"RAGWORKBOOK_RECORD=1 ragworkbook reproduce --only B7 --recording {empty} --no-progress "
            "--backend embedded") in err


# --- bundled recordings: a checksum in every entry ---------------------------------------------------------
def test_every_bundled_recording_has_a_checksum_in_every_entry():
    files = sorted(bundled_dir().glob("*.json"))
    assert len(files) >= 13
    total = 0
    for path in files:
        rec = Recording(path)  # bundled: a missing checksum would raise here
        assert rec.require_checksums and rec.unchecked() == 0, path.name
        assert all(e["checksum"] == entry_checksum(e) for e in rec.entries.values()), path.name
        total += len(rec)
    assert total >= 1178


def test_a_bundled_entry_without_its_checksum_is_an_error_a_users_is_not(tmp_path, monkeypatch):
    path = recorded(tmp_path)
    key = edit(path, lambda e: {k: v for k, v in e.items() if k != "checksum"})
    assert not is_bundled(path) and Recording(path).unchecked() == 1  # a recording of one's own: loads
    monkeypatch.setattr("ragworkbook.llm.replay.bundled_dir", lambda: tmp_path)
    assert is_bundled(path)
    with pytest.raises(ValueError) as err:
        ReplayGenerator(path)
    assert str(err.value).startswith(f"recording {path}: entry {key} has no checksum; every entry of a "
                                     "bundled recording carries one")
    assert "scripts/checksum_recordings.py" in str(err.value)


def test_an_edited_answer_whose_checksum_was_deleted_is_caught_in_a_bundled_file(tmp_path, monkeypatch):
    """The case of the issue: the answer edited (token F1 0 -> 1.0) and its checksum key deleted."""
    path = recorded(tmp_path)
    edit(path, lambda e: {**{k: v for k, v in e.items() if k != "checksum"}, "text": "edited"})
    monkeypatch.setattr("ragworkbook.llm.replay.bundled_dir", lambda: tmp_path)
    with pytest.raises(ValueError, match="has no checksum"):
        get_generator(recording=path)


def test_add_checksums_adds_only_checksum_lines(tmp_path):
    path = recorded(tmp_path)
    rec = Recording(path)
    without = {k: {f: v for f, v in e.items() if f != "checksum"} for k, e in rec.entries.items()}
    old = json.dumps({"entries": without, "format": "ragworkbook-recording/1"}, sort_keys=True, indent=1,
                     ensure_ascii=False) + "\n"
    path.write_text(old, encoding="utf-8")
    assert add_checksums(path) == 2
    new = path.read_text(encoding="utf-8")
    added = [line for line in new.splitlines() if line not in old.splitlines()]
    assert len(added) == 2 and all(line.strip().startswith('"checksum": "sha256:') for line in added)
    assert [line for line in new.splitlines() if '"checksum"' not in line] == old.splitlines()
    assert add_checksums(path) == 0 and path.read_text(encoding="utf-8") == new  # idempotent
    assert Recording(path, require_checksums=True).unchecked() == 0


def test_add_checksums_refuses_a_file_formatted_by_hand(tmp_path):
    path = recorded(tmp_path)
    path.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8"))), encoding="utf-8")  # one line
    before = path.read_bytes()
    with pytest.raises(ValueError, match="not laid out as ragworkbook writes recordings"):
        add_checksums(path)
    assert path.read_bytes() == before


def test_the_checksum_script_runs_on_given_files(tmp_path, capsys):
    import importlib.util

    from ragworkbook.paths import repo_root

    spec = importlib.util.spec_from_file_location("checksum_recordings",
                                                  repo_root() / "scripts" / "checksum_recordings.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    path = recorded(tmp_path)
    assert script.main([str(path)]) == 0
    assert f"{path.name}: 2 entries, 0 checksums added" in capsys.readouterr().out


def test_a_recording_with_a_bom_or_nested_too_deep(tmp_path):
    path = recorded(tmp_path)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert len(Recording(path)) == 2
    deep = tmp_path / "deep.json"
    nested = "[" * 5000 + "]" * 5000
    deep.write_text('{"format": "ragworkbook-recording/1", "entries": {"k": ' + nested + "}}")
    with pytest.raises(ValueError, match="nested too deeply"):
        Recording(deep)


# --- what a replay miss says --------------------------------------------------------------------------------
def test_a_replay_miss_says_what_most_likely_changed(tmp_path):
    path = recorded(tmp_path)
    rep = ReplayGenerator(path)
    with pytest.raises(ReplayMissError) as err:
        rep.chat("a question never asked")
    assert "This prompt was never recorded: a question that is not in the recording, other contexts" in str(
        err.value) and "options changed" not in str(err.value)
    with pytest.raises(ReplayMissError) as err:
        rep.chat("first question", options={"num_predict": 7})
    assert "The same prompt is recorded with other options or another JSON schema" in str(err.value)
    with pytest.raises(ReplayMissError) as err:
        ReplayGenerator(path, model="another:7b").chat("first question")
    assert "The recording holds answers of 'echo-1', not of 'another:7b'" in str(err.value)
