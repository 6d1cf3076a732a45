"""Dense, BM25 and hybrid retrieval: interface, tie-breaking, caching, determinism across processes."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from ragworkbook import embeddings
from ragworkbook.corpus.chunking import chunk_pages
from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.corpus.pages import load_corpus
from ragworkbook.retrieval.base import Hit
from ragworkbook.retrieval.bm25 import BM25Retriever, tokenize
from ragworkbook.retrieval.dense import DenseRetriever
from ragworkbook.retrieval.hybrid import HybridRetriever
from ragworkbook.retrieval.runs import run_retriever, to_rankings, to_run


@pytest.fixture(scope="module")
def dense(chunks):
    # the package cache (keyed by model + texts, so never stale): fast on a re-run
    return DenseRetriever(chunks, cache=True)


@pytest.fixture(scope="module")
def bm25(chunks):
    return BM25Retriever(chunks)


def test_tokenize():
    assert tokenize("Adam (beta1 = 0.9), P100 GPUs!") == ["adam", "beta1", "0", "9", "p100", "gpus"]


@pytest.mark.model
def test_search_interface(dense, bm25, chunks):
    for r in (dense, bm25, HybridRetriever([dense, bm25])):
        hits = r.search("Which optimizer was used?", k=4)
        assert [h.rank for h in hits] == [1, 2, 3, 4]
        assert all(isinstance(h, Hit) for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert len(r.search("x", k=10_000)) == len(chunks)
        with pytest.raises(ValueError, match="k must be a positive integer"):
            r.search("x", k=0)
        with pytest.raises(TypeError, match="not a single string"):
            r.search_many("one query")
    assert (
        dense.search("Which optimizer was used?", 3) == dense.search_many(["Which optimizer was used?"], 3)[0]
    )


@pytest.mark.model
def test_dense_is_cosine(dense, chunks):
    q = "What GPUs was the model trained on?"
    hits = dense.search(q, k=3)
    qv = embeddings.encode([q])[0]
    by_hand = dense.embeddings @ qv
    assert [h.chunk.id for h in hits] == [chunks[i].id for i in np.argsort(-by_hand, kind="stable")[:3]]
    assert hits[0].score == pytest.approx(float(by_hand.max()), abs=1e-5)


def test_bm25_ranks_keyword_chunks_first(bm25):
    hits = bm25.search("Adam optimizer beta2", k=3)
    assert all("adam" in h.chunk.text.lower() for h in hits[:2])


def test_bm25_scores_against_formula():
    from ragworkbook.corpus.chunking import chunk_pages as cp

    docs = [
        "the cat sat on the mat for a while today",
        "a dog and a cat played in the garden",
        "birds sing early in the morning every day",
    ]
    ch = cp(docs, min_chars=1)
    r = BM25Retriever(ch)
    toks = [tokenize(d) for d in docs]
    avg = np.mean([len(t) for t in toks])
    n = len(docs)

    def score(q):  # bm25s 'lucene': idf * tf / (tf + k1 * (1 - b + b * len / avglen)), no (k1 + 1)
        s = np.zeros(n)
        for w in set(tokenize(q)):
            df = sum(w in t for t in toks)
            idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
            for i, t in enumerate(toks):
                tf = t.count(w)
                s[i] += idf * tf / (tf + 1.5 * (1 - 0.75 + 0.75 * len(t) / avg)) if tf else 0
        return s

    assert np.allclose(r.scores(["cat garden"])[0], score("cat garden"), atol=1e-5)
    assert np.all(r.scores(["zebra"])[0] == 0)


def test_ties_broken_by_chunk_order(chunks):
    r = BM25Retriever(chunks)
    hits = r.search("zzzz qqqq", k=5)  # every score 0
    assert [h.chunk.id for h in hits] == [c.id for c in chunks[:5]]


@pytest.mark.model
def test_hybrid_rrf_definition(dense, bm25, chunks):
    q = ["What dropout rate did they use?"]
    h = HybridRetriever([dense, bm25], k_rrf=60)
    n = len(chunks)
    expected = np.zeros(n)
    for r in (dense, bm25):
        order = np.argsort(-r.scores(q)[0], kind="stable")
        ranks = np.empty(n)
        ranks[order] = np.arange(1, n + 1)
        expected += 1 / (60 + ranks)
    assert np.allclose(h.scores(q)[0], expected)
    with pytest.raises(ValueError, match="same chunks"):
        HybridRetriever([dense, BM25Retriever(chunks[:-1])])


def test_run_helpers(bm25):
    es = load_eval_set()
    res = run_retriever(bm25, es, k=5)
    assert list(res) == es.ids and all(len(v) == 5 for v in res.values())
    run = to_run(res)
    assert list(run["q1"]) == [h.chunk.id for h in res["q1"]]
    ranked = to_run(res, score="rank")
    assert list(ranked["q4"].values()) == [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5]
    assert to_rankings(res)["q4"] == list(run["q4"])
    with pytest.raises(ValueError):
        to_run(res, score="bogus")


def test_constructor_errors(chunks):
    with pytest.raises(ValueError, match="empty"):
        BM25Retriever([])
    with pytest.raises(TypeError, match="expected a Chunk"):
        BM25Retriever(["text"])
    with pytest.raises(ValueError, match="duplicate chunk id"):
        BM25Retriever([chunks[0], chunks[0]])


@pytest.mark.model
def test_dense_cache_reused_not_reencoded(chunks, tmp_path, monkeypatch):
    chunks = chunks[:6]
    first = DenseRetriever(chunks, cache=tmp_path)
    assert len(list(tmp_path.glob("*.npy"))) == 1  # the chunk embeddings were saved

    def boom(*a, **k):
        raise AssertionError("encoded although the cache should have been used")

    monkeypatch.setattr(embeddings, "_encode_now", boom)
    again = DenseRetriever(chunks, cache=tmp_path)
    assert np.array_equal(again.embeddings, first.embeddings)
    # a changed corpus is a cache miss -> encodes
    changed = chunk_pages([c.text for c in chunks[:3]] + ["a brand new page of text for the cache test"])
    with pytest.raises(AssertionError, match="encoded although"):
        DenseRetriever(changed, cache=tmp_path)


SCRIPT = r"""
import json, sys
from ragworkbook.corpus.chunking import chunk_pages
from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.corpus.pages import load_corpus
from ragworkbook.retrieval.bm25 import BM25Retriever
from ragworkbook.retrieval.dense import DenseRetriever
from ragworkbook.retrieval.hybrid import HybridRetriever
from ragworkbook.retrieval.runs import run_retriever
ch = chunk_pages(load_corpus())[::4]
d = DenseRetriever(ch, cache=False); b = BM25Retriever(ch)
out = {}
for name, r in (("dense", d), ("bm25", b), ("hybrid", HybridRetriever([d, b]))):
    res = run_retriever(r, load_eval_set(), k=5)
    out[name] = {q: [[h.chunk.id, round(h.score, 6)] for h in hs] for q, hs in res.items()}
print(json.dumps(out))
"""


@pytest.mark.model
def test_deterministic_across_processes(chunks):
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    other = json.loads(proc.stdout)
    chunks = chunks[::4]  # a quarter of the corpus keeps the fresh encodes cheap
    d = DenseRetriever(chunks, cache=False)
    b = BM25Retriever(chunks)
    for name, r in (("dense", d), ("bm25", b), ("hybrid", HybridRetriever([d, b]))):
        res = run_retriever(r, load_eval_set(), k=5)
        mine = {q: [[h.chunk.id, round(h.score, 6)] for h in hs] for q, hs in res.items()}
        assert mine == other[name], name


@pytest.mark.model
def test_documented_failure_c4(dense, chunks):
    """The head-count question: appendix pages outrank the page stating h = 8 (documented C4)."""
    hits = dense.search("How many attention heads did they use?", k=5)
    assert all("h = 8" not in h.chunk.text for h in hits)
    assert hits[0].chunk.page in (15, 16)


def _recipe_metrics(retrieved, relevant, k=3):
    """rag-cookbook's own metric code (reference): @k metrics, RR over the whole top-5 list."""
    import math

    top = retrieved[:k]
    hits = sum(1 for c in top if c in relevant)
    rr = next((1.0 / r for r, c in enumerate(retrieved, start=1) if c in relevant), 0.0)
    dcg = sum(1.0 / math.log2(r + 1) for r, c in enumerate(top, start=1) if c in relevant)
    idcg = sum(1.0 / math.log2(r + 1) for r in range(1, min(len(relevant), k) + 1))
    recall = hits / len(relevant) if relevant else 0.0
    return [hits / k, recall, rr, dcg / idcg if idcg else 0.0, float(hits > 0)]


@pytest.mark.parametrize("which", ["bm25", pytest.param("dense", marks=pytest.mark.model)])
def test_evaluate_retriever_matches_recipe(which, request):
    from ragworkbook.corpus.ground_truth import keyword_qrels
    from ragworkbook.evaluation.retrieval import c1_metrics, evaluate_retriever

    r = request.getfixturevalue(which)
    es = load_eval_set()
    qrels = keyword_qrels(r.chunks, es)
    res = evaluate_retriever(r, es)
    assert res.metrics == c1_metrics() == ["P@3", "recall@3", "mrr@5", "ndcg@3", "hit_rate@3"]
    top5 = to_rankings(run_retriever(r, es, k=5))
    for i, qid in enumerate(res.query_ids):
        expected = _recipe_metrics(top5[qid], set(qrels[qid]))
        got = [res.values[m][i] for m in res.metrics]
        assert got == pytest.approx(expected, abs=1e-12), qid


def test_evaluate_retriever_scores_exactly_the_eval_set(bm25):
    from ragworkbook.corpus.ground_truth import keyword_qrels
    from ragworkbook.evaluation.retrieval import evaluate_retriever

    es = load_eval_set()
    qrels = keyword_qrels(bm25.chunks, es)
    full = evaluate_retriever(bm25, es, qrels)
    extra = {**{q: r for q, r in qrels.items() if q != "q3"}, "other": {bm25.chunks[0].id: 1}}
    res = evaluate_retriever(bm25, es, extra)
    assert res.query_ids == full.query_ids == es.ids  # "other" ignored, q3 kept
    assert res.per_query["q3"] == {m: 0.0 for m in res.metrics}  # no qrels: no relevant chunk
    assert {q: v for q, v in res.per_query.items() if q != "q3"} == \
        {q: v for q, v in full.per_query.items() if q != "q3"}


@pytest.mark.model
def test_evaluate_dense_on_pages_is_the_notebook_pipeline(dense):
    from ragworkbook.evaluation.retrieval import evaluate_dense_on_pages, evaluate_retriever

    res = evaluate_dense_on_pages(load_corpus())
    assert res.per_query == evaluate_retriever(dense, load_eval_set()).per_query
    assert res.per_query["q1"]["P@3"] == 0.0 and res.mean["hit_rate@3"] == 0.875


@pytest.mark.model
def test_hybrid_depth_and_weights(dense, bm25, chunks):
    q = ["What GPUs was the model trained on?"]
    shallow = HybridRetriever([dense, bm25], k_rrf=60, depth=5).scores(q)[0]
    # only the chunks in someone's top 5 get a score: 1/(60 + rank) from each list they are in
    tops = [[h.chunk.id for h in r.search(q[0], 5)] for r in (dense, bm25)]
    expected = {cid: sum(1 / (60 + top.index(cid) + 1) for top in tops if cid in top)
                for cid in {*tops[0], *tops[1]}}
    assert {chunks[i].id: shallow[i] for i in np.flatnonzero(shallow)} == pytest.approx(expected)
    only_bm25 = HybridRetriever([dense, bm25], weights=[0.0, 1.0])
    assert [h.chunk.id for h in only_bm25.search(q[0], 5)] == [h.chunk.id for h in bm25.search(q[0], 5)]
    with pytest.raises(ValueError, match="weights"):
        HybridRetriever([dense, bm25], weights=[1.0])


WARM = r"""
import sys
from ragworkbook import embeddings
from ragworkbook.corpus.chunking import chunk_pages
from ragworkbook.corpus.pages import load_corpus
from ragworkbook.retrieval.dense import DenseRetriever
d = DenseRetriever(chunk_pages(load_corpus())[:10], cache=sys.argv[1])
print(embeddings.get_model.cache_info().currsize, float(d.embeddings.sum()))
"""


@pytest.mark.model
def test_warm_cache_in_a_new_process_never_loads_the_model(chunks, tmp_path):
    first = DenseRetriever(chunks[:10], cache=tmp_path)
    proc = subprocess.run([sys.executable, "-c", WARM, str(tmp_path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded, total = proc.stdout.split()
    assert loaded == "0"  # the SentenceTransformer was never constructed
    assert float(total) == float(first.embeddings.sum())
