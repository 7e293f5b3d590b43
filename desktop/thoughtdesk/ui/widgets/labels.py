"""Labels for text that must never be interpreted as markup: data, model output, server messages.

A :class:`PlainLabel` shows every text it is given, at construction or later through
``setText``, as plain text with invisible characters revealed (``<U+202E>``) and at most
:data:`LABEL_CHARS` shown characters of it, then a visible "… (N more characters)": a label
lays out all of its text at every resize (a 1 MB extracted answer in a statistics line cost
1.8 s per sample shown), so a label never gets more. Data text that may be longer belongs in a
:class:`~thoughtdesk.ui.widgets.long_text.LongText` (with "Show all").
"""

from __future__ import annotations

import re

from thoughtdesk.core.visible_text import elide
from thoughtdesk.ui.qt import QFrame, QLabel, QResizeEvent, QSize, QSizePolicy, Qt, QTextEdit, QTextOption, QWidget

#: Spaces that forbid a line break (MedMCQA has them between words): shown as plain spaces.
_NO_BREAK = re.compile("[\u00a0\u2007\u202f\u2060\ufeff]")
#: Runs of this many characters without a break opportunity get one every BREAK_EVERY.
_LONG_RUN = re.compile(r"[^\s\u200b]{48,}")
BREAK_EVERY = 24
#: Shown characters a label holds at most (laid out in about 10 ms); the rest is elided.
LABEL_CHARS = 2_000
#: Shown characters a :class:`MessageText` holds at most (it scrolls past eight lines).
MESSAGE_CHARS = 20_000


def breakable_text(text: str) -> str:
    """``text`` for display in a word-wrapped label, which only breaks lines at spaces: no-break
    spaces become spaces, and a zero-width space goes every :data:`BREAK_EVERY` characters into
    runs of 48 or more without one (URLs, hashes, SMILES). Display only: stored text is unchanged."""
    text = _NO_BREAK.sub(" ", text)
    return _LONG_RUN.sub(lambda run: "\u200b".join(_chunks(run.group(), BREAK_EVERY)), text)


def _chunks(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


class PlainLabel(QLabel):
    """A QLabel for plain text only: ``setText`` reveals invisible characters and elides the
    text past :data:`LABEL_CHARS` shown characters; ``breakable`` passes it through
    :func:`breakable_text` too. ``text()`` is the text as shown."""

    def __init__(self, *, breakable: bool = False) -> None:
        super().__init__()
        self.breakable = breakable
        self.setTextFormat(Qt.TextFormat.PlainText)

    def setText(self, text: str) -> None:  # QLabel's name
        shown = elide(text, LABEL_CHARS)
        super().setText(breakable_text(shown) if self.breakable else shown)


def plain_label(
    text: str = "",
    *,
    name: str = "",
    wrap: bool = True,
    selectable: bool = False,
    bold: bool = False,
    keep_height: bool = False,
    breakable: bool = False,
) -> QLabel:
    """A QLabel showing ``text`` as plain text (never rich text), word-wrapped unless ``wrap`` is off.

    ``name`` is the object name (for style sheets and tests); ``selectable`` lets the mouse select
    the text; ``bold`` sets a bold font. ``keep_height`` gives a wrapped label a Minimum vertical
    size policy: a layout never squeezes it below its size hint, so no line is cut off where many
    labels share a column (the sample detail, the review panels). It is off by default because in
    a form with spare room the size hint (taken at a narrower width than the label gets) would
    make a one-line note two or three lines tall.

    The label is a :class:`PlainLabel`: invisible characters (bidi controls, zero-width spaces)
    in ``text`` and in any text set later are shown as escapes, ``<U+202E>``, and a text longer
    than :data:`LABEL_CHARS` shown characters is elided with a visible marker.

    ``breakable`` shows the text through :func:`breakable_text` (after the escapes, so the
    break points it adds are not shown), so data text wraps whatever it holds (no-break spaces,
    a 300-character token) instead of widening its pane; text set later too.
    """
    label = PlainLabel(breakable=breakable)
    label.setWordWrap(wrap)
    label.setText(text)
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
    """Set a label's text later as :func:`plain_label` shows it (revealed, elided), whether or
    not it is a :class:`PlainLabel`."""
    label.setText(text if isinstance(label, PlainLabel) else elide(text, LABEL_CHARS))


class MessageText(QTextEdit):
    """A message (plain text, selectable) that wraps anywhere, so a long URL or path breaks
    instead of being cut, and is as tall as its text up to ``max_lines`` lines, then scrolls.

    A drop-in for a wrapped label holding messages built from URLs and paths (the download
    dialog's "offline mode is on…", four lines of it were visible): ``text()``/``setText()``.
    """

    def __init__(self, text: str = "", *, name: str = "", max_lines: int = 8, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if name:
            self.setObjectName(name)
        self.max_lines = max_lines
        self.setReadOnly(True)
        self.setAcceptRichText(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)  # reads as a label on the dialog's background
        self.document().setDocumentMargin(1)
        self.setText(text)

    def text(self) -> str:
        """The whole message (invisible characters revealed, cut past :data:`MESSAGE_CHARS`)."""
        return self.toPlainText()

    def setText(self, text: str) -> None:  # QLabel's name
        self.setPlainText(elide(text, MESSAGE_CHARS))  # revealed, and never megabytes to lay out
        self._fit()

    def sizeHint(self) -> QSize:  # Qt API: never widen the window for a long line
        return QSize(200, self.height())

    def minimumSizeHint(self) -> QSize:  # Qt API
        return QSize(100, self.height())

    def resizeEvent(self, event) -> None:  # Qt API
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        document = self.document()  # laid out by QTextEdit at the viewport's width
        line = self.fontMetrics().lineSpacing()
        wanted = int(document.size().height()) if self.toPlainText() else line
        height = min(wanted, self.max_lines * line + 2) + 2 * self.frameWidth() + 1
        if height != self.height():
            before = self.size()
            self.setFixedHeight(height)
            # QTextEdit sets its scroll range in resizeEvent; a height set from inside one is
            # not always followed by another, which left a range for the old height.
            super().resizeEvent(QResizeEvent(self.size(), before))
