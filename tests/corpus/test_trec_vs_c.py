"""``ragworkbook ir-eval`` against a C trec_eval the user gives, on generated runs: every byte of the output.

trec_eval's own suite (``test_trec_conformance.py``) is three queries. Here a C
trec_eval (``RAGWORKBOOK_TREC_EVAL=/path/to/trec_eval``: the project never ships
nor builds it; without it these comparisons skip, saying so) and ``ir-eval`` read
the same generated qrels and run: hundreds of queries of uneven depth,
scores with many ties, queries written out of rank order or split in two, run
queries without judgements, document ids of 1 to 40 bytes that share long prefixes
(so that ties are broken on their last bytes), non-ASCII query and document ids, grades -1 to 3. The
default output (trec_eval's default measure set), ``-q``, ``-c``, ``-M``, ``-l``
and ``-m all_trec`` must equal the C tool's output byte for byte. The runs are
shaped so that each of ranking's search paths is taken: every query of one depth
(the folds themselves become the table), uneven depths (a padded table), and a
ranking deeper than a table holds (the sorted search): that part needs no C tool.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ragworkbook.cli import main
from ragworkbook.metrics import ranking

pytestmark = pytest.mark.reference

TREC_EVAL_ENV = "RAGWORKBOOK_TREC_EVAL"


@pytest.fixture(scope="session")
def trec_eval() -> Path:
    """The C trec_eval named by ``$RAGWORKBOOK_TREC_EVAL`` (never built here); skip without it."""
    given = os.environ.get(TREC_EVAL_ENV, "").strip()
    if not given:
        pytest.skip(f"no C trec_eval to compare with: set {TREC_EVAL_ENV}=/path/to/trec_eval (the project "
                    "does not build it; its conformance is checked against trec_eval's expected outputs)")
    binary = Path(given).expanduser()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.fail(f"{TREC_EVAL_ENV}={given}: not an executable file", pytrace=False)
    return binary


def _doc_ids(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct document ids of assorted shapes: short, 8-16 bytes, long with a shared prefix
    (ties then compare their last bytes), non-ASCII."""
    shapes = [lambda i: f"d{i}", lambda i: f"doc{i:07d}", lambda i: f"clueweb09-en0000-{i % 7:02d}-{i:05d}",
              lambda i: f"{i}", lambda i: f"é{i}ü", lambda i: f"MARCO_{'x' * (i % 23)}{i}"]
    picks = rng.integers(0, len(shapes), size=n)
    return [shapes[k](i) for i, k in enumerate(picks.tolist())]


def generate(tmp: Path, seed: int, depths: str, qrels_only: int = 0) -> tuple[Path, Path]:
    """Write a qrels and a run; ``depths``: ``"uniform"`` (every query 100 deep), ``"uneven"`` (1 to 150)
    or ``"deep"`` (uneven, one query 4200 deep). ``qrels_only``: judged queries the run lacks."""
    rng = np.random.default_rng(seed)
    n_queries = 240
    qids = [f"{100 + i}" if i % 5 else f"q-{i}" if i % 3 else f"ü{i}" for i in range(n_queries)]
    run_lines: list[list[str]] = []
    qrels_lines: list[str] = []
    for i, q in enumerate(qids):
        depth = 100 if depths == "uniform" else int(rng.integers(1, 151))
        if depths == "deep" and i == 7:
            depth = 4200
        pool = _doc_ids(rng, depth + 30)
        order = rng.permutation(len(pool))
        retrieved = [pool[k] for k in order[:depth]]
        levels = rng.integers(2, 12)  # few distinct scores: many ties
        scores = np.round(rng.integers(0, levels, size=depth) / levels - 0.3, 4)
        if i % 9 == 0:
            scores = scores * 1e-3 + 1e-9 * rng.random(depth)  # close, distinct scores
        rank = np.argsort(-scores, kind="stable")
        lines = [f"{q} Q0 {retrieved[k]} {r + 1} {float(scores[k])!r} run{seed}"
                 for r, k in enumerate(rank.tolist())]
        if i % 6 == 1:
            rng.shuffle(lines)  # not written in rank order
        if i % 11 == 3 and len(lines) > 2:
            run_lines.append(lines[: len(lines) // 2])  # this query split around the next one
            run_lines.append(None)  # type: ignore[arg-type]
            run_lines.append(lines[len(lines) // 2:])
        else:
            run_lines.append(lines)
        if i % 97 == 50:
            continue  # a run query without judgements
        judged = [retrieved[k] for k in rng.choice(depth, size=min(depth, int(rng.integers(1, 15))),
                                                     replace=False).tolist()]
        judged += [pool[k] for k in order[depth:depth + int(rng.integers(0, 6))].tolist()]
        qrels_lines += [f"{q} 0 {d} {int(g)}" for d, g in zip(judged, rng.integers(-1, 4, size=len(judged)),
                                                             strict=True)]
    for j in range(qrels_only):
        qrels_lines += [f"zz{j} 0 {d} 1" for d in _doc_ids(rng, 3)]
    # a split query's second half goes after the query that follows it
    ordered: list[list[str]] = []
    pending: list[list[str]] = []
    k = 0
    while k < len(run_lines):
        if k + 1 < len(run_lines) and run_lines[k + 1] is None:
            ordered.append(run_lines[k])
            pending.append(run_lines[k + 2])
            k += 3
            continue
        ordered.append(run_lines[k])
        ordered += pending
        pending = []
        k += 1
    ordered += pending
    qrels_path, run_path = tmp / f"qrels_{seed}", tmp / f"run_{seed}"
    qrels_path.write_text("\n".join(qrels_lines) + "\n", encoding="utf-8")
    run_path.write_text("\n".join(line for part in ordered for line in part) + "\n", encoding="utf-8")
    return qrels_path, run_path


def _ours(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["ir-eval", *argv]) == 0
    return capsys.readouterr().out


def _theirs(binary: Path, argv: list[str]) -> str:
    done = subprocess.run([str(binary), *argv], capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 0, done.stderr
    return done.stdout


CASES = [  # seed, depths, flags, judged queries the run lacks
    (1, "uniform", [], 0),
    (2, "uneven", [], 0),
    (3, "uneven", ["-q"], 0),
    (4, "uniform", ["-q", "-m", "all_trec"], 0),
    (5, "uneven", ["-c", "-q"], 3),
    (6, "uneven", ["-M", "40", "-l", "2"], 0),
    (7, "deep", ["-q"], 0),
]


@pytest.mark.parametrize("seed,depths,flags,qrels_only", CASES,
                         ids=[f"{d}{''.join(f)}" for _, d, f, _ in CASES])
def test_output_equals_the_c_trec_eval(trec_eval, tmp_path, capsys, seed, depths, flags, qrels_only):
    qrels, run = generate(tmp_path, seed, depths, qrels_only)
    theirs = _theirs(trec_eval, [*flags, str(qrels), str(run)])
    ours = _ours([*flags, str(qrels), str(run)], capsys)
    assert ours.splitlines() == theirs.splitlines()  # the diff, line by line, when it fails
    assert ours == theirs


@pytest.mark.parametrize("depths,path", [("uniform", "table (the folds themselves)"),
                                         ("uneven", "padded table"), ("deep", "sorted search")])
def test_the_generated_runs_take_each_search_path(tmp_path, depths, path, monkeypatch):
    """The cases above reach every search of :mod:`ragworkbook.metrics.ranking`."""
    from ragworkbook.corpus.trec import read_qrels_columns, read_run_columns

    built: list[object] = []
    real = ranking._Table.build.__func__

    def spy(cls, fold, seg_start, seg_len, uniform):
        table = real(cls, fold, seg_start, seg_len, uniform)
        built.append((uniform, table))
        return table

    monkeypatch.setattr(ranking._Table, "build", classmethod(spy))
    qrels, run = generate(tmp_path, 11, depths)
    ranking.rank_columns(read_qrels_columns(qrels), read_run_columns(run))
    (uniform, table), = built
    assert (uniform, table is None) == {"uniform": (True, False), "uneven": (False, False),
                                        "deep": (False, True)}[depths], path
