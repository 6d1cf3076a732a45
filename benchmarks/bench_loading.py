"""Loading time per item of eval sets and corpora, from 10k to 1M items: it must stay flat.

Writes eval sets (.json and .jsonl) and paged corpora of growing size into a temporary
folder, loads each with the package's loaders (which validate every item and keep a line
number for every error message), and prints the time per item. A loader that rescans the
text per item (quadratic) shows a per-item time growing with the size; a linear one shows
a flat column. Reference: ``json.loads`` of the same text, the floor any loader pays.

    python benchmarks/bench_loading.py [--sizes 10000,100000,1000000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.corpus.pages import load_corpus


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=2, help="time each load this many times, keep the best")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'file':<22}{'items':>10}{'load s':>9}{'us/item':>9}{'json.loads us/item':>20}")
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm.json"  # the first load pays for imports: not part of any row
        one = {"id": "a", "question": "q", "keyword": "k", "reference": "r"}
        warm.write_text(json.dumps({"items": [one]}))
        load_eval_set(warm)
        for n in sizes:
            items = [{"id": f"q{i}", "question": f"What is fact number {i}?", "keyword": f"fact {i}",
                      "reference": f"Fact {i} is stated on page {i % 17 + 1}."} for i in range(n)]
            pages = [{"page": i + 1, "text": f"Page {i + 1}. " + "Some study notes. " * 8} for i in range(n)]
            files = {
                "eval set .json": (Path(tmp) / f"es{n}.json", json.dumps({"items": items}, indent=1),
                                   load_eval_set),
                "eval set .jsonl": (Path(tmp) / f"es{n}.jsonl", "\n".join(map(json.dumps, items)) + "\n",
                                    load_eval_set),
                "corpus .json": (Path(tmp) / f"c{n}.json", json.dumps({"pages": pages}, indent=1),
                                 load_corpus),
            }
            for label, (path, text, loader) in files.items():
                path.write_text(text, encoding="utf-8")
                secs = _best(lambda: loader(path), args.repeat)  # noqa: B023 - used at once
                if path.suffix == ".jsonl":
                    floor = _best(lambda: [json.loads(x) for x in text.splitlines()], args.repeat)  # noqa: B023
                else:
                    floor = _best(lambda: json.loads(text), args.repeat)  # noqa: B023
                print(f"{label:<22}{n:>10,}{secs:>9.2f}{secs / n * 1e6:>9.1f}{floor / n * 1e6:>20.1f}")
                path.unlink()


if __name__ == "__main__":
    main()
