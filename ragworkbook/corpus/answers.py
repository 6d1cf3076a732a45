"""Answers files: the outputs a RAG system already produced, read to be scored as they are.

One record per question: the question, the system's answer, the contexts the
answer was generated from (best first), and optionally an id, a reference
answer and a source of relevance (relevant ids or a keyword). The format is
the JSON Schema ``ragworkbook/schemas/answers.schema.json`` (print it with
``ragworkbook schema answers``); its description is the reference for
everything below.

- Files: JSON Lines (``.jsonl``), a JSON array or an object holding the array
  under ``answers``, ``rows`` or ``samples`` (``.json``; the workbook's saved
  runs are such objects), pandas' ``to_json`` in any orient that keeps the
  column names (records, split, index, columns, table), CSV (``.csv``; an empty
  cell = no value except an empty answer), or Parquet (``.parquet``, read with
  pyarrow). The files the tools write are read as they write them: ragas'
  ``EvaluationDataset`` exports, Hugging Face ``datasets``' ``to_csv`` /
  ``to_json`` / ``to_parquet``, deepeval's ``save_as`` (JSON, JSONL, CSV), pandas'
  ``to_csv`` / ``to_json`` / ``to_parquet`` (``tests/data/exports``, written by
  ``scripts/make_export_fixtures.py`` with the tools themselves).
- List cells of a CSV (:mod:`ragworkbook.corpus.list_cells`): a JSON array, a
  Python list literal (pandas), a numpy array's text ``['a' 'b']`` (Hugging Face
  ``datasets``), and in deepeval's ``retrieval_context`` and ``context`` columns
  text joined by ``|`` (:data:`SEPARATED_COLUMNS`); a cell that cannot be read
  as exactly one list is an error naming the line, the field and the fix. A
  deepeval retrieved context written with its source
  (``deepeval_source=S,deepeval_context=TEXT``) is read as its text.
- Field names (:data:`FIELDS`): the workbook's own, RAGAS 0.2+
  (``user_input``, ``response``, ``retrieved_contexts``,
  ``retrieved_context_ids``, ``reference``, ``reference_context_ids``,
  ``reference_contexts``), RAGAS 0.1 (``question``, ``answer``, ``contexts``,
  ``ground_truth``) and deepeval (``input``, ``actual_output``,
  ``retrieval_context``, ``expected_output``, ``context``). Other fields are
  ignored and listed (:attr:`AnswerSet.ignored`).
- Contexts: strings, or objects with ``text`` and an optional ``id``. Optional: a
  record without them (question, answer, reference: a common export) loads with
  ``has_contexts`` False and the metrics that read contexts are undefined.
- Files: a pipe (``--answers <(cat f)``) or a file without a suffix is read as the
  format its first bytes show. A UTF-8 byte-order mark is skipped. JSON Lines are
  read a line at a time, and the records are checked on a fast path that accepts
  only plainly valid records (the rest are explained by the schema), so loading
  time per record stays flat from 10k to 1M lines
  (``benchmarks/bench_loading.py``).
- Texts: an answer or reference over :data:`MAX_SCORED_CHARS` characters is kept
  but not scored (:attr:`AnswerRecord.too_long`).
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

import hashlib
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from ragworkbook._io import atomic_write_text, is_pipe, read_input
from ragworkbook._types import JSON, JSONObject
from ragworkbook.corpus.jsonfile import (
    DatasetError,
    PathLike,
    decode_bytes,
    element_lines,
    gc_paused,
    iter_jsonl,
    location,
    parse_csv,
    parse_json,
    parse_jsonl,
    raise_problems,
    read_text,
)
from ragworkbook.corpus.list_cells import ListCellError, parse_list_cell
from ragworkbook.protocols import AnswerLike, context_id, context_text
from ragworkbook.schemas import record_problems

__all__ = ["FIELDS", "LIST_FIELDS", "SEPARATED_COLUMNS", "MAX_SCORED_CHARS", "NO_CONTEXTS", "AnswerRecord",
           "AnswerSet", "question_id", "assign_ids", "resolve_fields", "load_answer_records",
           "answer_records", "ragas_records", "save_answer_records"]

#: Canonical field -> the names accepted for it, the workbook's first (RAGAS 0.2+ and 0.1 names included).
FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id", "sample_id", "question_id", "qid"),
    "question": ("question", "user_input", "input"),
    "answer": ("answer", "response", "actual_output"),
    "contexts": ("contexts", "retrieved_contexts", "retrieval_context"),
    "context_ids": ("context_ids", "retrieved_context_ids"),
    "reference": ("reference", "ground_truth", "expected_output"),
    "keyword": ("keyword",),
    "relevant_ids": ("relevant_ids", "reference_context_ids", "relevant_context_ids"),
    "reference_contexts": ("reference_contexts", "context"),
}
#: Canonical fields whose value is a list (a JSON array in a CSV cell).
LIST_FIELDS = ("contexts", "context_ids", "relevant_ids", "reference_contexts")
#: Fields whose list may be written as text joined by a separator, declared by the tool that writes them:
#: deepeval's ``save_as`` joins ``retrieval_context`` and ``context`` with ``|`` in its CSV and JSON Lines
#: (not in its JSON) and reads them back with ``text.split("|")`` (``""``: an empty list), as the reader
#: here does. In a CSV cell of these columns the text is always split; in JSON a list stays a list.
SEPARATED_COLUMNS: dict[str, str] = {"retrieval_context": "|", "context": "|"}
#: Members of a JSON object that may hold the records.
_CONTAINERS = ("answers", "rows", "samples")
#: The longest answer or reference, in characters, that the generation and judged metrics are computed
#: on. Longer ones are kept in the report but not scored (undefined, reason ``text_too_long``): METEOR
#: and the embedding similarity of a 10 MB answer take minutes and gigabytes, and no RAG answer is
#: that long (100,000 characters: about 2 s for every generation metric together, measured).
MAX_SCORED_CHARS = 100_000


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


@dataclass(frozen=True, slots=True)
class AnswerRecord:
    """One answered question, as the file gave it.

    ``contexts`` are the context texts, best first; ``context_ids`` their ids
    (``None`` where the file gives none); ``has_contexts`` is False when the record
    gives no contexts at all (a question, answer, reference export: ``contexts`` is
    then ``[]`` and the metrics that read contexts are undefined, while ``[]`` given
    means nothing was retrieved); ``reference`` is None when the file has none
    (absent, null or blank); ``relevant_ids`` is None when not given (``[]``: given,
    and nothing is relevant). ``line`` is where the record starts in its file (None
    for records given in memory); ``id_generated`` says the id was made by
    :func:`assign_ids`. ``reference_contexts``: the passages a correct answer needs
    (ragas' ``reference_contexts``, deepeval's ``context``), None when not given;
    read by the text-based context precision and recall.
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
    reference_contexts: list[str] | None = None

    @property
    def has_contexts(self) -> bool:
        """False when the record gives no contexts at all (its ``contexts`` is then the shared empty
        list :data:`NO_CONTEXTS`, which costs a million records nothing)."""
        return self.contexts is not NO_CONTEXTS

    @property
    def has_context_ids(self) -> bool:
        """True when every context has an id (vacuously for no context)."""
        return all(c is not None for c in self.context_ids)

    @property
    def too_long(self) -> list[str]:
        """The fields (``answer``, ``reference``) longer than :data:`MAX_SCORED_CHARS`: the metrics that
        read them are not computed for this record (counted undefined, reason ``text_too_long``)."""
        return [name for name, text in (("answer", self.answer), ("reference", self.reference))
                if text is not None and len(text) > MAX_SCORED_CHARS]


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


def resolve_fields(rec: Mapping[str, JSON], table: Mapping[str, Sequence[str]],
                   where: str) -> tuple[JSONObject, list[str]]:
    """``{canonical field: value}`` of the names of ``table`` present in ``rec`` (a null value counts as
    absent), and the problems: a field given under two names with different values."""
    values: JSONObject = {}
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


def _missing(value: object) -> bool:
    """An absent value of a DataFrame or CSV cell: None, NaN, or pandas' NA."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return type(value).__name__ in ("NAType", "NaTType")


def _plain(value: object) -> object:
    """numpy arrays and scalars (from a DataFrame) as plain lists and numbers."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    return value


def _list_cell(text: str, name: str, where: str) -> tuple[object, str | None]:
    """A CSV cell holding a list: a JSON array, a Python list literal (``['a', 'b']``), a numpy
    array's ``str`` (``['a' 'b']``), or, in a column of :data:`SEPARATED_COLUMNS`, text joined by its
    separator (:func:`~ragworkbook.corpus.list_cells.parse_list_cell`)."""
    try:
        value = parse_list_cell(text, SEPARATED_COLUMNS.get(name))
    except ListCellError as exc:
        return None, f"{where}: field {name!r}: {exc}"
    return _plain(value), None


_LIST_NAMES = {n for canon in LIST_FIELDS for n in FIELDS[canon]}
#: deepeval's text of a retrieved context with its source (``RetrievedContextData``); ``re.DOTALL``
#: where deepeval's own reader has none, so that a context of several lines is read too
_DEEPEVAL_SOURCED = re.compile(r"^deepeval_source=(?P<source>.*?),deepeval_context=(?P<context>.*)$",
                               re.DOTALL)


def _deepeval_context(item: JSON) -> JSON:
    """A deepeval retrieved context: its text, without the source deepeval writes before it."""
    if isinstance(item, str):
        m = _DEEPEVAL_SOURCED.match(item)
        if m:
            return m.group("context")
    return item


def _clean(rec: Mapping[str, object], where: str, csv: bool) -> tuple[dict[str, object], list[str]]:
    """Drop absent values, turn numpy values into plain ones and CSV cells into lists."""
    out: dict[str, object] = {}
    problems: list[str] = []
    for key, value in rec.items():
        key = str(key)
        if csv:
            if value == "" and key in SEPARATED_COLUMNS:  # deepeval writes [] (and None) so, reads it as []
                out[key] = []
                continue
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
            if isinstance(value, str) and key in SEPARATED_COLUMNS:  # deepeval's JSON Lines join them too
                value = value.split(SEPARATED_COLUMNS[key]) if value else []
        if key == "retrieval_context" and isinstance(value, list):
            value = [_deepeval_context(v) for v in value]
        out[key] = value
    return out, problems


def _str_id(x: object) -> str:
    return str(x)


#: accepted name -> canonical field (for the fast path)
_CANON = {name: canon for canon, names in FIELDS.items() for name in names}
_KNOWN = frozenset(_CANON)
#: deepeval's own field names: a record with one of them is deepeval's, and its 'context' is read
_DEEPEVAL_NAMES = frozenset({"input", "actual_output", "expected_output", "retrieval_context"})


def _visible(text: str) -> bool:
    """Whether ``text`` matches the schema's ``"pattern": "\\S"``: both validators use Python's ``re``,
    whose ``\\s`` is ``str.isspace``, so a string that ``strip()`` leaves non-empty."""
    return bool(text.strip())


def _visible_id(x: object) -> bool:
    return (type(x) is str and _visible(x)) or type(x) is int


def _fast_values(rec: Mapping[str, object]) -> JSONObject | None:
    """``{canonical field: value}`` of a record in the common, plainly valid shape, or None.

    The fast path of the loader: it accepts a strict subset of what the answers schema accepts
    (each field under one name, every value of its plainest type), so most records are checked
    in one pass; anything else (None) goes to the schema, which explains what is wrong. A test
    checks that nothing accepted here breaks the schema.
    """
    out: JSONObject = {}
    for key, value in rec.items():
        canon = _CANON.get(key)
        if canon is None or value is None:
            continue
        if canon in out:
            return None  # given under two names: the slow path checks they agree
        t = type(value)
        if canon == "answer":
            if t is not str:
                return None
        elif canon == "question" or canon == "keyword":
            if t is not str or not _visible(value):
                return None
        elif canon == "reference":
            if t is not str:
                return None
        elif canon == "contexts":
            if t is not list:
                return None
            for c in value:
                if type(c) is not str and not (
                        type(c) is dict and type(c.get("text")) is str
                        and (c.get("id") is None or _visible_id(c["id"]))):
                    return None
        elif canon == "id":
            if not _visible_id(value):
                return None
        elif canon == "reference_contexts":
            if t is not list or not all(type(x) is str for x in value):
                return None
        elif t is not list or not all(_visible_id(x) for x in value):  # context_ids, relevant_ids
            return None
        out[canon] = value
    if "question" not in out or "answer" not in out:
        return None
    return out


def _checked_values(rec: dict[str, object], where: str) -> tuple[JSONObject | None, list[str]]:
    """The slow path: the schema's problems of ``rec`` (each naming the field), else its values."""
    try:
        problems = record_problems(rec, "answers", where, "record")
    except RecursionError:
        return None, [f"{where}: a field is nested too deeply (arrays or objects over "
                      f"{sys.getrecursionlimit()} levels)"]
    if problems:
        return None, problems
    values, problems = resolve_fields(rec, FIELDS, where)
    return (None, problems) if problems else (values, [])


class _NoIds(list):  # type: ignore[type-arg]
    """A read-only list shared by many records: the ``context_ids`` of contexts without ids
    (``[None] * n``, one per ``n``: a million records do not hold a million lists of Nones), and
    :data:`NO_CONTEXTS`."""

    def _read_only(self, *args: object, **kwargs: object) -> None:
        raise TypeError("this list of a loaded record is shared and read-only; copy it: "
                        "list(record.context_ids)")

    append = extend = insert = pop = remove = clear = sort = reverse = _read_only  # type: ignore[assignment]
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only  # type: ignore[assignment]


_NO_IDS: dict[int, _NoIds] = {}
#: The ``contexts`` of every record that gives none (read-only, shared): :attr:`AnswerRecord.has_contexts`.
NO_CONTEXTS: list[str] = _NoIds()


def _no_ids(n: int) -> list[str | None]:
    shared = _NO_IDS.get(n)
    if shared is None:
        shared = _NO_IDS.setdefault(n, _NoIds([None] * n))
    return shared


def _record(values: JSONObject, rec: Mapping[str, object], where: Callable[[], str], line: int | None,
            ) -> tuple[AnswerRecord | None, list[str]]:
    """The record of checked ``values`` (its id the given one, or the question's: see :func:`_build`);
    ``where()`` names the record in a problem."""
    given = values.get("contexts")
    contexts: list[str] = [] if given is not None else NO_CONTEXTS
    inner_ids: list[str | None] | None = None
    if given is not None:
        if all(type(c) is str for c in given):
            contexts = given[:]  # an exact-size copy: the parser's list has room to grow
        else:
            inner_ids = []
            for c in given:
                if isinstance(c, str):
                    contexts.append(c)
                    inner_ids.append(None)
                else:
                    contexts.append(c["text"])
                    inner_ids.append(None if c.get("id") is None else _str_id(c["id"]))
    ids: list[str | None] = inner_ids if inner_ids is not None else _no_ids(len(contexts))
    if "context_ids" in values:
        cids = [_str_id(x) for x in values["context_ids"]]
        name = next(n for n in FIELDS["context_ids"] if rec.get(n) is not None)
        if given is not None and len(cids) != len(contexts):
            return None, [f"{where()}: field {name!r} has {len(cids)} ids for {len(contexts)} contexts: "
                          "give one id per context, in the same order"]
        inner = inner_ids or []
        if any(i is not None and i != g for i, g in zip(inner, cids, strict=False)):
            return None, [f"{where()}: field {name!r} contradicts the ids inside the contexts: keep one"]
        ids = cids
    reference = values.get("reference")
    relevant = values.get("relevant_ids")
    rid = values.get("id")
    question = values["question"]
    return AnswerRecord(
        id=question_id(question) if rid is None else _str_id(rid), question=question, answer=values["answer"],
        contexts=contexts, context_ids=ids,
        reference=reference if isinstance(reference, str) and reference.strip() else None,
        keyword=values.get("keyword"),
        relevant_ids=None if relevant is None else [_str_id(x) for x in relevant],
        line=line, id_generated=rid is None, reference_contexts=values.get("reference_contexts")), []


#: An entry of :func:`_build`: (line in the file or None, 1-based record number or None, record)
_Entry = tuple[int | None, int | None, object]


def _build(entries: Iterable[_Entry], source: str, where: Callable[[int | None, int | None], str], *,
           raw: bool = True, csv: bool = False) -> AnswerSet:
    """Check every entry and build the set, or raise all the problems (in file order).

    ``raw``: the records are plain JSON values (a file's), which the fast path checks as they
    are; otherwise (CSV cells, DataFrame values) they are cleaned first. Records are made as
    they come and nothing else is kept per record but its place (a line number the record
    holds anyway); repeated ids are found by sorting the ids once at the end, and the ids of
    records without one are settled as :func:`assign_ids` says.
    """
    problems: list[tuple[int, str]] = []  # (line or record number, message)
    records: list[AnswerRecord] = []
    places: list[int] = []  # the record numbers of records without a line (records given in memory)
    ignored: list[str] = []
    n = 0
    for line, index, rec in entries:
        n += 1
        place = line or index or n
        if not isinstance(rec, Mapping):
            problems.append((place, f"{where(line, index)}: a record must be a JSON object, got "
                                    f"{type(rec).__name__}"))
            continue
        if "context" in rec and not _DEEPEVAL_NAMES.intersection(rec):
            # 'context' is deepeval's reference contexts only in a deepeval record; elsewhere (SQuAD-style
            # files) it is often the passage given: left out and listed, as before
            rec = {k: v for k, v in rec.items() if k != "context"}
            if "context" not in ignored:
                ignored.append("context")
        for key in rec:
            if key not in _KNOWN and key not in ignored:
                ignored.append(str(key))
        values = _fast_values(rec) if raw and "retrieval_context" not in rec else None
        if values is None:
            rec, found = _clean(rec, where(line, index), csv)
            if not found:
                values, found = _checked_values(rec, where(line, index))
            if found:
                problems.extend((place, p) for p in found)
                continue
        record, found = _record(values, rec, lambda: where(line, index), line)  # noqa: B023 - called at once
        if found:
            problems.extend((place, p) for p in found)
            continue
        records.append(record)
        if line is None:
            places.append(place)
    if not n:
        problems.append((0, f"{source}: no records (expected one record per answered question)"))
    ids: list[str] = [""] * len(records)  # exact size: no growth while the ids are gathered
    for i, r in enumerate(records):
        ids[i] = r.id
    ids.sort()
    repeated = {ids[i] for i in range(1, len(ids)) if ids[i] == ids[i - 1]}  # given twice, or made twice
    del ids
    if repeated:
        problems.extend(_duplicates(records, places, repeated, where))
        problems.sort(key=lambda p: p[0])
    raise_problems(source, [p for _, p in problems])
    if repeated:
        _settle_generated_ids(records)
    return AnswerSet(records=records, source=source, ignored=ignored)


def _duplicates(records: list[AnswerRecord], places: list[int], repeated: set[str],
                where: Callable[[int | None, int | None], str]) -> list[tuple[int, str]]:
    """The problems of given ids that repeat an earlier record's (each naming the first). ``places``:
    the record numbers of the records without a line (all of them, or none)."""

    def at(k: int) -> str:
        line = records[k].line
        return where(line, None) if line else where(None, places[k])

    first: dict[str, int] = {}
    out: list[tuple[int, str]] = []
    for pos, r in enumerate(records):
        if r.id_generated or r.id not in repeated:
            continue
        j = first.setdefault(r.id, pos)
        if j != pos:
            out.append((r.line or places[pos], f"{at(pos)}: field 'id': duplicate id {r.id!r} (first at "
                                               f"{at(j)}); ids must be unique"))
    return out


def _settle_generated_ids(records: list[AnswerRecord]) -> None:
    """:func:`assign_ids` for the records whose id was made from the question, in place."""
    taken = {r.id for r in records if not r.id_generated}
    for pos, record in enumerate(records, start=1):
        if record.id_generated:
            cand = record.id
            while cand in taken:
                cand = f"{cand}-r{pos}"
            if cand != record.id:
                records[pos - 1] = replace(record, id=cand)
            taken.add(cand)


_PARQUET_MAGIC = b"PAR1"
_SUFFIXES = {".jsonl": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def _sniff(head: bytes) -> str:
    """The format of an answers stream without a telling suffix (a pipe): ``"parquet"`` for Parquet's
    magic bytes, ``"json"`` when it opens
    with ``[`` (or ``{`` on a line of its own, a pretty-printed object), ``"jsonl"`` when its first
    line is a JSON object, else ``"csv"``."""
    if head.startswith(_PARQUET_MAGIC):
        return "parquet"
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if text.startswith(b"["):
        return "json"
    if text.startswith(b"{"):
        first = text.split(b"\n", 1)[0]
        try:
            obj = json.loads(first)
        except ValueError:
            return "json"
        if isinstance(obj, dict) and any(isinstance(obj.get(k), list) for k in _CONTAINERS):
            return "json"
        return "jsonl"
    return "csv"


def load_answer_records(path: PathLike) -> AnswerSet:
    """Read and check an answers file (``.jsonl``, ``.json``, ``.csv`` or ``.parquet``; see the module
    docstring).

    A pipe (``--answers <(cat f)``) or a file without a suffix is read as the format its first
    bytes show (:func:`_sniff`). JSON Lines are read a line at a time. FileNotFoundError for a
    missing file; :class:`DatasetError` listing every problem of the file (line and field), up to
    the cap.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    source = str(path)
    with gc_paused():
        data = None
        if suffix not in _SUFFIXES:
            if suffix and not is_pipe(path):
                raise DatasetError(f"{path}: an answers file is .jsonl, .json, .csv or .parquet, got "
                                   f"{path.suffix!r} (`ragworkbook schema answers` describes the format)")
            data = read_input(path, "answers file")
            kind = _sniff(data[:4096])
            text = None if kind == "parquet" else decode_bytes(path, data)
        else:
            kind, text = _SUFFIXES[suffix], None
        if kind == "parquet":
            return _load_parquet(path, data, source)
        del data
        if kind == "jsonl":
            records = iter_jsonl(path) if text is None else parse_jsonl(path, text)
            return _build(((ln, None, rec) for ln, rec in records), source, lambda ln, _i: location(path, ln))
        text = read_text(path) if text is None else text
        if kind == "csv":
            rows = parse_csv(path, text)
            return _build(((ln, None, rec) for ln, rec in rows), source, lambda ln, _i: location(path, ln),
                          raw=False, csv=True)
        return _load_json(path, text, source)


def _load_parquet(path: Path, data: bytes | None, source: str) -> AnswerSet:
    """A Parquet file (pandas' ``to_parquet``, Hugging Face ``Dataset.to_parquet``): one record a row."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data) if data is not None else path)
    except (pa.ArrowException, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise DatasetError(f"{path}: not a readable Parquet file ({exc})") from None
    rows = table.to_pylist()
    del table
    return _build(((None, i, rec) for i, rec in enumerate(rows, start=1)), source,
                  lambda _ln, i: f"{path}, row {i}", raw=False)


def _pandas_orient(obj: JSONObject) -> tuple[str, list[JSON], list[str]] | None:
    """The records of ``DataFrame.to_json`` in the orients that are not an array of records: ``(orient,
    records, their labels)``, or None when ``obj`` is none of them. ``split``: ``{"columns", "index",
    "data"}``; ``table``: ``{"schema", "data"}`` (the index columns, which the schema's ``primaryKey``
    names, are dropped unless they are fields); ``columns`` (pandas' default): ``{column: {label:
    value}}``; ``index``: ``{label: {column: value}}``."""
    keys = set(obj)
    if {"columns", "data"} <= keys <= {"columns", "index", "data"} and isinstance(obj["columns"], list) \
            and isinstance(obj["data"], list) and all(isinstance(r, list) for r in obj["data"]):
        cols = [str(c) for c in obj["columns"]]
        labels = obj.get("index") or list(range(len(obj["data"])))
        return "split", [dict(zip(cols, row, strict=False)) for row in obj["data"]], [str(x) for x in labels]
    if keys == {"schema", "data"} and isinstance(obj["data"], list) and isinstance(obj["schema"], dict):
        index = [k for k in obj["schema"].get("primaryKey") or [] if k not in _KNOWN]
        rows = [{k: v for k, v in r.items() if k not in index} if isinstance(r, dict) else r
                for r in obj["data"]]
        labels = [str(r.get(index[0])) if index and isinstance(r, dict) else str(i)
                  for i, r in enumerate(obj["data"])]
        return "table", rows, labels
    if not obj or not all(isinstance(v, dict) for v in obj.values()):
        return None
    if keys & _KNOWN:  # columns: the outer keys are the fields
        labels: list[str] = []
        for column in obj.values():
            labels.extend(k for k in column if k not in labels)
        return "columns", [{c: obj[c][k] for c in obj if k in obj[c]} for k in labels], labels
    if any(set(v) & _KNOWN for v in obj.values()):  # index: the inner keys are the fields
        return "index", list(obj.values()), [str(k) for k in obj]
    return None


def _load_json(path: Path, text: str, source: str) -> AnswerSet:
    obj = parse_json(path, text)
    if isinstance(obj, list):
        raw, lines = obj, element_lines('{"items": ' + text, "items")
    elif isinstance(obj, dict):
        key = next((k for k in _CONTAINERS if isinstance(obj.get(k), list)), None)
        orient = _pandas_orient(obj) if key is None else None
        if orient is not None:
            name, raw, labels = orient
            return _build(((None, i, rec) for i, rec in enumerate(raw, start=1)), source,
                          lambda _ln, i: f"{path} (pandas orient={name!r}), record {i} "
                                         f"(label {labels[i - 1]!r})", raw=False)
        if key is None:
            raise DatasetError(f"{path}: a JSON answers file is an array of records, or an object with the "
                               f"records under {', '.join(repr(k) for k in _CONTAINERS)}, or pandas' "
                               "to_json in an orient with column names (records, split, index, columns, "
                               f"table); this object has "
                               f"{', '.join(repr(k) for k in list(obj)[:8]) or 'no members'}")
        raw, lines = obj[key], element_lines(text, key)
    else:
        raise DatasetError(f"{path}: a JSON answers file is an array of records, got {type(obj).__name__}")
    del text
    if len(lines) != len(raw):
        lines = [0] * len(raw)
    return _build(((ln or None, i, rec) for i, (ln, rec) in enumerate(zip(lines, raw, strict=True), start=1)),
                  source, lambda ln, i: location(path, ln) + (f" (record {i})" if i else ""))


class _Frame(Protocol):
    """A pandas DataFrame, as :func:`answer_records` reads it."""

    columns: Iterable[str]

    def to_dict(self, orient: str) -> list[dict[str, object]]: ...


def answer_records(records: AnswerSet | Iterable[Mapping[str, object]] | _Frame, *,
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
    return _build(((None, i, rec) for i, rec in enumerate(records, start=1)), source,
                  lambda _ln, i: f"{source}, record {i}", raw=False)


def ragas_records(answers: Iterable[AnswerLike | Mapping[str, JSON]],
                  relevant: Mapping[str, Iterable[str]] | None = None, *,
                  ids: bool = False) -> list[JSONObject]:
    """Answers as RAGAS 0.2 records: ``user_input``, ``response``, ``retrieved_contexts``,
    ``retrieved_context_ids``, ``reference`` and, when ``relevant`` maps the answer's id to its relevant
    context ids, ``reference_context_ids``.

    ``answers``: :class:`~ragworkbook.pipeline.answers.RAGAnswer` objects (``NaiveRAG.run``) or the
    dicts of a saved run (``answers`` of a ``save_answers`` file). ``ids``: also write each answer's
    ``id`` (RAGAS has no id field; without it the reader makes one from the question).
    """
    out: list[JSONObject] = []
    for a in answers:
        get = a.get if isinstance(a, Mapping) else (lambda k, _a=a: getattr(_a, k, None))
        contexts = get("contexts") or []
        texts = [c["text"] if isinstance(c, Mapping) else context_text(c) for c in contexts]
        cids = [c.get("id") if isinstance(c, Mapping) else context_id(c) for c in contexts]
        rec: JSONObject = {"id": get("id")} if ids else {}
        rec.update(user_input=get("question"), response=get("answer"), retrieved_contexts=texts)
        if all(c is not None for c in cids):
            rec["retrieved_context_ids"] = cids
        rec["reference"] = get("reference")
        if relevant is not None and get("id") in relevant:
            rec["reference_context_ids"] = list(relevant[get("id")])
        out.append(rec)
    return out


def save_answer_records(records: Iterable[Mapping[str, JSON]], path: PathLike) -> Path:
    """Write records as JSON Lines (UTF-8, one record a line, keys in the given order), atomically."""
    text = "".join(json.dumps(dict(r), ensure_ascii=False) + "\n" for r in records)
    return atomic_write_text(path, text)
