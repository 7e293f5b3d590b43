"""LongText and FullTextDialog: text of any length shown capped, wrapped anywhere, all on demand."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt

from thoughtdesk.core.visible_text import STYLED_ESCAPES, reveal
from thoughtdesk.ui.qt import QApplication, QLabel, QScrollArea, QVBoxLayout, QWidget
from thoughtdesk.ui.widgets.labels import LABEL_CHARS, plain_label, set_plain_text
from thoughtdesk.ui.widgets.long_text import (
    DISPLAY_CHARS,
    DISPLAY_LINE,
    INLINE_ALL_CHARS,
    LOAD_CHUNK,
    FullTextDialog,
    LongText,
    PlainTextBox,
    capped,
    display_lines,
    fits_label,
    more_text,
)


def test_capping_and_display_lines() -> None:
    assert capped("abc", 5) == ("abc", 0)
    assert capped("abcdef", 4) == ("abcd", 2)
    assert more_text(9_980_000) == "… 9,980,000 more characters — Show all"
    assert display_lines("a" * 5, 2) == "aa\naa\na"
    assert display_lines("ab\ncdefg", 3) == "ab\ncde\nfg"
    assert display_lines("short") == "short"
    assert fits_label("a normal sentence") and not fits_label("x" * 200) and not fits_label("a " * LABEL_CHARS)


def test_a_long_unbroken_word_is_capped_and_wrapped_inside_a_narrow_pane(qtbot) -> None:
    text = "W" * (DISPLAY_CHARS * 3)
    area = QScrollArea()
    qtbot.addWidget(area)
    area.setWidgetResizable(True)
    body = QWidget()
    layout = QVBoxLayout(body)
    started = time.perf_counter()
    long = LongText(text, title="Question")
    layout.addWidget(long)
    area.setWidget(body)
    area.resize(500, 400)
    area.show()
    qtbot.waitExposed(area)
    elapsed = time.perf_counter() - started
    assert elapsed < 2.0  # about 20 ms alone; generous for a busy machine (benchmark: bench_long_text)
    assert long.shown_text() == "W" * DISPLAY_CHARS
    assert long.hidden_chars == 2 * DISPLAY_CHARS
    assert long.more.isVisible() and long.more.text() == more_text(2 * DISPLAY_CHARS)
    # Wrapped anywhere: the word does not widen the pane.
    assert area.horizontalScrollBar().maximum() == 0
    assert long.width() <= area.viewport().width()
    # Up to INLINE_ALL_CHARS, Show all puts the rest in place.
    qtbot.mouseClick(long.more, Qt.MouseButton.LeftButton)
    assert long.shown_text() == text and long.hidden_chars == 0 and not long.more.isVisible()
    assert long.dialog is None


def test_show_all_of_a_huge_text_opens_a_viewer_at_once_and_loads_the_rest_in_steps(qtbot) -> None:
    text = "Z" * 10_000_000 + "\u202e"
    long = LongText(text, title="Question")
    qtbot.addWidget(long)
    long.show()
    started = time.perf_counter()
    long.show_all()
    dialog = long.dialog
    assert dialog is not None
    qtbot.waitExposed(dialog)
    dialog.view.viewport().grab()
    elapsed = time.perf_counter() - started
    assert elapsed < 3.0  # about 0.02 s alone (the first chunk); a whole 10 MB line took minutes
    assert dialog.loaded == LOAD_CHUNK  # the first chunk only: the rest from the event loop
    assert "Loading…" in dialog.note.text()
    assert long.shown_text() == "Z" * DISPLAY_CHARS  # the pane itself stays capped
    qtbot.waitUntil(lambda: dialog.loaded == len(text), timeout=60_000)
    document = dialog.view.document()
    assert document.blockCount() == 10_000_000 // DISPLAY_LINE + 1
    assert document.firstBlock().length() == DISPLAY_LINE + 1
    assert document.lastBlock().text() == "<U+202E>"  # invisible characters shown here too
    assert "shown in pieces" in dialog.note.text() and "Loading" not in dialog.note.text()
    assert dialog.width() <= 1366 and dialog.height() <= 768
    dialog.copy_all()
    assert QApplication.clipboard().text() == text  # the original, unbroken
    dialog.close()
    assert len(text) > INLINE_ALL_CHARS


def test_the_viewer_loads_dense_invisible_text_in_bounded_steps(qtbot) -> None:
    # 1 MB of U+202E + "ab": 3.3 MB shown. Loaded at once it froze the window (10 MB: 3.7 s).
    text = "\u202eab" * 340_000 + "\nend"
    dialog = FullTextDialog("Question", text)
    qtbot.addWidget(dialog)
    bound = LOAD_CHUNK + LOAD_CHUNK // DISPLAY_LINE + 2  # a chunk's shown text and its line breaks
    assert dialog.view.document().characterCount() <= bound
    steps = 1
    while dialog.loaded < len(text):
        before = dialog.view.document().characterCount()
        dialog.load_more()
        assert dialog.view.document().characterCount() - before <= bound
        steps += 1
    assert steps <= -(-len(reveal(text)) // LOAD_CHUNK) + 1  # shown text / chunk, rounded up
    shown = dialog.view.toPlainText().replace("\n", "")
    assert shown == reveal(text).replace("\n", "")  # all of it, in order, nothing twice
    assert dialog.view.document().lastBlock().text() == "end"


def test_plain_labels_show_invisible_characters_and_never_markup(qtbot) -> None:
    label = plain_label("file_\u202etxt.exe <b>x</b>")
    qtbot.addWidget(label)
    assert label.text() == "file_<U+202E>txt.exe <b>x</b>"
    assert label.textFormat() == Qt.TextFormat.PlainText
    assert isinstance(label, QLabel)


def test_invisible_characters_are_escapes_in_their_own_style(qtbot) -> None:
    long = LongText("file_\u202etxt.exe")
    qtbot.addWidget(long)
    assert long.shown_text() == "file_<U+202E>txt.exe"
    block = long.view.document().firstBlock()
    fragments = []
    iterator = block.begin()
    while not iterator.atEnd():
        fragment = iterator.fragment()
        fragments.append((fragment.text(), fragment.charFormat().background().color().name()))
        iterator += 1
    assert ("<U+202E>", "#5c5c5c") in fragments
    assert fragments[0][0] == "file_" and fragments[0][1] != "#5c5c5c"


def test_text_dense_with_invisible_characters_is_cut_by_what_is_shown(qtbot) -> None:
    # 1 MB of U+202E + "ab": its first 20,000 characters showed as 66,670, inserted piece by
    # piece into a shown document (14 s to open; 20,000 characters with 2,000 escapes: 29 s).
    text = "\u202eab" * 340_000
    long = LongText()
    qtbot.addWidget(long)
    long.resize(600, 400)
    long.show()
    started = time.perf_counter()
    long.set_text(text)
    long.grab()
    assert time.perf_counter() - started < 3.0  # about 20 ms alone
    document = long.view.document()
    assert document.characterCount() <= DISPLAY_CHARS + 1
    escapes = [f for f in _fragments(long) if f[1] == "#5c5c5c"]
    assert len(escapes) == STYLED_ESCAPES and all(f[0] == "<U+202E>" for f in escapes)
    assert long.hidden_chars == len(text) - 3 * STYLED_ESCAPES
    assert long.more.text() == more_text(long.hidden_chars)
    long.show_all()  # too much to show in place: the viewer, with all of it
    assert long.dialog is not None and long.dialog.text == text
    long.dialog.close()


def test_a_plain_text_box_shows_a_capped_part_and_all_on_demand(qtbot) -> None:
    box = PlainTextBox(name="context", title="Context", max_height=180)
    qtbot.addWidget(box)
    box.show()
    text = "x" * 10_000_000
    box.set_text(text)
    assert box.view.document().characterCount() == DISPLAY_CHARS + 1 and not box.more.isHidden()
    box.show_all()
    assert box.dialog is not None and box.dialog.text == text
    box.dialog.close()
    box.set_text("short \u2066one")
    assert box.toPlainText() == "short <U+2066>one" and box.more.isHidden()


def _fragments(long: LongText) -> list[tuple[str, str]]:
    out = []
    iterator = long.view.document().firstBlock().begin()
    while not iterator.atEnd():
        fragment = iterator.fragment()
        out.append((fragment.text(), fragment.charFormat().background().color().name()))
        iterator += 1
    return out


def test_labels_elide_long_text_set_at_any_time(qtbot) -> None:
    label = plain_label("", name="stats", breakable=True)
    qtbot.addWidget(label)
    label.setText("answer: " + "\u202e" * 1_000_000)  # a later setText, as panels do
    shown = label.text().replace("\u200b", "")  # (break points a breakable label adds)
    assert len(shown) <= LABEL_CHARS + 40
    assert shown.endswith(" … (999,751 more characters)")  # 249 escapes of 8 fit after "answer: "
    assert "\u202e" not in label.text()
    set_plain_text(label, "x" * 5000)
    assert label.text().replace("\u200b", "").startswith("x" * 100) and "(3,000 more characters)" in label.text()
    assert fits_label("y " * 900) and not fits_label("y " * 1100) and not fits_label("\u202e" * 300)
