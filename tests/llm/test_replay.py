"""Record and replay: byte-for-byte answers, strict misses that say what changed, atomic stable files,
and how get_generator chooses between replay, record and live."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from fakes.generators import Echo

from ragworkbook.llm import (
    OutputParseError,
    ReplayMissError,
    get_generator,
)
from ragworkbook.llm.base import build_messages, merge_options, request_key
from ragworkbook.llm.replay import FORMAT, Recording, RecordingGenerator, ReplayGenerator

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

pytestmark = pytest.mark.usefixtures("clean_env")


def record_run(path, live=None):
    rec = RecordingGenerator(live or Echo(), path)
    out = [
        rec.chat("What is 2+2?", system="Be brief."),
        rec.chat("count me", schema=SCHEMA, options={"num_predict": 8}),
        asyncio.run(rec.achat("async question", options={"num_predict": 5})),
    ]
    return rec, out


def replay_run(path):
    rep = ReplayGenerator(path)
    return [
        rep.chat("What is 2+2?", system="Be brief."),
        rep.chat("count me", schema=SCHEMA, options={"num_predict": 8}),
        asyncio.run(rep.achat("async question", options={"num_predict": 5})),
    ]


def test_replay_reproduces_the_recorded_run_exactly(tmp_path):
    path = tmp_path / "run.json"
    _, live = record_run(path)
    replayed = replay_run(path)
    assert replayed == live  # text, backend, model, data, key, attempts, raw outputs
    assert [repr(g) for g in replayed] == [repr(g) for g in live]
    assert all(g.replayed for g in replayed) and not any(g.replayed for g in live)
    assert replayed[0].backend == "echo" and replayed[1].data == {"n": 8}


@pytest.mark.model
def test_replay_with_the_real_embedded_model(tmp_path):
    path = tmp_path / "emb.json"
    live = get_generator(backend="embedded", announce=False)
    rec = RecordingGenerator(live, path)
    a = rec.chat("Name a fruit.", options={"num_predict": 8})
    b = ReplayGenerator(path).chat("Name a fruit.", options={"num_predict": 8})
    assert b == a and b.text.encode() == a.text.encode() and b.model == "SmolLM2-135M-Instruct.Q4_1"


def test_file_format_is_sorted_and_complete(tmp_path):
    path = tmp_path / "run.json"
    record_run(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == FORMAT and len(doc["entries"]) == 3
    assert list(doc["entries"]) == sorted(doc["entries"])
    entry = next(e for e in doc["entries"].values() if e["options"]["num_predict"] == 8)
    # format 2: the request is only its hash (the key); raw_outputs only when they are not [text]
    assert set(entry) == {"backend", "model", "options", "text", "attempts", "usage", "recorded_at",
                          "checksum"}
    assert entry["options"] == {"num_predict": 8, "seed": 0, "temperature": 0.0}
    # Echo reports no token counts: recorded as unknown, never as a guess; the seconds are measured
    assert entry["usage"]["prompt_tokens"] is None and entry["usage"]["completion_tokens"] is None
    assert entry["usage"]["seconds"] >= 0
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def test_rerecording_the_same_run_is_byte_identical(tmp_path):
    path = tmp_path / "run.json"
    record_run(path)
    before = path.read_bytes()
    mtime = os.stat(path).st_mtime_ns
    record_run(path)  # a new process would see the same: entries are unchanged, nothing is rewritten
    assert path.read_bytes() == before
    assert os.stat(path).st_mtime_ns == mtime


def test_changed_answer_is_rewritten_with_a_new_entry(tmp_path):
    path = tmp_path / "run.json"
    record_run(path)
    RecordingGenerator(Echo(), path).chat("What is 2+2?", system="Be brief, please.")
    assert len(Recording(path)) == 4  # old entries are kept (delete the file to start afresh)


def test_changed_user_message_fails_with_a_message_that_says_so(tmp_path):
    """A miss names the file, its entry count, the request's hash and the command that records it; the
    recording holds no prompt, so the message quotes none."""
    path = tmp_path / "run.json"
    record_run(path)
    with pytest.raises(ReplayMissError) as ei:
        ReplayGenerator(path).chat("What is 2+3?", system="Be brief.")
    msg = str(ei.value)
    key = request_key(build_messages("What is 2+3?", "Be brief."), merge_options(None), None,
                      "echo-1")
    assert f"no recorded answer for this request in {path} (3 entries; request sha256 {key})" in msg
    assert "This prompt was never recorded" in msg and "2+2" not in msg and "2+3" not in msg
    assert "RAGWORKBOOK_RECORD=1" in msg


def test_changed_option_is_named(tmp_path):
    path = tmp_path / "run.json"
    record_run(path)
    rep = ReplayGenerator(path)
    said = (r"No request was recorded with these options \(the nearest: option num_predict: \d+ recorded, "
            r"64 requested\)")
    with pytest.raises(ReplayMissError, match=said):
        rep.chat("What is 2+2?", system="Be brief.", options={"num_predict": 64})
    with pytest.raises(ReplayMissError, match=r"This prompt was never recorded"):
        rep.chat("What is 2+2?", system="Be very brief.")
    with pytest.raises(ReplayMissError, match=r"another JSON schema"):
        rep.chat("count me", schema={**SCHEMA, "additionalProperties": False}, options={"num_predict": 8})


def test_missing_recording_file_says_how_to_record(tmp_path):
    with pytest.raises(ReplayMissError, match=r"does not exist; record it .*RAGWORKBOOK_RECORD=1"):
        ReplayGenerator(tmp_path / "none.json").chat("hi")


def test_parse_failures_are_recorded_and_replayed(tmp_path):
    path = tmp_path / "run.json"
    rec = RecordingGenerator(Echo(), path)
    with pytest.raises(OutputParseError) as live_err:
        rec.chat("bad request", schema=SCHEMA)
    with pytest.raises(OutputParseError) as replay_err:
        ReplayGenerator(path).chat("bad request", schema=SCHEMA)
    assert str(replay_err.value) == str(live_err.value)
    assert replay_err.value.raw_outputs == live_err.value.raw_outputs == ["not json"] * 3


@pytest.mark.parametrize("where", ["fsync", "replace"])
def test_failed_write_leaves_the_old_file(tmp_path, monkeypatch, where):
    path = tmp_path / "run.json"
    record_run(path)
    before = path.read_bytes()
    rec = RecordingGenerator(Echo(), path)

    def crash(*args):
        raise OSError(f"disk full (simulated in os.{where}, part of the new file written)")

    monkeypatch.setattr(os, where, crash)
    with pytest.raises(OSError, match="disk full"):
        rec.chat("a new question")
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]  # no temporary file left behind
    assert len(rec.recording) == 3  # the in-memory view did not move ahead of the file


def test_corrupt_or_foreign_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON.*delete it and re-record"):
        ReplayGenerator(bad)
    bad.write_text('{"entries": {}}', encoding="utf-8")
    with pytest.raises(ValueError, match="is not a ragworkbook recording"):
        ReplayGenerator(bad)


def test_replay_model_comes_from_the_file(tmp_path):
    path = tmp_path / "run.json"
    record_run(path, Echo("echo-7"))
    assert ReplayGenerator(path).model == "echo-7"
    RecordingGenerator(Echo("echo-8"), path).chat("hi")
    with pytest.raises(ValueError, match="several models \\(echo-7, echo-8\\); choose one: .*model="):
        ReplayGenerator(path)
    assert ReplayGenerator(path, model="echo-8").chat("hi").model == "echo-8"


# --- get_generator: which mode --------------------------------------------------------
def test_recording_alone_means_strict_replay_and_prints_nothing(tmp_path, capsys):
    path = tmp_path / "run.json"
    record_run(path)
    gen = get_generator(recording=path)
    assert isinstance(gen, ReplayGenerator)
    assert capsys.readouterr().out == ""


def test_record_env_uses_the_live_backend_and_records(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGWORKBOOK_RECORD", "1")
    monkeypatch.setenv("RAGWORKBOOK_BACKEND", "embedded")
    gen = get_generator(recording=tmp_path / "new.json")
    assert isinstance(gen, RecordingGenerator) and gen.live.backend == "embedded"
    assert capsys.readouterr().out == ""  # same notebook output in record and replay mode


def test_backend_env_without_record_runs_live_and_leaves_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGWORKBOOK_BACKEND", "embedded")
    gen = get_generator(recording=tmp_path / "x.json", announce=False)
    assert gen.backend == "embedded" and not isinstance(gen, (RecordingGenerator, ReplayGenerator))


def test_replay_backend_needs_a_recording():
    with pytest.raises(ValueError, match=r"needs a recording: get_generator\(recording=PATH\)"):
        get_generator(backend="replay")


def test_unknown_backend_is_rejected(monkeypatch):
    monkeypatch.setenv("RAGWORKBOOK_BACKEND", "gpt4")
    said = "unknown backend 'gpt4'; choose one of: auto, ollama, openai, embedded, replay"
    with pytest.raises(ValueError, match=said):
        get_generator()


def test_replay_ignores_the_live_model_env_but_not_the_argument(tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    record_run(path, Echo("echo-7"))
    monkeypatch.setenv("RAGWORKBOOK_MODEL", "qwen3:4b")  # a learner's setting for live runs
    assert get_generator(recording=path).model == "echo-7"
    with pytest.raises(ReplayMissError, match="holds answers of 'echo-7', not of 'other'"):
        get_generator(recording=path, model="other").chat("What is 2+2?", system="Be brief.")


def test_modes_and_reprs(tmp_path):
    path = tmp_path / "07_x.json"
    rec, _ = record_run(path)
    rep = ReplayGenerator(path)
    assert (rec.mode, rep.mode, Echo().mode) == ("record", "replay", "live")
    assert (rec.backend, rep.backend) == ("echo", "replay") and rep.model == rec.model == "echo-1"
    assert repr(rep) == "<ReplayGenerator 07_x.json model='echo-1'>"
    assert repr(rec) == "<RecordingGenerator echo:echo-1 -> 07_x.json>"
