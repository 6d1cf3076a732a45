"""The documented file formats, as JSON Schema: the answers file, the eval set and the report.

Three schema files ship inside the package (``ragworkbook/schemas/*.schema.json``):

- ``answers``: one record of an answers file, the outputs of a RAG system
  scored as they are by ``ragworkbook eval --answers FILE``
  (:mod:`ragworkbook.corpus.answers`);
- ``eval-set``: one item of an eval set (:mod:`ragworkbook.corpus.eval_set`);
- ``report``: a whole report file, as ``ragworkbook eval --out`` and
  :meth:`~ragworkbook.evaluation.report.Report.save` write it (an output: what other tools can
  rely on; :meth:`~ragworkbook.evaluation.report.Report.load` checks more than a schema can).

Each schema's ``description`` states the file forms, the accepted field names,
the id rule and where relevance comes from. ``ragworkbook schema NAME`` prints
one. The loaders validate every record with :func:`record_problems` and report
a file's problems together, each with its line and field.

Two validators read the same schema: ``fastjsonschema`` (compiled to Python,
about 20 times faster) accepts the valid records, which are nearly all of them,
and ``jsonschema`` explains the rest, field by field. A test checks that the
two agree.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["SCHEMAS", "schema_path", "schema_text", "load_schema", "is_valid", "record_problems"]

#: Schema name -> file inside this package.
SCHEMAS = {"answers": "answers.schema.json", "eval-set": "eval_set.schema.json",
           "report": "report.schema.json"}


def schema_path(name: str) -> Path:
    """The file of schema ``name`` (``"answers"``, ``"eval-set"`` or ``"report"``); ValueError for another
    name."""
    if name not in SCHEMAS:
        raise ValueError(f"unknown schema {name!r}: the schemas are {', '.join(SCHEMAS)}")
    return Path(__file__).resolve().parent / SCHEMAS[name]


def schema_text(name: str) -> str:
    """The schema ``name`` as the JSON text shipped in the package."""
    return schema_path(name).read_text(encoding="utf-8")


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The schema ``name`` as a dict (a JSON Schema, draft 2020-12; the tests check it is a valid one)."""
    return json.loads(schema_text(name))


@cache
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema(name))


@cache
def _fast(name: str) -> Any:
    import copy

    import fastjsonschema

    return fastjsonschema.compile(copy.deepcopy(load_schema(name)))  # it writes into the schema it gets


def is_valid(record: Any, name: str) -> bool:
    """Does ``record`` follow schema ``name``? (the compiled validator: fast, no explanation)"""
    from fastjsonschema import JsonSchemaException

    try:
        _fast(name)(record)
    except JsonSchemaException:
        return False
    return True


_ARTICLE = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
            "array": "an array", "object": "an object", "null": "null"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _types(want: str | Sequence[str] | None) -> str:
    if want is None:
        return "a value of another shape"
    names = [want] if isinstance(want, str) else list(want)
    return " or ".join(_ARTICLE.get(n, n) for n in names)


def _path(parts: Iterable[Any]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _messages(err: Any, where: str, what: str) -> list[str]:
    """One error of the validator as messages naming ``where`` (file and line) and the field."""
    path = _path(err.absolute_path)
    field = f"field {path!r}" if path else what
    kind = err.validator
    if kind == "required":
        missing = [r for r in err.validator_value if r not in err.instance]
        return [f"{where}: {field} is missing the field {m!r}" for m in missing]
    if kind in ("anyOf", "oneOf") and all(isinstance(s, dict) and set(s) == {"required"}
                                          for s in err.validator_value):
        names = [s["required"][0] for s in err.validator_value]
        alts = f" (or {', '.join(repr(n) for n in names[1:])})" if len(names) > 1 else ""
        return [f"{where}: {field} is missing the field {names[0]!r}{alts}"]
    if kind == "type":
        if not path:
            return [f"{where}: {what} must be {_types(err.validator_value)}, got {_json_type(err.instance)}"]
        return [f"{where}: {field} must be {_types(err.validator_value)}, got {_json_type(err.instance)}"]
    if kind in ("pattern", "minLength"):
        return [f"{where}: {field} is empty"]
    if kind in ("anyOf", "oneOf"):
        # a choice of shapes (a string or an integer; a string or an object): explain against the
        # branch of the value's own type when there is one, else list the shapes allowed
        have = _json_type(err.instance)
        for i, sub in enumerate(err.validator_value):
            t = sub.get("type") if isinstance(sub, dict) else None
            if t == have or (isinstance(t, list) and have in t):
                inner = [e for e in err.context if e.relative_schema_path and e.relative_schema_path[0] == i]
                if inner:
                    return [m for e in inner for m in _messages(e, where, what)]
        shapes = " or ".join(_types(s.get("type")) for s in err.validator_value if isinstance(s, dict))
        return [f"{where}: {field} must be {shapes}, got {have}"]
    return [f"{where}: {field}: {err.message}"]


def record_problems(record: Any, name: str, where: str, what: str = "record") -> list[str]:
    """Every way ``record`` breaks schema ``name``: messages starting with ``where`` (file and line),
    naming the field (``"<where>: field 'contexts[2]' must be a string or an object, got integer"``,
    ``"<where>: record is missing the field 'question' (or 'user_input')"``)."""
    if is_valid(record, name):
        return []
    out: list[str] = []
    errors = sorted(_validator(name).iter_errors(record), key=lambda e: [str(p) for p in e.absolute_path])
    for err in errors:
        for m in _messages(err, where, what):
            if m not in out:
                out.append(m)
    return out
