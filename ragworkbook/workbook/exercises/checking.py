"""Helpers for exercise checkers: read what the learner wrote, and say what is off without the answer.

Conventions every helper follows (issue 19's exercise contract):

- **Feedback points at the mistake, never at the distance.** A wrong number gets "too high" or
  "too low" and, where the exercise names them, the likely mistake behind it (:class:`Mistake`:
  "did you divide by k or by the number of relevant documents?"); never "off by 0.25", never the
  expected value.
- **An answer is read as written.** A number may come as ``4``, ``4.0``, ``"4"``, ``"3/4"``, ``"75%"``
  (for a share) or inside a sentence (``"Precision@4 is 0.75"``): the sentence is read for its number,
  its unit (``"28.4 BLEU"``) and its context, and a negated statement ("it is not 28.4") is refused.
  Words are compared in any letter case.
- Every helper returns ``(ok, message)``, the checker's contract.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ragworkbook.metrics.numeric import extract_numbers

__all__ = [
    "Mistake",
    "read_number",
    "read_count",
    "read_bool",
    "close",
    "close_each",
    "count",
    "yes_no",
    "same_items",
    "same_text",
    "negated",
]

#: words that turn a statement into its negation ("it is not 28.4", "isn't", "never")
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|cannot)\b|n't\b", re.IGNORECASE)
_FRACTION = re.compile(r"(?<![\w.@/])(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)(?![\w./])"
                       r"|(?<![\w.@/])(\d+)\s+(?:out\s+)?of\s+(\d+)(?![\w./])")  # "3/4", "47 of 48"
_FRACTION_WORDS = re.compile(r"\b(?:halves|half|thirds?|quarters?|fifths?|sixths?|tenths?)\b", re.IGNORECASE)
_PLAIN = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve"
                                      .split())}


@dataclass(frozen=True)
class Mistake:
    """A likely wrong answer and what to say when the learner gives it.

    ``value`` is the number the mistake leads to (computed by the package, like the answer); ``hint``
    names the mistake without giving the answer ("did you divide by k instead of the number of relevant
    documents?").
    """

    value: float
    hint: str


def negated(text: str) -> bool:
    """Whether ``text`` negates what it states ("It is not 28.4 BLEU", "isn't", "never")."""
    return _NEGATION.search(text) is not None


def _number_spans(text: str) -> list[tuple[float, str, int, int]]:
    """(value, unit, start, end) of every number in a sentence: fractions ("3/4", "47 of 48") first, then
    the numbers of :func:`ragworkbook.metrics.numeric.extract_numbers` outside them; a number right after
    "@" is a cutoff ("Precision@4"), not a value."""
    found: list[tuple[float, str, int, int]] = []
    taken: list[tuple[int, int]] = []
    for m in _FRACTION.finditer(text):
        num, den = (float(g) for g in (m.group(1, 2) if m.group(1) is not None else m.group(3, 4)))
        if den:
            found.append((num / den, "", m.start(), m.end()))
            taken.append((m.start(), m.end()))
    for n in extract_numbers(text):
        if any(a <= n.start < b for a, b in taken) or text[:n.start].endswith("@"):
            continue
        found.append((n.value, n.unit, n.start, n.end))
    return sorted(found, key=lambda t: t[2])


def _unit_near(text: str, start: int, end: int, unit: str) -> bool:
    """Whether ``unit`` (a word such as "BLEU") labels the number at ``text[start:end]``: right after it
    ("28.4 BLEU") or before it with at most a few words between ("a BLEU score of 28.4")."""
    after = text[end:end + len(unit) + 3]
    before = text[max(0, start - 40):start]
    u = re.escape(unit)
    return (re.match(r"\s*(?:" + u + r")\b", after, re.IGNORECASE) is not None
            or re.search(r"\b" + u + r"\b(?:\W+\w+){0,3}\W*$", before, re.IGNORECASE) is not None)


def read_number(answer: Any, what: str = "the value", *, unit: str | None = None, share: bool = False,
                wrong_context: Mapping[str, str] | None = None) -> tuple[float | None, str]:
    """Read one number from ``answer``: ``(value, "")``, or ``(None, why it cannot be read)``.

    Accepted: a real number (not a bool, not NaN); a string holding one (a typeset minus "\u2212" reads
    as "-"), a fraction ("3/4", "47 of 48") or, when the quantity is a ``share`` (between 0 and 1), a
    percentage ("75%" is 0.75); a sentence stating one number. In a sentence, a required ``unit`` must
    label the number ("28.4 BLEU", "a BLEU score of 28.4"); ``wrong_context`` maps a regex to the message
    given when the sentence matches it (a sentence about the wrong language pair); a negated sentence and
    one stating several different numbers are refused.
    """
    if isinstance(answer, bool):
        return None, f"{what} is a number, not {answer}"
    if isinstance(answer, numbers.Real):
        value = float(answer)
        if math.isnan(value):
            return None, f"{what} is a number, got NaN"
        return value, ""
    if not isinstance(answer, str):
        return None, f"{what} should be a number (or a sentence stating it), got {type(answer).__name__}"
    text = answer.strip().replace("\u2212", "-")  # a typeset minus sign reads as "-"
    if not text:
        return None, f"{what} should be a number, got an empty string"
    if _PLAIN.fullmatch(text):
        return float(text), ""
    for pattern, message in (wrong_context or {}).items():
        if re.search(pattern, text, re.IGNORECASE):
            return None, message
    if negated(text):
        return None, f"say what {what} is, not what it is not"
    if _FRACTION_WORDS.search(text):
        return None, f"write a fraction as a number ('3/4' or 0.75), not in words: {text!r}"
    spans = _number_spans(text)
    if unit is not None:
        labelled = [s for s in spans if _unit_near(text, s[2], s[3], unit)]
        if spans and not labelled:
            return None, f"say which number is the {unit} (e.g. '12.5 {unit}')"
        spans = labelled
    if not spans:
        return None, f"no number found in {text!r}: give {what} as a number"
    values = []
    for value, u, _, _ in spans:
        if u == "%":
            if not share:
                return None, f"{what} is not a percentage: give it as a plain number"
            value /= 100.0
        if not any(math.isclose(value, v, rel_tol=1e-9, abs_tol=1e-12) for v in values):
            values.append(value)
    if len(values) > 1:
        listed = ", ".join(f"{v:g}" for v in values)
        return None, f"the answer states several numbers ({listed}): give {what} alone"
    return values[0], ""


def read_count(answer: Any, what: str = "the count") -> tuple[int | None, str]:
    """Read a whole number: ``4``, ``4.0``, ``"4"``, ``"four"`` or a sentence stating it."""
    if isinstance(answer, str) and answer.strip().lower() in _WORDS:
        return _WORDS[answer.strip().lower()], ""
    value, why = read_number(answer, what)
    if value is None:
        return None, why
    if not float(value).is_integer():
        return None, f"{what} is a whole number, got {value:g}"
    return int(value), ""


def read_bool(answer: Any) -> bool | None:
    """Read a yes/no answer: True/False, or "yes"/"no"/"true"/"false" in any case; None otherwise."""
    if isinstance(answer, bool):
        return answer
    if isinstance(answer, str):
        word = answer.strip().strip(".!").lower()
        if word in ("yes", "true", "y"):
            return True
        if word in ("no", "false", "n"):
            return False
    return None


def _direction(value: float, expected: float, what: str, low: str | None, high: str | None) -> str:
    if value > expected:
        return f"{what} {value:g} is too high" + (f": {high}" if high else "")
    return f"{what} {value:g} is too low" + (f": {low}" if low else "")


def close(answer: Any, expected: float, tol: float = 1e-3, what: str = "the value", *,
          mistakes: Iterable[Mistake] = (), low: str | None = None, high: str | None = None,
          unit: str | None = None, share: bool = False,
          wrong_context: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """Is ``answer`` a number within ``tol`` of ``expected``?

    A wrong answer is told which of the named ``mistakes`` it matches, else whether it is too high or
    too low (with the ``high`` / ``low`` hint): never the distance or the expected value. ``share``: the
    quantity lies in [0, 1] (a percentage is read as a fraction, and a number above 1 is told so).
    ``unit`` and ``wrong_context`` as in :func:`read_number`.
    """
    value, why = read_number(answer, what, unit=unit, share=share, wrong_context=wrong_context)
    if value is None:
        return False, why
    if abs(value - expected) <= tol:
        return True, f"{what} is {expected:.4g}"
    for m in mistakes:
        if abs(value - m.value) <= tol:
            return False, f"{what} {value:g}: {m.hint}"
    if share and not 0.0 <= value <= 1.0:
        return False, f"{what} {value:g} is not between 0 and 1" + (
            " (a percentage? write it as 75% or 0.75)" if 1 < value <= 100 else "")
    return False, _direction(value, expected, what, low, high)


def close_each(answer: Any, expected: Sequence[float], what: Sequence[str], tol: float = 1e-3, *,
               mistakes: Sequence[Iterable[Mistake]] | None = None,
               share: bool = False) -> tuple[bool, str]:
    """Is ``answer`` a tuple of numbers, each within ``tol`` of ``expected`` (in the order of ``what``,
    their names)? The message says, for each, right or what is off (as :func:`close` does)."""
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__len__") or len(answer) != len(expected):
        count_word = {2: "two", 3: "three", 4: "four"}.get(len(expected), str(len(expected)))
        return False, f"give {count_word} numbers: ({', '.join(what)})"
    per = mistakes if mistakes is not None else [()] * len(expected)
    results = [close(a, e, tol, w, mistakes=m, share=share)
               for a, e, w, m in zip(answer, expected, what, per, strict=True)]
    return all(ok for ok, _ in results), "; ".join(msg for _, msg in results)


def count(answer: Any, expected: int, what: str = "the count", *, mistakes: Iterable[Mistake] = (),
          fewer: str | None = None, more: str | None = None) -> tuple[bool, str]:
    """Is ``answer`` the whole number ``expected``? A wrong count is told a named mistake, or "too many"
    (with the ``more`` hint) / "too few" (with ``fewer``), never the right count."""
    value, why = read_count(answer, what)
    if value is None:
        return False, why
    if value == expected:
        return True, f"{what} is {expected}"
    for m in mistakes:
        if value == m.value:
            return False, f"{what} {value}: {m.hint}"
    if value > expected:
        return False, f"{what} {value} is too many" + (f": {more}" if more else "")
    return False, f"{what} {value} is too few" + (f": {fewer}" if fewer else "")


def yes_no(answer: Any, expected: bool, *, right: str, wrong: str) -> tuple[bool, str]:
    """Is ``answer`` the yes/no ``expected`` (True/False or "yes"/"no", any case)? ``right`` and ``wrong``
    are the messages (``wrong`` points at what to look at, not at the answer)."""
    value = read_bool(answer)
    if value is None:
        return False, f"answer True or False (or yes / no), got {answer!r}"
    return (True, right) if value == expected else (False, wrong)


def _norm(item: Any) -> Any:
    return " ".join(item.split()).casefold() if isinstance(item, str) else item


def same_items(answer: Any, expected: Sequence[Any], what: str = "the items") -> tuple[bool, str]:
    """Does ``answer`` hold exactly the ``expected`` items (any order; strings in any letter case)?

    A wrong answer is told the items it should not hold and how many are missing, never which.
    """
    if isinstance(answer, (str, bytes)):
        answer = [answer]
    if not hasattr(answer, "__iter__"):
        return False, f"{what} should be a list, got {type(answer).__name__}"
    given = list(answer)
    got, want = {_norm(a) for a in given}, {_norm(e) for e in expected}
    if got == want:
        return True, f"{what} are {sorted(expected, key=str)}"
    parts = []
    extra = [a for a in given if _norm(a) not in want]
    if extra:
        parts.append(f"not expected: {extra}")
    if want - got:
        n = len(want - got)
        parts.append(f"{n} {'is' if n == 1 else 'are'} missing")
    return False, f"{what}: " + "; ".join(parts)


def same_text(answer: Any, expected: str, what: str = "the answer") -> tuple[bool, str]:
    """Is ``answer`` the string ``expected``, up to letter case, surrounding quotes and spaces?"""
    if not isinstance(answer, str):
        return False, f"write {what} as a string, got {type(answer).__name__}"
    if _norm(answer.strip().strip("'\"`")) == _norm(expected):
        return True, f"{what} is {expected}"
    return False, f"{answer.strip()!r} is not {what}"


def as_fraction(value: float, max_denominator: int = 100) -> str:
    """``value`` as a short fraction ("3/4") for explanations."""
    f = Fraction(value).limit_denominator(max_denominator)
    return f"{f.numerator}/{f.denominator}"
