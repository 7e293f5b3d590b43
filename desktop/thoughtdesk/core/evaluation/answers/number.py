"""Numbers as models write them: "1,234", "$18.50", "-3", "−3", "3/4", "1 1/2", "\\frac{3}{4}",
"25%", "2.5e3", "12 apples"; numeric equality with a relative tolerance."""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from thoughtdesk.core.evaluation.answers.result import Found, NotFound

_NUMBER = re.compile(
    r"(?<![\w.,/])"
    r"(?P<neg>[-−–]\s?)?"
    r"(?:[$€£¥₹]\s?)?"
    r"(?:"
    r"(?P<frac_w>\d+)\s+(?P<frac_n>\d+)\s*/\s*(?P<frac_d>\d+)(?!\d|[.,]\d)"  # 1 1/2 (also "1 1/2." and "1 1/2, so")
    r"|\\d?frac\{\s*(?P<tex_n>-?\d+(?:\.\d+)?)\s*\}\{\s*(?P<tex_d>-?\d+(?:\.\d+)?)\s*\}"  # \frac{3}{4}
    r"|(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s*/\s*(?P<den>\d+(?:\.\d+)?)(?![\d,]))?"
    r"(?P<exp>[eE][-+]?\d+)?"
    r"(?:\s*(?:×|x|\*)\s*10\^\{?(?P<pow>[-+]?\d+)\}?)?"
    r")"
    r"(?P<pct>\s?(?:%|percent\b|per\s?cent\b))?",
)
# A minus sign directly after a digit or word is subtraction ("5-3"), not a sign.
_SUBTRACTION = re.compile(r"[\w)]\s?$")
_ALTERNATIVE = re.compile(r"\s*(?:or|and/or|/)\s*$", re.IGNORECASE)
_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
}
_NUMBER_WORD = re.compile(r"(?<![\w-])(" + "|".join(_WORDS) + r")(?![\w-])", re.IGNORECASE)

#: Default relative tolerance of numeric equality (0.01 %): "33.33" is not "100/3", "18.0" is 18.
DEFAULT_REL_TOL = 1e-4


class ParsedNumber(NamedTuple):
    """A number found in text: its value, whether it was a percentage, its span (a named tuple:
    immutable, made quickly for every number in a CoT)."""

    value: float
    percent: bool
    start: int
    end: int


class NumberOverflow(ValueError):
    """A number too large (or too small) to compare as a float."""


def _to_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NumberOverflow(text)
    return value


def _value(match: re.Match[str]) -> float:
    # The groups in one call (a number is read for every number in a CoT).
    frac_w, tex_n, num, den, exp, power, neg = match.group("frac_w", "tex_n", "num", "den", "exp", "pow", "neg")
    if frac_w is not None:
        denominator = _to_float(match.group("frac_d"))
        if denominator == 0:
            raise ZeroDivisionError
        value = _to_float(frac_w) + _to_float(match.group("frac_n")) / denominator
    elif tex_n is not None:
        value = _to_float(tex_n) / _to_float(match.group("tex_d"))
    else:
        value = _to_float(num.replace(",", ""))
        if den is not None:
            value = value / _to_float(den)
        if exp is not None:
            value = _to_float(num.replace(",", "") + exp)
        if power is not None:
            value = value * 10.0 ** int(power[:6])
    if neg:
        value = -value
    if not math.isfinite(value):
        raise NumberOverflow(match.group(0))
    return value


def numbers_in(text: str, start: int = 0, end: int | None = None) -> list[ParsedNumber]:
    """Every number in ``text[start:end]`` in order; raises NumberOverflow for one that overflows.

    Numbers that cannot be read (a zero denominator) are skipped.
    """
    end = len(text) if end is None else end
    found: list[ParsedNumber] = []
    for match in _NUMBER.finditer(text, start, end):
        s = match.start()
        neg = match.group("neg")
        if neg and _SUBTRACTION.search(text, max(0, s - 2), s):
            s = match.start() + len(neg)
            try:
                value = abs(_value(match))
            except (ZeroDivisionError, OverflowError):
                continue
        else:
            try:
                value = _value(match)
            except ZeroDivisionError:
                continue
            except OverflowError as error:
                raise NumberOverflow(match.group(0)) from error
        found.append(ParsedNumber(value, match.group("pct") is not None, s, match.end()))
    if not found:
        for match in _NUMBER_WORD.finditer(text, start, end):
            found.append(ParsedNumber(float(_WORDS[match.group(1).lower()]), False, *match.span(1)))
    return found


def parse_number(text: str) -> ParsedNumber | None:
    """The first number in ``text`` (for gold answers), or None."""
    numbers = numbers_in(text)
    return numbers[0] if numbers else None


def find_number(text: str, start: int, end: int, *, last: bool = False) -> Found | NotFound | None:
    """The number stated in ``text[start:end]``.

    In an answer statement the first number counts, except after "=" where the result counts
    ("5 + 3 = 8"); with ``last`` the last number counts (a CoT without an answer statement).
    "5 or 6" is ambiguous. Overflowing numbers give NotFound("number overflows").
    """
    try:
        numbers = numbers_in(text, start, end)
    except NumberOverflow as error:
        return NotFound(f"number overflows: {str(error)[:40]}")
    if not numbers:
        return None
    if last:
        chosen = numbers[-1]
    else:
        equals = text.rfind("=", start, end)
        after = [n for n in numbers if n.start > equals] if equals >= 0 else numbers
        chosen = (after or numbers)[0]
        index = numbers.index(chosen)
        if index + 1 < len(numbers):
            following = numbers[index + 1]
            if _ALTERNATIVE.search(text, chosen.end, following.start) and following.value != chosen.value:
                return NotFound(
                    f"ambiguous: {format_number(chosen.value)} or {format_number(following.value)}",
                    ambiguous=True,
                    start=chosen.start,
                    end=following.end,
                )
    return Found(chosen, "number", chosen.start, chosen.end)


def numbers_equal(predicted: ParsedNumber, gold: ParsedNumber, rel_tol: float = DEFAULT_REL_TOL) -> bool:
    """Numeric equality with a relative tolerance; "25%" equals 25 and 0.25."""

    def close(a: float, b: float) -> bool:
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-9)

    if close(predicted.value, gold.value):
        return True
    if predicted.percent and not gold.percent:
        return close(predicted.value / 100, gold.value)
    if gold.percent and not predicted.percent:
        return close(predicted.value, gold.value / 100)
    return False


def format_number(value: float) -> str:
    """A number for display: integers without ".0"."""
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)
