"""Labels for text that must never be interpreted as markup: data, model output, server messages."""

from __future__ import annotations

from thoughtdesk.ui.qt import QLabel, QSizePolicy, Qt


def plain_label(
    text: str = "",
    *,
    name: str = "",
    wrap: bool = True,
    selectable: bool = False,
    bold: bool = False,
) -> QLabel:
    """A QLabel showing ``text`` as plain text (never rich text), word-wrapped unless ``wrap`` is off.

    ``name`` is the object name (for style sheets and tests); ``selectable`` lets the mouse select
    the text; ``bold`` sets a bold font.
    """
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    label.setText(text)
    if wrap:
        label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if name:
        label.setObjectName(name)
    if bold:
        font = label.font()
        font.setBold(True)
        label.setFont(font)
    return label
