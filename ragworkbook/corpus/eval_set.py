"""Eval sets: the questions a RAG system is evaluated on.

Two formats, chosen by the file suffix:

- ``.json``: one object ``{"name", "description", "source", "items": [{"id",
  "question", "keyword", "reference"}, ...]}`` (only ``items`` is required),
  or a bare array of items;
- ``.jsonl``: one item per line; blank lines are skipped.

Validation is strict and the errors name the file, the line and the field
(:class:`~ragworkbook.corpus.jsonfile.DatasetError`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragworkbook.corpus.jsonfile import (
    DatasetError,
    PathLike,
    element_lines,
    gc_paused,
    location,
    parse_json,
    parse_jsonl,
    read_text,
    require_str,
)

__all__ = ["DEFAULT_EVAL_SET", "EvalItem", "EvalSet", "load_eval_set", "eval_set_from_records", "as_items"]

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


def as_items(eval_set: EvalSet | Iterable[EvalItem | Mapping[str, Any]]) -> list[EvalItem]:
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


def _item_from_record(rec: Any, where: str) -> EvalItem:
    if not isinstance(rec, dict):
        raise DatasetError(f"{where}: an eval item must be a JSON object, got {type(rec).__name__}")
    rid = rec.get("id")
    if isinstance(rid, int) and not isinstance(rid, bool):
        rec = {**rec, "id": str(rid)}
    return EvalItem(
        id=require_str(rec, "id", where, "item"),
        question=require_str(rec, "question", where, "item"),
        keyword=require_str(rec, "keyword", where, "item"),
        reference=require_str(rec, "reference", where, "item"),
    )


def eval_set_from_records(
    records: Iterable[dict[str, Any]], *, name: str = "", source: str = "<memory>", description: str = ""
) -> EvalSet:
    """Build a validated :class:`EvalSet` from dicts with id, question, keyword and reference."""
    items: list[EvalItem] = []
    seen: set[str] = set()
    for i, rec in enumerate(records):
        item = _item_from_record(rec, f"{source}, items[{i}]")
        if item.id in seen:
            raise DatasetError(f"{source}, items[{i}]: duplicate id {item.id!r} (ids must be unique)")
        seen.add(item.id)
        items.append(item)
    if not items:
        raise DatasetError(f"{source}: the eval set has no items")
    return EvalSet(items=items, name=name, description=description)


def load_eval_set(path: PathLike | None = None) -> EvalSet:
    """Load and validate an eval set (``.json`` or ``.jsonl``); default ``data/eval_set.json``.

    Every item needs non-empty string fields ``id`` (an int id is accepted and
    turned into a string), ``question``, ``keyword`` and ``reference``; ids are
    unique; the set is not empty. Errors name the file, line and field.
    """
    if path is None:
        from ragworkbook.paths import data_path

        path = data_path(DEFAULT_EVAL_SET)
    path = Path(path)
    with gc_paused():
        return _load_eval_set(path)


def _load_eval_set(path: Path) -> EvalSet:
    text = read_text(path)
    meta: dict[str, Any] = {}
    jsonl = path.suffix.lower() == ".jsonl"
    if jsonl:
        records = parse_jsonl(path, text)
    else:
        obj = parse_json(path, text)
        if isinstance(obj, list):
            raw_items = obj
            lines = element_lines('{"items": ' + text, "items")
        elif isinstance(obj, dict):
            if "items" not in obj:
                raise DatasetError(f"{path}: the eval set is missing the field 'items' (a list of questions)")
            raw_items = obj["items"]
            if not isinstance(raw_items, list):
                raise DatasetError(f"{path}: field 'items' must be a list, got {type(raw_items).__name__}")
            meta = obj
            lines = element_lines(text, "items")
        else:
            raise DatasetError(
                f"{path}: an eval set must be a JSON object with 'items', got {type(obj).__name__}"
            )
        if len(lines) != len(raw_items):
            lines = [0] * len(raw_items)
        records = list(zip(lines, raw_items, strict=True))
    items: list[EvalItem] = []
    seen: dict[str, int] = {}
    for i, (lineno, rec) in enumerate(records):
        where = location(path, lineno) + ("" if jsonl else f" (items[{i}])")
        item = _item_from_record(rec, where)
        if item.id in seen:
            raise DatasetError(
                f"{where}: field 'id': duplicate id {item.id!r} (first seen at item {seen[item.id]})"
            )
        seen[item.id] = i
        items.append(item)
    if not items:
        raise DatasetError(f"{path}: the eval set has no items")
    return EvalSet(
        items=items,
        name=str(meta.get("name", path.stem)),
        description=str(meta.get("description", "")),
        source=str(meta.get("source", "")),
    )
