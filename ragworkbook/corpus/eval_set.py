"""Eval sets: the questions a RAG system is evaluated on.

Two formats, chosen by the file suffix:

- ``.json``: one object ``{"name", "description", "source", "items": [{"id",
  "question", "keyword", "reference"}, ...]}`` (only ``items`` is required),
  or a bare array of items;
- ``.jsonl``: one item per line; blank lines are skipped.

An item is described by the JSON Schema ``ragworkbook/schemas/eval_set.schema.json``
(``ragworkbook schema eval-set``): ``question`` and ``reference`` are required
(RAGAS's ``user_input`` and ``ground_truth`` are accepted for them), ``id`` and
``keyword`` are optional. Validation is strict; every problem of a file is
reported at once, each naming the file, the line and the field
(:class:`~ragworkbook.corpus.jsonfile.DatasetError`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ragworkbook._types import JSON, JSONObject
from ragworkbook.corpus.answers import assign_ids, resolve_fields
from ragworkbook.corpus.jsonfile import (
    DatasetError,
    PathLike,
    gc_paused,
    raise_problems,
    read_records,
)
from ragworkbook.paths import data_path
from ragworkbook.schemas import record_problems

__all__ = ["DEFAULT_EVAL_SET", "EVAL_FIELDS", "EvalItem", "EvalSet", "load_eval_set", "eval_set_from_records",
           "as_items"]

DEFAULT_EVAL_SET = "eval_set.json"


@dataclass(frozen=True)
class EvalItem:
    """One evaluation question: ``keyword`` marks where the answer is stated (None: unknown),
    ``reference`` is the reference answer."""

    id: str
    question: str
    keyword: str | None
    reference: str


@dataclass(frozen=True)
class EvalSet:
    """An ordered list of :class:`EvalItem` with unique ids (iterable, has ``len``)."""

    items: list[EvalItem]
    name: str = ""
    description: str = ""
    source: str = ""

    def __iter__(self) -> Iterator[EvalItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, key: int | str) -> EvalItem:
        """Item by position (int) or by id (str)."""
        if isinstance(key, str):
            for it in self.items:
                if it.id == key:
                    return it
            raise KeyError(f"no eval item with id {key!r}; ids are {self.ids}")
        return self.items[key]

    @property
    def ids(self) -> list[str]:
        """The item ids, in order."""
        return [it.id for it in self.items]

    @property
    def questions(self) -> list[str]:
        """The questions, in order."""
        return [it.question for it in self.items]


def as_items(eval_set: EvalSet | Iterable[EvalItem | Mapping[str, JSON]]) -> list[EvalItem]:
    """The items of an eval set given as an :class:`EvalSet`, a list of :class:`EvalItem`, or a
    list of mappings with ``id``, ``question`` and ``reference`` (``keyword`` optional).

    The one place the package turns "an eval set" into items: ValueError for an
    empty set, a mapping without those fields, or a repeated id.
    """
    items: list[EvalItem] = []
    for i, it in enumerate(getattr(eval_set, "items", eval_set)):
        if isinstance(it, EvalItem):
            items.append(it)
        elif isinstance(it, Mapping):
            missing = [f for f in ("id", "question", "reference") if f not in it]
            if missing:
                raise ValueError(f"eval item {i} is missing {', '.join(missing)}")
            items.append(EvalItem(id=str(it["id"]), question=str(it["question"]),
                                  keyword=it.get("keyword"), reference=str(it["reference"])))
        else:
            raise TypeError(f"eval item {i} is a {type(it).__name__}; expected an EvalItem or a mapping "
                            "with id, question and reference")
    if not items:
        raise ValueError("the eval set is empty")
    seen: set[str] = set()
    for it in items:
        if it.id in seen:
            raise ValueError(f"eval item id {it.id!r} appears twice (ids must be unique)")
        seen.add(it.id)
    return items


#: Eval-set field -> accepted names (the workbook's first, then RAGAS's).
EVAL_FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id",),
    "question": ("question", "user_input"),
    "reference": ("reference", "ground_truth"),
    "keyword": ("keyword",),
}


def _items_from_entries(entries: list[tuple[str, JSON]], source: str) -> list[EvalItem]:
    """Check every ``(where, record)`` against the eval-set schema and build the items, or raise
    every problem at once (:func:`~ragworkbook.corpus.jsonfile.raise_problems`)."""
    problems: list[str] = []
    parsed: list[JSONObject] = []
    seen: dict[str, str] = {}  # id -> where its first item is (file and line)
    for where, rec in entries:
        if not isinstance(rec, dict):
            problems.append(f"{where}: an eval item must be a JSON object, got {type(rec).__name__}")
            continue
        found = record_problems(rec, "eval-set", where, "item")
        values, conflicts = resolve_fields(rec, EVAL_FIELDS, where) if not found else ({}, [])
        if found or conflicts:
            problems.extend(found + conflicts)
            continue
        rid = None if "id" not in values else str(values["id"])
        if rid is not None:
            if rid in seen:
                problems.append(f"{where}: field 'id': duplicate id {rid!r} (first at {seen[rid]}); ids must "
                                "be unique")
                continue
            seen[rid] = where
        parsed.append({**values, "id": rid})
    raise_problems(source, problems)
    ids = assign_ids([p["id"] for p in parsed], [p["question"] for p in parsed])
    return [EvalItem(id=qid, question=p["question"], keyword=p.get("keyword"), reference=p["reference"])
            for qid, p in zip(ids, parsed, strict=True)]


def eval_set_from_records(
    records: Iterable[JSONObject], *, name: str = "", source: str = "<memory>", description: str = ""
) -> EvalSet:
    """Build a validated :class:`EvalSet` from dicts with a question and a reference (``id`` and
    ``keyword`` optional; RAGAS names accepted: see the ``eval-set`` schema). Every problem is
    reported at once."""
    items = _items_from_entries([(f"{source}, items[{i}]", rec) for i, rec in enumerate(records)], source)
    if not items:
        raise DatasetError(f"{source}: the eval set has no items")
    return EvalSet(items=items, name=name, description=description)


def load_eval_set(path: PathLike | None = None) -> EvalSet:
    """Load and validate an eval set (``.json`` or ``.jsonl``); default ``ragworkbook/data/eval_set.json``.

    Every item needs a non-empty ``question`` (or ``user_input``) and
    ``reference`` (or ``ground_truth``); ``keyword`` is optional (the keyword
    ground truth needs it; without it, relevance must come from elsewhere,
    e.g. a qrels file); ``id`` is optional (an int becomes a string; a missing
    one is made from the question, see
    :func:`~ragworkbook.corpus.answers.assign_ids`); ids are unique; the set is
    not empty. The format is the ``eval-set`` JSON Schema
    (``ragworkbook schema eval-set``). Every problem of the file is reported at
    once, each with its line and field.
    """
    if path is None:
        path = data_path(DEFAULT_EVAL_SET)
    path = Path(path)
    with gc_paused():
        return _load_eval_set(path)


def _load_eval_set(path: Path) -> EvalSet:
    meta, records = read_records(path, "items", "an eval set", "a list of questions", bare_list=True)
    items = _items_from_entries([(where, rec) for _, where, rec in records], str(path))
    if not items:
        raise DatasetError(f"{path}: the eval set has no items")
    return EvalSet(
        items=items,
        name=str(meta.get("name", path.stem)),
        description=str(meta.get("description", "")),
        source=str(meta.get("source", "")),
    )
