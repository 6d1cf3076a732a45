"""The parts of a request to a model, as every backend and the recordings take them.

A request is JSON by nature: its options and schema are sent to a server as they are and stored in
recordings, so they are typed :data:`~ragworkbook._types.JSON`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias, TypedDict

from ragworkbook._types import JSON

#: one chat message: ``{"role": ..., "content": ...}``
Message: TypeAlias = Mapping[str, str]
#: a request's generation options (temperature, seed, num_predict, stop, ...)
Options: TypeAlias = dict[str, JSON]
#: a JSON Schema the answer must follow
Schema: TypeAlias = Mapping[str, JSON]


class Try(TypedDict):
    """One attempt as ``Generation.tries`` keeps it (and a recording stores it): the options sent, the
    messages added for a retry, the raw output and why it was refused (None: accepted)."""

    options: Options
    added_messages: list[dict[str, str]]
    output: str
    error: str | None


__all__ = ["Message", "Options", "Schema", "Try"]
