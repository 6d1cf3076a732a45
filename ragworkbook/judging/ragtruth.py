"""RAGTruth: real answers of six LLMs to QA, summarisation and data-to-text tasks, with human
hallucination spans (Niu et al., ACL 2024, arXiv:2401.00396; MIT).

The ``ragtruth`` data set (:mod:`ragworkbook.datasets`: vectara/FaithJudge's three files of RAGTruth's
test-split sources, at a pinned commit, checked) holds one source a line with its responses; each
response carries RAGTruth's span annotations verbatim. :func:`load_ragtruth` turns them into typed
:class:`RagTruthResponse` values, one per response: a response is **hallucinated** when it has at
least one labelled span (RAGTruth's own response-level rule, ``is_halu = len(labels) > 0``).

The ``context`` a metric is given is what the generating model saw: QA, the question's passages;
Summary, the article; Data2txt, the structured business record written out as indented JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragworkbook.corpus.jsonfile import DatasetError, PathLike, iter_jsonl

__all__ = ["TASKS", "RagTruthSpan", "RagTruthResponse", "RagTruthSet", "load_ragtruth"]

#: RAGTruth's three tasks, by the data set's file.
TASKS = {"ragtruth_qa.jsonl": "QA", "ragtruth_summary.jsonl": "Summary",
         "ragtruth_data2txt.jsonl": "Data2txt"}


@dataclass(frozen=True)
class RagTruthSpan:
    """One labelled hallucination: character offsets ``start:end`` in the response, its ``text`` and
    RAGTruth's ``label_type`` (Evident / Subtle, Conflict / Baseless Info)."""

    start: int
    end: int
    text: str
    label_type: str


@dataclass(frozen=True)
class RagTruthResponse:
    """One model's response to one source, with the source's ``question`` (QA) and ``context``."""

    id: str
    source_id: str
    task: str
    model: str
    question: str | None
    context: str
    response: str
    spans: tuple[RagTruthSpan, ...]

    @property
    def hallucinated(self) -> bool:
        """At least one labelled span (RAGTruth's response-level label)."""
        return bool(self.spans)


@dataclass(frozen=True)
class RagTruthSet:
    """Every response, in file order (QA, Summary, Data2txt)."""

    responses: list[RagTruthResponse]

    def __iter__(self) -> Iterator[RagTruthResponse]:
        return iter(self.responses)

    def __len__(self) -> int:
        return len(self.responses)


def _context(task: str, source: Any, where: str) -> tuple[str | None, str]:
    if task == "QA":
        if not isinstance(source, dict) or not isinstance(source.get("passages"), str):
            raise DatasetError(f"{where}: a QA source needs 'question' and 'passages'")
        return str(source.get("question", "")), source["passages"]
    if task == "Summary":
        if not isinstance(source, str):
            raise DatasetError(f"{where}: a Summary source must be the article's text")
        return None, source
    if not isinstance(source, dict):
        raise DatasetError(f"{where}: a Data2txt source must be a JSON object (the business record)")
    return None, json.dumps(source, indent=1, ensure_ascii=False)


def _spans(labels: Any, where: str) -> tuple[RagTruthSpan, ...]:
    if not isinstance(labels, list):
        raise DatasetError(f"{where}: field 'labels' must be a list of spans")
    out = []
    for i, lab in enumerate(labels):
        if not isinstance(lab, dict) or not all(isinstance(lab.get(k), int) for k in ("start", "end")):
            raise DatasetError(f"{where}: label {i} needs integer 'start' and 'end'")
        out.append(RagTruthSpan(lab["start"], lab["end"], str(lab.get("text", "")),
                                str(lab.get("label_type", ""))))
    return tuple(out)


def load_ragtruth(folder: PathLike | None = None) -> RagTruthSet:
    """Every RAGTruth response of the data set's three files (``folder``: where they are; default the
    ``ragtruth`` data set, downloaded and checked on first use). DatasetError names the file and line
    of a malformed record."""
    if folder is None:
        from ragworkbook.datasets import dataset_file

        paths = [dataset_file("ragtruth", name) for name in TASKS]
    else:
        paths = [Path(folder) / name for name in TASKS]
    responses = []
    for path in paths:
        task = TASKS[path.name]
        for line, rec in iter_jsonl(path):
            where = f"{path}, line {line}"
            if (not isinstance(rec, dict) or "source_id" not in rec
                    or not isinstance(rec.get("responses"), list)):
                raise DatasetError(f"{where}: expected an object with 'source_id', 'source' and 'responses'")
            question, context = _context(task, rec.get("source"), where)
            sid = str(rec["source_id"])
            for r in rec["responses"]:
                if not isinstance(r, dict) or not isinstance(r.get("response"), str) or not r.get("model"):
                    raise DatasetError(f"{where}: every response needs 'response' and 'model'")
                responses.append(RagTruthResponse(f"{sid}:{r['model']}", sid, task, str(r["model"]), question,
                                                  context, r["response"], _spans(r.get("labels", []), where)))
    return RagTruthSet(responses)
