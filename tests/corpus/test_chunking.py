"""Chunking: the documented 400/50/40 recipe, character for character, and the sentence strategy."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragworkbook.corpus.chunking import Chunk, chunk_id, chunk_pages, chunk_sentences, chunks_by_id
from ragworkbook.corpus.pages import Page


def recipe(page_texts, size=400, overlap=50, min_chars=40):
    """rag-cookbook's build_corpus loop, verbatim in structure (reference implementation)."""
    out = []
    for page_num, raw in enumerate(page_texts, start=1):
        text = (raw or "").strip()
        if not text:
            continue
        for start in range(0, len(text), size - overlap):
            piece = text[start : start + size].strip()
            if len(piece) < min_chars:
                continue
            out.append((page_num, piece))
    return out


def test_bundled_corpus_matches_recipe(corpus, chunks):
    c = corpus
    assert [(ch.page, ch.text) for ch in chunks] == recipe([p.text for p in c.pages])
    assert all(c.page(ch.page).text[ch.start : ch.end] == ch.text for ch in chunks)
    assert len(chunks_by_id(chunks)) == len(chunks)


def test_ids_and_offsets():
    text = "  " + "a" * 380 + " " + "b" * 500 + "\n"
    chunks = chunk_pages([Page(3, text)])
    assert [c.id for c in chunks] == ["p03-c01", "p03-c02", "p03-c03"]
    assert chunks[0].start == 2
    for c in chunks:
        assert text[c.start : c.end] == c.text
    assert chunk_id(12, 7) == "p12-c07" and chunk_id(123, 100) == "p123-c100"


def test_short_tail_dropped_and_empty_pages_skipped():
    text = "x" * 380  # windows at 0 and 350; the second has 30 chars < 40 -> dropped
    chunks = chunk_pages([Page(1, text), Page(2, "   \n "), Page(3, "y" * 50)])
    assert [(c.id, len(c.text)) for c in chunks] == [("p01-c01", 380), ("p03-c01", 50)]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text(alphabet=st.sampled_from("ab .\n\t"), max_size=1200), min_size=1, max_size=4),
    st.integers(20, 120),
    st.integers(0, 19),
    st.integers(0, 30),
)
def test_matches_recipe_property(pages, size, overlap, min_chars):
    chunks = chunk_pages(pages, size=size, overlap=overlap, min_chars=min_chars)
    assert [(c.page, c.text) for c in chunks] == recipe(pages, size, overlap, min_chars)
    for c in chunks:
        assert pages[c.page - 1][c.start : c.end] == c.text


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"size": 0}, "size must be positive"),
        ({"overlap": 400}, "overlap must satisfy"),
        ({"overlap": -1}, "overlap must satisfy"),
        ({"min_chars": -1}, "min_chars must be >= 0"),
    ],
)
def test_bad_sizes(kwargs, match):
    with pytest.raises(ValueError, match=match):
        chunk_pages(["text"], **kwargs)


def test_single_string_rejected():
    with pytest.raises(TypeError, match="not a single string"):
        chunk_pages("some text")


def test_sentence_chunks_keep_sentences_whole(corpus):
    c = corpus
    chunks = chunk_sentences(c, max_chars=400)
    assert all(len(ch.text) <= 400 for ch in chunks)
    assert all(c.page(ch.page).text[ch.start : ch.end] == ch.text for ch in chunks)
    # the head-count sentence is never cut
    assert any("h = 8 parallel attention layers are employed" in ch.text for ch in chunks)
    # decimals do not end a sentence
    joined = [ch.text for ch in chunks if "28.4" in ch.text]
    assert joined and all(
        "28.4 " in t or "28.4\n" in t or t.endswith("28.4") or "28.4 |" in t for t in joined
    )


def test_sentence_chunks_split_long_sentence():
    text = "Short one. " + "W" * 900 + ". Tail sentence here that is long enough to keep."
    chunks = chunk_sentences([text], max_chars=400, min_chars=5)
    assert max(len(c.text) for c in chunks) <= 400
    assert chunks[0].text == "Short one."
    assert isinstance(chunks[0], Chunk)
