"""A cheap, deterministic numeric-consistency check for generated answers.

Lexical and embedding metrics barely notice when an answer swaps one number for
another (notebook 05's "41.0 instead of 28.4"). :func:`check_numbers` looks only
at numbers: it lists the numbers in an answer that the retrieved **context**
does not contain, and those that **contradict the reference**, each with its
character span in the answer.

Extraction rules (:func:`extract_numbers`)
------------------------------------------
- Numerals: integers ("8"), decimals ("28.4", ".5" is not a number, "0.5" is),
  thousands separators ("1,000" = 1000; groups of exactly three digits),
  scientific notation ("3.3e18"), a leading minus only at the start of a token
  ("-0.5", but "0.9-0.98" is two numbers, not a subtraction).
- Percentages: "10%", "10 %" and "10 percent" have value 10 and unit "%"; when
  matching, a percentage p also equals the fraction p/100 ("10%" matches
  "Pdrop = 0.1").
- Attached units: letters glued after the digits are the unit ("12h", "65M",
  "8x", "3rd"); they are recorded, not converted ("12 hours" and "0.5 days" do
  not match).
- Identifiers are not numbers: digits glued after a letter ("P100", "β2", "v2")
  or after a letter and a hyphen ("GPT-3", "WMT-14") are part of a name and
  skipped, as are dotted version numbers ("1.2.3"). A formula such as "h = 8"
  or "N = 6" yields the number after "=".
- Years: a plain four-digit integer from 1900 to 2099 ("WMT 2014") is of kind
  "year", unless it directly follows "=" ("dff = 2048" is a quantity). Years and
  quantities are compared separately against the reference (below); for the
  context both must simply appear.
- Number words: "two" ... "nineteen", the tens "twenty" ... "ninety" and
  compounds "twenty-one" / "twenty one", case-insensitive. "one" and "zero" are
  ignored (too often a pronoun or an idiom: "one of the", "the one that"). A
  number word inside another hyphenated phrase ("one-to-one", "two-layer") is
  not read as a number: hyphenated phrases such as "English-to-German" are words.
- Not handled (documented limits): ranges as one value, fractions ("3/4"),
  "a dozen", "1.5 million" as 1,500,000, decimal commas ("3,5").

Checking rules (:func:`check_numbers`)
--------------------------------------
- **Context support**: an answer number is *unsupported* when no number in the
  context has the same value (relative tolerance ``rel_tol``, default 1e-9, so
  "41" equals "41.0" but "28" does not equal "28.4"; number words count, so
  "eight" is supported by "h = 8"). Every kind supports every kind.
- **Reference contradiction**: numbers are split into years and quantities. For
  each group, if the reference states a number that the answer does not, then
  every answer number of that group that the reference does not state is
  *contradicted* (it stands where the reference's number should be), and the
  reference numbers the answer lacks are listed as ``missing``. An answer that
  states no number of that group contradicts nothing (it is incomplete, not
  wrong), and extra numbers beside all of the reference's numbers are fine.
- ``ok`` is True when nothing is unsupported or contradicted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from ragworkbook._types import JSONObject

if TYPE_CHECKING:  # pragma: no cover
    from ragworkbook.protocols import Context

_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split())
         if w != "_"}
_IGNORED_WORDS = {"zero", "one"}

_LETTER = r"[^\W\d_]"
_NUMERAL = re.compile(
    r"""
    (?P<sign>(?<![\w.,\-])-)?                # a minus only at the start of a token
    (?P<num>
        \d{1,3}(?:,\d{3})+(?:\.\d+)?         # thousands separators
      | \d+\.\d+                             # decimal
      | \d+                                  # integer
    )
    (?P<exp>[eE][-+]?\d+(?![\w]))?           # scientific notation
    (?P<unit>\s?%|\s+percent\b|[^\W\d_]+)?   # percent sign/word, or glued letters
    """,
    re.VERBOSE,
)
_WORDS = re.compile(
    r"(?<![\w-])(?P<tens>" + "|".join(_TENS) + r")(?:[-\s](?P<unit>" + "|".join(
        w for w in _UNITS if _UNITS[w] and _UNITS[w] < 10) + r"))?(?![\w-])"
    r"|(?<![\w-])(?P<single>" + "|".join(w for w in _UNITS if w not in _IGNORED_WORDS) + r")(?![\w-])",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class NumberSpan:
    """A number found in a text: ``text[start:end] == span``.

    ``kind`` is "year" or "quantity"; ``unit`` is "%" for percentages, the glued
    letters for attached units ("h" in "12h"), else ""; ``word`` is True for a
    number written in letters.
    """

    span: str
    start: int
    end: int
    value: float
    kind: str = "quantity"
    unit: str = ""
    word: bool = False


def _values(n: NumberSpan) -> tuple[float, ...]:
    return (n.value, n.value / 100.0) if n.unit == "%" else (n.value,)


def _same(a: NumberSpan, b: NumberSpan, rel_tol: float) -> bool:
    return any(math.isclose(x, y, rel_tol=rel_tol, abs_tol=0.0) or x == y
               for x in _values(a) for y in _values(b))


def extract_numbers(text: str) -> list[NumberSpan]:
    """Every number in ``text`` by the module's rules, in order of position."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    found: list[NumberSpan] = []
    for m in _NUMERAL.finditer(text):
        start = m.start()
        before = text[:start]
        # identifiers: digits glued to a preceding letter/digit, or "letter-digit" as in GPT-3
        if re.search(r"[^\W_]$", before) or re.search(_LETTER + r"-$", before):
            continue
        # version-like ids ("1.2.3"): skip the head and the tail; a bare ".5" is not a number
        if before.endswith(".") or re.match(r"\.\d", text[m.end("num"):]):
            continue
        raw = m.group("num").replace(",", "")
        value = float(raw + (m.group("exp") or ""))
        if m.group("sign"):
            value = -value
        unit_raw = m.group("unit") or ""
        unit = "%" if unit_raw.strip() in {"%", "percent"} else unit_raw
        end = m.end() if unit else m.end("exp") if m.group("exp") else m.end("num")
        is_int = re.fullmatch(r"\d{4}", m.group("num")) is not None and not m.group("exp")
        after_equals = re.search(r"=\s*$", before) is not None
        kind = "year" if (is_int and 1900 <= value <= 2099 and not unit and not m.group("sign")
                          and not after_equals) else "quantity"
        found.append(NumberSpan(text[start:end], start, end, value, kind, unit, False))
    for m in _WORDS.finditer(text):
        if m.group("single"):
            value = float(_UNITS[m.group("single").lower()])
        else:
            value = float(_TENS[m.group("tens").lower()] + (_UNITS[m.group("unit").lower()] if m.group("unit")
                                                            else 0))
        found.append(NumberSpan(m.group(0), m.start(), m.end(), value, "quantity", "", True))
    return sorted(found, key=lambda n: n.start)


@dataclass
class NumericCheck:
    """Result of :func:`check_numbers`. Spans refer to the answer (``missing``: to the reference)."""

    answer: str
    numbers: list[NumberSpan]
    unsupported: list[NumberSpan] = field(default_factory=list)
    contradicted: list[NumberSpan] = field(default_factory=list)
    missing: list[NumberSpan] = field(default_factory=list)
    context_checked: bool = False
    reference_checked: bool = False

    @property
    def ok(self) -> bool:
        """True when no answer number is unsupported by the context or contradicts the reference."""
        return not self.unsupported and not self.contradicted

    @property
    def flagged(self) -> list[NumberSpan]:
        """Answer numbers that are unsupported or contradicted (each once, by position)."""
        seen = {(n.start, n.end): n for n in self.unsupported + self.contradicted}
        return [seen[k] for k in sorted(seen)]

    def explain(self) -> str:
        """One line per finding, e.g. ``41.0 [87:91] contradicts the reference (which says 28.4)``."""
        if not self.numbers and not self.missing:
            return "no numbers in the answer"
        lines = []
        miss = ", ".join(m.span for m in self.missing)
        for n in self.flagged:
            why = []
            if n in self.unsupported:
                why.append("not in the context")
            if n in self.contradicted:
                why.append(f"contradicts the reference (which says {miss})")
            lines.append(f"{n.span} [{n.start}:{n.end}] " + "; ".join(why))
        if not lines:
            checks = [x for x, on in (("in the context", self.context_checked),
                                      ("consistent with the reference", self.reference_checked)) if on]
            lines.append("ok: every number is " + " and ".join(checks) if checks
                         else "ok: nothing to check against")
        return "\n".join(lines)

    def to_dict(self) -> JSONObject:
        """JSON-ready form (spans as dicts) plus ``ok``."""
        return {"answer": self.answer, "ok": self.ok,
                "numbers": [asdict(n) for n in self.numbers],
                "unsupported": [asdict(n) for n in self.unsupported],
                "contradicted": [asdict(n) for n in self.contradicted],
                "missing": [asdict(n) for n in self.missing],
                "context_checked": self.context_checked, "reference_checked": self.reference_checked}


def _context_text(context: str | Iterable[Context]) -> str:
    from ragworkbook.protocols import context_text

    if isinstance(context, str):
        return context
    if not isinstance(context, Iterable):
        raise TypeError(f"context must be a str or a sequence of str/chunks, got {type(context).__name__}")
    parts = []
    for i, c in enumerate(context):
        try:
            parts.append(context_text(c))
        except TypeError:
            raise TypeError(f"context[{i}] must be a str or have a .text, got {type(c).__name__}") from None
    return "\n\n".join(parts)


def check_numbers(answer: str, context: str | Sequence[Context] | None = None,
                  reference: str | None = None, rel_tol: float = 1e-9) -> NumericCheck:
    """Check the numbers of ``answer`` against ``context`` and/or ``reference``.

    ``context``: a string, or a sequence of strings / chunk-like objects with
    ``.text`` / retrieval hits with ``.chunk.text``. ``None`` skips the context
    check (and ``reference=None`` the reference check). See the module docstring
    for every rule.
    """
    if not isinstance(answer, str):
        raise TypeError(f"answer must be a str, got {type(answer).__name__}")
    if reference is not None and not isinstance(reference, str):
        raise TypeError(f"reference must be a str or None, got {type(reference).__name__}")
    if not (rel_tol >= 0):
        raise ValueError(f"rel_tol must be >= 0, got {rel_tol}")
    nums = extract_numbers(answer)
    result = NumericCheck(answer=answer, numbers=nums)
    if context is not None:
        ctx = extract_numbers(_context_text(context))
        result.context_checked = True
        result.unsupported = [n for n in nums if not any(_same(n, c, rel_tol) for c in ctx)]
    if reference is not None:
        result.reference_checked = True
        ref = extract_numbers(reference)
        for kind in ("quantity", "year"):
            a_k = [n for n in nums if n.kind == kind]
            r_k = [r for r in ref if r.kind == kind]
            missing = [r for r in r_k if not any(_same(r, n, rel_tol) for n in a_k)]
            if missing and a_k:
                result.contradicted += [n for n in a_k if not any(_same(n, r, rel_tol) for r in r_k)]
            result.missing += missing
        result.contradicted.sort(key=lambda n: n.start)
        result.missing.sort(key=lambda n: n.start)
    return result
