"""Reading a reasoning trace: its paragraphs and the self-corrections reasoning models write
("Wait,", "Alternatively", "Let me check" ...), and the trace as a view shows it (pure Python).

A view of a long thinking needs three things the text alone does not give: where each paragraph
starts (to move by paragraph), where the model changed its mind (to mark it and move to it), and
the text as shown, with the offsets of both moved to it. :func:`shown_trace` makes the shown text
in one pass: invisible characters revealed as ``<U+202E>`` (:mod:`thoughtdesk.core.visible_text`),
lines longer than ``line`` characters broken into pieces (a plain-text view lays out a whole line
at a time: one line of 400 kB would be laid out whole), and at most ``limit`` characters of the
trace (the rest is for a full-text viewer). Nothing here is markup: the view sets plain text.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from thoughtdesk.core.visible_text import CONTROL_CODES, escape_of, has_invisible, split_invisible

#: ``finish_reason`` values meaning "cut by the token limit" (OpenAI-compatible; Anthropic's).
TRUNCATED_FINISH_REASONS = ("length", "max_tokens")

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


def after_thinking(text: str) -> str:
    """``text`` without a reasoning model's inline thinking: what follows the last ``</think>``
    (the opening tag may be in the prompt template, as Qwen3's and R1's are), "" for a text that
    opens ``<think>`` and never closes it (all thinking, cut or unfinished), else ``text``. For
    a model's reply read as a step, a rationale or a rating (guided generation)."""
    end = text.rfind(THINK_CLOSE)
    if end >= 0:
        return text[end + len(THINK_CLOSE) :]
    start = text.find(THINK_OPEN)
    if start >= 0 and not text[:start].strip():
        return ""
    return text


#: Phrases that open a self-correction or a second look, at the start of a sentence or a line.
#: As reasoning models write them (DeepSeek-R1, QwQ, Qwen3: "Wait,", "But wait", "Hmm",
#: "Alternatively", "Let me check/verify/double-check/re-examine/reconsider", "Actually", "No,",
#: "Hold on", "On second thought", "I made a mistake").
CORRECTION_PHRASES = (
    "But wait",
    "Wait",
    "Hmm",
    "Alternatively",
    "Let me check",
    "Let me double-check",
    "Let me double check",
    "Let me verify",
    "Let me re-check",
    "Let me recheck",
    "Let me re-examine",
    "Let me reconsider",
    "Let me recalculate",
    "Let me recompute",
    "Let me re-read",
    "Let me reread",
    "Let me think again",
    "Let me correct",
    "Actually",
    "Hold on",
    "On second thought",
    "Oops",
    "No,",
    "No wait",
    "I made a mistake",
    "That's not right",
    "That is not right",
    "That can't be right",
    "Double-check",
    "Double check",
)
#: The phrases by their first letter, longest first ("But wait" before a shorter one).
_BY_INITIAL: dict[str, tuple[str, ...]] = {}
for _phrase in sorted(CORRECTION_PHRASES, key=len, reverse=True):
    _BY_INITIAL[_phrase[0]] = (*_BY_INITIAL.get(_phrase[0], ()), _phrase)
#: A capital after the end of a sentence or a line (and what may stand between: spaces, quotes,
#: "**" of Markdown, an opening bracket). A character class first: the scan stays in C (an
#: alternation of the phrases at every position took 20 ms for 400 kB).
_SENTENCE_START_RE = re.compile(r"[\n.!?:;][ \t\"'*(]*([A-Z])")
_LEAD_RE = re.compile(r"[ \t\"'*(]*")
_PARAGRAPH_RE = re.compile(r"\n[ \t]*\n\s*")
#: Lines of the shown trace are broken into pieces of this many characters.
SHOWN_LINE = 2_000
#: Self-corrections found and marked in one trace, at most (a view draws a mark each).
MAX_CORRECTIONS = 5_000
#: Invisible characters revealed in one shown trace, at most: the trace is cut before the next
#: (text dense with them would be shown eight times as long and cost as much; the full-text
#: viewer loads the rest in steps).
MAX_ESCAPES = 5_000


@dataclass(frozen=True, slots=True)
class Correction:
    """A self-correction: the phrase (``"Wait"``) at ``[start, end)`` of the text."""

    start: int
    end: int
    phrase: str


def corrections(text: str, limit: int = MAX_CORRECTIONS) -> list[Correction]:
    """The self-corrections of ``text`` in order (at most ``limit``), offsets into ``text``: a
    phrase of :data:`CORRECTION_PHRASES` at the start of the text, of a line or of a sentence,
    not followed by a letter ("Waiting" is not one; "No," carries its comma)."""
    found: list[Correction] = []
    lead = _LEAD_RE.match(text)
    starts = [lead.end()] if lead is not None else []
    starts += [m.start(1) for m in _SENTENCE_START_RE.finditer(text)]
    for start in starts:
        for phrase in _BY_INITIAL.get(text[start : start + 1], ()):
            end = start + len(phrase)
            if text.startswith(phrase, start) and not text[end : end + 1].isalpha():
                found.append(Correction(start, end, phrase))
                break
        if len(found) >= limit:
            break
    return found


def paragraph_starts(text: str) -> list[int]:
    """Where each paragraph of ``text`` starts: after blank lines; when the text has no blank
    line, each non-empty line is a paragraph (reasoning models write both ways)."""
    starts = [0] + [m.end() for m in _PARAGRAPH_RE.finditer(text) if m.end() < len(text)]
    if len(starts) == 1 and "\n" in text:
        starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n" and i + 1 < len(text) and text[i + 1] != "\n"]
    return starts


@dataclass(frozen=True, slots=True)
class ShownTrace:
    """A trace as a view shows it: ``text`` (revealed, long lines in pieces), the paragraph starts
    and the self-corrections with offsets into ``text``; ``consumed`` characters of the original
    trace are in it (the rest is beyond the view's limit)."""

    text: str
    paragraphs: list[int]
    corrections: list[Correction]
    consumed: int
    length: int

    @property
    def complete(self) -> bool:
        return self.consumed >= self.length


def shown_trace(text: str, limit: int, line: int = SHOWN_LINE) -> ShownTrace:
    """The first ``limit`` characters of ``text`` as shown (see the module docstring), with its
    paragraphs and self-corrections moved to the shown text's offsets; cut earlier before the
    :data:`MAX_ESCAPES`-th invisible character."""
    part = text[:limit]
    # Each piece of the shown text: (original start, shown start); offsets within a piece move
    # with its start, except inside an escape (8 shown characters for 1).
    pieces: list[str] = []
    origin: list[int] = []  # original offset of each piece's start
    placed: list[int] = []  # shown offset of each piece's start
    widths: list[int] = []  # original characters of each piece (an escape: 1)
    shown_at = escapes = 0
    cut = -1  # where the escapes' budget ran out (-1: it did not)
    for start, chunk in _chunks(part, line):
        if cut >= 0:
            break
        if not _invisible_in(chunk):
            pieces.append(chunk)
            origin.append(start)
            placed.append(shown_at)
            widths.append(len(chunk))
            shown_at += len(chunk)
            continue
        # Invisible characters in this chunk: one piece per run of text and per escape.
        offset = start
        for run, invisible in split_invisible(chunk):
            if invisible:
                escapes += 1
                if escapes > MAX_ESCAPES:
                    cut = offset
                    break
            shown = escape_of(run) if invisible else run
            pieces.append(shown)
            origin.append(offset)
            placed.append(shown_at)
            widths.append(len(run))
            shown_at += len(shown)
            offset += len(run)
    if cut >= 0:
        part = part[:cut]
    shown_text = "".join(pieces)
    if len(pieces) == 1 and len(shown_text) == len(part):  # nothing revealed or broken: same offsets
        return ShownTrace(shown_text, paragraph_starts(part), corrections(part), len(part), len(text))

    def to_shown(position: int) -> int:
        i = max(0, bisect.bisect_right(origin, position) - 1)
        if not origin:
            return 0
        within = position - origin[i]
        if len(pieces[i]) != widths[i]:  # an escape: its start
            return placed[i] + (0 if within <= 0 else len(pieces[i]))
        return placed[i] + min(within, len(pieces[i]))

    return ShownTrace(
        shown_text,
        [to_shown(p) for p in paragraph_starts(part)],
        [Correction(to_shown(c.start), to_shown(c.end), c.phrase) for c in corrections(part)],
        len(part),
        len(text),
    )


def _chunks(text: str, line: int) -> list[tuple[int, str]]:
    """``text`` as (offset, piece) with a line break after every ``line`` characters of a line
    longer than that (the break is added to the shown text: each piece but the last of a long
    line ends with one)."""
    if len(text) <= line or _longest_line(text) <= line:
        return [(0, text)]
    out: list[tuple[int, str]] = []
    start = 0
    for match in re.finditer(r"[^\n]*\n?", text):
        segment = match.group()
        if not segment:
            break
        offset = match.start()
        body = segment.rstrip("\n")
        if len(body) <= line:
            continue
        # flush the text before this long line, then its pieces, each ending with a break
        if offset > start:
            out.append((start, text[start:offset]))
        for i in range(0, len(body), line):
            piece = body[i : i + line]
            last = i + line >= len(body)
            out.append((offset + i, piece + ("" if last else "\n")))
        start = offset + len(body)
    if start < len(text):
        out.append((start, text[start:]))
    return out


#: The invisible characters an ASCII text can hold (visible_text.CONTROL_CODES below 0x80).
_ASCII_INVISIBLE_RE = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(CONTROL_CODES) if c < 0x80) + "]")


def _invisible_in(text: str) -> bool:
    # isascii() is a flag of the string, so ASCII text (most traces) needs only a small class.
    if text.isascii():
        return _ASCII_INVISIBLE_RE.search(text) is not None
    return has_invisible(text)


def _longest_line(text: str) -> int:
    return max(map(len, text.split("\n")))
