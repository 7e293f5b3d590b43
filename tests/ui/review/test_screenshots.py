"""Screenshots of the Review tab in light and dark palettes (also a readability check).

Saved under the test's tmp_path as review-light.png and review-dark.png. The dark one is
docs/screenshots/review-dark.png: ``python -m tests.helpers.screenshots --docs`` remakes it
(with the other docs screenshots; review.png shows a real ThoughtSource sample instead, made by
tests/ui/review/docs_screenshots.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from tests.helpers.screenshots import save_screenshot
from tests.ui.review.conftest import Session
from thoughtdesk.core.review.compare.colours import contrast_ratio

DARK = {
    QPalette.ColorRole.Window: "#2b2b2b",
    QPalette.ColorRole.WindowText: "#f0f0f0",
    QPalette.ColorRole.Base: "#1e1e1e",
    QPalette.ColorRole.AlternateBase: "#2b2b2b",
    QPalette.ColorRole.Text: "#f0f0f0",
    QPalette.ColorRole.Button: "#353535",
    QPalette.ColorRole.ButtonText: "#f0f0f0",
    QPalette.ColorRole.Highlight: "#3d7bd9",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.PlaceholderText: "#a0a0a0",
}


def dark_palette(base: QPalette) -> QPalette:
    palette = QPalette(base)
    for role, colour in DARK.items():
        palette.setColor(role, QColor(colour))
    return palette


def annotate_for_the_picture(session) -> None:
    view = session.view
    session.key(Qt.Key.Key_1)
    session.key(Qt.Key.Key_4, Qt.KeyboardModifier.AltModifier)
    panel = view.compare.panels[view.compare.current_index()]
    start = panel.cot.text.index("consolidation")
    panel.select_range(start, start + len("consolidation point to pneumonia"))
    session.key(Qt.Key.Key_3)
    session.key(Qt.Key.Key_J)
    session.key(Qt.Key.Key_S)


def span_fragments(text_view) -> list[tuple[str, str, str]]:
    found = []
    block = text_view.document().begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            char_format = fragment.charFormat()
            if char_format.background().style() != Qt.BrushStyle.NoBrush:
                found.append(
                    (fragment.text(), char_format.background().color().name(), char_format.foreground().color().name())
                )
            iterator += 1
        block = block.next()
    return found


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_review_tab_screenshot(qtbot, library_path, tmp_path, theme) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    light = QPalette(app.palette())
    if theme == "dark":
        # A dark desktop theme is in place before the window opens (the main window's style
        # sheet keeps its children from following a palette change made later).
        app.setPalette(dark_palette(light))
    session = Session(qtbot, library_path)
    try:
        shoot(session, qtbot, theme, tmp_path)
    finally:
        session.close()
        app.setPalette(light)


def shoot(session, qtbot, theme: str, folder: Path) -> None:
    window, view = session.window, session.view
    qtbot.waitUntil(lambda: view.compare.theme() == theme, timeout=10000)
    annotate_for_the_picture(session)
    view.compare.paint_all()
    qtbot.wait(50)
    # Every highlight (sentence groups and span marks) is readable against its text colour.
    fragments = [f for panel in view.compare.panels for f in span_fragments(panel.text_view)]
    assert fragments
    for text, background, foreground in fragments:
        if foreground == "#000000" and theme == "dark":
            raise AssertionError(f"black text on the dark theme: {text!r}")
        assert (
            contrast_ratio(background, foreground if foreground != "#000000" or theme == "light" else "#ffffff") >= 4.5
        )
    save_screenshot(window, folder, f"review-{theme}")
