"""Write tests/data/trec_options: trec_eval's options run by the C trec_eval itself, on inputs made here.

trec_eval's own suite has no expected output for ``-n``, ``-J``, ``-N``, ``-Z`` (its z-score file is
not published), ``-D LEVEL.QID``, a run on standard input, two run tags or a long run's mean. This
script makes small inputs of its own (seeded; no public data) and records what the C trec_eval 10
prints for each command, so ``tests/corpus/test_trec_options.py`` can diff ``ragworkbook ir-eval``
against it byte for byte without the C program:

- ``qrels.txt``, ``run.txt``: 20 queries, grades -1..3, unjudged documents, ties, and a run whose
  lines carry two tags (``first`` then ``last``: trec_eval prints the last line's);
- ``zscores.txt``: ``qid measure mean sd`` for most queries and measures (some missing, some sd 0);
- ``qrels_jg.txt``: three judgment groups' judgements of the same queries (``-R qrels_jg``);
- ``qrels160.txt``, ``run160.txt``: 160 queries whose P@5 mean lies on a rounding boundary, where
  summing in query order (trec_eval) and pairwise (numpy) print different last digits;
- ``COMMANDS.json``: each command line (after ``trec_eval``, files relative to the folder), its
  standard input, and the file holding its expected output.

Usage (the C trec_eval 10 built from its source, e.g. ``make`` in its folder)::

    python scripts/make_trec_option_fixtures.py PATH/TO/trec_eval [OUT_DIR]
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _write_collection(out: Path) -> None:
    rng = random.Random(31)
    qrels, run = [], []
    for qn in range(1, 21):
        qid = f"q{qn:02d}"
        docs = [f"d{rng.randrange(300):03d}" for _ in range(40)]
        docs = list(dict.fromkeys(docs))
        judged = docs[: int(len(docs) * 0.6)]
        for d in sorted(judged):
            qrels.append(f"{qid} 0 {d} {rng.choice([-1, 0, 0, 0, 1, 1, 2, 3])}")
        retrieved = docs[:] + [f"x{rng.randrange(100):03d}" for _ in range(5)]  # unjudged documents
        rng.shuffle(retrieved)
        for rank, d in enumerate(dict.fromkeys(retrieved), start=1):
            score = round(rng.uniform(0, 10), 1)  # ties
            run.append((qid, d, rank, score))
    (out / "qrels.txt").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    half = len(run) // 2
    lines = [f"{q} Q0 {d} {r} {s} {'first' if i < half else 'last'}" for i, (q, d, r, s) in enumerate(run)]
    (out / "run.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_judgment_groups(out: Path) -> None:
    """``qrels_jg.txt``: the judgements of qrels.txt by three judgment groups (assessors) that disagree;
    group C judges only half of the queries."""
    rng = random.Random(5)
    lines = []
    for line in (out / "qrels.txt").read_text(encoding="utf-8").splitlines():
        q, _, d, g = line.split()
        for jg in ("A", "B", "C"):
            if jg == "C" and q > "q10":
                continue
            if rng.random() < 0.8:
                lines.append(f"{q} {jg} {d} {g if jg == 'A' else rng.choice([0, 0, 1, 2])}")
    (out / "qrels_jg.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_zscores(out: Path, measures: list[str]) -> None:
    rng = random.Random(7)
    lines = []
    for qn in range(1, 21):
        for m in measures:
            if rng.random() < 0.1:
                continue  # no line: trec_eval prints -1000000
            sd = 0 if rng.random() < 0.05 else round(rng.uniform(0.05, 3), 3)
            lines.append(f"q{qn:02d} {m} {round(rng.uniform(0, 5), 3)} {sd}")
    (out / "zscores.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _mean_differs(values: list[float]) -> bool:
    import numpy as np

    seq = 0.0
    for v in values:
        seq += v
    return f"{seq / len(values):6.4f}" != f"{float(np.mean(np.array(values))):6.4f}"


def _write_160(out: Path) -> None:
    """160 queries, 5 documents each, whose P@5 values (k / 5) sum to 32.6 (mean 0.20375: on the
    boundary of 0.2037 / 0.2038), in an order where the two ways of summing print differently."""
    rng = random.Random(160)
    while True:
        counts = [0] * 160
        for _ in range(163):  # 163 relevant documents retrieved in the top 5 -> sum of P@5 = 32.6
            while True:
                i = rng.randrange(160)
                if counts[i] < 5:
                    counts[i] += 1
                    break
        if _mean_differs([c / 5 for c in counts]):
            break
    qrels, run = [], []
    for qn, c in enumerate(counts):
        qid = f"t{qn:03d}"
        for j in range(5):
            doc = f"{qid}-d{j}"
            run.append(f"{qid} Q0 {doc} {j + 1} {5 - j} run160")
            qrels.append(f"{qid} 0 {doc} {1 if j < c else 0}")
    (out / "qrels160.txt").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    (out / "run160.txt").write_text("\n".join(run) + "\n", encoding="utf-8")


#: (name, command line after trec_eval, file read as standard input or None)
COMMANDS = [
    ("out.default", "qrels.txt run.txt", None),
    ("out.q.n", "-q -n qrels.txt run.txt", None),
    ("out.nosummary", "--nosummary -m map -m P.5 qrels.txt run.txt", None),
    ("out.J", "-q -J -m official qrels.txt run.txt", None),
    ("out.J.c.M", "-J -c -M 10 -m official qrels.txt run.txt", None),
    ("out.N", "-q -N 1000 -m utility.2,-1,-0.5,0.01 -m utility.1,-1,0,0 qrels.txt run.txt", None),
    ("out.Z", "-q -m official -Z zscores.txt qrels.txt run.txt", None),
    ("out.Z.summary", "-m official -Z zscores.txt qrels.txt run.txt", None),
    ("out.D", "-q -D 0.q07 -m official qrels.txt run.txt", None),
    ("out.stdin", "-q -m official qrels.txt -", "run.txt"),
    ("out.l2.J", "-q -l 2 -J -m P.5,10 -m ndcg_cut.10 qrels.txt run.txt", None),
    ("out.o.T.R", "-o -T trec_results -R qrels -m map qrels.txt run.txt", None),
    ("out.160", "-m P.5 qrels160.txt run160.txt", None),
    ("out.jg", "-q -R qrels_jg -m qrels_jg qrels_jg.txt run.txt", None),
    ("out.jg.J.c", "-R qrels_jg -J -c -m map_avgjg -m P_avgjg.5,7 -m Rprec_mult_avgjg.0.5,1.5 qrels_jg.txt "
     "run.txt", None),
]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    binary = Path(argv[0]).resolve()
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "tests" / "data" / "trec_options"
    out.mkdir(parents=True, exist_ok=True)
    _write_collection(out)
    names = subprocess.run([str(binary), "-q", "-m", "official", "qrels.txt", "run.txt"], cwd=out,
                           capture_output=True, text=True, check=True).stdout
    measures = sorted({line.split("\t")[0].strip() for line in names.splitlines()
                       if line.split("\t")[1] != "all"})
    _write_zscores(out, measures)
    _write_160(out)
    _write_judgment_groups(out)
    version = subprocess.run([str(binary), "-v"], capture_output=True, text=True).stderr.strip()
    listed = []
    for name, line, stdin in COMMANDS:
        args = line.split()
        feed = (out / stdin).read_bytes() if stdin else None
        done = subprocess.run([str(binary), *args], cwd=out, input=feed, capture_output=True, check=True)
        (out / name).write_bytes(done.stdout)
        listed.append({"expected": name, "args": args, "stdin": stdin})
    manifest = {"trec_eval": version, "commands": listed}
    (out / "COMMANDS.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(listed)} expected outputs of {version} to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
