"""A 10 MB one-word question and a 1 MB CoT open in the Samples tab without stalling it (issue 15,
point 7: the collection took 40 s to open, then the window froze for 26 s)."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt

from tests.helpers.libraries import long_text_library
from tests.helpers.window import close_window, open_window
from thoughtdesk.core.library.queries import CELL_CHARS, SampleFilter, sample_keys, sample_rows
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.widgets.long_text import DISPLAY_CHARS, LongText, more_text

QUESTION = 10_000_000
COT = 1_000_000


def test_the_table_reads_bounded_prefixes_of_long_texts(tmp_path) -> None:
    path = long_text_library(tmp_path / "lib.thoughtdesk", QUESTION, COT)
    with Library.open(path) as library:
        keys = list(sample_keys(library, SampleFilter()))
        row = sample_rows(library, keys)[keys[0]]
    assert row.question == "Q" * CELL_CHARS
    assert len(row.gold) <= CELL_CHARS


def test_a_huge_sample_opens_capped_with_show_all_and_the_window_keeps_its_size(qtbot, tmp_path) -> None:
    path = long_text_library(tmp_path / "lib.thoughtdesk", QUESTION, COT)
    started = time.perf_counter()
    window = open_window(qtbot, Library.open(path), size=(1366, 768))
    try:
        detail = window.samples.detail
        qtbot.waitUntil(lambda: detail.current is not None, timeout=20000)
        window.grab()
        opened = time.perf_counter() - started
        # Seconds, not the 40 s + 26 s before; the 200 ms target is bench_long_text.py's.
        assert opened < 10.0
        started = time.perf_counter()
        detail.show_sample(detail.current)
        detail.grab()
        assert time.perf_counter() - started < 2.0

        question = detail.widget().findChild(LongText, "question")
        assert question is not None
        assert question.shown_text() == "Q" * DISPLAY_CHARS
        assert question.more.text() == more_text(QUESTION - DISPLAY_CHARS)
        cot = detail.widget().findChild(LongText, "cotText")
        assert cot is not None and cot.hidden_chars == COT - DISPLAY_CHARS
        # Wrapped anywhere: nothing widens the pane or the window.
        assert detail.horizontalScrollBar().maximum() == 0
        assert window.width() <= 1366
        assert window.samples.model.data(window.samples.model.index(0, 1)) == "Q" * CELL_CHARS

        qtbot.mouseClick(question.more, Qt.MouseButton.LeftButton)
        dialog = question.dialog
        assert dialog is not None
        qtbot.waitExposed(dialog)
        qtbot.waitUntil(lambda: dialog.loaded == QUESTION, timeout=60_000)  # loaded in steps
        assert dialog.view.document().characterCount() > QUESTION
        dialog.close()
    finally:
        close_window(window)
