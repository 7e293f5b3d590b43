"""Converting between Python string indices (how spans are stored) and UTF-16 positions (how
Qt's ``QTextCursor`` and ``QString`` count): they differ after any character outside the Basic
Multilingual Plane, such as most emoji, which takes two UTF-16 units."""

from __future__ import annotations


def to_utf16(text: str, index: int) -> int:
    """The UTF-16 position of Python index ``index`` in ``text``."""
    return index + sum(1 for ch in text[:index] if ord(ch) > 0xFFFF)


def from_utf16(text: str, position: int) -> int:
    """The Python index of UTF-16 position ``position`` in ``text`` (a position inside a
    surrogate pair maps to the character's start)."""
    units = 0
    for index, ch in enumerate(text):
        width = 2 if ord(ch) > 0xFFFF else 1
        if units + width > position:
            return index
        units += width
    return len(text)
