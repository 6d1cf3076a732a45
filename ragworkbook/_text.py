"""Short views of long values for error messages: where two values differ, not their first characters.

:func:`differing_parts` cuts two strings to the part where they differ, with a little context
and ``...`` where text was left out, so that a message comparing two long values (two server
URLs, two corpus checksums, two prompts) shows the difference instead of a common prefix cut
before it.
"""

from __future__ import annotations

__all__ = ["differing_parts"]

#: characters of common text kept before the first difference
CONTEXT = 12


def differing_parts(a: str, b: str, width: int = 60) -> tuple[str, str]:
    """``a`` and ``b`` cut to where they differ: the text from :data:`CONTEXT` characters before the
    first differing character to just after the last one, at most ``width`` characters each, with
    ``...`` marking what was left out. Values of at most ``width`` characters are kept whole."""
    if len(a) <= width and len(b) <= width:
        return a, b
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0  # length of the common suffix, not overlapping the common prefix
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    lo = max(0, start - CONTEXT)

    def cut(s: str) -> str:
        hi = len(s) - end
        part = s[lo:max(hi, start) + min(end, 4)]
        if len(part) > width:
            part = part[:width - 3] + "..."
        more = lo + len(part) < len(s) and not part.endswith("...")
        return ("..." if lo > 0 else "") + part + ("..." if more else "")

    return cut(a), cut(b)
