"""TREC files: qrels and runs, read and written; the ``ragworkbook ir-eval`` command.

Formats (whitespace-separated, one judgement / one retrieved document a line):

- qrels: ``qid iteration docid grade`` (the iteration column is ignored; grade is
  an integer or a number, > 0 = relevant).
- run: ``qid Q0 docid rank score tag`` (``Q0`` and ``tag`` are ignored, and so is
  ``rank``, as in trec_eval: only the score orders a ranking, ties broken by
  document id descending).

Blank lines and lines starting with ``#`` are skipped. A malformed line, a
duplicate (qid, docid) pair or a NaN score raises ``ValueError`` naming the file
and the line number.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragworkbook._io import atomic_write_text

__all__ = ["read_qrels", "read_run", "write_qrels", "write_run"]

PathLike = str | os.PathLike


def _lines(path: PathLike):
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            text = line.strip()
            if text and not text.startswith("#"):
                yield lineno, text.split()


def _number(text: str, what: str, path: PathLike, lineno: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{path}:{lineno}: {what} {text!r} is not a number") from None
    if math.isnan(value):
        raise ValueError(f"{path}:{lineno}: {what} is NaN")
    return value


def read_qrels(path: PathLike) -> dict[str, dict[str, int | float]]:
    """Read a TREC qrels file into ``{qid: {docid: grade}}``.

    Grades written as integers stay ``int``; others are ``float``.
    """
    qrels: dict[str, dict[str, int | float]] = {}
    for lineno, parts in _lines(path):
        if len(parts) != 4:
            raise ValueError(
                f"{path}:{lineno}: a qrels line needs 4 fields 'qid iteration docid grade', "
                f"got {len(parts)}: {' '.join(parts)!r}"
            )
        qid, _, doc, grade_text = parts
        try:
            grade: int | float = int(grade_text)
        except ValueError:
            grade = _number(grade_text, "grade", path, lineno)
        docs = qrels.setdefault(qid, {})
        if doc in docs:
            raise ValueError(f"{path}:{lineno}: document {doc!r} is judged twice for query {qid!r}")
        docs[doc] = grade
    if not qrels:
        raise ValueError(f"{path}: the qrels file holds no judgement")
    return qrels


def read_run(path: PathLike) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{qid: {docid: score}}`` (the rank column is ignored)."""
    run: dict[str, dict[str, float]] = {}
    for lineno, parts in _lines(path):
        if len(parts) != 6:
            raise ValueError(
                f"{path}:{lineno}: a run line needs 6 fields 'qid Q0 docid rank score tag', "
                f"got {len(parts)}: {' '.join(parts)!r}"
            )
        qid, _, doc, rank, score_text, _ = parts
        if not rank.lstrip("-").isdigit():
            raise ValueError(f"{path}:{lineno}: rank {rank!r} is not an integer")
        score = _number(score_text, "score", path, lineno)
        docs = run.setdefault(qid, {})
        if doc in docs:
            raise ValueError(f"{path}:{lineno}: document {doc!r} is retrieved twice for query {qid!r}")
        docs[doc] = score
    if not run:
        raise ValueError(f"{path}: the run file holds no result")
    return run


def write_qrels(qrels: Mapping[Any, Mapping[Any, Any]], path: PathLike) -> Path:
    """Write ``{qid: {docid: grade}}`` as a TREC qrels file (atomically)."""
    lines = [f"{q} 0 {d} {g}" for q, docs in qrels.items() for d, g in docs.items()]
    return atomic_write_text(path, "\n".join(lines) + "\n")


def write_run(run: Mapping[Any, Mapping[Any, float]], path: PathLike, tag: str = "ragworkbook") -> Path:
    """Write ``{qid: {docid: score}}`` as a TREC run file (atomically), each query's
    documents in rank order (score desc, docid desc — the order trec_eval reads)."""
    lines = []
    for q, docs in run.items():
        ranked = sorted(docs.items(), key=lambda kv: (kv[1], str(kv[0])), reverse=True)
        # repr of a Python float round-trips exactly; numpy scalars are converted first
        # (their repr in numpy >= 2 is "np.float64(0.5)", which is not a number)
        lines += [f"{q} Q0 {d} {i} {float(s)!r} {tag}" for i, (d, s) in enumerate(ranked, start=1)]
    return atomic_write_text(path, "\n".join(lines) + "\n")
