"""ragworkbook.judging.triad with the rule-based fake judge."""

from __future__ import annotations

from fakes.judges import CARBON, CHUNKS, GarbageJudge, RuleJudge, bag_embed

from ragworkbook.judging.judge import Judge
from ragworkbook.judging.metrics import context_relevance, faithfulness
from ragworkbook.judging.results import JudgeSample
from ragworkbook.judging.triad import rag_triad, rag_triad_many, triad_aggregates, triad_frame


def _embed_patch(monkeypatch):
    import ragworkbook.embeddings as emb

    monkeypatch.setattr(emb, "encode", lambda texts, **kw: bag_embed(texts))


def test_context_relevance_is_per_chunk_against_the_question():
    gen = RuleJudge()
    r = context_relevance(CARBON, Judge(gen))
    assert r.n_model_calls == len(CHUNKS) == gen.calls
    assert [it["rank"] for it in r.items] == [1, 2, 3, 4, 5]
    # the rule judge: relevant when a chunk shares two content words with the question; the first
    # chunk (the EU border mechanism) shares only "mechanism"
    assert [it["verdict"] for it in r.items] == [0, 1, 1, 1, 1]
    assert r.score == 0.8
    assert context_relevance(JudgeSample("q", "a", []), Judge(gen)).status == "empty_context"


def test_triad_reuses_cached_judgments(monkeypatch):
    _embed_patch(monkeypatch)
    gen = RuleJudge()
    judge = Judge(gen)
    f = faithfulness(CARBON, judge)
    before = gen.calls
    t = rag_triad(CARBON, judge)
    # groundedness came from the cache: only context relevance (K) + answer relevance (1) were new
    assert gen.calls - before == len(CHUNKS) + 1
    assert t.groundedness.score == f.score and t.groundedness.metric == "groundedness"
    assert set(t.scores) == {"context_relevance", "groundedness", "answer_relevance"}
    assert t.answer_relevance.metric == "answer_relevance"


def test_triad_diagnosis_and_failures(monkeypatch):
    _embed_patch(monkeypatch)
    off = JudgeSample("Which carbon pricing mechanism did Canada implement in 2023?",
                      "Penguins live in Antarctica.", ["Penguins live in Antarctica and eat krill."],
                      sample_id="off")
    t = rag_triad(off, Judge(RuleJudge()))
    assert t.context_relevance.score == 0.0 and t.groundedness.score == 1.0
    assert "context_relevance 0.00: the judge rated 0 of 1 chunks relevant to the question" in t.diagnosis()
    bad = rag_triad(CARBON, Judge(GarbageJudge()))
    assert set(bad.statuses.values()) == {"failed"} and len(bad.statuses) == 3
    assert "context_relevance: judgment failed" in bad.diagnosis()
    aggs = triad_aggregates([t, bad])
    assert (aggs["groundedness"].n, aggs["groundedness"].failed) == (1, 1)


def test_triad_many_and_frame(monkeypatch):
    _embed_patch(monkeypatch)
    rs = rag_triad_many([CARBON], Judge(RuleJudge()), progress=False)
    df = triad_frame(rs)
    assert list(df.columns[:3]) == ["context_relevance", "groundedness", "answer_relevance"]
    assert df.loc["carbon", "groundedness"] == 1.0
