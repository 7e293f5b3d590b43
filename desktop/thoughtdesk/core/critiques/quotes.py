"""Where a critique's main flaw quotes the CoT it judges: the quoted spans, as offsets into the CoT.

A Digital Socrates main flaw often quotes the explanation ("The explanation states that 'the
liver makes insulin', which is false"). A quote is text between quotation marks in the flaw
(straight or typographic double quotes, typographic single quotes, guillemets, and straight
single quotes that open after a space and close before one). It counts when it occurs in the
CoT compared case-insensitively (Unicode simple case folding) and with runs of whitespace
treated as one space; the span
returned covers the CoT's own characters (its case, its line breaks), so the GUI can highlight
exactly that text. Pure Python, no Qt.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from thoughtdesk.core.critiques.records import Critique

#: Quotes shorter than this (after normalising) are ignored: "a" or "is" occur everywhere.
MIN_QUOTE_CHARS = 4
#: At most this many characters of a flaw are searched for quotes (a flaw is one sentence or two).
MAX_FLAW_CHARS = 4000

_QUOTE_PATTERNS = (
    re.compile(r'"([^"\n]+)"'),
    re.compile(r"“([^”\n]+)”"),
    re.compile(r"‘([^’\n]+)’"),
    re.compile(r"«\s?([^»\n]+?)\s?»"),
    re.compile(r"„([^“”\n]+)[“”]"),
    # Straight single quotes are also apostrophes: only 'like this' after a space or an opening
    # bracket and before a space or punctuation, so "don't ... isn't" is not read as a quote.
    re.compile(r"(?:(?<=^)|(?<=[\s(\[:]))'([^'\n]+?)'(?=$|[\s.,;:!?)\]])"),
)
# Punctuation a flaw may add inside its quote marks ("...the CoT says 'x is y.'") or ellipses.
_TRIM = " \t.,;:!?…"


@dataclass(frozen=True, slots=True)
class QuoteSpan:
    """A quote of the flaw found in the CoT: ``[start, end)`` Python offsets into the CoT text,
    and the quote as the flaw wrote it."""

    start: int
    end: int
    quote: str


def flaw_quotes(flaw: str) -> list[str]:
    """The quoted passages of ``flaw``, in the order they appear (duplicates dropped)."""
    text = flaw[:MAX_FLAW_CHARS]
    found: list[tuple[int, str]] = []
    for pattern in _QUOTE_PATTERNS:
        found.extend((m.start(), m.group(1)) for m in pattern.finditer(text))
    found.sort()
    return list(dict.fromkeys(quote for _, quote in found))


def _key(quote: str) -> str:
    return " ".join(quote.split())


def _pattern(key: str) -> re.Pattern[str]:
    """A case-insensitive pattern of ``key``'s words with any whitespace between them: the CoT
    is searched as it is (offsets need no mapping back), in C, not character by character."""
    return re.compile(r"\s+".join(re.escape(word) for word in key.split()), re.IGNORECASE)


def find_quote_spans(flaw: str | None, cot: str) -> list[QuoteSpan]:
    """The spans of ``cot`` the main flaw ``flaw`` quotes, in CoT order, without overlaps.

    Each quote is looked up as written, then with punctuation and ellipses trimmed from its
    ends; its first occurrence counts. Quotes that do not occur in the CoT (the flaw quoted the
    question, or paraphrased) are left out; an empty list means nothing to highlight.
    """
    if not flaw or not cot:
        return []
    quotes = flaw_quotes(flaw)
    if not quotes:
        return []
    spans: list[QuoteSpan] = []
    for quote in quotes:
        for key in dict.fromkeys((_key(quote), _key(quote.strip(_TRIM)))):
            if len(key) < MIN_QUOTE_CHARS:
                continue
            found = _pattern(key).search(cot)
            if found is not None:
                spans.append(QuoteSpan(found.start(), found.end(), quote))
                break
    spans.sort(key=lambda s: (s.start, -s.end))
    kept: list[QuoteSpan] = []
    for span in spans:
        if not kept or span.start >= kept[-1].end:
            kept.append(span)
    return kept


def quotes_by_cot(
    critiques: Mapping[int, Sequence[Critique]], texts: Mapping[int, str]
) -> dict[int, list[tuple[int, QuoteSpan]]]:
    """For each CoT (key -> its critiques, key -> its text): ``(i, span)`` for every span the main
    flaw of its ``i``-th critique (0-based) quotes, in critique order. CoTs without any are absent."""
    out: dict[int, list[tuple[int, QuoteSpan]]] = {}
    for cot_pk, items in critiques.items():
        text = texts.get(cot_pk, "")
        found = [(i, span) for i, c in enumerate(items) for span in find_quote_spans(c.parsed.main_flaw, text)]
        if found:
            out[cot_pk] = found
    return out
