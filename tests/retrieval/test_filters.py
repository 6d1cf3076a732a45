"""Metadata filters: applied before ranking, page / section / text predicates, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from ragworkbook.corpus.chunking import Chunk
from ragworkbook.corpus.pages import Page, corpus_from_pages
from ragworkbook.retrieval.base import Retriever
from ragworkbook.retrieval.filters import (
    FilteredRetriever,
    all_of,
    page_filter,
    page_sections,
    section_filter,
    text_filter,
)

CHUNKS = [Chunk("p01-c01", 1, "Overview of the model.", 0), Chunk("p02-c01", 2, "It uses h = 8 heads.", 0),
          Chunk("p03-c01", 3, "Appendix: pictures of heads.", 0), Chunk("p03-c02", 3, "More pictures.", 0)]


class Fixed(Retriever):
    """Scores from a fixed vector: the appendix chunks score highest."""

    def scores(self, queries):
        return np.tile(np.array([0.1, 0.5, 0.9, 0.8]), (len(queries), 1))


def test_the_filter_is_applied_before_ranking():
    base = Fixed(CHUNKS)
    assert [h.id for h in base.search("heads", k=2)] == ["p03-c01", "p03-c02"]
    filtered = FilteredRetriever(base, page_filter(exclude=[3]), "no appendix")
    hits = filtered.search("heads", k=2)
    assert [(h.id, h.rank) for h in hits] == [("p02-c01", 1), ("p01-c01", 2)]  # still k hits
    assert filtered.search("heads", k=10) == filtered.search_many(["heads"], k=10)[0]
    assert len(filtered.search("heads", k=10)) == 2 == filtered.n_kept
    s = filtered.scores(["heads"])[0]
    assert np.isneginf(s[2:]).all() and s[1] == 0.5
    assert [c.id for c in filtered.kept_chunks()] == ["p01-c01", "p02-c01"]
    assert "2 of 4 chunks kept" in repr(filtered) and "'no appendix'" in repr(filtered)


def test_page_filter_include_and_exclude():
    keep = page_filter(include=[2, 3], exclude=[3])
    assert [keep(c) for c in CHUNKS] == [False, True, False, False]
    with pytest.raises(ValueError, match="include=\\[\\] keeps no page"):
        page_filter(include=[])


def test_sections_from_page_titles():
    corpus = corpus_from_pages([Page(1, "Study notes: the paper\ntext"),
                                Page(2, "\nPage 2 - Multi-head attention\nx"),
                                Page(3, "Page 3 - Appendix notes (1): pictures\ny")])
    assert page_sections(corpus) == {1: "Study notes: the paper", 2: "Multi-head attention",
                                     3: "Appendix notes (1): pictures"}
    no_appendix = section_filter(corpus, exclude="appendix")
    assert [no_appendix(c) for c in CHUNKS] == [True, True, False, False]
    only_attention = section_filter({2: "Multi-head attention"}, include=r"attention")
    assert [only_attention(c) for c in CHUNKS] == [False, True, False, False]  # a page without a title: ""
    with pytest.raises(ValueError, match="needs include=... or exclude="):
        section_filter(corpus)


def test_text_filter_and_all_of():
    states_value = text_filter(r"=\s*\d")
    assert [states_value(c) for c in CHUNKS] == [False, True, False, False]
    both = all_of(states_value, page_filter(exclude=[2]))
    assert not any(both(c) for c in CHUNKS)
    with pytest.raises(ValueError, match="at least one filter"):
        all_of()


def test_errors():
    with pytest.raises(ValueError, match="rejects all 4 chunks"):
        FilteredRetriever(Fixed(CHUNKS), page_filter(include=[9]))
    with pytest.raises(TypeError, match="wraps a ragworkbook Retriever"):
        FilteredRetriever(object(), page_filter(include=[1]))
    with pytest.raises(TypeError, match="where must be a function"):
        FilteredRetriever(Fixed(CHUNKS), "page 1")
