"""One CoT of the compare view: a plain-text header, statistics, a review note and the text.

Panels are created once and reused from sample to sample (:meth:`CotPanel.show_cot`), because
building ~five widgets per CoT for 60 CoTs costs more than the whole similarity computation.
The text document is filled lazily by the compare view (only panels in view are painted at
once); until then the panel has an estimated height so the scroll area has the right size.

A CoT longer than :data:`REVIEW_CHARS` characters is shown cut there (the caller cuts it, so the
similarity, the word diff and the position map only ever see bounded text); the statistics line
gives the full length and a "Show all" button opens the whole text in a
:class:`~thoughtdesk.ui.widgets.long_text.FullTextDialog`. Span offsets into the cut text are
offsets into the full text, so annotating the part shown needs no translation.

Span marks (span annotations) are drawn on top of the escaped HTML with ``QTextCharFormat``
through a ``QTextCursor``: a format is not markup, so nothing from the data is ever parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from thoughtdesk.core.trace_marks import TRUNCATED_FINISH_REASONS
from thoughtdesk.core.visible_text import STYLED_ESCAPES, elide, shown_runs
from thoughtdesk.ui.critiques.text import flaw_format, theme_of
from thoughtdesk.ui.qt import (
    QColor,
    QFrame,
    QPalette,
    QSizePolicy,
    Qt,
    QTextCharFormat,
    QTextCursor,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label, set_plain_text
from thoughtdesk.ui.widgets.long_text import FullTextDialog, more_text, open_full_text, wrap_mode_for
from thoughtdesk.ui.widgets.text_positions import PositionMap
from thoughtdesk.ui.widgets.thinking import ThinkingSection, finish_note

#: Characters of a CoT the compare view shows (and highlights); the rest is behind "Show all".
REVIEW_CHARS = 20_000
#: Shown characters of the extracted answer in a panel's statistics line.
ANSWER_CHARS = 200


def capped_steps(steps: list[str], limit: int = REVIEW_CHARS) -> list[str]:
    """Reference steps up to ``limit`` shown characters in all (joined by line breaks; an
    invisible character's escape counts its 8, and at most ``STYLED_ESCAPES`` of them), the
    last one cut; ``steps`` itself when they fit. Only the steps kept are looked at."""
    kept: list[str] = []
    room, escapes = limit, STYLED_ESCAPES
    for step in steps:
        runs, used = shown_runs(step, room, escapes)
        escapes -= sum(is_escape for _, is_escape in runs)
        if used:
            kept.append(step[:used])
        room -= sum(len(piece) for piece, _ in runs) + 1
        if used < len(step) or room <= 0 or escapes <= 0:
            break
    return steps if kept == steps else kept


@dataclass(frozen=True, slots=True)
class CotView:
    """What the compare view shows of one CoT (plain data; the reference has ``model=""``).

    ``text`` is the CoT text, or the reference's list of steps. ``correct`` is ``None`` when
    unknown (no extracted answer, or the reference). ``key`` is the caller's handle (e.g. the
    CoT's primary key); the compare view does not interpret it.
    """

    id: str
    text: str | Sequence[str]
    model: str = ""
    prompt_keys: tuple[str, ...] = ()
    answer: str = ""
    correct: bool | None = None
    is_reference: bool = False
    title: str = field(default="")
    key: object = None
    #: A plain-text summary of the CoT's critiques for the statistics line ("" for none).
    critiques: str = ""
    #: The whole text when ``text`` is a cut of it ("" when ``text`` is all of it).
    full_text: str = ""
    #: Written by a rationale-guided run (it has a trajectory: Ctrl+Shift+T).
    guided: bool = False
    #: A reasoning model's thinking ("" for none), its tokens (None: not counted) and why
    #: generation stopped; shown as a collapsed section above the text.
    reasoning: str = ""
    reasoning_tokens: int | None = None
    finish_reason: str | None = None
    #: ``text`` is the thinking, not the visible text ("Compare thinking"): similarity and word
    #: diff are computed on it, and span marks (offsets into the visible text) are not drawn.
    shows_thinking: bool = False
    #: How many steps the trace shown has in the step list the step labels use
    #: (core/steps/split.py); None: the view counts the sentences of ``text``.
    steps: int | None = None

    def label(self) -> str:
        """A short plain-text name: the title, else the model and prompt keys (and "guided")."""
        if self.title:
            return self.title
        if self.is_reference:
            return "Reference"
        parts = (self.model or "unknown model", " + ".join(self.prompt_keys), "guided" if self.guided else "")
        return " · ".join(p for p in parts if p)


@dataclass(frozen=True, slots=True)
class SpanMark:
    """A highlighted range of a CoT's text: Python offsets ``[start, end)``, ``#rrggbb`` colours.

    ``flaw``: text a critique's main flaw quotes, drawn with the flaw format of
    :mod:`thoughtdesk.ui.critiques.text` (a red wave underline over the similarity colour)
    instead of a span label's background.
    """

    start: int
    end: int
    background: str
    foreground: str
    tooltip: str = ""
    flaw: bool = False


def numbered_label(index: int, cot: CotView) -> str:
    """``"3. gpt-4 · kojima-01"``; a titled CoT ("CoT 2" in blind mode) and the reference keep their name."""
    return cot.label() if cot.title or cot.is_reference else f"{index + 1}. {cot.label()}"


class FittedTextView(QTextEdit):
    """Read-only rich text from escaped HTML, as tall as its document (the outer area scrolls)."""

    #: The view got the keyboard focus or a mouse press (the review view makes its CoT current).
    activated = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setAcceptRichText(False)  # pasting/dropping never brings markup in
        self.setUndoRedoEnabled(False)  # a read-only view needs no undo history (saves time and memory)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._fitted_width = -1
        self._estimate_chars = 0  # > 0 while the document is empty and the height is an estimate

    def set_safe_html(self, html: str) -> None:
        """Show HTML built by :mod:`thoughtdesk.ui.review.compare.safe_text` (escaped data only)."""
        self._estimate_chars = 0
        self.setHtml(html)
        self._fit()

    def set_wrap_for(self, text: str) -> None:
        """Wrap anywhere when ``text`` has a very long word (see ``long_text.wrap_mode_for``)."""
        mode = wrap_mode_for(text)
        if self.wordWrapMode() != mode:
            self.setWordWrapMode(mode)

    def estimate(self, text: str) -> None:
        """Empty the document and take the height ``text`` will roughly need (no layout work)."""
        self._estimate_chars = max(1, len(text)) + 40 * text.count("\n")
        if not self.document().isEmpty():
            self.document().clear()
        self._fit()

    def resizeEvent(self, event) -> None:  # Qt override
        super().resizeEvent(event)
        if self.viewport().width() != self._fitted_width:  # height changes only follow width
            self._fit()

    def focusInEvent(self, event) -> None:  # Qt override
        super().focusInEvent(event)
        self.activated.emit()

    def mousePressEvent(self, event) -> None:  # Qt override
        self.activated.emit()
        super().mousePressEvent(event)

    def _fit(self) -> None:
        # Laying out a document is the expensive part of painting a CoT: do it once per change.
        self._fitted_width = self.viewport().width()
        width = max(50, self._fitted_width)
        if self._estimate_chars:
            metrics = self.fontMetrics()
            lines = 1 + self._estimate_chars * metrics.averageCharWidth() // width
            content = lines * metrics.lineSpacing() + 8
        else:
            document = self.document()
            if document.textWidth() != width:  # QTextEdit's own resize handling usually set it already
                document.setTextWidth(width)
            content = int(document.size().height())
        height = content + 2 * self.frameWidth() + 4
        if height != self.height():
            self.setFixedHeight(height)


class CotPanel(QFrame):
    """One CoT: a plain-text header, its statistics, a review note and the highlighted text."""

    def __init__(self, index: int, cot: CotView | None = None, steps: int = 0, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.index = index
        self.cot = cot or CotView(id="", text="")
        self.positions = PositionMap.of("")
        self.marks: tuple[SpanMark, ...] = ()
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setProperty("current", False)
        layout = QVBoxLayout(self)
        self.title = plain_label("", bold=True, name="cotTitle", selectable=True, keep_height=True)
        self.stats = plain_label("", name="cotStats", selectable=True, keep_height=True)
        self.note = plain_label(
            "", name="cotNote", selectable=True, keep_height=True
        )  # the review's summary; hidden when empty
        self.note.setVisible(False)
        self._note_text = ""
        self.text_view = FittedTextView(self)
        self.show_all = QToolButton(self)
        self.show_all.setObjectName("showAll")
        self.show_all.clicked.connect(self.open_full_text)
        self.show_all.setVisible(False)
        self.full_text_dialog: FullTextDialog | None = None
        # A reasoning model's thinking, collapsed above the answer (hidden without one).
        self.thinking = ThinkingSection(self)
        for widget in (self.title, self.stats, self.note, self.thinking, self.text_view):
            layout.addWidget(widget)
        layout.addWidget(self.show_all, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addStretch(1)
        if cot is not None:
            self.show_cot(index, cot, steps)

    def show_cot(self, index: int, cot: CotView, steps: int, note: str = "") -> None:
        """Show another CoT in this panel (header, statistics and ``note``; the text is painted
        later). Passing the note here, not after, spares a hide-and-show of the note label per
        panel (laying out 60 panels again)."""
        self.index = index
        self.cot = cot
        self.setObjectName("referencePanel" if cot.is_reference else "cotPanel")
        text = cot.text if isinstance(cot.text, str) else "\n".join(cot.text)
        verdict = {True: "correct", False: "incorrect", None: "not scored"}[cot.correct]
        full = cot.full_text or text
        hidden = len(full) - len(text)
        stats = (
            f"{len(full):,} chars · {steps} steps"
            if hidden
            else f"{len(text)} chars · {len(text.split())} words · {steps} steps"
        )
        if hidden:
            stats += f" (showing the first {len(text):,} characters)"
        if cot.shows_thinking:
            stats = "thinking: " + stats if cot.reasoning else "no thinking stored"
        if not cot.is_reference:  # a 1 MB extracted answer made this label cost 1.8 s a show
            stats += f" · answer: {elide(cot.answer, ANSWER_CHARS).strip() or '(none)'} · {verdict}"
            if cot.finish_reason in TRUNCATED_FINISH_REASONS:  # evaluate counts it as truncated
                stats += " · truncated"
        if cot.critiques:
            stats += f" · {cot.critiques}"
        self.thinking.set_trace(
            None if cot.shows_thinking else cot.reasoning, cot.reasoning_tokens, note=finish_note(cot.finish_reason)
        )
        set_plain_text(self.title, numbered_label(index, cot))
        set_plain_text(self.stats, stats)
        self.show_all.setText(more_text(hidden))
        if self.show_all.isHidden() == (hidden > 0):
            self.show_all.setVisible(hidden > 0)
        self.marks = ()
        self.set_note(note)

    def open_full_text(self) -> None:
        """The whole CoT in a :class:`FullTextDialog` (lines in pieces, so it opens at once)."""
        cot = self.cot
        text = cot.full_text or (cot.text if isinstance(cot.text, str) else "\n".join(cot.text))
        self.full_text_dialog = open_full_text(self, numbered_label(self.index, cot), text)

    def set_note(self, text: str) -> None:
        """A one-line plain-text summary under the statistics (labels, score...); "" hides it."""
        if text != self._note_text:
            self._note_text = text
            set_plain_text(self.note, text)
        self.note.setVisible(bool(text))

    def set_current(self, current: bool) -> None:
        """Mark this panel as the one the keyboard acts on: a thick frame in the highlight colour.

        Done with frame settings and palette roles, not a style sheet: a widget with its own
        style sheet stops following palette changes (a switch to a dark theme).
        """
        if bool(self.property("current")) == current:
            return
        self.setProperty("current", current)
        if current:
            self.setFrameStyle(QFrame.Shape.Box | QFrame.Shadow.Plain)
            self.setLineWidth(3)
            self.setForegroundRole(QPalette.ColorRole.Highlight)  # a Plain frame is drawn in this role
        else:
            self.setFrameStyle(QFrame.Shape.StyledPanel | QFrame.Shadow.Plain)
            self.setLineWidth(1)
            self.setForegroundRole(QPalette.ColorRole.WindowText)

    def paint(self, html: str, text: str, marks: Sequence[SpanMark] | None = None) -> None:
        """Show ``html`` (escaped, from safe_text) for ``text`` and draw the span marks on it."""
        if self.positions.text != text:
            self.positions = PositionMap.of(text)
        if marks is not None:
            self.marks = tuple(marks)
        self.text_view.set_wrap_for(text)
        self.text_view.set_safe_html(html)
        self._draw_marks()

    def _draw_marks(self) -> None:
        if not self.marks:
            return
        cursor = QTextCursor(self.text_view.document())
        cursor.beginEditBlock()  # one layout pass for all marks
        theme = theme_of(self.text_view)
        for mark in self.marks:
            cursor.setPosition(self.positions.to_document(mark.start))
            cursor.setPosition(self.positions.to_document(mark.end), QTextCursor.MoveMode.KeepAnchor)
            if mark.flaw:
                cursor.mergeCharFormat(flaw_format(theme, mark.tooltip))
                continue
            char_format = QTextCharFormat()
            char_format.setBackground(QColor(mark.background))
            char_format.setForeground(QColor(mark.foreground))
            char_format.setFontUnderline(True)
            char_format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
            char_format.setUnderlineColor(QColor(mark.foreground))
            if mark.tooltip:
                char_format.setToolTip(mark.tooltip)
            cursor.mergeCharFormat(char_format)
        cursor.endEditBlock()

    def selected_range(self) -> tuple[int, int] | None:
        """The selected text as Python offsets ``(start, end)`` into the CoT text, or ``None``."""
        cursor = self.text_view.textCursor()
        if not cursor.hasSelection() or self.cot.shows_thinking:  # spans are offsets into the visible text
            return None
        start, end = self.positions.to_range(cursor.selectionStart(), cursor.selectionEnd())
        return (start, end) if end > start else None

    def select_range(self, start: int, end: int) -> None:
        """Select Python offsets ``[start, end)`` of the CoT text (for keyboard use and tests)."""
        cursor = self.text_view.textCursor()
        cursor.setPosition(self.positions.to_document(start))
        cursor.setPosition(self.positions.to_document(end), QTextCursor.MoveMode.KeepAnchor)
        self.text_view.setTextCursor(cursor)
