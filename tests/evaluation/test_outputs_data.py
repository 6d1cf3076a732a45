"""ragworkbook/data/outputs/ (notebook 15's two systems) is rebuilt byte for byte from recorded answers."""

import runpy

from ragworkbook.corpus.answers import load_answer_records
from ragworkbook.paths import data_path, repo_root


def test_outputs_data_is_rebuilt_identically(tmp_path, monkeypatch):
    monkeypatch.delenv("RAGWORKBOOK_BACKEND", raising=False)
    monkeypatch.delenv("RAGWORKBOOK_RECORD", raising=False)
    script = runpy.run_path(str(repo_root() / "scripts" / "make_outputs_data.py"))
    written = script["main"](tmp_path)
    assert [p.name for p in written] == ["dense_ragas.jsonl", "bm25_ragas.jsonl"]
    for p in written:
        assert p.read_bytes() == data_path("outputs", p.name).read_bytes(), p.name
    dense, bm25 = (load_answer_records(p) for p in written)
    assert dense.ids == bm25.ids and len(dense) == 8 and dense.ignored == []
    assert all(r.relevant_ids and r.has_context_ids and r.reference for r in dense)
