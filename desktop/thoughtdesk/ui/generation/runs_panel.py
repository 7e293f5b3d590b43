"""The Runs tab: every run with its progress, pause/resume/cancel, failed requests, live output.

Reads from the library (the run list, a run's failed requests) happen in workers; the live
figures of active runs come from their :class:`~thoughtdesk.ui.generation.run_worker.RunWorker` signals.
The view refreshes on a short timer, not on every signal, so a fast run cannot flood the event
loop; other views learn about new CoTs through ``on_data_changed`` at most every 2 seconds.
Runs sent through a provider's batch API are polled by :class:`~.run_batches.BatchPolling`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import PriceTable
from thoughtdesk.core.generation.runs import (
    RequestRow,
    RunInfo,
    RunLimits,
    RunProgress,
    check_models_ready,
    delete_run,
    list_runs,
    rename_run,
    run_requests,
    stopped_for_good,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings.logs import redact
from thoughtdesk.ui.base.tasks import Task
from thoughtdesk.ui.generation.run_batches import BatchPolling
from thoughtdesk.ui.generation.run_output import FailedRequests, LiveOutput
from thoughtdesk.ui.generation.run_table import RUN_COLUMNS, ProgressDelegate, RunTableModel
from thoughtdesk.ui.generation.run_worker import RunWorker
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    Qt,
    QTableView,
    QTimer,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label

REFRESH_MS = 150  # how often live figures and streamed text are drawn
DATA_CHANGED_MS = 2000  # how often other (visible) views are told about new CoTs during a run


T = TypeVar("T")


class RunsPanel(QWidget, BatchPolling):
    """Lists runs and drives their workers. ``run_ended(run_id)`` when a worker finishes."""

    run_ended = Signal(int)
    runs_loaded = Signal()

    def __init__(
        self,
        library_path: Path | None = None,
        *,
        prices: Callable[[], PriceTable] | None = None,
        on_data_changed: Callable[[], None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("runsPanel")
        self.library_path = library_path
        #: Why the library cannot be written (it opened read-only), or None: the buttons that
        #: write are disabled with it as their tooltip.
        self.read_only_reason: str | None = None
        self.prices = prices
        self.on_data_changed = on_data_changed
        self.workers: dict[int, RunWorker] = {}
        self.errors: dict[int, str] = {}  # run id -> the message of the error that stopped it
        self._tasks: set[Task[object]] = set()
        # Reloads in flight: only the newest one's list is shown (an older one finishing later
        # would show a list from before); the follow-ups of the ones it replaced run after it.
        self._reload_seq = 0
        self._after_reload: list[Callable[[], object]] = []
        self._dirty = False
        self._data_dirty = False
        self._failed_for: tuple[int, int] | None = None  # (run id, failed count) shown
        self._build()
        self._timer = QTimer(self, interval=REFRESH_MS)
        self._timer.timeout.connect(self._refresh_live)
        self._timer.start()
        self._start_batch_polling()
        self._data_timer = QTimer(self, interval=DATA_CHANGED_MS)
        self._data_timer.timeout.connect(self._flush_data_changed)
        self._data_timer.start()
        if library_path is not None:
            self.reload()

    def _build(self) -> None:
        self.model = RunTableModel(self)
        self.model.unpriced_of = self._unpriced_models
        self.table = QTableView(objectName="runsTable")
        self.table.setModel(self.model)
        self.table.setItemDelegateForColumn(RunTableModel.PROGRESS_COLUMN, ProgressDelegate(self.table))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(RunTableModel.PROGRESS_COLUMN, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(len(RUN_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.table.setColumnWidth(RunTableModel.PROGRESS_COLUMN, 170)
        self.table.verticalHeader().setDefaultSectionSize(26)
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._selection_changed())

        buttons = QHBoxLayout()
        self.start_button = self._button(
            buttons,
            "&Start / Resume",
            "resumeRun",
            self.resume_selected,
            "Send the requests of the selected run that have no result yet",
        )
        self.pause_button = self._button(
            buttons,
            "&Pause",
            "pauseRun",
            self.pause_selected,
            "Stop sending new requests; those in flight finish and are stored",
        )
        self.cancel_button = self._button(
            buttons, "&Cancel", "cancelRun", self.cancel_selected, "Stop the run; it can be resumed later"
        )
        self.rename_button = self._button(
            buttons, "Re&name…", "renameRun", lambda: self.rename_selected(), "Give the selected run another name"
        )
        self.delete_button = self._button(
            buttons,
            "&Delete…",
            "deleteRun",
            lambda: self.delete_selected(),
            "Delete the selected run and its request rows; the CoTs and answers it produced stay",
        )
        self._button(buttons, "Refresh", "refreshRuns", self.reload, "Read the runs from the library again")
        buttons.addStretch(1)
        self.message = plain_label(name="runMessage", selectable=True)

        self.failed = FailedRequests()
        self.output = LiveOutput()

        failed_box = QWidget()
        failed_layout = QVBoxLayout(failed_box)
        failed_layout.setContentsMargins(0, 0, 0, 0)
        failed_layout.addWidget(QLabel("Failed requests of the selected run"))
        failed_layout.addWidget(self.failed)
        bottom = QSplitter()
        bottom.addWidget(failed_box)
        bottom.addWidget(self.output)
        bottom.setSizes([700, 500])
        vertical = QSplitter(Qt.Orientation.Vertical)
        vertical.addWidget(self.table)
        vertical.addWidget(bottom)
        vertical.setSizes([360, 300])
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        self.empty_hint = plain_label(
            "No runs in this library yet. Generate > Plan a run… (Ctrl+G) chooses "
            "samples, prompt fragments and models; the run then shows here with "
            "its progress, and failed requests below.",
            name="runsEmptyHint",
        )
        self.empty_hint.setStyleSheet("color: palette(mid); padding: 6px 0;")
        layout.addWidget(self.empty_hint)
        layout.addWidget(vertical, 1)
        self._update_buttons()

    def _button(self, layout: QHBoxLayout, text: str, name: str, slot: Callable[[], object], tip: str) -> QPushButton:
        button = QPushButton(text, objectName=name)
        button.setToolTip(tip)
        button.setProperty("plainTip", tip)
        button.clicked.connect(slot)
        layout.addWidget(button)
        return button

    def _unpriced_models(self, runs: list[RunInfo]) -> dict[int, list[str]]:
        """Per run, its models the price table has no price for (their cost is unknown)."""
        if self.prices is None or not runs:
            return {}
        table = self.prices()  # read once per run-list reload
        return {run.id: table.unpriced(run.model_specs) for run in runs}

    # Library --------------------------------------------------------------------------------

    def set_library(self, path: Path, read_only_reason: str | None = None) -> None:
        """Show the runs of another library (active runs of the old one go on in the background);
        ``read_only_reason``: it cannot be written, so starting, renaming and deleting are disabled."""
        self.read_only_reason = read_only_reason
        self._update_buttons()
        if path != self.library_path:
            self.library_path = path
            self._after_reload.clear()  # follow-ups of the other library's reloads
            self.model.set_runs([])
            self.reload()

    def _background(self, work: Callable[[], T], done: Callable[[T], None]) -> Task[T]:
        return (
            Task(lambda _ctx: work())
            .on_success(done)
            .on_failure(lambda error: self.message.setText(f"Could not read the runs: {error}"))
            .owned_by(self, self._tasks)
            .start()
        )

    def reload(self, then: Callable[[], object] | None = None) -> Task[list[RunInfo]] | None:
        """Read the run list again (in a worker); ``runs_loaded`` when it is shown, then ``then()``.

        (A follow-up is passed in rather than connected to the returned task: a fast task could
        finish before a connection made after it started.)
        """
        path = self.library_path
        if path is None:
            return None
        self._reload_seq += 1
        seq = self._reload_seq
        if then is not None:
            self._after_reload.append(then)

        def work() -> list[RunInfo]:
            with Library.open(path, create=False) as lib:
                return list_runs(lib)

        def done(runs: list[RunInfo]) -> None:
            if path == self.library_path and seq == self._reload_seq:  # else a newer reload shows a newer list
                # Stored figures are current for runs no worker is executing.
                active = {r for r, w in self.workers.items() if w.isRunning()}
                self.model.live = {r: p for r, p in self.model.live.items() if r in active}
                self.model.set_runs(runs)
                self.empty_hint.setVisible(not self.model.rowCount())
                if not self.table.currentIndex().isValid() and self.model.rowCount():
                    self.table.selectRow(0)
                self._selection_changed()
                waiting = any(r.status == "batched" for r in runs)
                if waiting and not self.batch_timer.isActive():
                    self.batch_timer.start()
                    self.poll_batches()
                elif not waiting:
                    self.batch_timer.stop()
                self.runs_loaded.emit()
                follow_ups, self._after_reload = self._after_reload, []
                for follow_up in follow_ups:
                    follow_up()

        return self._background(work, done)

    # Selection and buttons ------------------------------------------------------------------

    def selected_run(self) -> int | None:
        index = self.table.currentIndex()
        return self.model.run_id_at(index.row()) if index.isValid() else None

    def select_run(self, run_id: int) -> bool:
        row = self.model.row_of(run_id)
        if row is None:
            return False
        self.table.selectRow(row)
        return True

    def _selection_changed(self) -> None:
        self._update_buttons()
        run_id = self.selected_run()
        self.output.show_run(run_id)  # the selected run's stream only: two runs never mix
        self._show_message(run_id)
        self._load_failed(force=True)

    def _show_message(self, run_id: int | None) -> None:
        text = ""
        if run_id is not None:
            text = self.errors.get(run_id) or self.model.last_error(run_id) or ""
            if text and "resume" not in text.lower() and self.model.status(run_id) == "failed":
                text += f" — run {run_id} is kept: fix this, then Start / Resume sends the missing requests."
        self.message.setText(text)
        self.message.setStyleSheet("color: #b3261e;" if text else "")

    def _update_buttons(self) -> None:
        run_id = self.selected_run()
        worker = self.workers.get(run_id) if run_id is not None else None
        status = self.model.status(run_id) if run_id is not None else None
        running = worker is not None and worker.isRunning()
        paused = worker is not None and worker.control.paused
        self.start_button.setEnabled(run_id is not None and (not running or paused) and status != "done")
        self.pause_button.setEnabled(running and not paused)
        self.cancel_button.setEnabled(running or status == "batched")
        self.rename_button.setEnabled(run_id is not None)
        self.delete_button.setEnabled(run_id is not None and not running)
        writing = (self.start_button, self.pause_button, self.cancel_button, self.rename_button, self.delete_button)
        for button in writing:
            if self.read_only_reason is not None:
                button.setEnabled(False)
            button.setToolTip(self.read_only_reason or str(button.property("plainTip")))

    def pause_selected(self) -> None:
        worker = self.workers.get(self.selected_run() or -1)
        if worker is not None:
            worker.pause()
        self._update_buttons()

    def cancel_selected(self) -> None:
        run_id = self.selected_run()
        if run_id is not None and self.model.status(run_id) == "batched":
            self.cancel_batches(run_id)
            return
        worker = self.workers.get(self.selected_run() or -1)
        if worker is not None:
            worker.cancel()
            worker.resume()  # a paused worker must wake up to notice the cancel
        self._update_buttons()

    def resume_selected(self) -> RunWorker | None:
        run_id = self.selected_run()
        if run_id is None:
            return None
        worker = self.workers.get(run_id)
        if worker is not None and worker.isRunning():
            worker.resume()
            self._update_buttons()
            return worker
        row = self.model.row_of(run_id)
        if row is not None and self.model.runs[row].batch:
            self.poll_batch(run_id, resume=True)  # a batch run is resumed by polling its batches, never sent directly
            return None
        try:  # offline mode, a moved model file: said now, and the run is left as it was
            check_models_ready(self.model.runs[row].model_specs if row is not None else ())
        except ThoughtDeskError as error:
            self.message.setText(f"{error}. Run {run_id} was not started and is unchanged.")
            self.message.setStyleSheet("color: #b3261e;")
            return None
        return self.start_run(run_id)

    def rename_selected(self, name: str | None = None) -> Task[int] | None:
        """Rename the selected run (``name``, else asked for); written in a worker."""
        run_id, path = self.selected_run(), self.library_path
        if run_id is None or path is None:
            return None
        if name is None:
            current = self.model.data(self.model.index(self.table.currentIndex().row(), 0)) or ""
            name, ok = QInputDialog.getText(self, "Rename run", f"New name of run {run_id}:", text=str(current))
            if not ok:
                return None
        if not name.strip():
            self.message.setText("A run's name cannot be empty.")
            return None
        new_name = name

        def work() -> int:
            with Library.open(path, create=False) as lib:
                return rename_run(lib, run_id, new_name)

        return self._change(work, f"Run {run_id} renamed.")

    def delete_selected(self, *, confirm: bool = True) -> Task[int] | None:
        """Delete the selected run after asking (unless ``confirm`` is False); its request rows go,
        the CoTs and answers it produced stay. A run this window is executing is not deleted."""
        run_id, path = self.selected_run(), self.library_path
        if run_id is None or path is None:
            return None
        worker = self.workers.get(run_id)
        if worker is not None and worker.isRunning():
            self.message.setText(f"Run {run_id} is running: cancel it first, then delete it.")
            return None
        row = self.model.row_of(run_id)
        # What a run produced, which deleting it keeps: a critique run made critiques, not CoTs.
        kind = self.model.runs[row].kind if row is not None else "generation"
        made = {"critique": "critiques", "judge": "verdicts", "autolabel": "step labels"}.get(kind, "CoTs and answers")
        if confirm:
            answer = QMessageBox.question(
                self,
                "Delete run",
                f"Delete run {run_id} and its request rows? The {made} it produced stay in the "
                "collection. This cannot be undone.",
            )
            if answer != QMessageBox.StandardButton.Yes:
                return None

        def work() -> int:
            with Library.open(path, create=False) as lib:
                return delete_run(lib, run_id)[0]

        def forget(deleted: int) -> None:
            self.workers.pop(deleted, None)
            self.errors.pop(deleted, None)
            self.model.live.pop(deleted, None)

        return self._change(work, f"Run {run_id} deleted; its {made} are kept.", forget)

    def offer_delete_empty_run(self, run_id: int, text: str) -> QMessageBox:
        """Say that run ``run_id`` cannot be resumed and offer to delete it (non-modal)."""
        box = QMessageBox(
            QMessageBox.Icon.Warning, "Run cannot be resumed", text, QMessageBox.StandardButton.NoButton, self
        )
        box.setObjectName("emptyRunOffer")
        box.setTextFormat(Qt.TextFormat.PlainText)  # the server's message is not markup
        delete = box.addButton(f"&Delete run {run_id}", QMessageBox.ButtonRole.DestructiveRole)
        delete.setObjectName("deleteEmptyRun")
        box.addButton("&Keep it", QMessageBox.ButtonRole.RejectRole)

        def answered(button) -> None:
            if button is delete and self.select_run(run_id):
                self.delete_selected(confirm=False)

        box.buttonClicked.connect(answered)
        box.open()
        return box

    def _change(
        self, work: Callable[[], int], done_text: str, then: Callable[[int], object] | None = None
    ) -> Task[int]:
        def done(run_id: int) -> None:
            if then is not None:
                then(run_id)
            self.reload(then=lambda: self.message.setText(done_text))

        return (
            Task(lambda _ctx: work())
            .on_success(done)
            .on_failure(lambda error: self.message.setText(str(error)))
            .owned_by(self, self._tasks)
            .start()
        )

    # Workers --------------------------------------------------------------------------------

    def start_run(self, run_id: int, limits: RunLimits | None = None) -> RunWorker:
        """Execute (or resume) run ``run_id`` in a background thread and show it."""
        assert self.library_path is not None
        existing = self.workers.get(run_id)
        if existing is not None and existing.isRunning():
            return existing
        worker = RunWorker(
            self.library_path, run_id, limits=limits, prices=self.prices() if self.prices else None, parent=self
        )
        worker.progress.connect(self._progress)
        worker.request_started.connect(lambda prompt, r=run_id: self.output.start(r, prompt))
        worker.token.connect(lambda piece, r=run_id: self.output.append(r, piece))
        worker.ended.connect(lambda final, error, r=run_id: self._ended(r, final, error))
        self.workers[run_id] = worker
        self.errors.pop(run_id, None)
        worker.start()
        if self.model.row_of(run_id) is None:
            self.reload(then=lambda: self.select_run(run_id))
        else:
            self.select_run(run_id)
        self._update_buttons()
        return worker

    def _progress(self, progress: RunProgress) -> None:
        previous = self.model.live.get(progress.run_id)
        self.model.live[progress.run_id] = progress
        if previous is None or progress.done != previous.done:
            self._data_dirty = True
        self._dirty = True

    def _ended(self, run_id: int, final: RunProgress | None, error: str) -> None:
        self.output.end(run_id)
        if final is not None:
            self.model.live[run_id] = final
        if error:
            self.errors[run_id] = redact(error)  # shown: never a key a server quoted
        worker = self.workers.get(run_id)
        if worker is not None:
            worker.wait(2000)
            live = self.model.live.get(run_id)
            advice = stopped_for_good(worker.stop_error, run_id, live.done if live is not None else 0)
            if advice:  # a model its server does not have: no resume can fix it
                self.errors[run_id] = f"{error} — {advice}."
                self.offer_delete_empty_run(run_id, f"{error}\n\n{advice[0].upper()}{advice[1:]}.")
        self._update_buttons()
        self._show_message(self.selected_run())
        self._data_dirty = True
        self._flush_data_changed(now=True)
        self.reload()
        self.run_ended.emit(run_id)

    def _refresh_live(self) -> None:
        """Draw what changed since the last tick (cheap: no library reads here)."""
        if self._dirty:
            self._dirty = False
            self.model.refresh_live()
            self._update_buttons()
            run_id = self.selected_run()
            if run_id is not None:
                self._show_message(run_id)
                live = self.model.live.get(run_id)
                if live is not None and live.failed and self._failed_for != (run_id, live.failed):
                    self._load_failed()
        self.output.draw()

    def _flush_data_changed(self, *, now: bool = False) -> None:
        """Tell other views about new CoTs. While this tab is the one shown and a run is going,
        that waits until the user switches tabs or the run ends: refreshing hidden views costs
        the main window tens of milliseconds each time, for nothing anybody sees."""
        if not now and self.isVisible() and any(w.isRunning() for w in self.workers.values()):
            return
        if self._data_dirty and self.on_data_changed is not None:
            self._data_dirty = False
            self.on_data_changed()

    def hideEvent(self, event) -> None:  # Qt API
        # The user left the Runs tab: the other views should show what arrived meanwhile.
        self._flush_data_changed(now=True)
        super().hideEvent(event)

    # Failed requests ------------------------------------------------------------------------

    def _load_failed(self, force: bool = False) -> None:
        run_id, path = self.selected_run(), self.library_path
        if run_id is None or path is None:
            self.failed.setRowCount(0)
            return
        live = self.model.live.get(run_id)
        self._failed_for = (run_id, live.failed if live else -1)

        def work() -> list[RequestRow]:
            with Library.open(path, create=False) as lib:
                return run_requests(lib, run_id, status="failed", limit=200)

        def done(rows: list[RequestRow]) -> None:
            self._show_failed(run_id, rows)

        self._background(work, done)

    def _show_failed(self, run_id: int, rows: list[RequestRow]) -> None:
        if run_id == self.selected_run():
            self.failed.show_rows(rows)

    def shutdown(self, wait_ms: int = 5000) -> None:
        """Cancel active runs and wait for their threads (on window close)."""
        for worker in self.workers.values():
            worker.cancel()
            worker.resume()
        deadline = time.monotonic() + wait_ms / 1000
        for worker in self.workers.values():
            worker.wait(max(0, int((deadline - time.monotonic()) * 1000)))
