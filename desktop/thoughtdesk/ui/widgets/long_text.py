"""Text of any length shown without stalling the GUI thread: capped, wrapped anywhere, "Show all".

Laying text out is linear in its length and happens on the GUI thread (about 0.75 s per
megabyte in one paragraph, measured offscreen), and a label never breaks an unbroken word, so a
10 MB one-word question froze the window and widened it past any screen. Here:

* :class:`LongText` shows the first :data:`DISPLAY_CHARS` characters, wrapped anywhere when a
  word is longer than the line, with a "… N more characters — Show all" button. Up to
  :data:`INLINE_ALL_CHARS` characters, Show all puts the whole text in place; beyond that it
  opens :class:`FullTextDialog`.
* :class:`FullTextDialog` shows the whole text in a scrolling ``QPlainTextEdit``, which lays
  out only the lines in view: lines longer than :data:`DISPLAY_LINE` characters are shown in
  pieces of that length (one line of 10 MB would be laid out whole; 10 MB in pieces opens in
  about 0.1 s). Copy all copies the original text, unbroken.

Every text goes through :func:`~thoughtdesk.core.visible_text.reveal` (bidi controls and
other invisible characters shown as ``<U+202E>``) and into widgets set to plain text.
"""

from __future__ import annotations

import re

from thoughtdesk.core.visible_text import escape_of, has_invisible, reveal, split_invisible
from thoughtdesk.ui.qt import (
    QApplication,
    QColor,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    Qt,
    QTextCharFormat,
    QTextCursor,
    QTextEdit,
    QTextOption,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.labels import plain_label

#: Characters shown before "Show all" (laid out in about 20 ms).
DISPLAY_CHARS = 20_000
#: Up to this many characters, "Show all" shows the whole text in place (about 0.1 s of layout);
#: a longer text opens in :class:`FullTextDialog`.
INLINE_ALL_CHARS = 100_000
#: The full-text view breaks longer lines into pieces of this many characters.
DISPLAY_LINE = 2_000
#: A text with a word longer than this is not shown in a label (labels wrap only between words).
LABEL_WORD_CHARS = 60
#: A text with a word this long is wrapped anywhere, not at word boundaries first: Qt's search
#: for a boundary makes an unbroken word cost far more than its length (20,000 characters at
#: 480 px: 0.32 s, against 0.02 s wrapped anywhere).
LONG_WORD_CHARS = 200
_LONG_WORD = re.compile(rf"\S{{{LONG_WORD_CHARS}}}")


def wrap_mode_for(text: str) -> QTextOption.WrapMode:
    """How a view should wrap ``text``: anywhere when it has a very long word, else at word
    boundaries (and anywhere only where a word does not fit)."""
    if _LONG_WORD.search(text):
        return QTextOption.WrapMode.WrapAnywhere
    return QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere


def invisible_format() -> QTextCharFormat:
    """The character format of an invisible character's escape: white on grey, as in the
    compare view (``safe_text.INVISIBLE_STYLE``), readable on any theme."""
    char_format = QTextCharFormat()
    char_format.setBackground(QColor("#5c5c5c"))
    char_format.setForeground(QColor("#ffffff"))
    return char_format


def capped(text: str, limit: int = DISPLAY_CHARS) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters and how many characters were left out."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def more_text(hidden: int) -> str:
    """The words of the Show all button: ``"… 9,980,000 more characters — Show all"``."""
    return f"… {hidden:,} more character{'s' if hidden != 1 else ''} — Show all"


def display_lines(text: str, width: int = DISPLAY_LINE) -> str:
    """``text`` with every line longer than ``width`` broken into pieces of ``width`` characters
    (for display only: a plain-text view lays out a whole line at a time)."""
    if len(text) <= width:
        return text
    pieces: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            pieces.append(line)
        else:
            pieces.extend(line[i : i + width] for i in range(0, len(line), width))
    return "\n".join(pieces)


def fits_label(text: str) -> bool:
    """Whether a plain label can show ``text``: short enough and no word it could not wrap."""
    if len(text) > DISPLAY_CHARS:
        return False
    return max((len(word) for word in text.split()), default=0) <= LABEL_WORD_CHARS


class FittedPlainText(QTextEdit):
    """Read-only plain text as tall as its document, wrapped at words or anywhere (the outer area
    scrolls). Text is set with ``setPlainText``: nothing in it is read as markup."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setAcceptRichText(False)  # pasting/dropping never brings markup in
        self.setUndoRedoEnabled(False)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._fitted_width = -1

    def set_text(self, text: str) -> None:
        """Show ``text`` (capped by the caller); invisible characters as ``<U+202E>`` in their
        own style (inserted as text with a format: nothing is read as markup)."""
        self.setWordWrapMode(wrap_mode_for(text))
        if not has_invisible(text):
            self.setPlainText(text)
        else:
            self.clear()
            cursor = QTextCursor(self.document())
            plain, escape = QTextCharFormat(), invisible_format()
            for piece, invisible in split_invisible(text):
                cursor.insertText(escape_of(piece) if invisible else piece, escape if invisible else plain)
        if self.isVisible():
            self._fit()
        else:  # laid out when shown, at its real width (not once more at a default one)
            self._fitted_width = -1

    def showEvent(self, event) -> None:  # Qt override
        super().showEvent(event)
        if self.viewport().width() != self._fitted_width:
            self._fit()

    def resizeEvent(self, event) -> None:  # Qt override
        super().resizeEvent(event)
        if self.viewport().width() != self._fitted_width:  # height changes only follow width
            self._fit()

    def _fit(self) -> None:
        self._fitted_width = self.viewport().width()
        document = self.document()
        width = max(50, self._fitted_width)
        if document.textWidth() != width:  # QTextEdit's own resize handling usually set it already
            document.setTextWidth(width)
        height = int(document.size().height()) + 2 * self.frameWidth() + 4
        if height != self.height():
            self.setFixedHeight(height)


class LongText(QWidget):
    """A text of any length: the first :data:`DISPLAY_CHARS` characters, then "Show all"."""

    def __init__(
        self,
        text: str = "",
        parent: QWidget | None = None,
        *,
        name: str = "",
        title: str = "Full text",
        limit: int = DISPLAY_CHARS,
    ) -> None:
        super().__init__(parent)
        if name:
            self.setObjectName(name)
        self.title = title
        self.limit = limit
        self.text = ""
        self.view = FittedPlainText(self)
        self.view.setObjectName("longTextView")
        self.more = QToolButton(self)
        self.more.setObjectName("showAll")
        self.more.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.more.clicked.connect(self.show_all)
        self.dialog: FullTextDialog | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.view)
        layout.addWidget(self.more, 0, Qt.AlignmentFlag.AlignLeft)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        self.set_text(text)

    @property
    def hidden_chars(self) -> int:
        """Characters of the text not shown in place (0 when all of it is)."""
        return len(self.text) - self._shown

    def set_text(self, text: str) -> None:
        """Show ``text``, cut to the limit when longer."""
        self.text = text
        shown, hidden = capped(text, self.limit)
        self._shown = len(shown)
        self.view.set_text(shown)
        self.more.setText(more_text(hidden))
        self.more.setVisible(hidden > 0)

    def shown_text(self) -> str:
        """The text as shown in place (revealed, possibly cut)."""
        return self.view.toPlainText()

    def show_all(self) -> None:
        """The whole text: in place when it is at most :data:`INLINE_ALL_CHARS` characters,
        else in a :class:`FullTextDialog`."""
        if len(self.text) <= INLINE_ALL_CHARS:
            self._shown = len(self.text)
            self.view.set_text(self.text)
            self.more.setVisible(False)
            return
        self.dialog = open_full_text(self, self.title, self.text)


class FullTextDialog(QDialog):
    """The whole of a long text, scrolling, lines in pieces of :data:`DISPLAY_LINE` characters."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("fullTextDialog")
        self.setWindowTitle(title)
        self.text = text
        self.view = QPlainTextEdit(self)
        self.view.setObjectName("fullText")
        self.view.setReadOnly(True)
        self.view.setUndoRedoEnabled(False)
        shown = display_lines(reveal(text))
        self.view.setWordWrapMode(wrap_mode_for(shown))
        self.view.setPlainText(shown)
        note = f"{len(text):,} characters."
        if any(len(line) > DISPLAY_LINE for line in text.split("\n")):
            note += f" Lines longer than {DISPLAY_LINE:,} characters are shown in pieces;"
            note += " Copy all copies the text as it is."
        self.note = plain_label(note, name="fullTextNote")
        copy = QPushButton("Copy all", self)
        copy.setObjectName("copyAll")
        copy.clicked.connect(self.copy_all)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.addButton(copy, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)
        self.resize(900, 600)  # fits a 1366x768 screen with room for the window frame

    def copy_all(self) -> None:
        """The original text (unbroken, invisible characters as they are) to the clipboard."""
        QApplication.clipboard().setText(self.text)


def open_full_text(parent: QWidget | None, title: str, text: str) -> FullTextDialog:
    """Open a non-modal :class:`FullTextDialog` of ``text`` (deleted when closed)."""
    dialog = FullTextDialog(title, text, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
