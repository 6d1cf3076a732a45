"""Where ``ragworkbook ir-eval``'s time goes: each stage's CPU and wall seconds and the process's memory.

Usage (any qrels and run, e.g. the files ``bench_trec_eval.py --workdir DIR`` keeps)::

    python benchmarks/bench_ir_eval_stages.py QRELS RUN [--repeat 3]

Each round is a fresh process doing what ``ir-eval`` does without ``-m`` (trec_eval's default
measures), stage by stage: start-up and importing numpy and pyarrow, importing ragworkbook, reading the
qrels, reading the run, ranking the run and joining it with the qrels
(:func:`ragworkbook.metrics.ranking.rank_columns`), the measures, the output. It prints each stage's
CPU seconds (user + system), wall seconds, the peak resident memory after it and the minor page faults
it took (pages the kernel had to find and zero), as the median over the rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import os, resource, sys, time, json
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as ir-eval does
stages = []
last = [0.0, 0.0, 0]
def mark(name):
    ru = resource.getrusage(resource.RUSAGE_SELF)
    cpu, wall = ru.ru_utime + ru.ru_stime, time.perf_counter() - T0
    stages.append([name, cpu - last[0], wall - last[1], ru.ru_maxrss / 1024, ru.ru_minflt - last[2]])
    last[:] = [cpu, wall, ru.ru_minflt]
T0 = time.perf_counter() - time.process_time()  # the interpreter's start-up counts in the first stage
import numpy, pyarrow as pa
mark("start-up, numpy, pyarrow")
from ragworkbook.corpus.trec import read_qrels_columns, read_run_columns
from ragworkbook.metrics.batch import evaluate_ranked
from ragworkbook.metrics.ranking import rank_columns
from ragworkbook.metrics.trec_names import parse_trec_measures, trec_lines
mark("import ragworkbook")
pa.set_memory_pool(pa.system_memory_pool())  # as ir-eval does
request = parse_trec_measures(["official"], {"gain": "linear", "max_grade": 4.0})
qrels = read_qrels_columns(sys.argv[1]); mark("read the qrels")
run = read_run_columns(sys.argv[2]); mark("read the run")
ranked, skipped = rank_columns(qrels, run); mark("rank and join")
result = evaluate_ranked(ranked, request.metrics, skipped=skipped); mark("the measures")
lines = trec_lines(result.measured, result.query_ids, result.values, result.mean, per_query=False,
                   runid=run.tag); mark("the output")
print(json.dumps(stages))
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("qrels")
    parser.add_argument("run")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rounds = []
    for _ in range(args.repeat):
        out = subprocess.run([sys.executable, "-c", CHILD, args.qrels, args.run], capture_output=True,
                             text=True, check=True)
        rounds.append(json.loads(out.stdout.splitlines()[-1]))
    print(f"{'stage':28}{'CPU s':>8}{'wall s':>8}{'peak MB':>9}{'page faults':>13}"
          f"   (median of {args.repeat})")
    total = 0.0
    for i, (name, *_) in enumerate(rounds[0]):
        cpu, wall, peak, faults = (statistics.median(r[i][k] for r in rounds) for k in (1, 2, 3, 4))
        total += cpu
        print(f"{name:28}{cpu:8.2f}{wall:8.2f}{peak:9.0f}{faults:13,.0f}")
    print(f"{'all':28}{total:8.2f}")


if __name__ == "__main__":
    main()
