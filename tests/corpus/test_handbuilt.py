"""A hand-built eval set grown by weekly merges (ragworkbook.corpus.handbuilt)."""

from __future__ import annotations

import json

import pytest

from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.corpus.handbuilt import (
    HandItem,
    content_hash,
    find_leaks,
    load_hand_set,
    merge_batch,
    normalize_question,
    question_similarity,
    save_hand_set,
    to_eval_set,
)
from ragworkbook.corpus.jsonfile import DatasetError


def item(i, q, ref="a reference answer", added="2026-11-02"):
    return HandItem(i, q, ref, source="support inbox", added=added, author="ana", evidence="p3")


WEEK1 = [item("h1", "How many attention heads does the base model use?"),
         item("h2", "What optimizer trains the model?")]


def test_normalisation_and_similarity():
    assert normalize_question("  What  OPTIMIZER, trains the model?") == "what optimizer trains the model"
    assert normalize_question("Café?") == "cafe"
    assert question_similarity("What optimizer trains the model?", "what optimizer trains the model") == 1.0
    assert question_similarity("What optimizer trains the model?", "What GPUs were used?") < 0.6


def test_merge_adds_new_items_and_records_the_version():
    first = merge_batch([], WEEK1, version="v1", date="2026-11-02")
    assert [i.id for i in first.added] == ["h1", "h2"] and first.record.size == 2
    batch = [item("h3", "what optimizer trains the model"),                  # exact after normalising
             item("h4", "How many attention heads does the base model have?"),  # near duplicate
             item("h1", "A new question under a used id?"),                   # clash
             item("h5", "What dropout rate is used?"),
             item("h6", "What dropout rate is used ?")]                       # duplicate within the batch
    second = merge_batch(first.items, batch, version="v2", date="2026-11-09", history=first.history)
    assert [i.id for i in second.added] == ["h5"]
    assert second.duplicates == [("h3", "h2"), ("h6", "h5")]
    assert [(n, old) for n, old, _ in second.near_duplicates] == [("h4", "h1")]
    assert second.near_duplicates[0][2] >= 0.85
    assert second.clashes == ["h1"]
    rec = second.record
    assert (rec.version, rec.added, rec.duplicates, rec.near_duplicates, rec.clashes, rec.size) == (
        "v2", ("h5",), ("h3", "h6"), ("h4",), ("h1",), 3)
    assert rec.sha256 == content_hash(second.items) and [r.version for r in second.history] == ["v1", "v2"]


def test_a_near_duplicate_a_person_accepts_is_added():
    res = merge_batch(WEEK1, [item("h4", "How many attention heads does the base model have?")],
                      version="v2", date="2026-11-09", accept=["h4"])
    assert [i.id for i in res.added] == ["h4"] and not res.near_duplicates
    with pytest.raises(ValueError, match="accept names ids that are not in the batch: zz"):
        merge_batch(WEEK1, [], version="v2", date="2026-11-09", accept=["zz"])


def test_the_hash_changes_with_any_edit():
    edited = [WEEK1[0], HandItem(**{**WEEK1[1].to_dict(), "reference": "Adam.", "tags": ()})]
    assert content_hash(WEEK1) != content_hash(edited)


def test_save_load_round_trip_and_the_eval_set_loader_reads_it(tmp_path):
    res = merge_batch([], WEEK1, version="v1", date="2026-11-02")
    path = save_hand_set(tmp_path / "hand.json", res.items, res.history, name="hand")
    items, history = load_hand_set(path)
    assert items == res.items and history == res.history
    es = load_eval_set(path)
    assert es.ids == ["h1", "h2"] and es.name == "hand"
    assert to_eval_set(items).questions == es.questions


def test_a_file_edited_after_its_merge_is_refused(tmp_path):
    res = merge_batch([], WEEK1, version="v1", date="2026-11-02")
    path = save_hand_set(tmp_path / "hand.json", res.items, res.history, name="hand")
    doc = json.loads(path.read_text())
    doc["items"][0]["reference"] = "changed by hand"
    path.write_text(json.dumps(doc))
    with pytest.raises(DatasetError, match="edited after its last merge"):
        load_hand_set(path)
    path.write_text(json.dumps({"items": []}))
    with pytest.raises(DatasetError, match="not a hand-built eval set"):
        load_hand_set(path)
    with pytest.raises(ValueError, match="not the ones the last history record describes"):
        save_hand_set(tmp_path / "x.json", WEEK1[:1], res.history, name="x")


def test_leaks_into_the_prompt_are_found():
    prompt = {"few-shot": "Q: How many attention heads does the base model use? A: 8",
              "system": "You answer questions about a paper."}
    leaks = find_leaks(WEEK1, prompt, n=5)
    assert [(lk.item_id, lk.field, lk.text_name) for lk in leaks] == [("h1", "question", "few-shot")]
    assert leaks[0].words == "how many attention heads does"
    assert find_leaks(WEEK1, prompt, n=12) == []
    with pytest.raises(ValueError, match="whole number >= 2"):
        find_leaks(WEEK1, prompt, n=1)


def test_item_fields_are_checked():
    with pytest.raises(ValueError, match="'added' is an ISO date"):
        item("x", "q?", added="last week")
    with pytest.raises(ValueError, match="field 'source' must be a non-empty string"):
        HandItem("x", "q?", "r", source=" ", added="2026-11-02", author="ana")
    with pytest.raises(ValueError, match="unknown fields \\['colour'\\]"):
        HandItem.from_mapping({**WEEK1[0].to_dict(), "colour": "red"})
    with pytest.raises(ValueError, match="version 'v1' is already in the history"):
        first = merge_batch([], WEEK1, version="v1", date="2026-11-02")
        merge_batch(first.items, [], version="v1", date="2026-11-03", history=first.history)
