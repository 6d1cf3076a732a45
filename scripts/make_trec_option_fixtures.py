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
- ``prefs.txt``, ``qrels_prefs.txt``, ``run_prefs.txt``, ``run_prefs_part.txt``: preferences
  (``-R prefs``, ``-R qrels_prefs``) of several judgment groups and sub-groups, and runs for them;
  ``rand*.prefs``, ``rand*.qrels_prefs``, ``rand*.run``: eight seeded random preference cases;
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


def _write_prefs(out: Path) -> None:
    """``prefs.txt`` (``-R prefs``: ``qid jg jsg docno rel_level``), ``qrels_prefs.txt`` (``-R
    qrels_prefs``: ``qid jg docno rel_level``) and ``run_prefs.txt``, a run for them: eight queries with
    one to three judgment groups each (judges that disagree), one to three sub-groups per group (levels
    drawn from one hidden order per group, so a group stays consistent; ties within a sub-group), the
    level 0 for non-relevant documents, documents retrieved and not, score ties, and a query whose
    levels are all equal (no preference). ``run_prefs_part.txt`` lacks two of the queries (for ``-c``)."""
    rng = random.Random(41)
    prefs, qrels_prefs, run = [], [], []
    for qn in range(1, 9):
        qid = f"p{qn}"
        pool = [f"d{i:02d}" for i in rng.sample(range(40), rng.randint(4, 12))]
        for jn in range(1 if qn == 3 else rng.randint(1, 3)):
            jg = f"u{jn + 1}"
            hidden = {d: 1 if qn == 3 else rng.choice([0, 0, 1, 1, 2, 3, 4.5]) for d in pool}
            for sn in range(rng.randint(1, 3)):
                for d in rng.sample(pool, rng.randint(2, len(pool))):
                    prefs.append(f"{qid} {jg} s{sn + 1} {d} {hidden[d]}")
            for d in rng.sample(pool, rng.randint(2, len(pool))):
                qrels_prefs.append(f"{qid} {jg} {d} {hidden[d]}")
        retrieved = rng.sample(pool, rng.randint(1, len(pool))) + [f"x{i}" for i in range(rng.randint(0, 3))]
        rng.shuffle(retrieved)
        run += [f"{qid} Q0 {d} {r} {rng.randint(1, 6)} prefrun" for r, d in enumerate(retrieved, start=1)]
    (out / "prefs.txt").write_text("\n".join(prefs) + "\n", encoding="utf-8")
    (out / "qrels_prefs.txt").write_text("\n".join(qrels_prefs) + "\n", encoding="utf-8")
    (out / "run_prefs.txt").write_text("\n".join(run) + "\n", encoding="utf-8")
    part = [line for line in run if line.split()[0] not in ("p2", "p5")]
    (out / "run_prefs_part.txt").write_text("\n".join(part) + "\n", encoding="utf-8")


#: trec_eval's all_prefs but prefs_avgjg_Rnonrel[_ret] (ir-eval refuses them on a judgment group of several
#: sub-groups; a qrels_prefs file has one per group and is asked for all_prefs)
PREFS_MEASURES = ("prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret prefs_simp prefs_pair "
                  "prefs_avgjg prefs_simp_ret prefs_pair_ret prefs_avgjg_ret prefs_simp_imp prefs_pair_imp "
                  "prefs_avgjg_imp").split()
_ALL_PREFS = " ".join(f"-m {m}" for m in PREFS_MEASURES)
#: seeds of the random preference cases (``rand{seed}.prefs`` / ``rand{seed}.run``)
RANDOM_PREFS = (101, 202, 303, 404, 505)


#: seeds of the random qrels_prefs cases (``rand{seed}.qrels_prefs`` / ``rand{seed}.run``)
RANDOM_QRELS_PREFS = (606, 707, 808)


def _write_random_prefs(out: Path, seed: int, qrels_form: bool = False) -> None:
    """A random case: up to six queries, up to three groups of up to three sub-groups (one with
    ``qrels_form``), up to twelve documents, runs with ties, unjudged documents and queries retrieving
    nothing (absent: ``-c``)."""
    rng = random.Random(seed)
    prefs, run = [], []
    for qn in range(rng.randint(2, 6)):
        qid = f"r{qn}"
        pool = [f"d{i}" for i in range(rng.randint(2, 12))]
        for jn in range(rng.randint(1, 3)):
            hidden = {d: rng.choice([0, 0, 1, 2, 3, 4.5]) for d in pool}
            for sn in range(1 if qrels_form else rng.randint(1, 3)):
                judged = rng.sample(pool, rng.randint(1, len(pool)))
                sub = "" if qrels_form else f" s{sn}"
                prefs += [f"{qid} j{jn}{sub} {d} {hidden[d]}" for d in judged]
        for d in rng.sample(pool + ["x0", "x1", "x2"], rng.randint(0, len(pool))):
            run.append(f"{qid} Q0 {d} 1 {rng.randint(1, 8)} rand{seed}")
    name = f"rand{seed}.{'qrels_prefs' if qrels_form else 'prefs'}"
    (out / name).write_text("\n".join(prefs) + "\n", encoding="utf-8")
    (out / f"rand{seed}.run").write_text("\n".join(run) + "\n", encoding="utf-8")


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
    ("out.prefs", "-R prefs -m prefs prefs.txt run_prefs.txt", None),
    ("out.prefs.q", "-q -R prefs -m prefs prefs.txt run_prefs.txt", None),
    ("out.prefs.all", f"-q -R prefs {_ALL_PREFS} prefs.txt run_prefs.txt", None),
    ("out.prefs.m", "-q -R prefs -m prefs_pair_imp -m num_q -m prefs_simp prefs.txt run_prefs.txt", None),
    ("out.prefs.c", f"-q -c -R prefs -m runid {_ALL_PREFS} prefs.txt run_prefs_part.txt", None),
    ("out.prefs.M", f"-q -M 3 -R prefs {_ALL_PREFS} prefs.txt run_prefs.txt", None),
    ("out.prefs.J.n", "-q -n -J -R prefs -m prefs prefs.txt run_prefs.txt", None),
    ("out.prefs.D", "-q -D 0.p5 -R prefs -m prefs prefs.txt run_prefs.txt", None),
    ("out.qrels_prefs", "-R qrels_prefs -m prefs qrels_prefs.txt run_prefs.txt", None),
    ("out.qrels_prefs.q.c.M", "-q -c -M 4 -R qrels_prefs -m all_prefs qrels_prefs.txt run_prefs_part.txt",
     None),
    ("out.qrels_prefs.all", "-q -R qrels_prefs -m all_prefs qrels_prefs.txt run_prefs.txt", None),
    *((f"out.rand{seed}", f"-q -c -R prefs -m runid -m num_q {_ALL_PREFS} rand{seed}.prefs rand{seed}.run",
       None) for seed in RANDOM_PREFS),
    *((f"out.rand{seed}", f"-q -c -R qrels_prefs -m all_prefs rand{seed}.qrels_prefs rand{seed}.run", None)
      for seed in RANDOM_QRELS_PREFS),
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
    _write_prefs(out)
    for seed in RANDOM_PREFS:
        _write_random_prefs(out, seed)
    for seed in RANDOM_QRELS_PREFS:
        _write_random_prefs(out, seed, qrels_form=True)
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
