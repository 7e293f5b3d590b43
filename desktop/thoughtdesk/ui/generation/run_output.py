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
                str(request.sample_pk),
                request.model,
                request.step,
                str(request.attempts),
                request.error or "",
            )
            for column, value in enumerate(values):
                # Plain text, untrusted: invisible characters shown, a server's long body cut.
                self.setItem(row, column, QTableWidgetItem(elide(value, CELL_CHARS)))
        self.resizeRowsToContents()


class LiveOutput(QWidget):
    """What a local model writes for the current request: a title naming the run and the end of
    the prompt, and the text so far (its last :data:`STREAM_KEEP` characters)."""

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
        self._label = ""
        self._pieces: list[str] = []
        self._dirty = False

    def start(self, run_id: int, prompt: str) -> None:
        """A new request of run ``run_id`` began streaming (drawn at the next :meth:`draw`)."""
        tail = prompt[-160:].replace("\n", " ⏎ ")
        self._label = f"Local model output — run {run_id}, current request (prompt ends “…{tail}”)"
        self._pieces = []
        self._dirty = True

    def append(self, piece: str) -> None:
        """One more piece of the streamed text (drawn at the next :meth:`draw`)."""
        self._pieces.append(piece)
        self._dirty = True

    def draw(self) -> None:
        """Show what arrived since the last call, if anything."""
        if not self._dirty:
            return
        self._dirty = False
        self.title.setText(self._label or IDLE_TITLE)
        text = "".join(self._pieces)[-STREAM_KEEP:]
        self.text.setPlainText(display_lines(reveal(text)))  # model output: controls shown, lines bounded
        self.text.verticalScrollBar().setValue(self.text.verticalScrollBar().maximum())
