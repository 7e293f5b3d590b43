"""Labels for text that must never be interpreted as markup: data, model output, server messages."""

from __future__ import annotations

from thoughtdesk.ui.qt import QLabel, QSizePolicy, Qt
from thoughtdesk.ui.widgets.visible_text import reveal


def plain_label(
    text: str = "",
    *,
    name: str = "",
    wrap: bool = True,
    selectable: bool = False,
    bold: bool = False,
    keep_height: bool = False,
) -> QLabel:
    """A QLabel showing ``text`` as plain text (never rich text), word-wrapped unless ``wrap`` is off.

    ``name`` is the object name (for style sheets and tests); ``selectable`` lets the mouse select
    the text; ``bold`` sets a bold font. ``keep_height`` gives a wrapped label a Minimum vertical
    size policy: a layout never squeezes it below its size hint, so no line is cut off where many
    labels share a column (the sample detail, the review panels). It is off by default because in
    a form with spare room the size hint (taken at a narrower width than the label gets) would
    make a one-line note two or three lines tall.

    Invisible characters (bidi controls, zero-width spaces) in ``text`` are shown as escapes,
    ``<U+202E>`` (:func:`~thoughtdesk.ui.widgets.visible_text.reveal`); so is text set later
    through :func:`set_plain_text`.
    """
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    label.setText(reveal(text))
    if wrap and keep_height:
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


def set_plain_text(label: QLabel, text: str) -> None:
    """Set a plain label's text later, invisible characters shown as in :func:`plain_label`."""
    label.setText(reveal(text))
