"""judge-check replays the embedded judge's recorded runs byte for byte (no model needed)."""

from __future__ import annotations

import json

import pytest

from ragworkbook.cli import main
from ragworkbook.judging.check import recording_path


@pytest.fixture(autouse=True)
def replay_only(monkeypatch):
    for name in ("RAGWORKBOOK_BACKEND", "RAGWORKBOOK_RECORD", "RAGWORKBOOK_MODEL"):
        monkeypatch.delenv(name, raising=False)


def _run(capsys, *argv):
    status = main(["judge-check", *argv, "--no-progress"])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("dataset", [
    "wikieval-faithfulness",
    pytest.param("wikieval-answer-relevance", marks=pytest.mark.model),  # answer relevancy embeds with MiniLM
    # context relevance's baseline (the share of context sentences similar to the question) embeds with MiniLM
    pytest.param("wikieval-context-relevance", marks=pytest.mark.model),
    "ragchecker",
])
def test_replayed_judge_check_prints_the_same_bytes_twice(capsys, dataset):
    first = _run(capsys, "--dataset", dataset, "--json")
    second = _run(capsys, "--dataset", dataset, "--json")
    assert first[0] == 0 and first == second
    doc = json.loads(first[1])
    from ragworkbook.judging.check import RECORDED_PAIRS

    # without --limit the bundled recording replays every pair it holds
    assert doc["dataset"] == dataset and doc["n"] == RECORDED_PAIRS[dataset]
    assert doc["judge"].startswith("embedded:SmolLM2")
    assert {"failures", "kappa", "pairwise_accuracy", "parse_failure_rate", "self_consistency"} <= set(doc)
    assert {"value", "low", "high"} <= set(doc["kappa"])
    text = _run(capsys, "--dataset", dataset)
    assert text[0] == 0 and text == _run(capsys, "--dataset", dataset)
    assert "(replayed; judge live with --backend embedded" in text[1]


def test_every_recorded_pair_replays():
    from ragworkbook.judging.check import RECORDED_PAIRS, judge_check, recording_path
    from ragworkbook.judging.judge import Judge
    from ragworkbook.llm.replay import ReplayGenerator

    ff = judge_check("ff", Judge(ReplayGenerator(recording_path("ff"))),
                     limit=RECORDED_PAIRS["wikieval-faithfulness"])
    assert ff.n == 30 and ff.stats["self_consistency"]["pairs"] == 3
    rc = judge_check("ragchecker", Judge(ReplayGenerator(recording_path("ragchecker"))),
                     limit=RECORDED_PAIRS["ragchecker"])
    assert rc.n == 24 and rc.stats["position_bias"]["decisive"] > 0


def test_asking_the_bundled_recording_for_more_than_it_holds_says_how_many_it_holds(capsys):
    for limit, asked in (("25", "asks for 25 pairs"), ("0", "asks for every pair")):
        status, out, err = _run(capsys, "--dataset", "ragchecker", "--limit", limit, "--repeats", "0")
        assert status == 2 and not out
        assert "the bundled recording of the embedded judge on ragchecker holds 24 of its pairs" in err
        assert asked in err and "give --limit 24 or less, or judge live" in err


def test_a_recording_of_your_own_that_misses_says_how_to_record(capsys, tmp_path):
    import shutil

    mine = tmp_path / "mine.json"
    shutil.copy(recording_path("ragchecker"), mine)
    status, _, err = _run(capsys, "--dataset", "ragchecker", "--limit", "25", "--repeats", "0",
                          "--recording", str(mine))
    assert status == 1 and "strict replay: no recorded answer" in err and "RAGWORKBOOK_RECORD=1" in err


def test_the_threshold_is_a_score(capsys):
    for bad in ("nan", "-0.5", "1.5"):
        status, _, err = _run(capsys, "--dataset", "ff", "--threshold", bad)
        assert status == 2 and "--threshold must be a score between 0 and 1" in err, err


def test_out_saves_the_card_and_word_support_needs_no_model(capsys, tmp_path):
    out = tmp_path / "ws.json"
    status, text, _ = _run(capsys, "--dataset", "ff", "--judge", "word-support", "--out", str(out))
    assert status == 0 and f"saved to {out}" in text and "judge: deterministic:word_support" in text
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["card"]["metric"] == "word_support" and doc["card"]["n_pairs"] == 50
    assert doc["card"]["baseline"]["name"] == "word overlap"
    status, _, err = _run(capsys, "--dataset", "ff", "--judge", "word-support", "--backend", "embedded")
    assert status == 2 and "--backend choose an LLM judge; --judge word-support uses none" in err


def test_bad_dataset_and_limit(capsys):
    assert _run(capsys, "--dataset", "nope")[0] == 2
    status, _, err = _run(capsys, "--dataset", "ff", "--limit", "-3")
    assert status == 2 and "--limit must be >= 0" in err
