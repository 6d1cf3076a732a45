"""Helpers for exercise checkers: read what the learner wrote, and say what is off without the answer.

Conventions every helper follows (the course's exercise contract):

- **One rule for numbers.** A task asks for a precision ("to 3 decimals"). An answer is read with the
  precision it was written in (``0.64`` has 2 decimals, ``"64%"`` of a share 2, ``"0.640"`` 3; a whole
  number, a fraction ``"9/14"`` or ``"5 of 8"`` is exact; a float computed in Python has the decimals of
  its shortest repr, at most 9 counted). It is *right* when it equals the solution at that precision
  (``|answer - solution| <= 0.5 * 10**-decimals``) and has at least the precision the task asks for, or
  is exact. An answer equal to the solution at a lower precision gets "give 3 decimals", never a hint.
  There is no other tolerance anywhere in the course.
- **Feedback points at the mistake, never at the distance.** A wrong number gets the hint of a named
  :class:`Mistake` only when it equals that mistake's own value at the precision given; otherwise "too
  high" / "too low" with a hint that presumes no particular mistake. Never "off by 0.25", never the
  expected value.
- **An answer is read as written.** A number may come as ``4``, ``4.0``, ``"4"``, ``"3/4"``, ``"75%"``
  (for a share), with a typeset minus ``"\u22120.16"``, or inside a sentence (``"Precision@4 is 0.75"``):
  the sentence is read for its number, its unit (``"28.4 BLEU"``) and its context, and a negated
  statement ("it is not 28.4") is refused. Words are compared in any letter case.
- Every helper returns ``(ok, message)``, the checker's contract. An exercise whose answer is a number or
  a count declares it as an :class:`Number`, :class:`Numbers` or :class:`Count` (its checker is built from
  it), so that the tests can try the rounded solution, a less precise one and every declared mistake.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ragworkbook.metrics.numeric import extract_numbers

__all__ = [
    "Mistake",
    "Written",
    "Number",
    "Numbers",
    "Count",
    "Expected",
    "read_number",
    "read_written",
    "read_count",
    "read_bool",
    "close",
    "close_each",
    "count",
    "yes_no",
    "same_items",
    "same_text",
    "text_answer",
    "negated",
]

#: words that turn a statement into its negation ("it is not 28.4", "isn't", "never")
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|cannot)\b|n't\b", re.IGNORECASE)
_FRACTION = re.compile(r"(?<![\w.@/-])([-+]?\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)(?![\w./])"
                       r"|(?<![\w.@/])(\d+)\s+(?:out\s+)?of\s+(\d+)(?![\w./])")  # "3/4", "5 of 8"
_FRACTION_WORDS = re.compile(r"\b(?:halves|half|thirds?|quarters?|fifths?|sixths?|tenths?)\b", re.IGNORECASE)
#: a checker: the answer as the learner gave it -> (ok, message)
Checker = Callable[[object], tuple[bool, str]]
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
    """(value, unit, start, end) of every number in a sentence: fractions ("3/4", "5 of 8") first, then
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


@dataclass(frozen=True)
class Written:
    """A number as the learner wrote it: its ``value`` and its ``decimals`` (None: exact, as a whole
    number or a fraction is)."""

    value: float
    decimals: int | None


#: the most decimals a written number is counted with: a float computed in Python is as precise as it gets
MAX_DECIMALS = 9


def _decimals_of(literal: str) -> int | None:
    """The decimals of a numeral as written: "0.640" has 3, "6.4e-1" 2; a whole number is exact (None)."""
    m = re.fullmatch(r"[-+]?(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?", literal.strip().replace(",", ""))
    if m is None:
        return None
    frac, exp = m.group(2), int(m.group(3) or 0)
    if m.group(2) is None and exp >= 0:
        return None
    return min(MAX_DECIMALS, max(0, len(frac or "") - exp))


def _written_of_number(answer: numbers.Real) -> Written:
    if isinstance(answer, numbers.Integral) or isinstance(answer, Fraction):
        return Written(float(answer), None)
    value = float(answer)
    if value.is_integer() and not isinstance(answer, float):
        return Written(value, None)
    return Written(value, _decimals_of(repr(value)))


def read_written(answer: object, what: str = "the value", *, unit: str | None = None, share: bool = False,
                 wrong_context: Mapping[str, str] | None = None) -> tuple[Written | None, str]:
    """Read one number from ``answer`` with the precision it was written in: ``(Written, "")``, or
    ``(None, why it cannot be read)``.

    Accepted: a real number (not a bool, not NaN); a string holding one (a typeset minus "\u2212" reads
    as "-"), a fraction ("3/4", "5 of 8": exact) or, when the quantity is a ``share`` (between 0 and 1),
    a percentage ("75%" is 0.75, with 2 decimals); a sentence stating one number. In a sentence, a
    required ``unit`` must label the number ("28.4 BLEU", "a BLEU score of 28.4"); ``wrong_context`` maps
    a regex to the message given when the sentence matches it (a sentence about the wrong language pair);
    a negated sentence and one stating several different numbers are refused.
    """
    if isinstance(answer, bool):
        return None, f"{what} is a number, not {answer}"
    if isinstance(answer, numbers.Real):
        if math.isnan(float(answer)):
            return None, f"{what} is a number, got NaN"
        return _written_of_number(answer), ""
    if not isinstance(answer, str):
        return None, f"{what} should be a number (or a sentence stating it), got {type(answer).__name__}"
    text = answer.strip().replace("\u2212", "-")  # a typeset minus sign reads as "-"
    if not text:
        return None, f"{what} should be a number, got an empty string"
    if _PLAIN.fullmatch(text):
        return Written(float(text), _decimals_of(text)), ""
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
    found: list[Written] = []
    for value, u, start, end in spans:
        literal = re.sub(r"[^\d.eE+-]", "", text[start:end].split("%")[0].replace("\u2212", "-"))
        decimals = None if _FRACTION.fullmatch(text[start:end]) else _decimals_of(literal)
        if u == "%":
            if not share:
                return None, f"{what} is not a percentage: give it as a plain number"
            value /= 100.0
            decimals = min(MAX_DECIMALS, (decimals or 0) + 2)  # "64%" is 0.64: two decimals
        if not any(math.isclose(value, w.value, rel_tol=1e-9, abs_tol=1e-12) for w in found):
            found.append(Written(value, decimals))
    if len(found) > 1:
        listed = ", ".join(f"{w.value:g}" for w in found)
        return None, f"the answer states several numbers ({listed}): give {what} alone"
    return found[0], ""


def read_number(answer: object, what: str = "the value", *, unit: str | None = None, share: bool = False,
                wrong_context: Mapping[str, str] | None = None) -> tuple[float | None, str]:
    """Read one number from ``answer``: ``(value, "")``, or ``(None, why it cannot be read)``; what is
    accepted is said in :func:`read_written`."""
    written, why = read_written(answer, what, unit=unit, share=share, wrong_context=wrong_context)
    return (written.value, "") if written is not None else (None, why)


def read_count(answer: object, what: str = "the count") -> tuple[int | None, str]:
    """Read a whole number: ``4``, ``4.0``, ``"4"``, ``"four"`` or a sentence stating it."""
    if isinstance(answer, str) and answer.strip().lower() in _WORDS:
        return _WORDS[answer.strip().lower()], ""
    value, why = read_number(answer, what)
    if value is None:
        return None, why
    if not float(value).is_integer():
        return None, f"{what} is a whole number, got {value:g}"
    return int(value), ""


def read_bool(answer: object) -> bool | None:
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


def _half_unit(decimals: int | None) -> float:
    """How far a number written with ``decimals`` may lie from what it rounds (exact: float noise)."""
    if decimals is None:
        return 1e-9
    return 0.5 * 10.0 ** -decimals * (1 + 1e-9) + 1e-12


def equal_at(written: Written, value: float) -> bool:
    """Whether ``written`` equals ``value`` at the precision it was written in."""
    return abs(written.value - value) <= _half_unit(written.decimals)


def _exact_at(value: float, decimals: int) -> bool:
    return abs(value - round(value, decimals)) <= 1e-12


def _as_decimals(decimals: int | float) -> int:
    """The precision a task asks for. A float is read as the half-width of a tolerance (0.005: 2
    decimals), a form kept only for checkers not yet written with decimals."""
    if isinstance(decimals, float):
        return max(0, round(-math.log10(2 * decimals)))
    return int(decimals)


def _typed_trailing_zeros(answer: object, value: float, expected: float, need: int) -> bool:
    """Whether ``answer`` is a float equal to ``expected`` rounded to ``need`` decimals: typed as 0.810 in
    Python it is the float 0.81, which cannot show the trailing zero the task asks for."""
    if isinstance(answer, (bool, str, numbers.Integral)) or not isinstance(answer, numbers.Real):
        return False
    return abs(value - round(expected, need)) <= 1e-12


def precision_message(what: str, decimals: int, given: int) -> str:
    """What a right answer written with too few decimals is told: the precision asked, nothing else."""
    unit = "decimal" if decimals == 1 else "decimals"
    return f"{what}: give {decimals} {unit}, as the task asks (you gave {given})"


def close(answer: object, expected: float, decimals: int | float = 3, what: str = "the value", *,
          mistakes: Iterable[Mistake] = (), low: str | None = None, high: str | None = None,
          unit: str | None = None, share: bool = False,
          wrong_context: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """Is ``answer`` the number ``expected``, given to the ``decimals`` the task asks for?

    The module's one rule: right when equal to ``expected`` at the precision written and written with at
    least ``decimals`` (or exact); equal at a lower precision: "give N decimals". A wrong answer is told
    the hint of the named ``mistakes`` whose value it equals at the precision written, else whether it is
    too high or too low (with the ``high`` / ``low`` hint, which must fit any value on that side): never
    the distance or the expected value. ``share``: the quantity lies in [0, 1] (a percentage is read as a
    fraction, and a number above 1 is told so). ``unit`` and ``wrong_context`` as in :func:`read_written`.
    """
    need = _as_decimals(decimals)
    written, why = read_written(answer, what, unit=unit, share=share, wrong_context=wrong_context)
    if written is None:
        return False, why
    value = written.value
    if equal_at(written, expected):
        if written.decimals is None or written.decimals >= need or _exact_at(expected, written.decimals):
            return True, f"{what} is {expected:.4g}"
        if _typed_trailing_zeros(answer, value, expected, need):
            return True, f"{what} is {expected:.4g}"
        return False, precision_message(what, need, written.decimals)
    for m in mistakes:
        if equal_at(written, m.value):
            return False, f"{what} {value:g}: {m.hint}"
    if share and not 0.0 <= value <= 1.0:
        return False, f"{what} {value:g} is not between 0 and 1" + (
            " (a percentage? write it as 75% or 0.75)" if 1 < value <= 100 else "")
    return False, _direction(value, expected, what, low, high)


def close_each(answer: object, expected: Sequence[float], what: Sequence[str],
               decimals: int | float | Sequence[int] = 3, *,
               mistakes: Sequence[Iterable[Mistake]] | None = None,
               share: bool = False) -> tuple[bool, str]:
    """Is ``answer`` a tuple of numbers, each ``expected`` at its ``decimals`` (one for all, or one each),
    in the order of ``what``, their names? The message says, for each, right or what is off (as
    :func:`close` does)."""
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__len__") or len(answer) != len(expected):
        count_word = {2: "two", 3: "three", 4: "four"}.get(len(expected), str(len(expected)))
        return False, f"give {count_word} numbers: ({', '.join(what)})"
    per = mistakes if mistakes is not None else [()] * len(expected)
    places = list(decimals) if isinstance(decimals, Sequence) else [decimals] * len(expected)
    results = [close(a, e, d, w, mistakes=m, share=share)
               for a, e, d, w, m in zip(answer, expected, places, what, per, strict=True)]
    return _joined(results, what)


def _joined(results: Sequence[tuple[bool, str]], what: Sequence[str]) -> tuple[bool, str]:
    """One verdict for several parts: all right shows the values; otherwise a right part only says so
    (its value would tell the answer of the part still wrong's exercise)."""
    if all(ok for ok, _ in results):
        return True, "; ".join(msg for _, msg in results)
    return False, "; ".join(f"{w} is right" if ok else msg
                            for (ok, msg), w in zip(results, what, strict=True))


def count(answer: object, expected: int, what: str = "the count", *, mistakes: Iterable[Mistake] = (),
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


def yes_no(answer: object, expected: bool, *, right: str, wrong: str) -> tuple[bool, str]:
    """Is ``answer`` the yes/no ``expected`` (True/False or "yes"/"no", any case)? ``right`` and ``wrong``
    are the messages (``wrong`` points at what to look at, not at the answer)."""
    value = read_bool(answer)
    if value is None:
        return False, f"answer True or False (or yes / no), got {answer!r}"
    return (True, right) if value == expected else (False, wrong)


def _norm(item: object) -> object:
    return " ".join(item.split()).casefold() if isinstance(item, str) else item


def same_items(answer: object, expected: Sequence[object], what: str = "the items") -> tuple[bool, str]:
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


def _not_text(answer: object, what: str) -> str | None:
    """What to say when ``answer`` is no string (None: it is one)."""
    return None if isinstance(answer, str) else f"write {what} as a string, got {type(answer).__name__}"


def text_answer(what: str = "the answer") -> Callable[[Callable[[str], tuple[bool, str]]], Checker]:
    """Make a checker of a string answer: any other answer gets "write ``what`` as a string", and the
    decorated function is called with strings only."""

    def wrap(check: Callable[[str], tuple[bool, str]]) -> Checker:
        @functools.wraps(check)
        def checker(answer: object) -> tuple[bool, str]:
            problem = _not_text(answer, what)
            return (False, problem) if problem is not None else check(str(answer))

        return checker

    return wrap


def same_text(answer: object, expected: str, what: str = "the answer") -> tuple[bool, str]:
    """Is ``answer`` the string ``expected``, up to letter case, surrounding quotes and spaces?"""
    if not isinstance(answer, str):
        return False, _not_text(answer, what) or ""
    if _norm(answer.strip().strip("'\"`")) == _norm(expected):
        return True, f"{what} is {expected}"
    return False, f"{answer.strip()!r} is not {what}"


@dataclass(frozen=True)
class Number:
    """A numeric answer as an exercise declares it: the solution ``value``, the ``decimals`` its task asks
    for ("to 3 decimals"), the named ``mistakes`` and the rest of :func:`close`'s arguments."""

    value: float
    decimals: int
    what: str = "the value"
    mistakes: Sequence[Mistake] = ()
    low: str | None = None
    high: str | None = None
    share: bool = False
    unit: str | None = None
    wrong_context: Mapping[str, str] | None = None

    def check(self, answer: object) -> tuple[bool, str]:
        return close(answer, self.value, self.decimals, self.what, mistakes=self.mistakes, low=self.low,
                     high=self.high, unit=self.unit, share=self.share, wrong_context=self.wrong_context)


@dataclass(frozen=True)
class Numbers:
    """A tuple of numeric answers (``(before, after)``), each a :class:`Number`."""

    parts: Sequence[Number]

    @property
    def value(self) -> tuple[float, ...]:
        return tuple(p.value for p in self.parts)

    def check(self, answer: object) -> tuple[bool, str]:
        parts = self.parts
        if isinstance(answer, (str, bytes)) or not hasattr(answer, "__len__") or len(answer) != len(parts):
            count_word = {2: "two", 3: "three", 4: "four"}.get(len(parts), str(len(parts)))
            return False, f"give {count_word} numbers: ({', '.join(p.what for p in parts)})"
        return _joined([p.check(a) for p, a in zip(parts, answer, strict=True)], [p.what for p in parts])


@dataclass(frozen=True)
class Count:
    """A whole-number answer as an exercise declares it: the ``value``, the named ``mistakes`` and the
    hints for too many (``more``) and too few (``fewer``); see :func:`count`."""

    value: int
    what: str = "the count"
    mistakes: Sequence[Mistake] = ()
    fewer: str | None = None
    more: str | None = None

    def check(self, answer: object) -> tuple[bool, str]:
        return count(answer, self.value, self.what, mistakes=self.mistakes, fewer=self.fewer, more=self.more)


#: what an exercise may declare as its expected answer (``@exercise`` on a function of no argument)
Expected = Number | Numbers | Count
