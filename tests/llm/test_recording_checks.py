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
from ragworkbook.llm import ReplayMissError, get_generator
from ragworkbook.llm.base import build_messages, merge_options, request_key
from ragworkbook.llm.replay import (
    FORMAT,
    FORMAT_1,
    NOTEBOOK_RECORD_HINT,
    SCRIPT_RECORD_HINT,
    Recording,
    RecordingGenerator,
    ReplayGenerator,
    bundled_dir,
    entry_checksum,
    is_bundled,
    migrate,
)

pytestmark = pytest.mark.usefixtures("clean_env")

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def recorded(tmp_path, name="run.json"):
    path = tmp_path / name
    rec = RecordingGenerator(Echo(), path)
    rec.chat("first question")
    rec.chat("count me", schema=SCHEMA)
    return path


def as_format_1(path, checksums=True):
    """Rewrite the recording made by :func:`recorded` as the recorder wrote it before format 2: each
    entry with its request (messages, schema) and raw outputs, and format 1's checksum (or none)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    entries = {}
    for prompt, schema in (("first question", None), ("count me", SCHEMA)):
        messages = build_messages(prompt)
        key = request_key(messages, merge_options(None), schema, "echo-1")
        e = {k: v for k, v in doc["entries"][key].items() if k != "checksum"}
        e.update(messages=messages, schema=schema, raw_outputs=e.get("raw_outputs", [e["text"]]))
        if checksums:
            e["checksum"] = entry_checksum(e)
        entries[key] = e
    path.write_text(json.dumps({"format": FORMAT_1, "entries": entries}, sort_keys=True, indent=1,
                               ensure_ascii=False) + "\n", encoding="utf-8")
    return entries


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


def test_a_format_1_file_replays_the_same_answers_and_becomes_format_2_when_recorded_into(tmp_path):
    path = recorded(tmp_path)
    replayed = [ReplayGenerator(path).chat("first question"),
                ReplayGenerator(path).chat("count me", schema=SCHEMA)]
    as_format_1(path)
    rec = Recording(path)
    assert rec.source_format == 1 and rec.unchecked() == 0
    assert all("messages" not in e and "schema" not in e for e in rec.entries.values())  # converted on read
    again = [ReplayGenerator(path).chat("first question"),
             ReplayGenerator(path).chat("count me", schema=SCHEMA)]
    assert again == replayed and [repr(g) for g in again] == [repr(g) for g in replayed]
    RecordingGenerator(Echo(), path).chat("first question")  # the same answer: the file becomes format 2
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == FORMAT and "first question" not in path.read_text(encoding="utf-8")
    assert all(e["checksum"] == entry_checksum(e, k) for k, e in doc["entries"].items())


def test_an_edited_format_1_answer_is_refused_not_converted(tmp_path):
    path = recorded(tmp_path)
    as_format_1(path)
    key = edit(path, lambda e: {**e, "text": e["text"] + " (improved by hand)"})
    with pytest.raises(ValueError, match=f"entry {key} does not match its checksum"):
        ReplayGenerator(path)
    with pytest.raises(ValueError, match="does not match its checksum"):
        migrate(path)


def test_format_1_entries_recorded_before_checksums_load_and_get_one_when_re_recorded(tmp_path):
    path = recorded(tmp_path)
    entries = as_format_1(path, checksums=False)  # as in the files recorded before checksums
    stamps = {k: e["recorded_at"] for k, e in entries.items()}
    assert Recording(path).unchecked() == 2
    assert ReplayGenerator(path).chat("first question").text.startswith("noitseuq tsrif")
    rec = RecordingGenerator(Echo(), path)  # re-recording: the same answers
    rec.chat("first question")
    rec.chat("count me", schema=SCHEMA)
    after = json.loads(path.read_text(encoding="utf-8"))["entries"]
    assert Recording(path).unchecked() == 0
    assert {k: e["recorded_at"] for k, e in after.items()} == stamps  # answers and times unchanged


def test_a_checksum_covers_the_request_key(tmp_path):
    """Format 2's checksum includes the key: an answer moved under another request's key is caught."""
    path = recorded(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    a, b = sorted(doc["entries"])
    doc["entries"][a], doc["entries"][b] = doc["entries"][b], doc["entries"][a]
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match="does not match its checksum"):
        Recording(path)


def test_a_recorded_judge_answer_that_breaks_its_schema_is_a_counted_failure(tmp_path):
    """The entry parses as JSON but not as the schema the request asks (e.g. edited before checksums):
    the judgment fails with the file and the entry named, the run goes on."""
    path = tmp_path / "judge.json"
    faithfulness(CARBON, Judge(RecordingGenerator(RuleJudge(), path)))
    doc = json.loads(path.read_text(encoding="utf-8"))
    key, entry = next((k, e) for k, e in doc["entries"].items() if "verdicts" in e["text"])
    entry["text"] = json.dumps({"verdicts": "all good"})
    entry["checksum"] = entry_checksum(entry, key)  # a checksum that fits (the answer came so)
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = faithfulness(CARBON, Judge(ReplayGenerator(path)))
    assert (r.outcome, r.reason) == ("failed", "output_parse_error")
    said = f"recording {path}, entry {key}: the recorded answer does not match the JSON schema"
    assert said in r.error


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


# --- bundled recordings: format 2, a checksum in every entry ---------------------------------------------
def test_every_bundled_recording_is_format_2_with_a_checksum_in_every_entry():
    files = sorted(bundled_dir().glob("*.json"))
    assert len(files) >= 13
    total = 0
    for path in files:
        rec = Recording(path)  # a missing checksum would raise here
        assert rec.source_format == 2 and rec.unchecked() == 0, path.name
        assert json.loads(path.read_text(encoding="utf-8"))["format"] == FORMAT, path.name
        assert all(e["checksum"] == entry_checksum(e, k) for k, e in rec.entries.items()), path.name
        assert not any("messages" in e or "schema" in e for e in rec.entries.values()), path.name
        total += len(rec)
    assert total >= 1178


@pytest.mark.parametrize("bundled", [False, True])
def test_an_entry_without_its_checksum_is_an_error_wherever_the_file_is(tmp_path, monkeypatch, bundled):
    """Issue 30, item 10: a copy of a recording outside the package (under $RAGWORKBOOK_DATA, say) with
    an edited answer and its checksum deleted is refused too, not replayed silently."""
    path = recorded(tmp_path)
    key = edit(path, lambda e: {**{k: v for k, v in e.items() if k != "checksum"}, "text": "edited"})
    if bundled:
        monkeypatch.setattr("ragworkbook.llm.replay.bundled_dir", lambda: tmp_path)
    assert is_bundled(path) == bundled
    with pytest.raises(ValueError) as err:
        get_generator(recording=path)
    assert str(err.value).startswith(f"recording {path}: entry {key} has no checksum; every entry of a "
                                     "format-2 recording carries one")


def test_a_bundled_format_1_entry_without_its_checksum_is_an_error_a_users_is_not(tmp_path, monkeypatch):
    path = recorded(tmp_path)
    as_format_1(path, checksums=False)
    assert not is_bundled(path) and Recording(path).unchecked() == 2  # a recording of one's own: loads
    monkeypatch.setattr("ragworkbook.llm.replay.bundled_dir", lambda: tmp_path)
    with pytest.raises(ValueError) as err:
        ReplayGenerator(path)
    assert "has no checksum; every entry of a bundled recording carries one" in str(err.value)
    assert f"python scripts/migrate_recordings.py {path}" in str(err.value)


def test_migrate_rewrites_a_format_1_file_without_its_prompts(tmp_path):
    path = recorded(tmp_path)
    format_2 = path.read_bytes()
    as_format_1(path)
    assert "first question" in path.read_text(encoding="utf-8")
    assert migrate(path) == (1, 0)
    assert path.read_bytes() == format_2  # exactly what the recorder writes
    assert migrate(path) == (2, 0) and path.read_bytes() == format_2  # idempotent
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]  # no lock file left


def test_the_migration_script_runs_on_given_files(tmp_path, capsys):
    import importlib.util

    from ragworkbook.paths import repo_root

    spec = importlib.util.spec_from_file_location("migrate_recordings",
                                                  repo_root() / "scripts" / "migrate_recordings.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    path = recorded(tmp_path)
    as_format_1(path, checksums=False)
    assert script.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path.name}: 2 entries, format 1 -> 2, 2 entries given the checksum they lacked" in out
    assert Recording(path).source_format == 2 and "first question" not in path.read_text(encoding="utf-8")
    edit(path, lambda e: {**e, "text": "edited"})
    assert script.main([str(path)]) == 1
    assert "does not match its checksum" in capsys.readouterr().err


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
    assert "This prompt was never recorded (a recording keeps only the hash of each request" in str(
        err.value) and "options changed" not in str(err.value)
    assert f"in {path} (2 entries; request sha256 " in str(err.value)
    with pytest.raises(ReplayMissError) as err:
        rep.chat("first question", options={"num_predict": 7})
    assert "No request was recorded with these options (the nearest: option num_predict: 256 recorded, 7 " \
           "requested): the options changed" in str(err.value)
    with pytest.raises(ReplayMissError) as err:
        ReplayGenerator(path, model="another:7b").chat("first question")
    assert "The recording holds answers of 'echo-1', not of 'another:7b'" in str(err.value)
