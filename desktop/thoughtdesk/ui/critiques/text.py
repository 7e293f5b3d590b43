"""Plain text in a read-only document as tall as its content, with formats instead of markup.

Critique fields and CoT texts come from models and files: they are inserted with
``QTextCursor.insertText`` (never parsed as HTML), headings and the flaw-quote highlight are
character formats. Long text wraps anywhere (an unbroken 10,000-character token does not widen
the window) and is capped: the first :data:`CAP_CHARS` shown characters of a field, with a
"show all" on demand (in place up to a limit, beyond it in a viewer), so a huge critique cannot
stall the GUI thread laying it out. Invisible characters show as ``<U+202E>`` in their own style.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from thoughtdesk.core.visible_text import STYLED_ESCAPES, elide, more_marker, shown_runs
from thoughtdesk.ui.qt import (
    QColor,
    QFrame,
    QPalette,
    QSizePolicy,
    Qt,
    QTextCharFormat,
    QTextCursor,
    QTextEdit,
    QTextOption,
    QWidget,
)
from thoughtdesk.ui.widgets.long_text import INLINE_ALL_CHARS, invisible_format, wrap_mode_for

#: Characters of one field shown before "show all".
CAP_CHARS = 1200
#: Shown characters of a part's heading, at most.
HEADING_CHARS = 200
#: Flaw-quote highlight per theme: (text colour, wave underline colour). Distinct from the
#: similarity backgrounds (pastel backgrounds behind black text) and the span-label marks
#: (a background and a straight underline): a red wave underline, as for an error.
FLAW_COLOURS: dict[str, tuple[str, str]] = {"light": ("#8f0000", "#d00000"), "dark": ("#ffb0b0", "#ff5c5c")}
FLAW_TOOLTIP = "Quoted by a critique's main flaw"


def theme_of(widget: QWidget) -> str:
    """``"dark"`` when the widget's text background is dark, else ``"light"``."""
    return "dark" if widget.palette().color(QPalette.ColorRole.Base).lightness() < 128 else "light"


def flaw_format(theme: str = "light", tooltip: str = FLAW_TOOLTIP) -> QTextCharFormat:
    """The character format of CoT text a main flaw quotes (merged over other formats)."""
    text, line = FLAW_COLOURS.get(theme, FLAW_COLOURS["light"])
    char_format = QTextCharFormat()
    char_format.setForeground(QColor(text))
    char_format.setFontUnderline(True)
    char_format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
    char_format.setUnderlineColor(QColor(line))
    if tooltip:
        char_format.setToolTip(plain_tooltip(tooltip))
    return char_format


def plain_tooltip(text: str) -> str:
    """``text`` for a tooltip, shown literally: Qt guesses whether a tooltip is rich text (a
    critique model called ``<img src=x>`` would be), so it is escaped inside a paragraph."""
    return f"<p>{html.escape(text, quote=False)}</p>"


@dataclass(frozen=True, slots=True)
class Part:
    """One piece of a :class:`FittedText`: an optional bold ``heading`` then plain ``text``;
    ``marks`` are ``[start, end)`` offsets into ``text`` shown with the flaw format."""

    heading: str
    text: str
    marks: tuple[tuple[int, int], ...] = ()


class FittedText(QTextEdit):
    """Read-only plain text built from :class:`Part`\\ s, as tall as its document."""

    def __init__(self, parent: QWidget | None = None, name: str = "") -> None:
        super().__init__(parent)
        if name:
            self.setObjectName(name)
        self.setReadOnly(True)
        self.setAcceptRichText(False)  # pasting/dropping never brings markup in
        self.setUndoRedoEnabled(False)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # Tab does not stop in every card
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._fitted_width = -1
        self.parts: tuple[Part, ...] = ()

    def set_parts(self, parts: Sequence[Part], limit: int | None = CAP_CHARS) -> bool:
        """Show ``parts``, of each text as much as fits ``limit`` shown characters (None: up to
        :data:`~thoughtdesk.ui.widgets.long_text.INLINE_ALL_CHARS`, the most shown in place),
        invisible characters as escapes in their own style; True when something was cut.
        Built in one edit block (one layout pass however many pieces)."""
        self.parts = tuple(parts)
        budget = INLINE_ALL_CHARS if limit is None else limit
        plain = QTextCharFormat()
        bold = QTextCharFormat()
        bold.setFontWeight(700)
        flaw = flaw_format(theme_of(self))
        escape = invisible_format()
        runs: list[tuple[str, QTextCharFormat] | None] = []  # None: a new block
        escapes = STYLED_ESCAPES  # left to draw in their own style, for all parts
        cut_any = False
        for index, part in enumerate(self.parts):
            if index:
                runs.append(None)
            if part.heading:
                runs.append((elide(part.heading, HEADING_CHARS) + " ", bold))
            text, room, position = part.text, budget, 0
            segments = []
            for start, end in sorted(part.marks):
                start, end = max(start, position), min(end, len(text))
                if start < end:
                    segments += [(position, start, plain), (start, end, flaw)]
                    position = end
            segments.append((position, len(text), plain))
            shown = 0
            for start, end, char_format in segments:
                if start >= end:
                    continue
                pieces, used = shown_runs(text[start : min(end, start + room)], room, escapes)
                for piece, is_escape in pieces:
                    runs.append((piece, escape if is_escape else char_format))
                    room -= len(piece)
                    escapes -= is_escape
                shown = start + used
                if used < end - start:
                    break
            if shown < len(text):
                cut_any = True
                runs.append((more_marker(len(text) - shown), bold))
        self.setWordWrapMode(wrap_mode_for("".join(run[0] for run in runs if run is not None)))
        document = self.document()
        document.clear()
        cursor = QTextCursor(document)
        cursor.beginEditBlock()  # one layout pass for every piece
        for run in runs:
            if run is None:
                cursor.insertBlock()
            else:
                cursor.insertText(*run)
        cursor.endEditBlock()
        self._fit()
        return cut_any

    def resizeEvent(self, event) -> None:  # Qt override
        super().resizeEvent(event)
        if self.viewport().width() != self._fitted_width:  # height changes only follow width
            self._fit()

    def _fit(self) -> None:
        self._fitted_width = self.viewport().width()
        document = self.document()
        document.setTextWidth(max(50, self._fitted_width))
        height = int(document.size().height()) + 2 * self.frameWidth() + 4
        if height != self.height():
            self.setFixedHeight(height)
