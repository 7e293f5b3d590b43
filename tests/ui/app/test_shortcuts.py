"""Help > Keyboard shortcuts (``?``): two aligned columns, each phrase on one line (issue 16,
point 4: padded text was misaligned in a proportional font and wrapped mid-phrase)."""

from __future__ import annotations

from thoughtdesk.ui.app.shortcuts import SHORTCUTS
from thoughtdesk.ui.qt import QLabel


def test_the_sheet_is_two_aligned_columns_without_wrapped_phrases(window, qtbot):
    sheet = window.show_shortcuts()
    qtbot.waitExposed(sheet)
    assert sheet.rows() == SHORTCUTS
    keys = sheet.findChildren(QLabel, "shortcutKeys")
    texts = sheet.findChildren(QLabel, "shortcutText")
    assert len({label.x() for label in keys}) == 1, "the keys start at one x"
    assert len({label.x() for label in texts}) == 1, "the descriptions start at one x"
    assert max(label.x() + label.width() for label in keys) < texts[0].x()
    line = keys[0].fontMetrics().lineSpacing()
    for key, text in zip(keys, texts, strict=True):
        assert not key.wordWrap() and not text.wordWrap()
        assert text.height() < 2 * line and key.y() == text.y(), text.text()
        assert text.width() >= text.sizeHint().width(), f"{text.text()!r} is cut"
    assert sheet.width() <= 1350 and sheet.height() <= 690
