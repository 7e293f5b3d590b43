"""Rationale extraction (RATIONALYST): the prompt, reading a rewritten text, the validity check
and the split into (preceding, rationale, following) records.

A model rewrites a document with rationales inserted between its sentences, each between two
markers (default ``<BOT>`` and ``<EOT>``). The rewrite is valid when the text with the
rationales removed still matches the original: ``1 - levenshtein(original, stripped) /
len(original) >= 0.9`` (the paper's rule). Each rationale then gives a record: the stripped text
before it, the rationale, and the stripped text after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from thoughtdesk.core.errors import ThoughtDeskError

DEFAULT_MARKERS = ("<BOT>", "<EOT>")
#: The paper's threshold of 1 - normalised edit distance between the original and the stripped rewrite.
VALIDITY_THRESHOLD = 0.9
#: The built-in extraction prompt's fragment key (kind ``rationale_extraction``, resources/fragments.json).
DEFAULT_PROMPT_KEY = "td-rationales-v1"
#: Placeholders of an extraction prompt: the document and the two markers.
PLACEHOLDERS = ("[[TEXT]]", "[[BOT]]", "[[EOT]]")


class RationaleError(ThoughtDeskError):
    """Rationale mining that cannot be done as asked (bad markers, prompt, source or file)."""


@dataclass(frozen=True, slots=True)
class Markers:
    """The two strings around a rationale in a rewritten text."""

    begin: str = DEFAULT_MARKERS[0]
    end: str = DEFAULT_MARKERS[1]

    def __post_init__(self) -> None:
        if not self.begin.strip() or not self.end.strip():
            raise RationaleError("rationale markers must not be empty or blank")
        if self.begin == self.end:
            raise RationaleError(f"the two rationale markers must differ (both are {self.begin!r})")

    @classmethod
    def parse(cls, text: str) -> Markers:
        """``<BOT>...<EOT>`` (the two markers around ``...``)."""
        begin, sep, end = text.partition("...")
        if not sep:
            raise RationaleError(f"markers {text!r}: write them around three dots, e.g. <BOT>...<EOT>")
        return cls(begin.strip(), end.strip())

    def wrap(self, rationale: str) -> str:
        return f"{self.begin}{rationale}{self.end}"

    def __str__(self) -> str:
        return f"{self.begin}...{self.end}"


#: The default markers, <BOT>...<EOT>.
DEFAULT = Markers()


@dataclass(frozen=True, slots=True)
class RationaleSpan:
    """One rationale found in a rewrite: its text and where it sits in the stripped text."""

    text: str
    position: int  # offset in the stripped text: the rationale comes between [:position] and [position:]


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A model's rewrite read back: the text without rationales, the rationales, the check."""

    stripped: str
    rationales: tuple[RationaleSpan, ...]
    similarity: float  # 1 - edit distance / length of the original
    unclosed: int  # begin markers without an end marker (their text is dropped, counted here)

    @property
    def valid(self) -> bool:
        return self.similarity >= VALIDITY_THRESHOLD


@dataclass(frozen=True, slots=True)
class RationaleRecord:
    """A training record: the text before the rationale, the rationale, the text after it."""

    preceding: str
    rationale: str
    following: str


def render_prompt(template: str, text: str, markers: Markers = DEFAULT) -> str:
    """The extraction prompt for ``text``: the template's ``[[TEXT]]``, ``[[BOT]]`` and ``[[EOT]]``
    replaced (the document last, so its own text is never read as a placeholder)."""
    if "[[TEXT]]" not in template:
        raise RationaleError("the extraction prompt has no [[TEXT]] placeholder for the document")
    filled = template.replace("[[BOT]]", markers.begin).replace("[[EOT]]", markers.end)
    before, _, after = filled.partition("[[TEXT]]")
    return before + text + after.replace("[[TEXT]]", "")


def similarity(original: str, stripped: str) -> float:
    """``1 - levenshtein(original, stripped) / len(original)`` (1.0 for two empty texts; may be < 0)."""
    if not original:
        return 1.0 if not stripped else 0.0
    return 1.0 - Levenshtein.distance(original, stripped) / len(original)


def read_rewrite(original: str, output: str, markers: Markers = DEFAULT) -> Rewrite:
    """The rationales of a model's rewrite and the rewrite checked against ``original``.

    A rationale is removed with the whitespace before it when whitespace (or the end) follows
    it, so ``"A. <BOT>r<EOT> B."`` strips to ``"A. B."``. Empty rationales are dropped; a begin
    marker with no end marker drops the rest of the text from the stripped text (and is counted).
    Text before the model's first line that repeats a label (e.g. "Rewritten text:") is not
    removed: the validity check judges it.
    """
    pieces: list[str] = []
    spans: list[RationaleSpan] = []
    length = 0  # characters of stripped text so far
    cursor = 0
    unclosed = 0
    while True:
        begin = output.find(markers.begin, cursor)
        if begin < 0:
            pieces.append(output[cursor:])
            break
        end = output.find(markers.end, begin + len(markers.begin))
        if end < 0:
            unclosed += 1
            pieces.append(output[cursor:begin].rstrip())
            break
        before = output[cursor:begin]
        after_index = end + len(markers.end)
        following_char = output[after_index : after_index + 1]
        if following_char == "" or following_char.isspace():
            before = before.rstrip()
        pieces.append(before)
        length += len(before)
        rationale = _clean_rationale(output[begin + len(markers.begin) : end], markers)
        if rationale:
            spans.append(RationaleSpan(rationale, length))
        cursor = after_index
    stripped = "".join(pieces)
    stripped = stripped.strip()
    # Positions were counted on the unstripped join: shift them by the leading whitespace removed.
    lead = len("".join(pieces)) - len("".join(pieces).lstrip())
    spans = [RationaleSpan(s.text, max(0, min(len(stripped), s.position - lead))) for s in spans]
    return Rewrite(stripped, tuple(spans), similarity(original.strip(), stripped), unclosed)


def _clean_rationale(text: str, markers: Markers) -> str:
    # A nested begin marker (a model that forgot to close the previous one) is not rationale text.
    return re.sub(r"\s+", " ", text.replace(markers.begin, " ")).strip()


def split_records(rewrite: Rewrite) -> list[RationaleRecord]:
    """One record per rationale: the stripped text before it and after it."""
    text = rewrite.stripped
    return [RationaleRecord(text[: s.position], s.text, text[s.position :]) for s in rewrite.rationales]


def context_with_rationale(preceding: str, rationale: str, markers: Markers = DEFAULT) -> str:
    """The scorer's context with the rationale in place: the preceding text, a space, the
    rationale between its markers (as the extraction wrote it)."""
    separator = " " if preceding and not preceding[-1].isspace() else ""
    return f"{preceding}{separator}{markers.wrap(rationale)}"
