"""The one plain-text label: markup from data is shown as text, and its options do what they say."""

from __future__ import annotations

from thoughtdesk.ui.qt import QSizePolicy, Qt
from thoughtdesk.ui.widgets.labels import plain_label

MARKUP = '<b>bold</b> <a href="https://example.org">link</a> <img src=x>'


def test_markup_in_the_text_is_shown_literally(qtbot):
    label = plain_label(MARKUP, name="note")
    qtbot.addWidget(label)
    assert label.textFormat() == Qt.TextFormat.PlainText
    assert label.text() == MARKUP and label.objectName() == "note"
    assert not label.openExternalLinks()
    label.setText("<i>later text</i>")  # the format stays plain for every later text
    assert label.textFormat() == Qt.TextFormat.PlainText


def test_defaults_are_a_wrapped_label_like_any_other(qtbot):
    label = plain_label("some text")
    qtbot.addWidget(label)
    assert label.wordWrap()
    assert label.sizePolicy().verticalPolicy() == QSizePolicy.Policy.Preferred  # Qt's default
    assert label.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse == Qt.TextInteractionFlag(0)
    assert not label.font().bold()


def test_options(qtbot):
    label = plain_label("x", selectable=True, bold=True, keep_height=True)
    qtbot.addWidget(label)
    assert label.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    assert label.font().bold()
    assert label.sizePolicy().verticalPolicy() == QSizePolicy.Policy.Minimum
    single = plain_label("one line", wrap=False, keep_height=True)  # nothing to keep on one line
    qtbot.addWidget(single)
    assert not single.wordWrap()
    assert single.sizePolicy().verticalPolicy() == QSizePolicy.Policy.Preferred
