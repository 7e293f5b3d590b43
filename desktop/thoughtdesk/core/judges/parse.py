"""Reading a pairwise verdict from a judge's text, tolerantly and without guessing.

MT-bench reads ``[[A]]``, ``[[B]]`` or ``[[C]]`` (tie). Judges write them with spaces, in lower
case, in bold, or as a closing line ``Final verdict: A``; all of that is read. What is never
done is coercion: a text holding two different verdicts (``[[A]]`` and ``[[B]]``), none, or
nothing at all is ``unparseable`` with the reason, counted apart from ties.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Verdict = Literal["A", "B", "tie", "unparseable"]
VERDICTS: tuple[Verdict, ...] = ("A", "B", "tie", "unparseable")

_TOKEN = re.compile(r"\[\[\s*(A|B|C|TIE)\s*\]\]", re.IGNORECASE)
# A closing verdict line without brackets: "Final verdict: A", "**Verdict:** [B]", "Verdict - tie".
_LINE = re.compile(
    r"^[\s>*_#-]*(?:final\s+)?verdict\s*[*_]*\s*[:=-]\s*[*_\s]*\[?\s*(A|B|C|tie)\s*\]?[*_\s.!]*$",
    re.IGNORECASE | re.MULTILINE,
)
_NAMES = {"A": "[[A]]", "B": "[[B]]", "C": "[[C]]", "TIE": "[[C]]"}


@dataclass(frozen=True, slots=True)
class ParsedVerdict:
    """``verdict`` for the answer shown first (A), second (B), a tie, or unparseable (``reason``)."""

    verdict: Verdict
    reason: str = ""


def _as_verdict(token: str) -> Verdict:
    token = token.upper()
    return "A" if token == "A" else "B" if token == "B" else "tie"


def parse_verdict(text: str) -> ParsedVerdict:
    """The verdict in ``text``. Linear in the text's length (a 10 MB answer takes milliseconds)."""
    if not text or not text.strip():
        return ParsedVerdict("unparseable", "the judge answered nothing")
    tokens = {_NAMES[m.group(1).upper()] for m in _TOKEN.finditer(text)}
    if len(tokens) == 1:
        return ParsedVerdict(_as_verdict(tokens.pop()[2]))
    if len(tokens) > 1:
        return ParsedVerdict("unparseable", f"answers {' and '.join(sorted(tokens))}: more than one verdict")
    lines = {_as_verdict(m.group(1)) for m in _LINE.finditer(text)}
    if len(lines) == 1:
        return ParsedVerdict(lines.pop())
    if len(lines) > 1:
        return ParsedVerdict("unparseable", "verdict lines name more than one answer")
    return ParsedVerdict("unparseable", "no verdict [[A]], [[B]] or [[C]] found")
