"""Type aliases for data that is JSON by nature: what files hold and what ``--json`` prints.

Use these only where a value really is free-form JSON (a file read before it is checked, a payload
written out). Anything the package builds and passes between layers is a dataclass instead.
"""

from __future__ import annotations

from typing import TypeAlias

JSONScalar: TypeAlias = str | int | float | bool | None
JSON: TypeAlias = JSONScalar | list["JSON"] | dict[str, "JSON"]
JSONObject: TypeAlias = dict[str, JSON]
"""A JSON object as ``json.loads`` returns it."""

__all__ = ["JSON", "JSONObject", "JSONScalar", "as_json"]


def as_json(value: object) -> JSON:
    """``value`` as JSON: through ``json.dumps`` (what is not JSON becomes its ``str``) and back."""
    import json

    return json.loads(json.dumps(value, default=str))
