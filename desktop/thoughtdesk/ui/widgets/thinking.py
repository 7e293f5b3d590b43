"""A reasoning model's thinking, shown above its answer: collapsed, then read with ease.

:class:`ThinkingSection` is a header button ("▸ Thinking · 98,304 tokens · 401,233 characters")
and, once opened, a bar to move by paragraph and by self-correction ("Wait,", "Alternatively",
"Let me check": :mod:`thoughtdesk.core.trace_marks`) above a scrolling plain-text view in which
each self-correction is marked (bold on amber: a format of the text), so a reviewer sees where
the model changed its mind.

Opening a sample costs nothing of the trace: the header reads only its length and token count.
The view is built when the section is first opened: the shown text (revealed, long lines in
pieces; up to :data:`SHOWN_CHARS`, the rest in a full-text viewer) is made in one pass, its
first :data:`FIRST_CHARS` characters go in at once and the rest in steps of :data:`STEP_CHARS`
from the event loop, so no step holds the GUI thread long. ``QPlainTextEdit`` lays out only the
blocks in view, so scrolling costs what a screen of text costs. The text is data: set as plain
text, marks are character formats, never markup.
"""

from __future__ import annotations

import bisect

from thoughtdesk.core.trace_marks import TRUNCATED_FINISH_REASONS, ShownTrace, shown_trace
from thoughtdesk.ui.qt import (
    QColor,
    QFrame,
    QHBoxLayout,
    QPalette,
    QPlainTextEdit,
    QSizePolicy,
    Qt,
    QTextCharFormat,
    QTextCursor,
    QTextOption,
    QTimer,
    QToolButton,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.long_text import FullTextDialog, more_text, open_full_text
from thoughtdesk.ui.widgets.signals import blocked

#: Characters of a thinking shown in place (about 250,000 tokens); the rest in a full-text viewer.
SHOWN_CHARS = 1_000_000
#: Shown characters put in the view when it opens; the rest follows in steps.
FIRST_CHARS = 60_000
#: Shown characters appended per turn of the event loop.
STEP_CHARS = 60_000
#: Height of the thinking's view, in pixels (it scrolls inside; fits a 1366x768 screen).
VIEW_HEIGHT = 320
#: Characters per token, to estimate a thinking's tokens when none were counted.
CHARS_PER_TOKEN = 4
#: Colours of a self-correction mark (light and dark themes), with a bold weight.
MARK_COLOURS = {"light": ("#ffe08a", "#3b2a00"), "dark": ("#6b5200", "#fff4d6")}


def finish_note(finish_reason: str | None) -> str:
    """What a thinking's header adds for why generation stopped: "truncated" when the token limit
    cut it ("" else)."""
    return "truncated" if finish_reason in TRUNCATED_FINISH_REASONS else ""


def token_text(tokens: int | None, chars: int) -> str:
    """``"98,304 tokens"``, or ``"~100,300 tokens"`` estimated from the characters when not counted."""
    if tokens is not None:
        return f"{tokens:,} token{'s' if tokens != 1 else ''}"
    return f"~{max(1, chars // CHARS_PER_TOKEN):,} tokens"


class TraceView(QPlainTextEdit):
    """Read-only plain text of a shown trace; its self-corrections marked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("thinkingText")
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setFixedHeight(VIEW_HEIGHT)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def theme(self) -> str:
        return "dark" if self.palette().color(QPalette.ColorRole.Base).lightness() < 128 else "light"


class ThinkingSection(QFrame):
    """A collapsible thinking (see the module docstring). ``opened`` when first opened."""

    opened = Signal()

    def __init__(self, parent: QWidget | None = None, *, title: str = "Thinking") -> None:
        super().__init__(parent)
        self.setObjectName("thinkingSection")
        self.title = title
        self.text = ""
        self.tokens: int | None = None
        self.trace: ShownTrace | None = None
        self.loaded = 0  # shown characters in the view
        self.paragraph = -1
        self.correction = -1
        self.dialog: FullTextDialog | None = None
        self._correction_ends: list[int] = []
        self.toggle = QToolButton(self)
        self.toggle.setObjectName("thinkingToggle")
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setAutoRaise(True)
        self.toggle.toggled.connect(self.set_open)
        self.body: QWidget | None = None
        self.view: TraceView | None = None
        self._loader = QTimer(self)
        self._loader.setInterval(0)
        self._loader.timeout.connect(self.load_more)
        layout = self._layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        self.setVisible(False)

    # The trace -----------------------------------------------------------------------------

    def set_trace(self, text: str | None, tokens: int | None = None, *, note: str = "") -> None:
        """Show the thinking ``text`` (None or empty: the section hides) with its ``tokens``
        (None: estimated), collapsed. ``note`` is added to the header ("cut by the token limit")."""
        self._loader.stop()
        self.text = text or ""
        self.tokens = tokens
        self.trace = None
        self.loaded = 0
        self.paragraph = self.correction = -1
        if self.body is not None:
            self.body.hide()
            assert self.view is not None
            self.view.clear()
        header = f"{self.title} · {token_text(tokens, len(self.text))}"
        if note:
            header += f" · {note}"
        self.toggle.setText(header.replace("&", "&&"))  # "&" would be a mnemonic
        tip = f"Show or hide the model's thinking ({len(self.text):,} characters; it is not part of the answer)"
        if note:
            tip += f"; {note}: generation stopped at the token limit"
        self.toggle.setToolTip(tip)
        if self.toggle.isChecked():
            with blocked(self.toggle):
                self.toggle.setChecked(False)
            self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.setVisible(bool(self.text))

    def is_open(self) -> bool:
        return self.toggle.isChecked()

    def set_open(self, open_: bool) -> None:
        """Open (build and fill the view on first use) or collapse the thinking."""
        if self.toggle.isChecked() != open_:
            self.toggle.setChecked(open_)  # comes back here through toggled
            return
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow)
        if not open_:
            if self.body is not None:
                self.body.hide()
            return
        if self.body is None:
            self._build()
        assert self.body is not None
        if self.trace is None:
            self._fill()
        self.body.show()
        self.opened.emit()

    def _build(self) -> None:
        body = self.body = QWidget(self)
        # Short buttons: the thinking sits in a narrow column (a Review panel, the Samples pane).
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.setSpacing(2)
        self.buttons: dict[str, QToolButton] = {}
        for name, text, tip, slot in (
            ("previousParagraph", "◀ ¶", "The previous paragraph", lambda: self.move_paragraph(-1)),
            ("nextParagraph", "¶ ▶", "The next paragraph", lambda: self.move_paragraph(1)),
            (
                "previousCorrection",
                "◀ Change",
                "The previous change of mind (marked: Wait, Alternatively, Let me check…)",
                lambda: self.move_correction(-1),
            ),
            (
                "nextCorrection",
                "Change ▶",
                "The next change of mind (marked: Wait, Alternatively, Let me check…)",
                lambda: self.move_correction(1),
            ),
        ):
            button = QToolButton(body)
            button.setObjectName(name)
            button.setText(text)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            bar.addWidget(button)
            self.buttons[name] = button
        bar.addStretch(1)
        self.position = plain_label("", name="thinkingPosition", keep_height=True)
        self.position.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.show_all = QToolButton(body)
        self.show_all.setObjectName("thinkingShowAll")
        self.show_all.clicked.connect(self.open_full_text)
        self.show_all.hide()
        self.view = TraceView(body)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(bar)
        layout.addWidget(self.position)
        layout.addWidget(self.view)
        layout.addWidget(self.show_all, 0, Qt.AlignmentFlag.AlignLeft)
        self._layout.addWidget(body)

    def _fill(self) -> None:
        assert self.view is not None
        trace = self.trace = shown_trace(self.text, SHOWN_CHARS)
        self._correction_ends = [c.end for c in trace.corrections]
        self.loaded = 0
        self.view.clear()
        hidden = trace.length - trace.consumed
        self.show_all.setText(more_text(hidden))
        self.show_all.setVisible(hidden > 0)
        self.load_more()
        if self.loaded < len(trace.text):
            self._loader.start()
        self._say_position()

    def load_more(self) -> None:
        """Append the next :data:`STEP_CHARS` shown characters (the first call :data:`FIRST_CHARS`),
        the self-corrections in them in the mark's format."""
        trace, view = self.trace, self.view
        if trace is None or view is None:
            self._loader.stop()
            return
        text = trace.text
        start = self.loaded
        end = min(len(text), start + (FIRST_CHARS if start == 0 else STEP_CHARS))
        if end < len(text):
            newline = text.rfind("\n", start + 1, end)
            end = newline if newline > start else end  # a step ends at a line end where it can
        # Marks are formats of the inserted text, put in with it in one edit block: marking after
        # (extra selections, or formats merged later) laid out every block up to each mark
        # (80 ms for 400 kB).
        cursor = QTextCursor(view.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        plain, mark = QTextCharFormat(), self._mark_format()
        at = start
        first = bisect.bisect_right(self._correction_ends, start)
        for correction in trace.corrections[first:]:
            if correction.start >= end:
                break
            left, right = max(start, correction.start), min(end, correction.end)
            if left > at:
                cursor.insertText(text[at:left], plain)
            cursor.insertText(text[left:right], mark)
            at = right
        if end > at:
            cursor.insertText(text[at:end], plain)
        cursor.endEditBlock()
        if start == 0:  # the view's own cursor moved with the text inserted where it stood
            view.moveCursor(QTextCursor.MoveOperation.Start)
        self.loaded = end
        if end >= len(text):
            self._loader.stop()

    def load_all(self) -> None:
        """Put the rest of the shown text in at once (before moving past it; tests)."""
        while self.trace is not None and self.loaded < len(self.trace.text):
            self.load_more()

    def _mark_format(self) -> QTextCharFormat:
        assert self.view is not None
        background, foreground = MARK_COLOURS[self.view.theme()]
        char_format = QTextCharFormat()
        char_format.setBackground(QColor(background))
        char_format.setForeground(QColor(foreground))
        char_format.setFontWeight(700)
        char_format.setToolTip("A self-correction: the model changes its mind or checks itself here")
        return char_format

    def marks(self) -> list[str]:
        """The marked texts in the view, in order (tests)."""
        assert self.view is not None
        found: list[str] = []
        block = self.view.document().begin()
        while block.isValid():
            iterator = block.begin()
            while not iterator.atEnd():
                fragment = iterator.fragment()
                if fragment.charFormat().fontWeight() == 700:
                    found.append(fragment.text())
                iterator += 1
            block = block.next()
        return found

    # Navigation ----------------------------------------------------------------------------

    def move_paragraph(self, step: int) -> None:
        """Go to the next (``step`` 1) or previous (-1) paragraph."""
        if self.trace is None or not self.trace.paragraphs:
            return
        self.paragraph = self._step(self.paragraph, step, len(self.trace.paragraphs), self.trace.paragraphs)
        self._go_to(self.trace.paragraphs[self.paragraph], 0)

    def move_correction(self, step: int) -> None:
        """Go to the next (``step`` 1) or previous (-1) self-correction, selecting its phrase."""
        if self.trace is None or not self.trace.corrections:
            return
        starts = [c.start for c in self.trace.corrections]
        self.correction = self._step(self.correction, step, len(starts), starts)
        found = self.trace.corrections[self.correction]
        self._go_to(found.start, found.end - found.start)

    def _step(self, index: int, step: int, count: int, starts: list[int]) -> int:
        """The next or previous of ``starts`` from where the reader is (the cursor or the start of
        the selection); stays at the first or last one at the ends."""
        assert self.view is not None
        here = self.view.textCursor().selectionStart()
        if step > 0:  # the first move may land on one right where the reader is (at 0)
            after = (bisect.bisect_left if index < 0 else bisect.bisect_right)(starts, here)
            return after if after < count else count - 1
        before = bisect.bisect_left(starts, here) - 1
        return before if before >= 0 else 0

    def _go_to(self, position: int, length: int) -> None:
        assert self.view is not None
        if position + length > self.loaded:
            self.load_all()
        cursor = QTextCursor(self.view.document())
        cursor.setPosition(position)
        if length:
            cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
        self.view.setTextCursor(cursor)
        self.view.centerCursor()
        self._say_position()

    def _say_position(self) -> None:
        trace = self.trace
        if trace is None:
            return
        paragraphs, corrections = len(trace.paragraphs), len(trace.corrections)
        parts = [
            f"paragraph {self.paragraph + 1} of {paragraphs:,}" if self.paragraph >= 0 else f"{paragraphs:,} paragraphs"
        ]
        if self.correction >= 0:
            parts.append(
                f"change of mind {self.correction + 1} of {corrections:,}: {trace.corrections[self.correction].phrase}"
            )
        else:
            parts.append(f"{corrections:,} changes of mind marked")
        self.position.setText(" · ".join(parts))
        for name, enabled in (
            ("previousParagraph", paragraphs > 1),
            ("nextParagraph", paragraphs > 1),
            ("previousCorrection", corrections > 0),
            ("nextCorrection", corrections > 0),
        ):
            self.buttons[name].setEnabled(enabled)

    def open_full_text(self) -> None:
        """The whole thinking in a :class:`FullTextDialog` (loaded in steps)."""
        self.dialog = open_full_text(self, self.title, self.text)

    def shown_text(self) -> str:
        """The text in the view (empty until opened)."""
        return "" if self.view is None else self.view.toPlainText()
