"""Answers files: the outputs a RAG system already produced, read to be scored as they are.

One record per question: the question, the system's answer, the contexts the
answer was generated from (best first), and optionally an id, a reference
answer and a source of relevance (relevant ids or a keyword). The format is
the JSON Schema ``ragworkbook/schemas/answers.schema.json`` (print it with
``ragworkbook schema answers``); its description is the reference for
everything below.

- Files: JSON Lines (``.jsonl``), a JSON array or an object holding the array
  under ``answers``, ``rows`` or ``samples`` (``.json``; the workbook's saved
  runs are such objects), or CSV (``.csv``; list fields as JSON arrays in
  their cells, Python list literals accepted, an empty cell = no value except an
  empty answer).
- Field names (:data:`FIELDS`): the workbook's own, RAGAS 0.2+
  (``user_input``, ``response``, ``retrieved_contexts``,
  ``retrieved_context_ids``, ``reference``, ``reference_context_ids``) and
  RAGAS 0.1 (``question``, ``answer``, ``contexts``, ``ground_truth``). Other
  fields are ignored and listed (:attr:`AnswerSet.ignored`).
- Contexts: strings, or objects with ``text`` and an optional ``id``.
- Ids: a record without one gets :func:`question_id` of its question; when
  that id is taken in the file, ``-r<position>`` is appended
  (:func:`assign_ids`).

:func:`ragas_records` and :func:`save_answer_records` go the other way: a run
of the workbook's pipeline written as a RAGAS 0.2 JSONL file.

Every record is checked; the file's problems are raised together, each naming
its line and field (:class:`~ragworkbook.corpus.jsonfile.DatasetError`, up to
:data:`~ragworkbook.corpus.jsonfile.MAX_PROBLEMS` listed).
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragworkbook.corpus.jsonfile import (
    DatasetError,
    PathLike,
    element_lines,
    location,
    parse_csv,
    parse_json,
    parse_jsonl,
    raise_problems,
    read_text,
)

__all__ = ["FIELDS", "LIST_FIELDS", "AnswerRecord", "AnswerSet", "question_id", "assign_ids",
           "resolve_fields", "load_answer_records", "answer_records", "ragas_records", "save_answer_records"]

#: Canonical field -> the names accepted for it, the workbook's first (RAGAS 0.2+ and 0.1 names included).
FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id", "sample_id", "question_id", "qid"),
    "question": ("question", "user_input"),
    "answer": ("answer", "response"),
    "contexts": ("contexts", "retrieved_contexts"),
    "context_ids": ("context_ids", "retrieved_context_ids"),
    "reference": ("reference", "ground_truth"),
    "keyword": ("keyword",),
    "relevant_ids": ("relevant_ids", "reference_context_ids", "relevant_context_ids"),
}
#: Canonical fields whose value is a list (a JSON array in a CSV cell).
LIST_FIELDS = ("contexts", "context_ids", "relevant_ids")
#: Members of a JSON object that may hold the records.
_CONTAINERS = ("answers", "rows", "samples")


def question_id(question: str) -> str:
    """The id given to a question that has none: ``"q-"`` + the first 10 hex digits of the SHA-256
    of the question's UTF-8 text, exactly as written (the same question always gets the same id)."""
    return "q-" + hashlib.sha256(question.encode("utf-8")).hexdigest()[:10]


def assign_ids(ids: Sequence[str | None], questions: Sequence[str]) -> list[str]:
    """Fill the missing ids: ``ids[i]`` if given, else :func:`question_id` of ``questions[i]``; when
    that is taken (by a given id anywhere in the list, or an earlier generated one), ``-r`` and the
    1-based position ``i + 1`` are appended. Given ids are kept as they are (checking them for
    repeats is the caller's job)."""
    taken = {i for i in ids if i is not None}
    out: list[str] = []
    for pos, (given, q) in enumerate(zip(ids, questions, strict=True), start=1):
        if given is not None:
            out.append(given)
            continue
        cand = question_id(q)
        while cand in taken:
            cand = f"{cand}-r{pos}"
        taken.add(cand)
        out.append(cand)
    return out


@dataclass(frozen=True)
class AnswerRecord:
    """One answered question, as the file gave it.

    ``contexts`` are the context texts, best first; ``context_ids`` their ids
    (``None`` where the file gives none); ``reference`` is None when the file
    has none (absent, null or blank); ``relevant_ids`` is None when not given
    (``[]``: given, and nothing is relevant). ``line`` is where the record
    starts in its file (None for records given in memory); ``id_generated``
    says the id was made by :func:`assign_ids`.
    """

    id: str
    question: str
    answer: str
    contexts: list[str]
    context_ids: list[str | None]
    reference: str | None = None
    keyword: str | None = None
    relevant_ids: list[str] | None = None
    line: int | None = None
    id_generated: bool = False

    @property
    def has_context_ids(self) -> bool:
        """True when every context has an id (vacuously for no context)."""
        return all(c is not None for c in self.context_ids)


@dataclass
class AnswerSet:
    """The records of one answers file (or list), in order, with unique ids.

    ``ignored``: fields present in the input that no accepted name matches
    (kept out of the scoring, listed so nothing is dropped silently).
    """

    records: list[AnswerRecord]
    source: str = "<memory>"
    ignored: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[AnswerRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def ids(self) -> list[str]:
        """The record ids, in order."""
        return [r.id for r in self.records]

    @property
    def n_generated_ids(self) -> int:
        """How many ids were made by :func:`assign_ids`."""
        return sum(r.id_generated for r in self.records)


def resolve_fields(rec: Mapping[str, Any], table: Mapping[str, Sequence[str]],
                   where: str) -> tuple[dict[str, Any], list[str]]:
    """``{canonical field: value}`` of the names of ``table`` present in ``rec`` (a null value counts as
    absent), and the problems: a field given under two names with different values."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for canon, names in table.items():
        present = [n for n in names if n in rec and rec[n] is not None]
        if not present:
            continue
        first = rec[present[0]]
        for other in present[1:]:
            if rec[other] != first:
                what = canon.replace("_", " ")
                problems.append(f"{where}: fields {present[0]!r} and {other!r} both give the {what} "
                                "(with different values): keep one")
        values[canon] = first
    return values, problems


def _missing(value: Any) -> bool:
    """An absent value of a DataFrame or CSV cell: None, NaN, or pandas' NA."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return type(value).__name__ in ("NAType", "NaTType")


def _plain(value: Any) -> Any:
    """numpy arrays and scalars (from a DataFrame) as plain lists and numbers."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    return value


def _list_cell(text: str, name: str, where: str) -> tuple[Any, str | None]:
    """A CSV cell holding a list: a JSON array, or a Python list literal (``['a', 'b']``)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None, (f"{where}: field {name!r} must hold a JSON array in its CSV cell, like "
                          f'["first passage", "second passage"]; got {text[:40]!r}')
    return _plain(value), None


_LIST_NAMES = {n for canon in LIST_FIELDS for n in FIELDS[canon]}


def _clean(rec: Mapping[str, Any], where: str, csv: bool) -> tuple[dict[str, Any], list[str]]:
    """Drop absent values, turn numpy values into plain ones and CSV cells into lists."""
    out: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in rec.items():
        key = str(key)
        if csv:
            if value is None or (value == "" and key not in FIELDS["answer"]):  # an empty answer is an answer
                continue
            if key in _LIST_NAMES:
                value, problem = _list_cell(value, key, where)
                if problem:
                    problems.append(problem)
                    continue
        else:
            value = _plain(value)
            if not isinstance(value, list) and _missing(value):
                continue
        out[key] = value
    return out, problems


def _str_id(x: Any) -> str:
    return str(x)


def _record(rec: dict[str, Any], where: str, line: int | None) -> tuple[dict[str, Any] | None, list[str]]:
    """Validate one cleaned record against the schema and resolve its fields -> (values, problems)."""
    from ragworkbook.schemas import record_problems

    problems = record_problems(rec, "answers", where, "record")
    if problems:
        return None, problems
    values, problems = resolve_fields(rec, FIELDS, where)
    if problems:
        return None, problems
    texts: list[str] = []
    inner_ids: list[str | None] = []
    for c in values["contexts"]:
        if isinstance(c, str):
            texts.append(c)
            inner_ids.append(None)
        else:
            texts.append(c["text"])
            inner_ids.append(None if c.get("id") is None else _str_id(c["id"]))
    ids = inner_ids
    if "context_ids" in values:
        given = [_str_id(x) for x in values["context_ids"]]
        name = next(n for n in FIELDS["context_ids"] if n in rec)
        if len(given) != len(texts):
            problems.append(f"{where}: field {name!r} has {len(given)} ids for {len(texts)} contexts: "
                            "give one id per context, in the same order")
        elif any(i is not None and i != g for i, g in zip(inner_ids, given, strict=True)):
            problems.append(f"{where}: field {name!r} contradicts the ids inside the contexts: keep one")
        ids = given
    if problems:
        return None, problems
    reference = values.get("reference")
    keyword = values.get("keyword")
    relevant = values.get("relevant_ids")
    return {
        "id": None if "id" not in values else _str_id(values["id"]),
        "question": values["question"], "answer": values["answer"],
        "contexts": texts, "context_ids": ids,
        "reference": reference if isinstance(reference, str) and reference.strip() else None,
        "keyword": keyword,
        "relevant_ids": None if relevant is None else [_str_id(x) for x in relevant],
        "line": line,
    }, []


def _build(entries: Sequence[tuple[str, int | None, Any]], source: str, csv: bool = False) -> AnswerSet:
    """Check every entry ``(where, line, record)`` and build the set, or raise all the problems."""
    problems: list[str] = []
    parsed: list[dict[str, Any]] = []
    known = {n for names in FIELDS.values() for n in names}
    ignored: list[str] = []
    first_at: dict[str, str] = {}
    for where, line, rec in entries:
        if isinstance(rec, Mapping):
            rec, cell_problems = _clean(rec, where, csv)
        else:
            problems.append(f"{where}: a record must be a JSON object, got {type(rec).__name__}")
            continue
        for key in rec:
            if key not in known and key not in ignored:
                ignored.append(key)
        if cell_problems:
            problems.extend(cell_problems)
            continue
        values, rec_problems = _record(rec, where, line)
        if rec_problems:
            problems.extend(rec_problems)
            continue
        rid = values["id"]
        if rid is not None:
            if rid in first_at:
                problems.append(f"{where}: field 'id': duplicate id {rid!r} (first at {first_at[rid]}); "
                                "ids must be unique")
                continue
            first_at[rid] = where
        parsed.append(values)
    if not entries:
        problems.append(f"{source}: no records (expected one record per answered question)")
    raise_problems(source, problems)
    ids = assign_ids([p["id"] for p in parsed], [p["question"] for p in parsed])
    records = [AnswerRecord(id=i, question=p["question"], answer=p["answer"], contexts=p["contexts"],
                            context_ids=p["context_ids"], reference=p["reference"], keyword=p["keyword"],
                            relevant_ids=p["relevant_ids"], line=p["line"], id_generated=p["id"] is None)
               for i, p in zip(ids, parsed, strict=True)]
    return AnswerSet(records=records, source=source, ignored=ignored)


def load_answer_records(path: PathLike) -> AnswerSet:
    """Read and check an answers file (``.jsonl``, ``.json`` or ``.csv``; see the module docstring).

    FileNotFoundError for a missing file; :class:`DatasetError` listing every
    problem of the file (line and field), up to the cap.
    """
    path = Path(path)
    text = read_text(path)
    suffix = path.suffix.lower()
    source = str(path)
    if suffix == ".jsonl":
        entries = [(location(path, ln), ln, rec) for ln, rec in parse_jsonl(path, text)]
        return _build(entries, source)
    if suffix == ".csv":
        entries = [(location(path, ln), ln, rec) for ln, rec in parse_csv(path, text)]
        return _build(entries, source, csv=True)
    if suffix != ".json":
        raise DatasetError(f"{path}: an answers file is .jsonl, .json or .csv, got "
                           f"{path.suffix or 'no suffix'!r} (`ragworkbook schema answers` describes the "
                           "format)")
    obj = parse_json(path, text)
    if isinstance(obj, list):
        raw, lines = obj, element_lines('{"items": ' + text, "items")
    elif isinstance(obj, dict):
        key = next((k for k in _CONTAINERS if isinstance(obj.get(k), list)), None)
        if key is None:
            raise DatasetError(f"{path}: a JSON answers file is an array of records, or an object with the "
                               f"records under {', '.join(repr(k) for k in _CONTAINERS)}; this object has "
                               f"{', '.join(repr(k) for k in list(obj)[:8]) or 'no members'}")
        raw, lines = obj[key], element_lines(text, key)
    else:
        raise DatasetError(f"{path}: a JSON answers file is an array of records, got {type(obj).__name__}")
    if len(lines) != len(raw):
        lines = [0] * len(raw)
    entries = [(location(path, ln) + f" (record {i})", ln or None, rec)
               for i, (ln, rec) in enumerate(zip(lines, raw, strict=True), start=1)]
    return _build(entries, source)


def answer_records(records: AnswerSet | Iterable[Mapping[str, Any]] | Any, *,
                   source: str = "<memory>") -> AnswerSet:
    """Check records given in memory: a list of dicts (any accepted field names), a pandas
    DataFrame (one row per record; NaN = no value), or an :class:`AnswerSet` (returned as is).
    Problems are raised together, each naming the record (1-based) and the field."""
    if isinstance(records, AnswerSet):
        return records
    if hasattr(records, "to_dict") and hasattr(records, "columns"):
        records = records.to_dict(orient="records")
    if isinstance(records, (str, bytes, Mapping)):
        raise TypeError("answer_records takes a list of records (dicts) or a DataFrame; for a file use "
                        "load_answer_records(path)")
    entries = [(f"{source}, record {i}", None, rec) for i, rec in enumerate(records, start=1)]
    return _build(entries, source)


def ragas_records(answers: Iterable[Any], relevant: Mapping[str, Iterable[str]] | None = None, *,
                  ids: bool = False) -> list[dict[str, Any]]:
    """Answers as RAGAS 0.2 records: ``user_input``, ``response``, ``retrieved_contexts``,
    ``retrieved_context_ids``, ``reference`` and, when ``relevant`` maps the answer's id to its relevant
    context ids, ``reference_context_ids``.

    ``answers``: :class:`~ragworkbook.pipeline.answers.RAGAnswer` objects (``NaiveRAG.run``) or the
    dicts of a saved run (``answers`` of a ``save_answers`` file). ``ids``: also write each answer's
    ``id`` (RAGAS has no id field; without it the reader makes one from the question).
    """
    from ragworkbook.protocols import context_id, context_text

    out: list[dict[str, Any]] = []
    for a in answers:
        get = a.get if isinstance(a, Mapping) else (lambda k, _a=a: getattr(_a, k, None))
        contexts = get("contexts") or []
        texts = [c["text"] if isinstance(c, Mapping) else context_text(c) for c in contexts]
        cids = [c.get("id") if isinstance(c, Mapping) else context_id(c) for c in contexts]
        rec: dict[str, Any] = {"id": get("id")} if ids else {}
        rec.update(user_input=get("question"), response=get("answer"), retrieved_contexts=texts)
        if all(c is not None for c in cids):
            rec["retrieved_context_ids"] = cids
        rec["reference"] = get("reference")
        if relevant is not None and get("id") in relevant:
            rec["reference_context_ids"] = list(relevant[get("id")])
        out.append(rec)
    return out


def save_answer_records(records: Iterable[Mapping[str, Any]], path: PathLike) -> Path:
    """Write records as JSON Lines (UTF-8, one record a line, keys in the given order), atomically."""
    from ragworkbook._io import atomic_write_text

    text = "".join(json.dumps(dict(r), ensure_ascii=False) + "\n" for r in records)
    return atomic_write_text(path, text)
