"""Sizing helpers for a 1366x768 laptop: initial sizes bounded by the screen, labels that never
widen their window, messages that wrap anywhere and show whole."""

from __future__ import annotations

from thoughtdesk.ui.qt import QLabel, QRect, QSize, QWidget
from thoughtdesk.ui.widgets.labels import MessageText
from thoughtdesk.ui.widgets.sizing import ElidedLabel, fit_to_screen

QUESTION = "Which organism is the most likely cause of community-acquired pneumonia in a 67-year-old man? "


def test_fit_to_screen_keeps_initial_sizes_on_the_laptop(qapp):
    widget = QWidget()
    laptop = QRect(0, 0, 1366, 728)  # the available area above a 40 px taskbar
    assert fit_to_screen(widget, 1300, 820, laptop) == QSize(1300, 690)
    assert widget.size() == QSize(1300, 690)
    assert fit_to_screen(widget, 1400, 860, laptop) == QSize(1350, 690)
    assert fit_to_screen(widget, 1400, 860, QRect(0, 0, 2560, 1400)) == QSize(1400, 860)  # a big monitor
    assert fit_to_screen(widget, 700, 500, laptop) == QSize(700, 500)


def test_an_elided_label_never_widens_its_window_and_shows_markup_literally(qtbot):
    label = ElidedLabel("<b>not bold</b> " + QUESTION * 10)
    qtbot.addWidget(label)
    assert label.minimumSizeHint().width() < 100 and label.sizeHint().width() <= 400
    assert label.text().startswith("<b>not bold</b>")
    assert "&lt;b&gt;" in label.toolTip()  # the tooltip shows the text, not bold markup
    label.resize(300, 30)
    label.show()
    assert not label.grab().isNull()
    assert isinstance(label, QLabel)


def test_a_message_wraps_a_long_url_and_grows_to_its_text(qtbot):
    url = "https://raw.githubusercontent.com/" + "x" * 400 + "/phrases_no_exclude_test.jsonl"
    message = MessageText(f"offline mode is on: the download needs {url}; nothing was sent.", max_lines=40)
    qtbot.addWidget(message)
    message.resize(300, 40)
    message.show()
    qtbot.wait(20)
    assert message.text().endswith("nothing was sent.")
    assert message.minimumSizeHint().width() <= 100 and message.sizeHint().width() <= 200  # never widens
    line = message.fontMetrics().lineSpacing()
    assert message.height() > 4 * line  # grew to show the wrapped lines
    assert message.verticalScrollBar().maximum() == 0  # all of it visible
    message.setText("<b>short</b>")
    assert message.toPlainText() == "<b>short</b>" and message.height() < 3 * line
