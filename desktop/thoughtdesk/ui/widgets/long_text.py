"""Text of any length shown without stalling the GUI thread: capped, wrapped anywhere, "Show all".

Laying text out is linear in its length and happens on the GUI thread (about 0.75 s per
megabyte in one paragraph, measured offscreen), and a label never breaks an unbroken word, so a
10 MB one-word question froze the window and widened it past any screen. Here:

* :class:`LongText` shows the first :data:`DISPLAY_CHARS` characters, wrapped anywhere when a
  word is longer than the line, with a "… N more characters — Show all" button. Up to
  :data:`INLINE_ALL_CHARS` characters, Show all puts the whole text in place; beyond that it
  opens :class:`FullTextDialog`.
* :class:`PlainTextBox` is the same for a box of fixed height that scrolls (a context, a CoT
  beside a trajectory): the first :data:`DISPLAY_CHARS` characters, "Show all" opens the dialog.
* :class:`FullTextDialog` shows the whole text in a scrolling ``QPlainTextEdit``, which lays
  out only the lines in view: lines longer than :data:`DISPLAY_LINE` characters are shown in
  pieces of that length (one line of 10 MB would be laid out whole). The first
  :data:`LOAD_CHUNK` shown characters are there at once, the rest is appended in chunks of that
  size from the event loop (10 MB dense with bidi overrides takes seconds in all, each step a
  few tens of milliseconds: the window never freezes). Copy all copies the original text.

Every text is revealed (:mod:`thoughtdesk.core.visible_text`: bidi controls and other invisible
characters shown as ``<U+202E>``) in the part shown only, within a budget of shown characters
(an escape counts its eight, so text dense with them shows less of itself, never more work),
and goes into widgets as plain text: :func:`fill_text` inserts the pieces in one edit block, the
escapes in :func:`invisible_format` (one pass; inserting piece by piece into a shown document
was quadratic: 20,000 characters with 2,000 escapes took 29 s).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from thoughtdesk.core.visible_text import STYLED_ESCAPES, reveal_prefix, shown_runs
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
    QTimer,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.labels import LABEL_CHARS, plain_label

#: Characters shown before "Show all" (laid out in about 20 ms).
DISPLAY_CHARS = 20_000
#: Up to this many shown characters, "Show all" shows the whole text in place (about 0.1 s of
#: layout); a longer text opens in :class:`FullTextDialog`.
INLINE_ALL_CHARS = 100_000
#: The full-text view breaks longer lines into pieces of this many characters.
DISPLAY_LINE = 2_000
#: Shown characters the full-text view loads at once, then per step of the event loop.
LOAD_CHUNK = 200_000
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
    """Whether a plain label can show ``text`` whole: at most :data:`~.labels.LABEL_CHARS`
    shown characters and no word it could not wrap."""
    if len(text) > LABEL_CHARS or reveal_prefix(text, LABEL_CHARS)[1] < len(text):
        return False
    return max((len(word) for word in text.split()), default=0) <= LABEL_WORD_CHARS


def fill_text(view: QTextEdit | QPlainTextEdit, text: str, budget: int = DISPLAY_CHARS) -> int:
    """Show in ``view`` the longest prefix of ``text`` that fits ``budget`` shown characters,
    invisible characters as escapes in :func:`invisible_format`, as plain text built in one
    pass (one edit block); set the view's wrap mode for it (:func:`wrap_mode_for`). At most
    :data:`~thoughtdesk.core.visible_text.STYLED_ESCAPES` escapes: the text is cut before the
    next. Returns how many characters of ``text`` are shown (the rest is for "Show all")."""
    runs, consumed = shown_runs(text, budget, STYLED_ESCAPES)
    view.setWordWrapMode(wrap_mode_for("".join(piece for piece, _ in runs)))
    if not any(escape for _, escape in runs):
        view.setPlainText(runs[0][0] if runs else "")
        return consumed
    view.clear()
    cursor = QTextCursor(view.document())
    cursor.beginEditBlock()  # one layout pass for the whole text
    plain, escape = QTextCharFormat(), invisible_format()
    for piece, is_escape in runs:
        cursor.insertText(piece, escape if is_escape else plain)
    cursor.endEditBlock()
    return consumed


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

    def set_text(self, text: str, budget: int = DISPLAY_CHARS) -> int:
        """Show as much of ``text`` as fits ``budget`` shown characters (:func:`fill_text`:
        invisible characters as ``<U+202E>`` in their own style, nothing read as markup);
        returns how many characters of ``text`` are shown."""
        consumed = fill_text(self, text, budget)
        if self.isVisible():
            self._fit()
        else:  # laid out when shown, at its real width (not once more at a default one)
            self._fitted_width = -1
        return consumed

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
        self.more = _show_all_below(self, self.view, self.show_all)
        self.dialog: FullTextDialog | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        self.set_text(text)

    @property
    def hidden_chars(self) -> int:
        """Characters of the text not shown in place (0 when all of it is)."""
        return self._length - self._shown

    def set_text(self, text: str, *, length: int | None = None, full: Callable[[], str] | None = None) -> None:
        """Show ``text``, cut where it passes the limit of shown characters. ``full``: ``text``
        is only the beginning of a text of ``length`` characters that ``full()`` builds when
        "Show all" needs it (reference steps: the first ones are joined, not 100,000)."""
        self.text = text
        self._full = full
        self._length = len(text) if full is None or length is None else length
        self._shown = self.view.set_text(text, self.limit)
        hidden = self._length - self._shown
        self.more.setText(more_text(hidden))
        self.more.setVisible(hidden > 0)

    def shown_text(self) -> str:
        """The text as shown in place (revealed, possibly cut)."""
        return self.view.toPlainText()

    def show_all(self) -> None:
        """The whole text: in place when it shows in at most :data:`INLINE_ALL_CHARS`
        characters, else in a :class:`FullTextDialog`."""
        if self._full is not None:
            self.text, self._full = self._full(), None
            self._length = len(self.text)
        if reveal_prefix(self.text, INLINE_ALL_CHARS, STYLED_ESCAPES)[1] == len(self.text):
            self._shown = self.view.set_text(self.text, INLINE_ALL_CHARS)
            self.more.setVisible(False)
            self.updateGeometry()
            return
        self.dialog = open_full_text(self, self.title, self.text)


class PlainTextBox(QWidget):
    """A scrolling box of at most ``max_height`` pixels for a text of any length: the first
    :data:`DISPLAY_CHARS` shown characters, then "… N more characters — Show all", which opens
    a :class:`FullTextDialog`. ``view`` is the ``QPlainTextEdit`` (read-only, plain text)."""

    def __init__(
        self, parent: QWidget | None = None, *, name: str = "", title: str = "Full text", max_height: int = 0
    ) -> None:
        super().__init__(parent)
        self.title = title
        self.text = ""
        self.shown = 0
        self.view = QPlainTextEdit(self)
        if name:
            self.view.setObjectName(name)
        self.view.setReadOnly(True)
        self.view.setUndoRedoEnabled(False)
        if max_height:
            self.view.setMaximumHeight(max_height)
        self.more = _show_all_below(self, self.view, self.show_all)
        self.more.setVisible(False)
        self.dialog: FullTextDialog | None = None

    def set_text(self, text: str) -> None:
        """Show ``text``, cut where it passes :data:`DISPLAY_CHARS` shown characters."""
        self.text = text
        self.shown = fill_text(self.view, text, DISPLAY_CHARS)
        hidden = len(text) - self.shown
        self.more.setText(more_text(hidden))
        if self.more.isHidden() == (hidden > 0):
            self.more.setVisible(hidden > 0)

    def toPlainText(self) -> str:  # QPlainTextEdit's name
        """The text as shown (revealed, possibly cut)."""
        return self.view.toPlainText()

    def setPlaceholderText(self, text: str) -> None:  # QPlainTextEdit's name
        self.view.setPlaceholderText(text)

    def show_all(self) -> None:
        """The whole text in a :class:`FullTextDialog`."""
        self.dialog = open_full_text(self, self.title, self.text)


class FullTextDialog(QDialog):
    """The whole of a long text, scrolling, lines in pieces of :data:`DISPLAY_LINE` characters,
    loaded :data:`LOAD_CHUNK` shown characters at a time (``loaded`` tells how far)."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("fullTextDialog")
        self.setWindowTitle(title)
        self.text = text
        self.loaded = 0  # characters of text in the view
        self.view = QPlainTextEdit(self)
        self.view.setObjectName("fullText")
        self.view.setReadOnly(True)
        self.view.setUndoRedoEnabled(False)
        self._note = f"{len(text):,} characters."
        if len(text) > DISPLAY_LINE and any(len(line) > DISPLAY_LINE for line in text.split("\n")):
            self._note += f" Lines longer than {DISPLAY_LINE:,} characters are shown in pieces;"
            self._note += " Copy all copies the text as it is."
        self.note = plain_label(self._note, name="fullTextNote")
        self._loader = QTimer(self)
        self._loader.setInterval(0)
        self._loader.timeout.connect(self.load_more)
        self.load_more()
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
        if self.loaded < len(text):
            self._loader.start()

    def load_more(self) -> None:
        """Append the next :data:`LOAD_CHUNK` shown characters (the first call sets the wrap
        mode); the note says how much is loaded until all is."""
        text = self.text
        start = self.loaded
        end = min(len(text), start + LOAD_CHUNK)
        if end < len(text):
            newline = text.rfind("\n", start + LOAD_CHUNK // 2, end)
            end = newline if newline >= 0 else end  # a chunk ends at a line end where it can
        shown, consumed = reveal_prefix(text[start:end], LOAD_CHUNK)
        self.loaded = start + consumed
        if self.loaded < len(text) and text[self.loaded] == "\n":
            self.loaded += 1  # the next chunk starts on a new line anyway
        shown = display_lines(shown)
        if start == 0:
            self.view.setWordWrapMode(wrap_mode_for(shown))
            self.view.setPlainText(shown)
        else:
            cursor = QTextCursor(self.view.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText("\n" + shown)  # a new line: the chunk's first line is a piece
        if self.loaded >= len(text):
            self._loader.stop()
            self.note.setText(self._note)
        else:
            self.note.setText(f"{self._note} Loading… {self.loaded * 100 // len(text)} %")

    def load_all(self) -> None:
        """Load the rest at once (tests)."""
        while self.loaded < len(self.text):
            self.load_more()

    def copy_all(self) -> None:
        """The original text (unbroken, invisible characters as they are) to the clipboard."""
        QApplication.clipboard().setText(self.text)


def open_full_text(parent: QWidget | None, title: str, text: str) -> FullTextDialog:
    """Open a non-modal :class:`FullTextDialog` of ``text`` (deleted when closed)."""
    dialog = FullTextDialog(title, text, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog


def _show_all_below(owner: QWidget, view: QWidget, show_all: Callable[[], object]) -> QToolButton:
    """Lay ``view`` out in ``owner`` with a "Show all" button under it (LongText, PlainTextBox)."""
    more = QToolButton(owner)
    more.setObjectName("showAll")
    more.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    more.clicked.connect(show_all)
    layout = QVBoxLayout(owner)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    layout.addWidget(view)
    layout.addWidget(more, 0, Qt.AlignmentFlag.AlignLeft)
    return more
