"""Benchmark: ``ragworkbook ir-eval`` beside the C trec_eval and pytrec_eval, whole processes.

1. **Speed and memory.** Generates a TREC run of N queries x D documents (default
   100,125 x 100: about 450 MB, 10 million lines) and its qrels (10 judgements per
   query, grades 0-3), then runs, each as its own process on the same files and
   computing MAP, MRR, Recall@10 and NDCG@10:

   - the C trec_eval (``--trec-eval PATH``; the row is skipped without it),
   - pytrec_eval's whole process (``pytrec_eval.parse_qrel`` / ``parse_run`` and
     ``RelevanceEvaluator``),
   - ``python -m ragworkbook ir-eval --json``.

   It prints wall-clock seconds, CPU seconds (user + system) and peak resident
   memory (``ru_maxrss`` of each child, from ``os.wait4``), the ratios against
   ir-eval, and checks that the three agree (4 decimals, as trec_eval prints).
   CPU time is the steadier figure on a shared machine.

2. **Score ties at float32 resolution** (``--ties``). A Cranfield-sized run (225
   queries x 100 documents) whose scores come in clusters closer than float32's
   resolution, written at full precision: counts the queries on which ir-eval
   (default full precision, and ``--score-precision float32``) gives exactly the
   C trec_eval's and pytrec_eval's per-query values.

The generated files are written to a temporary folder and removed afterwards
(``--workdir DIR`` keeps them there and reuses them). Never commit them.

The C trec_eval is not part of ragworkbook. To build it from its source (trec_eval
10.0, usnistgov/trec_eval), unpack the source archive and run ``make``::

    tar xzf trec_eval-src-f4253652.tar.gz && make -C trec_eval
    python benchmarks/bench_trec_eval.py --trec-eval trec_eval/trec_eval [--ties]

    python benchmarks/bench_trec_eval.py [--queries N] [--depth D] [--seed S] [--workdir DIR]
        [--ties] [--no-speed]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MEASURES_TREC = ["map", "recip_rank", "recall.10", "ndcg_cut.10"]
MEASURES_OURS = ["map", "recip_rank", "recall_10", "ndcg_cut_10"]

PYTREC_SCRIPT = """
import json, sys
import pytrec_eval
measures = json.loads(sys.argv[3])
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
result = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
names = sorted(next(iter(result.values())))
out = {"mean": {m: sum(r[m] for r in result.values()) / len(result) for m in names}}
if len(sys.argv) > 4:
    out["per_query"] = result
print(json.dumps(out))
"""


# --------------------------------------------------------------------------- data


def generate(run_path: Path, qrels_path: Path, n_queries: int, depth: int, seed: int,
             judged: int = 10) -> None:
    """A run in rank order (scores in (0, 1) with 6 decimals, distinct in float32) and its qrels."""
    rng = np.random.default_rng(seed)
    with open(run_path, "w") as run, open(qrels_path, "w") as qrels:
        for start in range(0, n_queries, 5000):
            n = min(5000, n_queries - start)
            base = rng.integers(0, 80_000_000, size=(n, 1))
            docs = base + np.arange(depth + judged) * 7919  # distinct within a query
            docs = np.take_along_axis(docs, np.argsort(rng.random(docs.shape), axis=1), axis=1)
            scores = -np.sort(-rng.random((n, depth)), axis=1)
            run_lines, qrels_lines = [], []
            for i in range(n):
                q = start + i + 1
                d = docs[i].tolist()
                s = scores[i].tolist()
                run_lines += [f"{q} Q0 doc{d[r]:08d} {r + 1} {s[r]:.6f} bench_run\n" for r in range(depth)]
                picked = rng.choice(depth, judged - 4, replace=False).tolist() + list(range(depth, depth + 4))
                grades = rng.integers(0, 4, size=judged).tolist()
                qrels_lines += [f"{q} 0 doc{d[p]:08d} {g}\n" for p, g in zip(picked, grades, strict=True)]
            run.write("".join(run_lines))
            qrels.write("".join(qrels_lines))


def generate_float32_ties(run_path: Path, qrels_path: Path, seed: int, n_queries: int = 225,
                          depth: int = 100) -> None:
    """Scores as BM25 gives them on a small collection: distinct sums of term weights, and documents
    with the same terms a hair apart (here 1 in 8 copies another's score, times 1 + k * 1e-13, below
    float32's resolution), written at full precision (``repr``)."""
    rng = np.random.default_rng(seed)
    with open(run_path, "w") as run, open(qrels_path, "w") as qrels:
        for q in range(1, n_queries + 1):
            docs = rng.choice(1400, depth, replace=False) + 1
            scores = 5.0 + 20.0 * rng.random(depth)
            twins = rng.random(depth) < 1 / 8
            hair = 1 + rng.integers(-3, 4, twins.sum()) * 1e-13
            scores[twins] = scores[rng.integers(0, depth, twins.sum())] * hair
            order = np.argsort(-scores, kind="stable")
            for r, j in enumerate(order.tolist(), start=1):
                run.write(f"{q} Q0 {docs[j]} {r} {float(scores[j])!r} bm25\n")
            for j in rng.choice(depth, 25, replace=False).tolist():
                qrels.write(f"{q} 0 {docs[j]} {int(rng.integers(0, 5))}\n")
            for extra in rng.choice(np.setdiff1d(np.arange(1, 1401), docs), 5, replace=False).tolist():
                qrels.write(f"{q} 0 {extra} {int(rng.integers(1, 5))}\n")


# --------------------------------------------------------------------------- running


def measured(cmd: list[str]) -> tuple[str, float, float, float]:
    """Run ``cmd``; return its stdout, wall seconds, CPU seconds and peak RSS (MB) of that process."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {stderr[-2000:]}")
    # ru_maxrss is in kilobytes on Linux
    return stdout, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def ir_eval_cmd(qrels: Path, run: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ragworkbook", "ir-eval", "--qrels", str(qrels), "--run", str(run),
            "--metric", ",".join(MEASURES_OURS), "--json", *extra]


def trec_eval_cmd(binary: str, qrels: Path, run: Path, *extra: str) -> list[str]:
    return [binary, *extra, *(a for m in MEASURES_TREC for a in ("-m", m)), str(qrels), str(run)]


def parse_trec_eval(text: str) -> dict[str, dict[str, float]]:
    """trec_eval's output as ``{qid or "all": {measure: value}}``."""
    out: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        name, qid, value = line.split()
        out.setdefault(qid, {})[name] = float(value)
    return out


# --------------------------------------------------------------------------- the two parts


def speed(args: argparse.Namespace, work: Path) -> None:
    run = work / f"run_{args.queries}x{args.depth}_s{args.seed}.txt"
    qrels = work / f"qrels_{args.queries}x{args.depth}_s{args.seed}.txt"
    if not (run.exists() and qrels.exists()):
        t = time.perf_counter()
        generate(run, qrels, args.queries, args.depth, args.seed)
        print(f"generated {run.name} in {time.perf_counter() - t:.1f} s")
    lines = args.queries * args.depth
    print(f"run: {args.queries:,} queries x {args.depth} documents = {lines:,} lines, "
          f"{run.stat().st_size / 1e6:,.0f} MB; qrels: {qrels.stat().st_size / 1e6:,.0f} MB")
    print(f"measures: {', '.join(MEASURES_TREC)}\n")
    rows = []
    means = {}
    if args.trec_eval:
        cmd = trec_eval_cmd(args.trec_eval, qrels, run)
        out, wall, cpu, rss = measured(cmd)
        means["C trec_eval"] = parse_trec_eval(out)["all"]
        rows.append(("C trec_eval", wall, cpu, rss, cmd))
    else:
        print("C trec_eval: skipped (no --trec-eval PATH)")
    if args.pytrec_eval:
        cmd = [sys.executable, "-c", PYTREC_SCRIPT, str(qrels), str(run), json.dumps(MEASURES_TREC)]
        out, wall, cpu, rss = measured(cmd)
        means["pytrec_eval"] = json.loads(out)["mean"]
        rows.append(("pytrec_eval (whole process)", wall, cpu, rss, cmd[:2] + ["<script>"] + cmd[3:]))
    cmd = ir_eval_cmd(qrels, run)
    out, wall, cpu, rss = measured(cmd)
    ours = json.loads(out)["mean"]
    means["ragworkbook ir-eval"] = {t: ours[o] for t, o in zip(_printed(), MEASURES_OURS, strict=True)}
    rows.append(("ragworkbook ir-eval", wall, cpu, rss, cmd))

    base_wall, base_cpu, base_rss = rows[-1][1:4]
    print(f"{'tool':30}{'wall s':>9}{'CPU s':>9}{'peak RSS MB':>13}{'wall / ir-eval':>16}"
          f"{'CPU / ir-eval':>15}{'RSS / ir-eval':>15}")
    for name, wall, cpu, rss, _ in rows:
        print(f"{name:30}{wall:9.2f}{cpu:9.2f}{rss:13.0f}{wall / base_wall:16.1f}{cpu / base_cpu:15.1f}"
              f"{rss / base_rss:15.2f}")
    print("\ncommands:")
    for name, *_, cmd in rows:
        print(f"  {name}: {' '.join(cmd)}")
    print("\nmeans (4 decimals, as trec_eval prints):")
    for name, m in means.items():
        print(f"  {name:28}" + "  ".join(f"{k}={m[k]:.4f}" for k in _printed()))
    reference = next(iter(means.values()))
    for name, m in means.items():
        for k in _printed():
            if f"{m[k]:.4f}" != f"{reference[k]:.4f}":
                raise SystemExit(f"DISAGREEMENT: {name} {k} = {m[k]:.4f}, expected {reference[k]:.4f}")
    print("all agree")


def _printed() -> list[str]:
    """trec_eval's names of the measures: map, recip_rank, recall_10, ndcg_cut_10."""
    return [m.replace(".", "_") for m in MEASURES_TREC]


def ties(args: argparse.Namespace, work: Path) -> None:
    run = work / f"ties_run_s{args.seed}.txt"
    qrels = work / f"ties_qrels_s{args.seed}.txt"
    generate_float32_ties(run, qrels, args.seed)
    print(f"\nfloat32-resolution run: 225 queries x 100 documents ({run.stat().st_size / 1e6:.1f} MB), "
          "1 score in 8 a hair (1e-13 relative) from another's, written with repr")
    ours = {}
    for label, extra in (("ir-eval (default, float64)", ()),
                         ("ir-eval --score-precision float32", ("--score-precision", "float32"))):
        out, *_ = measured(ir_eval_cmd(qrels, run, "--per-query", *extra))
        ours[label] = {q: {t: row[o] for t, o in zip(_printed(), MEASURES_OURS, strict=True)}
                       for q, row in json.loads(out)["per_query"].items()}
    refs = {}
    if args.trec_eval:
        out, *_ = measured(trec_eval_cmd(args.trec_eval, qrels, run, "-q"))
        refs["C trec_eval 10"] = {q: v for q, v in parse_trec_eval(out).items() if q != "all"}
    if args.pytrec_eval:
        out, *_ = measured([sys.executable, "-c", PYTREC_SCRIPT, str(qrels), str(run),
                            json.dumps(MEASURES_TREC), "per_query"])
        refs["pytrec_eval"] = json.loads(out)["per_query"]
    print(f"queries on which every measure ({', '.join(_printed())}) agrees, to the 4 decimals trec_eval "
          "prints:")
    print(f"{'':36}" + "".join(f"{name:>20}" for name in refs))
    for label, mine in ours.items():
        cells = []
        for ref in refs.values():
            agree = sum(all(f"{mine[q][k]:.4f}" == f"{float(ref[q][k]):.4f}" for k in _printed())
                        for q in ref)
            cells.append(f"{agree:>13} / {len(ref)}")
        print(f"{label:36}" + "".join(cells))
    print(f"commands: {' '.join(ir_eval_cmd(qrels, run, '--per-query'))} [--score-precision float32]")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trec-eval", default=None, metavar="PATH", help="the C trec_eval binary")
    parser.add_argument("--queries", type=int, default=100_125)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", default=None, help="keep (and reuse) the generated files here")
    parser.add_argument("--ties", action="store_true", help="also the float32-resolution tie check")
    parser.add_argument("--no-speed", action="store_true", help="skip the speed part")
    parser.add_argument("--no-pytrec-eval", dest="pytrec_eval", action="store_false")
    args = parser.parse_args(argv)
    if args.trec_eval and not shutil.which(args.trec_eval):
        raise SystemExit(f"--trec-eval {args.trec_eval}: not an executable")
    if args.pytrec_eval:
        try:
            import pytrec_eval  # noqa: F401
        except ImportError:
            print("pytrec_eval: skipped (not installed; pip install pytrec-eval-terrier)")
            args.pytrec_eval = False
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="bench_trec_eval_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if not args.no_speed:
            speed(args, work)
        if args.ties:
            ties(args, work)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
