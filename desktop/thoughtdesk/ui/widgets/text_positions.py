"""Convert between Python string offsets and positions in a Qt text document.

Span annotations are stored as Python ``str`` offsets (Unicode code points) into a CoT's text.
A ``QTextDocument`` built by :mod:`thoughtdesk.ui.review.compare.safe_text` counts differently:

* positions are UTF-16 code units, so a character outside the Basic Multilingual Plane (an
  emoji, some maths symbols) takes two positions;
* every line break becomes one ``<br/>``, i.e. one position, and ``"\\r\\n"`` is one break;
* an invisible character (a bidi control, :mod:`thoughtdesk.core.visible_text`) is shown
  as its escape, ``<U+202E>``: eight positions.

:class:`PositionMap` answers both directions for one text. Pure Python, so it is tested without a
display; built once per CoT shown (linear in the text length).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from thoughtdesk.core.visible_text import INVISIBLE, escape_of


@dataclass(frozen=True, slots=True)
class PositionMap:
    """``positions[i]`` is the document position of Python offset ``i`` (``0 <= i <= len(text)``)."""

    text: str
    positions: tuple[int, ...]

    @classmethod
    def of(cls, text: str) -> PositionMap:
        """The map for ``text`` as shown by ``safe_text.to_html_escaped``."""
        positions = [0] * (len(text) + 1)
        position = 0
        for index, char in enumerate(text):
            positions[index] = position
            if char == "\n" and index > 0 and text[index - 1] == "\r":
                continue  # "\r\n" is one break: the "\n" adds nothing
            code = ord(char)
            if code in INVISIBLE:
                position += len(escape_of(char))
            else:
                position += 2 if code > 0xFFFF else 1
        positions[len(text)] = position
        return cls(text, tuple(positions))

    def to_document(self, offset: int) -> int:
        """Document position of Python offset ``offset`` (clamped to the text)."""
        return self.positions[max(0, min(len(self.text), offset))]

    def to_offset(self, position: int) -> int:
        """The smallest Python offset whose document position is ``>= position``.

        A position inside a surrogate pair or between ``\\r`` and ``\\n`` rounds up, so a selection
        never cuts a character in half.
        """
        return min(len(self.text), bisect.bisect_left(self.positions, position))

    def to_range(self, first: int, second: int) -> tuple[int, int]:
        """Python ``(start, end)`` of a document selection given by two positions, in order."""
        low, high = sorted((first, second))
        return self.to_offset(low), self.to_offset(high)
