"""What a widget tree shows: every text in its labels, text views and list items (issue 15,
point 7: what is laid out must be bounded whatever the data holds; bidi controls shown)."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractButton, QLabel, QListWidget, QPlainTextEdit, QTextEdit, QWidget


def shown_texts(root: QWidget, *, visible_only: bool = False) -> list[str]:
    """Every text ``root`` and its children show (hidden widgets too unless ``visible_only``)."""
    texts: list[str] = []
    for widget in [root, *root.findChildren(QWidget)]:
        if visible_only and not widget.isVisibleTo(root):
            continue
        if isinstance(widget, QLabel | QAbstractButton):
            texts.append(widget.text())
        elif isinstance(widget, QTextEdit | QPlainTextEdit):
            texts.append(widget.document().toPlainText())
        elif isinstance(widget, QListWidget):
            texts.extend(widget.item(i).text() for i in range(widget.count()))
    return texts


def shown_chars(root: QWidget) -> int:
    """Characters laid out in ``root``'s texts, in all."""
    return sum(len(text) for text in shown_texts(root))
