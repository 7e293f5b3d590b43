"""The one map between Python offsets and Qt document positions (UTF-16 units, one break per
line ending); replaces core/review/offsets.py and its round-trip test."""

from __future__ import annotations

from thoughtdesk.ui.widgets.text_positions import PositionMap


def test_positions_round_trip_around_emoji() -> None:
    text = "a🦠b<b>c"
    positions = PositionMap.of(text)
    # Python offsets: a=0 🦠=1 b=2; UTF-16: a=0 🦠=1,2 b=3.
    assert [positions.to_document(i) for i in range(len(text) + 1)] == [0, 1, 3, 4, 5, 6, 7, 8]
    assert len(text.encode("utf-16-le")) // 2 == positions.to_document(len(text))
    # A position inside the surrogate pair rounds up: a selection never cuts the emoji in half.
    assert [positions.to_offset(p) for p in range(9)] == [0, 1, 2, 2, 3, 4, 5, 6, 7]
    assert positions.to_range(3, 1) == (1, 2)  # the emoji, selected backwards


def test_crlf_is_one_break_and_offsets_are_clamped() -> None:
    text = "x\r\ny🦠"
    positions = PositionMap.of(text)
    assert [positions.to_document(i) for i in range(len(text) + 1)] == [0, 1, 2, 2, 3, 5]
    assert positions.to_offset(2) == 2  # between "\r" and "\n": rounds up to the "\n"
    assert positions.to_document(-4) == 0 and positions.to_document(99) == 5
    assert positions.to_offset(99) == len(text)
