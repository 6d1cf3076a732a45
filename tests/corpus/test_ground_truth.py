"""Keyword ground truth and its diagnostics (no match, too many, split across a boundary)."""

import pytest

from ragworkbook.corpus.chunking import chunk_pages, chunk_sentences
from ragworkbook.corpus.eval_set import eval_set_from_records
from ragworkbook.corpus.ground_truth import (
    find_occurrences,
    graded_keyword_qrels,
    keyword_diagnostics,
    keyword_qrels,
)
from ragworkbook.corpus.pages import Page


def test_qrels_definition(chunks, eval_set):
    es = eval_set
    qrels = keyword_qrels(chunks, es)
    assert list(qrels) == es.ids
    for it in es:
        expected = {c.id for c in chunks if it.keyword.lower() in c.text.lower()}
        assert set(qrels[it.id]) == expected
        assert all(v == 1 for v in qrels[it.id].values())
    assert list(qrels["q1"]) == ["p05-c02"]


def test_case_insensitive_by_default():
    chunks = chunk_pages(["We used ADAM here, quite a long sentence for one chunk."])
    assert keyword_qrels(chunks, {"q": "adam"}) == {"q": {"p01-c01": 1}}
    assert keyword_qrels(chunks, {"q": "adam"}, case_sensitive=True) == {"q": {}}


def test_diagnostics_bundled(corpus, chunks, eval_set):
    diags = {d.qid: d for d in keyword_diagnostics(chunks, eval_set, corpus, too_many=5)}
    assert diags["q2"].status == "too many" and diags["q2"].n_chunks > 5
    assert diags["q1"].status == "ok" and diags["q1"].pages == [5]
    # with 50 characters of overlap no keyword (all shorter than 51) can be split
    assert all(not d.split for d in diags.values())


def test_split_detected_without_overlap():
    text = "x" * 396 + " h = 8 heads are used in the base model, and more filler text follows here."
    page = Page(1, text)
    es = eval_set_from_records([{"id": "q1", "question": "heads?", "keyword": "h = 8", "reference": "8"}])
    no_overlap = chunk_pages([page], size=400, overlap=0)
    d = keyword_diagnostics(no_overlap, es, [page])[0]
    assert d.status == "no match+split" and d.split == [(1, 397)] and d.pages == [1]
    with_overlap = chunk_pages([page], size=400, overlap=50)
    d = keyword_diagnostics(with_overlap, es, [page])[0]
    assert d.status == "ok" and d.chunk_ids == ["p01-c02"]


def test_no_match_and_threshold():
    chunks = chunk_pages(["alpha beta gamma delta epsilon zeta eta theta iota kappa"])
    diags = keyword_diagnostics(chunks, {"a": "omega", "b": "beta"}, too_many=0)
    assert [d.status for d in diags] == ["no match", "too many"]
    with pytest.raises(ValueError, match="too_many"):
        keyword_diagnostics(chunks, {"a": "x"}, too_many=-1)


def test_sentence_chunks_can_differ(corpus, chunks, eval_set):
    """The same keywords on the same pages, in other numbers of chunks."""
    fixed = {x.qid: x for x in keyword_diagnostics(chunks, eval_set, corpus)}
    sent = {x.qid: x for x in keyword_diagnostics(chunk_sentences(corpus), eval_set, corpus)}
    assert [x.n_chunks for x in fixed.values()] == [1, 11, 2, 3, 2, 2, 3, 3]
    assert [x.n_chunks for x in sent.values()] == [1, 10, 1, 3, 3, 2, 2, 3]
    assert {q: x.pages for q, x in sent.items()} == {q: x.pages for q, x in fixed.items()}
    assert all(not x.split for x in sent.values())


def test_graded_and_occurrences():
    chunks = chunk_pages(
        [
            "The model uses h = 8 attention heads in every layer of the stack.",
            "Attention heads are drawn in colour in the appendix figures of the paper.",
        ]
    )
    q = graded_keyword_qrels(chunks, {"q1": ["h = 8", "attention heads"]})
    assert q == {"q1": {"p01-c01": 2, "p02-c01": 1}}
    assert find_occurrences("aAa", "aa") == [0, 1]
    with pytest.raises(TypeError):
        graded_keyword_qrels(chunks, {"q1": "h = 8"})
    with pytest.raises(ValueError, match="empty keyword"):
        keyword_qrels(chunks, {"q1": ""})
    with pytest.raises(ValueError, match=r"'q1' has a keyword that is not a string \(None\)"):
        keyword_qrels(chunks, {"q1": None})


def test_swapped_arguments_are_explained(chunks, eval_set):
    es = eval_set
    with pytest.raises(TypeError, match=r"keyword_qrels\(chunks, eval_set\)"):
        keyword_qrels(es, chunks)
    with pytest.raises(TypeError, match="expected a Chunk"):
        keyword_qrels(["some text"], es)
