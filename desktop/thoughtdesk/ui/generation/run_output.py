"""The lower half of the Runs tab: the selected run's failed requests and the text a local model
streams for the current request. Both show untrusted text as plain text only.

The streamed text arrives token by token from a run's worker; :class:`LiveOutput` only collects
it, and the panel's refresh timer draws it (:meth:`LiveOutput.draw`), so a fast model cannot
flood the event loop.
"""

from __future__ import annotations

from collections.abc import Sequence

from thoughtdesk.core.generation.runs import RequestRow
from thoughtdesk.core.visible_text import elide, reveal
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QHeaderView,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.long_text import display_lines
from thoughtdesk.ui.widgets.sizing import ElidedLabel

STREAM_KEEP = 20_000  # characters of streamed text kept on screen
CELL_CHARS = 1_000  # shown characters of a failed request's cell (its error text)
FAILED_COLUMNS = ("Request", "Sample", "Model", "Step", "Tries", "Error (provider: what happened; what to do)")
IDLE_TITLE = "Local model output (current request)"


class FailedRequests(QTableWidget):
    """A run's failed requests: id, sample, model, step, tries and the error in words."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(FAILED_COLUMNS), parent)
        self.setObjectName("failedRequests")
        self.setHorizontalHeaderLabels(FAILED_COLUMNS)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(FAILED_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(True)

    def show_rows(self, rows: Sequence[RequestRow]) -> None:
        """Show ``rows`` (failed requests), replacing what was shown."""
        self.setRowCount(len(rows))
        for row, request in enumerate(rows):
            values = (
                str(request.id),
                "" if request.sample_pk is None else str(request.sample_pk),  # a file's document has none
                request.model,
                request.step,
                str(request.attempts),
                request.error or "",
            )
            for column, value in enumerate(values):
                # Plain text, untrusted: invisible characters shown, a server's long body cut.
                self.setItem(row, column, QTableWidgetItem(elide(value, CELL_CHARS)))
        self.resizeRowsToContents()


class _Stream:
    """One run's streamed text: the current (or, once the run ended, last) request's."""

    __slots__ = ("ended", "label", "pieces")

    def __init__(self) -> None:
        self.label = ""
        self.pieces: list[str] = []
        self.ended = False


class LiveOutput(QWidget):
    """What a local model writes for the current request of the shown run (the selected one): a
    title naming the run and the end of the prompt, and the text so far (its last
    :data:`STREAM_KEEP` characters). Each run streams apart: two runs at once never mix, and a
    run that ended says so instead of passing its last text off as current."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Elided: the title holds the end of the prompt, and a one-line label would widen the window to it.
        self.title = ElidedLabel(IDLE_TITLE, name="streamTitle")
        self.text = QPlainTextEdit(objectName="streamedText")
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(2000)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.text)
        self._streams: dict[int, _Stream] = {}
        #: The run whose stream is shown (None: none chosen yet; the first run to stream is shown).
        self.shown_run: int | None = None
        self._dirty = False

    def start(self, run_id: int, prompt: str) -> None:
        """A new request of run ``run_id`` began streaming (drawn at the next :meth:`draw`)."""
        tail = prompt[-160:].replace("\n", " ⏎ ")
        stream = self._streams.setdefault(run_id, _Stream())
        stream.label = f"Local model output — run {run_id}, current request (prompt ends “…{tail}”)"
        stream.pieces = []
        stream.ended = False
        if self.shown_run is None:
            self.shown_run = run_id
        self._dirty |= run_id == self.shown_run

    def append(self, run_id: int, piece: str) -> None:
        """One more piece of run ``run_id``'s streamed text (drawn at the next :meth:`draw`)."""
        stream = self._streams.get(run_id)
        if stream is None:  # a piece before its request's start: keep it under a plain title
            stream = self._streams[run_id] = _Stream()
            stream.label = f"Local model output — run {run_id}, current request"
        stream.pieces.append(piece)
        self._dirty |= run_id == self.shown_run

    def end(self, run_id: int) -> None:
        """Run ``run_id`` stopped: its text stays, titled as its last request's, not the current one's."""
        stream = self._streams.get(run_id)
        if stream is not None:
            stream.ended = True
            self._dirty |= run_id == self.shown_run

    def show_run(self, run_id: int | None) -> None:
        """Show run ``run_id``'s stream (the selected run's; None or a run without one: idle)."""
        if run_id != self.shown_run:
            self.shown_run = run_id
            self._dirty = True

    def draw(self) -> None:
        """Show what arrived since the last call, if anything."""
        if not self._dirty:
            return
        self._dirty = False
        stream = self._streams.get(self.shown_run) if self.shown_run is not None else None
        if stream is None:
            self.title.setText(IDLE_TITLE)
            self.text.clear()
            return
        label = stream.label
        if stream.ended:
            label = label.replace(", current request", ", ended: its last request", 1)
        self.title.setText(label)
        text = "".join(stream.pieces)[-STREAM_KEEP:]
        self.text.setPlainText(display_lines(reveal(text)))  # model output: controls shown, lines bounded
        self.text.verticalScrollBar().setValue(self.text.verticalScrollBar().maximum())
