"""Typed look-ups in widget trees for tests: what a test expects to be there, or the test fails.

Qt's ``findChild``, ``QScrollArea.widget()`` and ``QTableWidget.item()`` answer None when the
thing is missing; these say so at the look-up (with what was looked for) instead of an
AttributeError on None a line later, and give the type checker the non-None type.
"""

from __future__ import annotations

from typing import TypeVar

from thoughtdesk.ui.qt import QObject, QScrollArea, QTableWidget, QTableWidgetItem, QWidget

T = TypeVar("T", bound=QObject)


def child(parent: QObject, kind: type[T], name: str | None = None) -> T:
    """The first ``kind`` under ``parent`` (named ``name``, when given; PySide6's
    ``findChild(kind, "")`` finds only unnamed objects, so no name is not an empty one)."""
    found = parent.findChild(kind) if name is None else parent.findChild(kind, name)
    named = "" if name is None else f" {name!r}"
    assert found is not None, f"no {kind.__name__}{named} under {type(parent).__name__} {parent.objectName()!r}"
    return found


def content(area: QScrollArea) -> QWidget:
    """The widget a scroll area shows."""
    widget = area.widget()
    assert widget is not None, f"scroll area {area.objectName()!r} shows no widget"
    return widget


def cell(table: QTableWidget, row: int, column: int) -> QTableWidgetItem:
    """The item at ``row``, ``column`` of a table widget."""
    item = table.item(row, column)
    assert item is not None, f"no item at ({row}, {column}) of {table.objectName()!r}"
    return item


def mnemonic_clashes(window: QWidget) -> dict[str, list[str]]:
    """The Alt+letters that more than one visible widget of ``window`` claims (buttons, check
    boxes, labels with a buddy, group boxes, the tabs of a visible tab bar). Qt gives such a
    key to none of them: it cycles the focus among them, so Alt+S does not press "&Start"."""
    from PySide6.QtWidgets import QAbstractButton, QGroupBox, QLabel, QTabBar

    from thoughtdesk.ui.widgets.mnemonics import mnemonic

    claims: dict[str, list[str]] = {}

    def claim(text: str) -> None:
        letter = mnemonic(text)
        if letter is not None:
            claims.setdefault(letter, []).append(text)

    for widget in window.findChildren(QWidget):
        if not widget.isVisible():
            continue
        if isinstance(widget, QAbstractButton | QGroupBox):
            claim(widget.text() if isinstance(widget, QAbstractButton) else widget.title())
        elif isinstance(widget, QLabel) and widget.buddy() is not None:
            claim(widget.text())
        elif isinstance(widget, QTabBar):
            for index in range(widget.count()):
                if widget.isTabVisible(index):
                    claim(widget.tabText(index))
    return {letter: texts for letter, texts in claims.items() if len(texts) > 1}
