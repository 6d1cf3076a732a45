"""Loading time per item and peak memory of the data loaders, from 10k to 1M items: both must stay flat.

Two tables.

1. **Answers files** (``ragworkbook eval --answers``): JSON Lines (and, with ``--formats``, CSV and a
   JSON array) of 10k to 1M records of about 240 bytes each (an id, a question, an answer, two
   contexts and a reference), each loaded by :func:`ragworkbook.corpus.answers.load_answer_records`
   in a fresh process, which reports the load time, the time per record, and the peak resident
   memory the load added (``ru_maxrss`` after the load minus before it) as a multiple of the
   file's size. Targets: time per record within 1.5x from the smallest size to the largest,
   peak memory within 3x the file. Then one record with a 10 MB answer, scored with the default
   generation metrics: the answer is kept but not scored (``text_too_long``), in seconds instead of
   minutes.
2. **Eval sets and corpora** (.json, .jsonl) of growing size, time per item beside ``json.loads`` of
   the same text, the floor any loader pays.

    python benchmarks/bench_loading.py [--sizes 10000,100000,1000000] [--formats jsonl,csv,json]
                                       [--skip-eval-sets] [--skip-long-answer]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.corpus.pages import load_corpus

#: Run in a fresh interpreter: import, note the peak RSS, load, note it again.
_CHILD = """
import json, resource, sys, time
from ragworkbook.corpus.answers import load_answer_records
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
answers = load_answer_records(sys.argv[1])
secs = time.perf_counter() - t
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"n": len(answers), "secs": secs, "added_kib": after - before}))
"""

_LONG = """
import json, sys, time
from ragworkbook.evaluation.outputs import evaluate_outputs
t = time.perf_counter()
report = evaluate_outputs(sys.argv[1], metrics=["meteor", "embedding_similarity", "token_f1"], progress=False)
secs = time.perf_counter() - t
print(json.dumps({"secs": secs, "unscored": {m: u.reason for m, u in
                  ((m, report.unscored(m).get("long")) for m in report.metrics) if u}}))
"""


def _record(i: int) -> dict[str, object]:
    page = i % 17 + 1
    return {"id": f"q{i}", "question": f"What is fact number {i}?",
            "answer": f"Fact {i} is stated on page {page}.",
            "contexts": [f"Page {page} states fact {i} and a little more.", f"Another passage about {i}."],
            "reference": f"Fact {i} is on page {page}."}


def _write_answers(path: Path, n: int, fmt: str) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        if fmt == "jsonl":
            for i in range(n):
                fh.write(json.dumps(_record(i)) + "\n")
        elif fmt == "json":
            fh.write("[\n" + ",\n".join(json.dumps(_record(i)) for i in range(n)) + "\n]\n")
        else:
            import csv

            writer = csv.writer(fh)
            writer.writerow(["id", "question", "answer", "contexts", "reference"])
            for i in range(n):
                r = _record(i)
                writer.writerow([r["id"], r["question"], r["answer"], json.dumps(r["contexts"]),
                                 r["reference"]])


def _child(code: str, path: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env,
                         check=False)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_answers(tmp: Path, sizes: list[int], formats: list[str], repeat: int) -> None:
    print(f"{'answers file':<18}{'records':>10}{'MB':>8}{'load s':>9}{'us/record':>11}{'peak MB':>9}"
          f"{'x file':>8}")
    for fmt in formats:
        per_item = []
        for n in sizes:
            path = tmp / f"answers{n}.{fmt}"
            _write_answers(path, n, fmt)
            size = path.stat().st_size
            runs = [_child(_CHILD, path) for _ in range(repeat)]
            best = min(runs, key=lambda r: r["secs"])
            added = max(r["added_kib"] for r in runs) * 1024
            assert best["n"] == n, best
            per_item.append(best["secs"] / n)
            secs = best["secs"]
            print(f"{'.' + fmt:<18}{n:>10,}{size / 1e6:>8.1f}{secs:>9.2f}{secs / n * 1e6:>11.1f}"
                  f"{added / 1e6:>9.0f}{added / size:>8.2f}")
            path.unlink()
        print(f"{'':<18}time per record, largest / smallest size: {per_item[-1] / per_item[0]:.2f}x")


def bench_long_answer(tmp: Path) -> None:
    path = tmp / "long.jsonl"
    sentence = "The model reached a BLEU score of many points on the translation task. "
    answer = (sentence * 150_000)[:10_000_000]
    path.write_text(json.dumps({"id": "long", "question": "What BLEU score?", "answer": answer,
                                "contexts": ["BLEU 28.4 on English-to-German."],
                                "reference": "28.4 BLEU on English-to-German."}) + "\n", encoding="utf-8")
    res = _child(_LONG, path)
    print(f"one 10 MB answer, meteor + embedding_similarity + token_f1: {res['secs']:.2f} s; "
          f"not scored: {res['unscored']}")


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def bench_eval_sets(tmp: Path, sizes: list[int], repeat: int) -> None:
    print(f"{'file':<22}{'items':>10}{'load s':>9}{'us/item':>9}{'json.loads us/item':>20}")
    warm = tmp / "warm.json"  # the first load pays for imports: not part of any row
    one = {"id": "a", "question": "q", "keyword": "k", "reference": "r"}
    warm.write_text(json.dumps({"items": [one]}))
    load_eval_set(warm)
    for n in sizes:
        items = [{"id": f"q{i}", "question": f"What is fact number {i}?", "keyword": f"fact {i}",
                  "reference": f"Fact {i} is stated on page {i % 17 + 1}."} for i in range(n)]
        pages = [{"page": i + 1, "text": f"Page {i + 1}. " + "Some study notes. " * 8} for i in range(n)]
        files = {
            "eval set .json": (tmp / f"es{n}.json", json.dumps({"items": items}, indent=1), load_eval_set),
            "eval set .jsonl": (tmp / f"es{n}.jsonl", "\n".join(map(json.dumps, items)) + "\n",
                                load_eval_set),
            "corpus .json": (tmp / f"c{n}.json", json.dumps({"pages": pages}, indent=1), load_corpus),
        }
        for label, (path, text, loader) in files.items():
            path.write_text(text, encoding="utf-8")
            secs = _best(lambda: loader(path), repeat)  # noqa: B023 - used at once
            if path.suffix == ".jsonl":
                floor = _best(lambda: [json.loads(x) for x in text.splitlines()], repeat)  # noqa: B023
            else:
                floor = _best(lambda: json.loads(text), repeat)  # noqa: B023
            print(f"{label:<22}{n:>10,}{secs:>9.2f}{secs / n * 1e6:>9.1f}{floor / n * 1e6:>20.1f}")
            path.unlink()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--formats", default="jsonl", help="answers file formats: jsonl,csv,json")
    ap.add_argument("--repeat", type=int, default=2, help="time each load this many times, keep the best")
    ap.add_argument("--skip-eval-sets", action="store_true")
    ap.add_argument("--skip-long-answer", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        bench_answers(Path(tmp), sizes, [f.strip() for f in args.formats.split(",")], args.repeat)
        if not args.skip_long_answer:
            bench_long_answer(Path(tmp))
        if not args.skip_eval_sets:
            bench_eval_sets(Path(tmp), sizes, args.repeat)


if __name__ == "__main__":
    main()
