"""Invisible characters in data made visible, as code editors show them (pure Python).

Text from datasets and models may hold bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE
turns ``"txt.exe"`` into what reads as ``"exe.txt"``), zero-width characters and control
codes. Shown as they are, they disguise text: a reviewer would read something that is not
there. Every plain-text display path shows each such character as a visible escape,
``<U+202E>`` (the views built from documents draw the escape in a distinct style:
:mod:`thoughtdesk.ui.review.compare.safe_text`). Stored data is never changed.

A view shows a bounded part of a long text: :func:`reveal_prefix` and :func:`shown_runs` reveal
only the part that fits a budget of shown characters (an escape counts its eight), so a 10 MB
text dense with invisible characters costs as much as a short one; :func:`elide` adds a visible
marker saying how much was left out.

Left alone: tab and line breaks (layout), and the joiners U+200C/U+200D, which scripts (Persian,
Indic) and emoji sequences need to be read correctly at all.
"""

from __future__ import annotations

import re

#: Bidirectional embeddings, overrides and isolates: they reorder what is shown.
BIDI_CONTROLS = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))
#: Other characters that draw nothing: marks, zero-width space, word joiner and invisible
#: operators, the byte-order mark, interlinear annotation controls, soft hyphen (Cf).
OTHER_INVISIBLE = frozenset(
    [0x00AD, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x200B, 0x200E, 0x200F, 0x3164, 0xFEFF, 0xFFA0]
    + list(range(0x2060, 0x2065))
    + list(range(0xFFF9, 0xFFFC))
)
#: C0 and C1 control codes a view would silently drop (tab, line feed, carriage return and the
#: characters Qt breaks lines at, U+000B/C, U+001C-1E and U+0085, keep their layout meaning).
CONTROL_CODES = frozenset(c for c in list(range(0x00, 0x20)) + [0x7F] + list(range(0x80, 0xA0))) - frozenset(
    [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85]
)
INVISIBLE = BIDI_CONTROLS | OTHER_INVISIBLE | CONTROL_CODES
#: Every other format character (Cf) and the surrogates (Cs: a lone one cannot even be written
#: as UTF-8), by Unicode 15's tables, as ranges; tests/core/test_visible_text.py checks them
#: against unicodedata over every code point. The joiners U+200C/U+200D stay out (see above).
_FORMAT_AND_SURROGATES = (
    "\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"
    "\ud800-\udfff"
)

#: Escapes a view draws in their own style, at most, per text: the text is cut before the next
#: one (drawing 2,000 styled escapes took a compare panel 40 ms, the same text plain 9 ms).
STYLED_ESCAPES = 500

_INVISIBLE_RE = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(INVISIBLE)) + _FORMAT_AND_SURROGATES + "]")


def escape_of(char: str) -> str:
    """The visible stand-in of one invisible character: ``"<U+202E>"``."""
    return f"<U+{ord(char):04X}>"


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds any character :func:`reveal` would replace."""
    return _INVISIBLE_RE.search(text) is not None


def reveal(text: str) -> str:
    """``text`` with every invisible character replaced by its escape (``<U+202E>``)."""
    if not _INVISIBLE_RE.search(text):
        return text  # the common case: no copy
    return _INVISIBLE_RE.sub(lambda m: escape_of(m.group()), text)


def split_invisible(text: str) -> list[tuple[str, bool]]:
    """``text`` as runs ``(piece, is_invisible)``; each invisible character is its own run."""
    runs: list[tuple[str, bool]] = []
    position = 0
    for match in _INVISIBLE_RE.finditer(text):
        if match.start() > position:
            runs.append((text[position : match.start()], False))
        runs.append((match.group(), True))
        position = match.end()
    if position < len(text) or not runs:
        runs.append((text[position:], False))
    return runs


def shown_runs(text: str, budget: int, max_escapes: int | None = None) -> tuple[list[tuple[str, bool]], int]:
    """The runs of the longest prefix of ``text`` whose revealed form fits ``budget`` characters,
    as shown: ``(piece, is_escape)`` with each invisible character replaced by its escape; and
    the length of that prefix in ``text``. Linear in ``budget``, whatever the length of ``text``
    (every character shows as one or more, so no more than ``budget`` of it is looked at).
    An escape is never cut: one that does not fit ends the prefix; so does the escape after
    ``max_escapes`` of them (views that draw each in its own style pass :data:`STYLED_ESCAPES`)."""
    head = text[: max(0, budget)]
    if not has_invisible(head):
        return ([(head, False)] if head else []), len(head)
    runs: list[tuple[str, bool]] = []
    room = budget
    position = 0
    escapes = 0
    for match in _INVISIBLE_RE.finditer(head):
        start = match.start()
        if max_escapes is not None and escapes >= max_escapes:
            head = head[:start]  # the text up to this escape is still shown
            break
        escapes += 1
        if start > position:
            piece = head[position:start]
            if len(piece) >= room:
                runs.append((piece[:room], False))
                return runs, position + room
            runs.append((piece, False))
            room -= len(piece)
        escape = escape_of(match.group())
        if len(escape) > room:
            return runs, start
        runs.append((escape, True))
        room -= len(escape)
        position = match.end()
    piece = head[position : position + room]
    if piece:
        runs.append((piece, False))
    return runs, position + len(piece)


def reveal_prefix(text: str, budget: int, max_escapes: int | None = None) -> tuple[str, int]:
    """The revealed form of the longest prefix of ``text`` that fits ``budget`` shown characters
    (and ``max_escapes``), and that prefix's length in ``text`` (:func:`shown_runs` joined)."""
    runs, consumed = shown_runs(text, budget, max_escapes)
    return "".join(piece for piece, _ in runs), consumed


def more_marker(hidden: int) -> str:
    """The visible marker of left-out text: ``" … (9,980,000 more characters)"``."""
    return f" … ({hidden:,} more character{'s' if hidden != 1 else ''})"


def elide(text: str, budget: int) -> str:
    """``text`` revealed, at most ``budget`` shown characters of it, then :func:`more_marker`
    when some of it was left out (for a label or a line: one bounded, visible string)."""
    shown, consumed = reveal_prefix(text, budget)
    return shown if consumed == len(text) else shown + more_marker(len(text) - consumed)


def fitting_prefix(text: str, budget: int, max_escapes: int | None = None) -> str:
    """The longest prefix of ``text`` (as it is, not revealed) whose revealed form fits
    ``budget`` characters (and ``max_escapes``): what a view that reveals will show of it."""
    consumed = reveal_prefix(text, budget, max_escapes)[1]
    return text if consumed == len(text) else text[:consumed]


def shorten(text: str, budget: int, max_escapes: int | None = STYLED_ESCAPES) -> str:
    """:func:`fitting_prefix` and, when it is not all of ``text``, :func:`more_marker`: a
    bounded text for a view that reveals (so its escapes keep their own style there)."""
    prefix = fitting_prefix(text, budget, max_escapes)
    return text if len(prefix) == len(text) else prefix + more_marker(len(text) - len(prefix))
