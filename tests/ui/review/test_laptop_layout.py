"""The review flow on a 1366x768 laptop (issue 28, point 2): a question with choices and its
gold answer, three CoTs side by side and the annotation panel, all without scrolling; the word
diff folded away until asked for. Screenshot: ``review-laptop.png`` in the test's folder."""

from __future__ import annotations

from tests.helpers.screenshots import save_screenshot
from tests.helpers.widgets import child
from tests.helpers.window import close_window, open_window
from tests.ui.review.conftest import make_library
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.qt import QScrollArea, QWidget
from thoughtdesk.ui.widgets.sizing import LAPTOP_CLIENT

LONG_QUESTION = (
    "A 67-year-old man with a history of chronic obstructive pulmonary disease presents with fever, productive "
    "cough and pleuritic chest pain of three days. His temperature is 39.1 C, pulse 112/min, respirations 28/min. "
) * 3 + "Which organism is the most likely cause of his community-acquired pneumonia?"


def test_question_gold_three_cots_and_the_panel_fit_without_scrolling(qtbot, tmp_path):
    path = make_library(tmp_path / "review.thoughtdesk")
    with Library.open(path) as lib, lib.transaction() as conn:
        conn.execute("UPDATE sample SET question = ?", (LONG_QUESTION,))
    window = open_window(qtbot, Library.open(path), size=(LAPTOP_CLIENT.width(), LAPTOP_CLIENT.height()))
    try:
        view = window.review.view
        window.show_tab(view)
        qtbot.waitUntil(lambda: view.stored is not None and len(view.compare.panels) >= 3, timeout=10000)
        compare = view.compare
        qtbot.waitUntil(lambda: not compare._fit_timer.isActive(), timeout=5000)
        save_screenshot(window, tmp_path, "review-laptop")

        # The question box: where from and the gold answer first, then the choices: never below its fold.
        first, second = view.question.toPlainText().split("\n")[:2]
        assert "Gold answer: " in first and second.startswith("Choices: ")

        # Three CoT columns side by side inside the compare area, none cut.
        viewport = compare.scroll_area.viewport()
        shown = [p for p in compare.panels if p.isVisible()]
        assert len(shown) == 4  # the reference and three CoTs
        for panel in shown:
            left = panel.mapTo(viewport, panel.rect().topLeft()).x()
            assert left >= 0 and left + panel.width() <= viewport.width(), (left, panel.width(), viewport.width())

        # The word diff is folded away, and opens on request.
        assert not compare.word_diff_shown() and not compare.diff_button.isChecked()
        compare.diff_button.click()
        assert compare.word_diff_shown()
        compare.diff_button.click()
        assert not compare.word_diff_shown()

        # The annotation panel needs no scrolling.
        scroll = child(window, QScrollArea, "annotationScroll")
        assert scroll.verticalScrollBar().maximum() == 0, "the annotation panel needs scrolling"
        assert isinstance(scroll.widget(), QWidget)
    finally:
        close_window(window)
