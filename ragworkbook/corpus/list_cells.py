"""List cells of CSV files: the forms other tools write a list in, read exactly or refused.

A CSV has no list type, so each tool writes a list column its own way:

- a JSON array: ``["p7-c1", "p7-c2"]`` (the workbook, ``json.dumps``);
- a Python list literal: ``['p7-c1', 'p7-c2']`` (``pandas.DataFrame.to_csv`` of a column of
  lists, as ragas' ``EvaluationDataset.to_csv`` writes);
- a numpy array's ``str``: ``['p7-c1' 'p7-c2']``, elements separated by blanks only and wrapped over
  several lines past 75 characters (``datasets.Dataset.to_csv``, so ragas'
  ``to_hf_dataset().to_csv``: Arrow lists become numpy arrays in pandas);
- text joined by a separator, ``p7-c1|p7-c2`` (deepeval's ``save_as(file_type="csv")`` joins
  ``context`` and ``retrieval_context`` with ``|``): only where the caller declares it.

Python would read the numpy form as ONE string (``'p7-c1' 'p7-c2'`` is implicit concatenation:
``'p7-c1p7-c2'``), so a literal reader silently merges the ids. :func:`parse_list_cell` reads each
element on its own, and refuses what cannot be read unambiguously: a Python literal where two
strings touch without a comma (``['a', 'b' 'c']``: one element or two?), a numpy array that
numpy summarised (``['a' 'b' ... 'y' 'z']``: the middle elements are not in the file), or anything
that is not a list.
"""

from __future__ import annotations

import ast
import io
import json
import tokenize

__all__ = ["ListCellError", "parse_list_cell"]


class ListCellError(ValueError):
    """A list cell that cannot be read unambiguously; the message says why and how to fix it."""


_FIX = ("write the list as a JSON array in the cell, like [\"first\", \"second\"] (for a pandas "
        "DataFrame: df[col] = df[col].map(lambda v: json.dumps(list(v))) before to_csv), or save the "
        "data as JSON Lines or Parquet")


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return list(value)
    return value


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    skip = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER,
            tokenize.COMMENT, tokenize.ENCODING)
    return [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in skip]


def _offsets(text: str) -> list[int]:
    """The offset of each line's start in ``text`` (tokenize gives (row, column) positions)."""
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _top_level(toks: list[tokenize.TokenInfo]) -> list[list[tokenize.TokenInfo]]:
    """The tokens inside the outer brackets, grouped: a group is a bracketed value, or one token."""
    groups: list[list[tokenize.TokenInfo]] = []
    depth = 0
    for t in toks[1:-1]:
        if depth == 0:
            groups.append([t])
        else:
            groups[-1].append(t)
        if t.type == tokenize.OP and t.string in "([{":
            depth += 1
        elif t.type == tokenize.OP and t.string in ")]}":
            depth -= 1
    return groups


def _literal(text: str, starts: list[int], group: list[tokenize.TokenInfo]) -> object:
    a = starts[group[0].start[0] - 1] + group[0].start[1]
    b = starts[group[-1].end[0] - 1] + group[-1].end[1]
    return _plain(ast.literal_eval(text[a:b]))


def _python_or_numpy(text: str) -> list[object]:
    """A Python list literal, or the ``str`` of a numpy array (blank-separated elements)."""
    stripped = text.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")):
        raise ListCellError(f"not a list (a list cell starts with '[' and ends with ']'); got "
                            f"{stripped[:40]!r}; {_FIX}")
    try:
        toks = _tokens(stripped)
    except (tokenize.TokenError, SyntaxError, IndentationError) as exc:
        raise ListCellError(f"not a readable list ({exc}); {_FIX}") from None
    if not toks or toks[0].string != "[" or toks[-1].string != "]":
        raise ListCellError(f"not a list; got {stripped[:40]!r}; {_FIX}")
    starts = _offsets(stripped)
    groups = _top_level(toks)
    if any(len(g) == 1 and g[0].string == "..." for g in groups):
        raise ListCellError("numpy summarised this array ('...' stands for elements that are not in the "
                            f"file: numpy prints at most 1000 elements); {_FIX}")
    commas = [g for g in groups if len(g) == 1 and g[0].string == ","]
    # elements: a '-' sign belongs to the number after it
    elements: list[list[tokenize.TokenInfo]] = []
    pending: list[tokenize.TokenInfo] = []
    for g in groups:
        if len(g) == 1 and g[0].string == ",":
            elements.append([])  # marks a comma
            continue
        if len(g) == 1 and g[0].string in ("-", "+"):
            pending = g
            continue
        elements.append(pending + g)
        pending = []
    if commas:
        # a Python literal: two values with no comma between them are glued by Python (strings) or
        # are a syntax error; either way the cell is not read as written
        prev_value = False
        for e in elements:
            if e and prev_value:
                raise ListCellError("two values touch without a comma between them (Python would glue "
                                    f"two strings into one); {_FIX}")
            prev_value = bool(e)
        try:
            value = ast.literal_eval(stripped)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise ListCellError(f"not a readable list literal; got {stripped[:40]!r}; {_FIX}") from None
        return list(_plain(value))
    # no comma at the top level: one element, or numpy's blank-separated elements
    out: list[object] = []
    for e in elements:
        try:
            out.append(_literal(stripped, starts, e))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            got = " ".join(t.string for t in e)[:40]
            raise ListCellError(f"an element is not a literal value ({got!r}); {_FIX}") from None
    return out


def parse_list_cell(text: str, separator: str | None = None) -> list[object]:
    """The list in a CSV cell: a JSON array, a Python list literal, or a numpy array's ``str``.

    ``separator``: the cell is text joined by it (deepeval's ``|``), declared by the caller for the
    columns of a file known to be written that way, and split on it exactly as that tool reads its
    own file back (deepeval: ``cell.split("|")``). :class:`ListCellError` (saying why and the fix)
    for a cell that is not one of these forms, or cannot be read as exactly one list.
    """
    if separator is not None:
        return text.split(separator)
    stripped = text.strip()
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        value = None
    else:
        if not isinstance(value, list):
            raise ListCellError(f"not a list (a JSON {type(value).__name__}); got {stripped[:40]!r}; {_FIX}")
        return value
    return _python_or_numpy(stripped)
