"""Benchmark: ragworkbook's batch retrieval metrics beside pytrec_eval and ranx.

NDCG@10 + MRR + Recall@10 over N queries x 100 ranked documents (default
N = 100,000), all three libraries in the same process, on the same data:

1. **From Python dicts** (``{qid: {doc: grade}}`` and ``{qid: {doc: score}}``):
   each library is timed *including* building its own input objects from those
   dicts (pytrec_eval's ``RelevanceEvaluator``, ranx's ``Qrels``/``Run``).
2. **From relevance arrays already in rank order** (a ``(N, 100)`` grade
   matrix, per-query number of relevant documents and judged grades):
   ``evaluate_arrays`` against the same two libraries' dict timings and their
   evaluation-only timings (objects pre-built).

It is a script, not a test: timings depend on the machine. Peak memory of the
ragworkbook calls is measured with ``tracemalloc`` in a separate, untimed pass.
ranx's numba functions are compiled on a small warm-up input before timing.

    python benchmarks/bench_retrieval_metrics.py [--queries N] [--depth D] [--seed S] [--repeat R]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
import warnings

import numpy as np

from ragworkbook.metrics.batch import evaluate_arrays, evaluate_run

OURS = ["ndcg@10", "mrr", "recall@10"]
TREC = {"ndcg_cut.10", "recip_rank", "recall.10"}
TREC_NAMES = {"ndcg@10": "ndcg_cut_10", "mrr": "recip_rank", "recall@10": "recall_10"}
RANX = ["ndcg@10", "mrr", "recall@10"]


def make_data(n_queries: int, depth: int, seed: int):
    """Random graded qrels and runs, built as the Python dicts every library takes."""
    rng = np.random.default_rng(seed)
    pool = [f"d{j:05d}" for j in range(20_000)]
    doc_idx = np.stack([rng.choice(len(pool), depth + 3, replace=False) for _ in range(n_queries)]) \
        if n_queries <= 2000 else _fast_choice(rng, n_queries, depth + 3, len(pool))
    scores = rng.random((n_queries, depth))
    # judged: 10 documents, 7 of them among the retrieved, 3 outside it; grades 0..3
    judged_pos = np.argsort(rng.random((n_queries, depth)), axis=1)[:, :7]
    grades = rng.integers(0, 4, size=(n_queries, 10))
    qrels, run = {}, {}
    for i in range(n_queries):
        q = f"q{i}"
        docs = [pool[j] for j in doc_idx[i]]
        run[q] = dict(zip(docs[:depth], scores[i].tolist(), strict=True))
        judged = [docs[p] for p in judged_pos[i]] + docs[depth:]
        qrels[q] = dict(zip(judged, grades[i].tolist(), strict=True))
    return qrels, run


def _fast_choice(rng, n, m, pool):
    """n rows of m distinct indices < pool (rejection-free: random offsets on a permutation)."""
    base = rng.permutation(pool)[:m * 4]
    out = np.empty((n, m), dtype=np.int64)
    for start in range(0, n, 10_000):
        rows = min(10_000, n - start)
        out[start:start + rows] = np.argsort(rng.random((rows, base.size)), axis=1)[:, :m]
    return base[out]


def rank_order_arrays(qrels, run, depth):
    """The same data as arrays: grades in rank order, number relevant, judged grades."""
    n = len(run)
    grades = np.zeros((n, depth))
    ideal = np.zeros((n, 10))
    for i, (q, docs) in enumerate(run.items()):
        ranking = sorted(docs, key=docs.__getitem__, reverse=True)
        rel = qrels[q]
        grades[i, : len(ranking)] = [rel.get(d, 0) for d in ranking]
        ideal[i, : len(rel)] = list(rel.values())
    return grades, (ideal > 0).sum(axis=1), ideal


REPEAT = 3


def timed(fn):
    """Best of REPEAT runs (the machine may be shared: the minimum is the least noisy)."""
    best, out = float("inf"), None
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def peak_mb(fn) -> float:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="time each step this many times, keep the best")
    args = parser.parse_args(argv)
    global REPEAT
    REPEAT = max(1, args.repeat)
    warnings.simplefilter("ignore")

    import pytrec_eval
    import ranx

    print(f"{args.queries:,} queries x {args.depth} ranked documents; metrics: {', '.join(OURS)}")
    t0 = time.perf_counter()
    qrels, run = make_data(args.queries, args.depth, args.seed)
    print(f"built the Python dicts in {time.perf_counter() - t0:.1f} s (not counted);"
          f" every time below is the best of {REPEAT} runs")

    small_q, small_r = make_data(50, 20, 1)  # compile ranx's numba code before timing
    ranx.evaluate(ranx.Qrels(small_q), ranx.Run(small_r), RANX)

    # 1. from dicts, building each library's own objects included
    t_ours, ours = timed(lambda: evaluate_run(qrels, run, OURS))

    def trec_all():
        return pytrec_eval.RelevanceEvaluator(qrels, TREC).evaluate(run)

    t_trec, trec = timed(trec_all)
    t_trec_eval_only = None
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC)
    t_trec_eval_only, _ = timed(lambda: evaluator.evaluate(run))

    t_rbuild, (rq, rr) = timed(lambda: (ranx.Qrels(qrels), ranx.Run(run)))
    t_reval, rmean = timed(lambda: ranx.evaluate(rq, rr, RANX))
    t_ranx = t_rbuild + t_reval

    # 2. from relevance arrays in rank order
    grades, n_rel, ideal = rank_order_arrays(qrels, run, args.depth)  # not timed: the input of path 2
    t_arr, arr = timed(lambda: evaluate_arrays(grades, OURS, n_relevant=n_rel, ideal_grades=ideal))

    # agreement of the means
    trec_mean = {m: float(np.mean([v[TREC_NAMES[m]] for v in trec.values()])) for m in OURS}
    diff_trec = max(abs(ours.mean[m] - trec_mean[m]) for m in OURS)
    diff_ranx = max(abs(ours.mean[m] - rmean[m]) for m in OURS)
    diff_arr = max(abs(ours.mean[m] - arr.mean[m]) for m in OURS)
    per_query = ours.per_query
    n_diff = sum(
        any(abs(per_query[q][m] - trec[q][TREC_NAMES[m]]) > 1e-9 for m in OURS) for q in per_query
    )

    mem_dict = peak_mb(lambda: evaluate_run(qrels, run, OURS))
    mem_arr = peak_mb(lambda: evaluate_arrays(grades, OURS, n_relevant=n_rel, ideal_grades=ideal))
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print()
    print("means:", ", ".join(f"{m} {ours.mean[m]:.6f}" for m in OURS))
    print(f"max |mean difference|: pytrec_eval {diff_trec:.1e}, ranx {diff_ranx:.1e}, "
          f"arrays vs dicts {diff_arr:.1e}")
    if n_diff:
        print(f"  {n_diff} queries differ from pytrec_eval: it compares scores as float32 (trec_eval 9's"
              " code), so two scores equal in float32 are a tie for it (broken by doc id);"
              " score_precision='float32' does the same")
    print()
    print("from dicts (each library builds its own input objects from the same dicts):")
    print(f"  ragworkbook evaluate_run      {t_ours:7.2f} s")
    print(f"  pytrec_eval                   {t_trec:7.2f} s  (evaluate only {t_trec_eval_only:.2f} s)"
          f"  -> ragworkbook {t_trec / t_ours:5.1f}x faster (need >= 2)")
    print(f"  ranx (Qrels+Run {t_rbuild:.2f} s)     {t_ranx:7.2f} s  (evaluate only {t_reval:.2f} s)"
          f"  -> ragworkbook {t_ranx / t_ours:5.1f}x faster (need >= 5)")
    print("from relevance arrays already in rank order:")
    print(f"  ragworkbook evaluate_arrays   {t_arr:7.3f} s"
          f"  -> {t_trec / t_arr:6.1f}x pytrec_eval, {t_ranx / t_arr:6.1f}x ranx (need >= 20);"
          f" vs evaluation alone {t_trec_eval_only / t_arr:6.1f}x, {t_reval / t_arr:6.1f}x")
    print(f"peak memory (tracemalloc): evaluate_run {mem_dict:.0f} MB, evaluate_arrays {mem_arr:.0f} MB"
          f" (need < 1024); process max RSS {rss_mb:.0f} MB including all inputs and both libraries")
    ok = (t_trec / t_ours >= 2 and t_ranx / t_ours >= 5 and min(t_trec, t_ranx) / t_arr >= 20
          and max(mem_dict, mem_arr) < 1024)
    print("targets met" if ok else "TARGETS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
