"""The Results tab: accuracy table, accuracy / Pareto / correctness-map plots, pairwise comparison;
and the Critiques view (``critiques_view.py``) beside the accuracy view.

Everything heavy runs in the thread pool: evaluation (reading answers and building the table),
re-scoring (through ``window.run_task`` with progress and Cancel) and the bootstrap of a pairwise
comparison. The GUI thread only swaps in finished results and redraws.

Live update: ``window.data_changed`` when scores may have changed and, every 2 s while the tab is
visible, a change of the library file's data version (``core.library.queries.data_version``:
another connection committed, e.g. a generation run, a CLI import) trigger a recompute, debounced,
one at a time, and only while the tab is shown (:class:`~thoughtdesk.ui.base.throttle.Throttle`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.evaluation.evaluate import EvaluationResult, PairedOutcomes, evaluate
from thoughtdesk.core.evaluation.metrics import ScoredAnswer
from thoughtdesk.core.evaluation.rescoring import RescoreOutcome, rescore, restore_original_scoring
from thoughtdesk.core.evaluation.tables import scored_now_text, truncated_text
from thoughtdesk.core.files import check_export_target
from thoughtdesk.core.library.queries import data_version
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.base.throttle import Throttle
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.evaluation.conditions import ComparePanel
from thoughtdesk.ui.evaluation.critiques_view import CritiquesView
from thoughtdesk.ui.evaluation.human_agreement_view import HumanAgreementView
from thoughtdesk.ui.evaluation.judges_view import JudgesView
from thoughtdesk.ui.evaluation.plots import AccuracyPlot, CorrectnessMap, ParetoPlot
from thoughtdesk.ui.evaluation.revisions_view import RevisionsView
from thoughtdesk.ui.evaluation.stats_view import StatsView
from thoughtdesk.ui.evaluation.table import COLUMNS, AccuracyTableModel
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    Qt,
    QTableView,
    QTabWidget,
    QTimer,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.signals import blocked

T = TypeVar("T")

POLL_MS = 2000
DEBOUNCE_MS = 250
#: Characters per token, to estimate tokens when a collection stores none (English prose).
CHARS_PER_TOKEN = 4.0


@dataclass
class Snapshot:
    """A finished evaluation, built in the background, applied on the GUI thread."""

    collection: str
    result: EvaluationResult
    paired: PairedOutcomes
    by_split: dict[tuple[str, str], list[ScoredAnswer]]


def _evaluate_in_background(path: Path, collection: str, truncated_as_wrong: bool = False) -> Snapshot | None:
    with Library.open(path, create=False) as lib:
        if lib.collection_id(collection) is None:
            return None
        result = evaluate(lib, collection, comparisons=False, truncated_as_wrong=truncated_as_wrong)
    by_split: dict[tuple[str, str], list[ScoredAnswer]] = {}
    for answer in result.answers:
        by_split.setdefault((answer.dataset, answer.split), []).append(answer)
    return Snapshot(collection, result, PairedOutcomes(result.answers, truncated_as_wrong=truncated_as_wrong), by_split)


class ResultsView(QWidget):
    """The Results tab of the main window."""

    def __init__(self, window: WindowApi) -> None:
        super().__init__()
        self.setObjectName("resultsView")
        self.window_ = window
        self.snapshot: Snapshot | None = None
        self._tasks: set[Task[object]] = set()
        self._seen_version: int | None = None
        self._build()
        self._refresh = Throttle(self, self._refresh_task, delay_ms=DEBOUNCE_MS, visible_only=True)
        self._refresh.stale = True  # computed when first shown
        self._poll_timer = QTimer(self, interval=POLL_MS)
        self._poll_timer.timeout.connect(self.poll_data_version)
        self._poll_timer.start()
        window.library_changed.connect(self.library_changed)
        window.data_changed.connect(self._data_changed)
        window.samples.collection_selected.connect(lambda _name: self.follow_tree())

    # Layout -----------------------------------------------------------------------------

    def _build(self) -> None:
        self.collection_combo = QComboBox(objectName="resultsCollection")
        self.collection_combo.setMinimumContentsLength(24)
        self.collection_combo.currentIndexChanged.connect(lambda _: self.schedule_refresh())
        self.rescore_button = QPushButton("Re-score", objectName="rescoreButton")
        self.rescore_button.setToolTip("Recompute every answer's correctness with ThoughtDesk's extraction")
        self.rescore_button.clicked.connect(self.rescore_current)
        self.restore_button = QPushButton("Restore imported", objectName="restoreButton")
        self.restore_button.setToolTip("Undo re-scoring: put back the correctness the imported file came with")
        self.restore_button.clicked.connect(self.restore_current)
        self.truncated_box = QCheckBox("Truncated as wrong", objectName="truncatedAsWrong")
        self.truncated_box.setToolTip(
            "Count answers cut by the token limit as not correct. Off: they are left out of the "
            "accuracy's denominator and the comparisons (their share is the Truncated column)"
        )
        self.truncated_box.toggled.connect(lambda _: self.schedule_refresh())
        self.status = plain_label(name="resultsStatus", wrap=True)
        # A long status wraps instead of widening the window past a 1366-pixel laptop screen.
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        top = QHBoxLayout()
        top.addWidget(QLabel("Collection:"))
        top.addWidget(self.collection_combo)
        top.addWidget(self.rescore_button)
        top.addWidget(self.restore_button)
        top.addWidget(self.truncated_box)
        top.addWidget(self.status, 1)

        self.table_model = AccuracyTableModel(self)  # sorts itself: no proxy model in between
        self.table = QTableView(objectName="accuracyTable")
        self.table.setModel(self.table_model)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)

        self.accuracy_plot = AccuracyPlot()
        self.pareto_plot = ParetoPlot()
        self.correctness_map = CorrectnessMap()
        self.correctness_map.sample_clicked.connect(self.open_sample_label)
        self.pareto_axis = QComboBox(objectName="paretoAxis")
        self.pareto_axis.addItem("mean tokens", False)
        self.pareto_axis.addItem("mean cost (USD)", True)
        self.pareto_axis.currentIndexChanged.connect(lambda _: self._draw_pareto())
        self.pareto_note = plain_label(name="paretoNote", wrap=False)
        pareto_page = self._page(self.pareto_plot, QLabel("x axis:"), self.pareto_axis, self.pareto_note)
        self.map_split = QComboBox(objectName="mapSplit")
        self.map_split.currentIndexChanged.connect(lambda _: self._draw_map())
        map_page = self._page(
            self.correctness_map,
            QLabel("Questions of:"),
            self.map_split,
            QLabel("green correct · red incorrect · grey not extractable; click opens the sample"),
        )
        self.plots = QTabWidget(objectName="resultsPlots")
        self.plots.addTab(self.accuracy_plot, "Accuracy")
        self.plots.addTab(pareto_page, "Accuracy vs tokens")
        self.plots.addTab(map_page, "Correctness map")
        self.compare = ComparePanel(self._start_task)
        self.plots.addTab(self.compare, "Compare two conditions")

        # The export buttons serve both views: the visible plot of the Accuracy or Critiques view;
        # disabled where there is none (the comparison tab, a view without data).
        exports = QHBoxLayout()
        exports.addStretch(1)
        self.export_buttons: list[QPushButton] = []
        for kind in ("png", "svg", "csv"):
            button = QPushButton(f"Export {kind.upper()}…", objectName=f"export_{kind}")
            button.clicked.connect(lambda _=False, k=kind: self.export_dialog(k))
            exports.addWidget(button)
            self.export_buttons.append(button)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.plots)
        splitter.setSizes([300, 500])
        self.critiques = CritiquesView(self.window_, self.collection_combo.currentText)
        self.views = QTabWidget(objectName="resultsViews")
        self.views.addTab(splitter, "Accuracy")
        self.views.addTab(self.critiques, "Critiques")
        self.revisions = RevisionsView(self.window_, self.collection_combo.currentText)
        self.views.addTab(self.revisions, "Revisions")
        self.human_agreement = HumanAgreementView(self.window_, self.collection_combo.currentText)
        self.views.addTab(self.human_agreement, "Judges vs humans")
        self.statistics = StatsView(self.window_, self.collection_combo.currentText)
        self.views.addTab(self.statistics, "Statistics")
        self.judges = JudgesView(self.window_, self.collection_combo.currentText)
        self.views.addTab(self.judges, "Judges")
        self.judges.computed.connect(self.update_export_buttons)
        self.collection_combo.currentIndexChanged.connect(lambda _: self.judges.refresh())
        self.views.currentChanged.connect(lambda _: self._judges_shown())
        self.statistics.plots.currentChanged.connect(lambda _: self.update_export_buttons())
        self.statistics.field_combo.currentIndexChanged.connect(lambda _: self.update_export_buttons())
        self.statistics.computed.connect(self.update_export_buttons)
        self.collection_combo.currentIndexChanged.connect(lambda _: self.statistics.collection_changed())
        self.views.currentChanged.connect(lambda _: self.update_export_buttons())
        self.plots.currentChanged.connect(lambda _: self.update_export_buttons())
        self.critiques.plots.currentChanged.connect(lambda _: self.update_export_buttons())
        self.critiques.pages.currentChanged.connect(lambda _: self.update_export_buttons())
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.views, 1)
        layout.addLayout(exports)
        self.update_export_buttons()

    @staticmethod
    def _page(plot: QWidget, *controls: QWidget) -> QWidget:
        page = QWidget()
        box = QVBoxLayout(page)
        box.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        for control in controls:
            row.addWidget(control)
        row.addStretch(1)
        box.addLayout(row)
        box.addWidget(plot, 1)
        return page

    # Collections and refresh -------------------------------------------------------------

    def library_changed(self, library: Library) -> None:
        """Show ``library``: its collections, the re-scoring buttons as it allows."""
        reason = library.read_only_reason  # re-scoring writes: disabled, saying why
        for button, tip in (
            (self.rescore_button, "Recompute every answer's correctness with ThoughtDesk's extraction"),
            (self.restore_button, "Undo re-scoring: put back the correctness the imported file came with"),
        ):
            button.setEnabled(reason is None)
            button.setToolTip(reason or tip)
        self._seen_version = None
        self.reload_collections()
        self.follow_tree()
        self.schedule_refresh()

    def reload_collections(self) -> None:
        library = self.window_.library
        current = self.collection_combo.currentText()
        names = [c.name for c in library.collections()] if library else []
        if names == [self.collection_combo.itemText(i) for i in range(self.collection_combo.count())]:
            return
        with blocked(self.collection_combo):
            self.collection_combo.clear()
            self.collection_combo.addItems(names)
            if current in names:
                self.collection_combo.setCurrentIndex(names.index(current))

    def follow_tree(self) -> None:
        """Show the collection selected in the Samples tab's tree."""
        collection = self.window_.samples.current_collection()
        if collection is None:
            return
        index = self.collection_combo.findText(collection, Qt.MatchFlag.MatchExactly)
        if index < 0:
            self.reload_collections()
            index = self.collection_combo.findText(collection, Qt.MatchFlag.MatchExactly)
        if index >= 0 and index != self.collection_combo.currentIndex():
            self.collection_combo.setCurrentIndex(index)

    def _data_changed(self, changes: DataChanges) -> None:
        # The tab's own re-scoring included: its table shows the change only after a recompute.
        if changes.scores:
            self.reload_collections()
            self.schedule_refresh()
        else:
            # Critiques and their ratings have no flag of their own: any write may touch them.
            self.critiques.schedule_refresh()
            self.revisions.schedule_refresh()
            self.human_agreement.schedule_refresh()
        if changes.runs and self.views.currentWidget() is self.judges:  # a judge run stored verdicts
            self.judges.refresh()

    def _judges_shown(self) -> None:
        """The Judges view shown: its figures read now (they are not kept up to date hidden)."""
        if self.views.currentWidget() is self.judges:
            self.judges.refresh()

    def schedule_refresh(self) -> None:
        """Recompute soon (debounced); while the tab is hidden, only remember that it is stale."""
        self._refresh.request()
        self.critiques.schedule_refresh()
        self.revisions.schedule_refresh()
        self.human_agreement.schedule_refresh()

    def poll_data_version(self) -> bool:
        """Schedule a refresh if another connection committed to the library since the last look."""
        library = self.window_.library
        if library is None or not self.isVisible():
            return False
        version = data_version(library)
        changed = self._seen_version is not None and version != self._seen_version
        self._seen_version = version
        if changed:
            self.schedule_refresh()
        return changed

    def _refresh_task(self) -> Task[Snapshot | None] | None:
        library = self.window_.library
        collection = self.collection_combo.currentText()
        if library is None or not collection:
            self._apply(None)
            return None
        self.status.setText("Computing…")
        path = library.path
        as_wrong = self.truncated_box.isChecked()
        # What this refresh will see: writes notified before it need no second refresh by the poll.
        self._seen_version = data_version(library)
        return (
            Task(lambda _ctx: _evaluate_in_background(path, collection, as_wrong))
            .on_success(self._refresh_done)
            .on_failure(self._refresh_failed)
            .owned_by(self, self._tasks)
        )

    def _start_task(
        self, work: Callable[[], T], on_success: Callable[[T], object], on_failed: Callable[[BaseException], object]
    ) -> Task[T]:
        """``work()`` in the thread pool; its result or error is delivered on the GUI thread."""
        return (
            Task(lambda _ctx: work()).on_success(on_success).on_failure(on_failed).owned_by(self, self._tasks).start()
        )

    def _refresh_done(self, snapshot: Snapshot | None) -> None:
        if snapshot is None or snapshot.collection == self.collection_combo.currentText():
            self._apply(snapshot)
        else:
            self.schedule_refresh()  # another collection was chosen meanwhile

    def _refresh_failed(self, error: BaseException) -> None:
        self.status.setText(f"Could not evaluate: {error}")

    def is_idle(self) -> bool:
        """No evaluation running or waiting (for tests and the benchmark)."""
        return (
            not self._refresh.busy()
            and not self._tasks
            and self.critiques.is_idle()
            and self.revisions.is_idle()
            and self.statistics.is_idle()
        )

    # Drawing ----------------------------------------------------------------------------

    def _apply(self, snapshot: Snapshot | None) -> None:
        self.snapshot = snapshot
        result = snapshot.result if snapshot else None
        rows = result.rows if result else []
        self.table_model.set_rows(rows)
        self._fit_name_columns(rows)
        self.accuracy_plot.set_rows(rows)
        self._draw_pareto()
        self._fill_map_splits()
        self.compare.set_snapshot(snapshot.result.rows if snapshot else [], snapshot.paired if snapshot else None)
        if result is None:
            self.status.setText("No collection selected." if not self.collection_combo.currentText() else "")
            return
        scored = result.scored_by_thoughtdesk + result.scored_from_file + result.scored_now
        text = (
            f"{scored:,} scored answer(s) in {len(rows)} condition row(s); correctness: "
            + {
                "thoughtdesk": "ThoughtDesk",
                "file": "stored in the imported file",
                "mixed": "ThoughtDesk where re-scored or never scored, else stored",
                "none": "none scored",
            }[result.source]
        )
        for note in (scored_now_text(result), truncated_text(result, "'Truncated as wrong'")):
            if note:
                text += "; " + note
        self.status.setText(text)

    def _fit_name_columns(self, rows) -> None:
        """Width of the dataset, split and model columns from their few distinct names
        (resizeColumnToContents would measure every cell: ~80 ms for 200 rows); figure columns
        as wide as their title and widest figure, and hidden where no row has a figure (no
        reasoning tokens, costs or votes stored), so the condition column gets the room."""
        metrics = self.table.fontMetrics()
        header = self.table.horizontalHeader()
        for column, name in ((0, "dataset"), (1, "split"), (2, "model")):
            texts = {getattr(r, name) for r in rows} | {COLUMNS[column].title}
            width = max(metrics.horizontalAdvance(t) for t in texts) + 24
            self.table.setColumnWidth(column, min(width, 320))
        for column in range(4, len(COLUMNS)):
            texts = {COLUMNS[column].text(r) for r in rows}
            self.table.setColumnHidden(column, bool(rows) and texts <= {""})
            width = max(metrics.horizontalAdvance(t) for t in texts | {COLUMNS[column].title}) + 24
            self.table.setColumnWidth(column, max(width, 48))
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)

    def pareto_rows(self) -> tuple[list, str]:
        """Rows for the Pareto plot and a note; tokens are estimated from CoT length if none are stored."""
        if self.snapshot is None:
            return [], ""
        result = self.snapshot.result
        if self.pareto_axis.currentData() or any(r.mean_tokens is not None for r in result.rows):
            return result.rows, ""
        estimated = [
            replace(r, mean_tokens=result.mean_cot_chars.get(r.key, 0.0) / CHARS_PER_TOKEN) for r in result.rows
        ]
        return estimated, "No token counts stored: estimated as CoT characters / 4."

    def _draw_pareto(self) -> None:
        self.pareto_plot.use_cost = bool(self.pareto_axis.currentData())
        rows, note = self.pareto_rows()
        self.pareto_note.setText(note)
        self.pareto_plot.set_rows(rows)

    def _fill_map_splits(self) -> None:
        previous = self.map_split.currentData()
        with blocked(self.map_split):
            self.map_split.clear()
            splits = sorted(self.snapshot.by_split) if self.snapshot else []
            self.map_split.addItem("all datasets", None)
            for split in splits:
                self.map_split.addItem(f"{split[0]} / {split[1]}", split)
            # One dataset split by default: a map across datasets is mostly empty cells.
            index = self.map_split.findData(previous) if previous is not None else (1 if splits else 0)
            self.map_split.setCurrentIndex(max(0, index))
        self._draw_map()

    def _draw_map(self) -> None:
        if self.snapshot is None:
            self.correctness_map.set_answers([])
            return
        split = self.map_split.currentData()
        answers = self.snapshot.result.answers if split is None else self.snapshot.by_split.get(tuple(split), [])
        self.correctness_map.set_answers(answers)

    def open_sample_label(self, label: str) -> None:
        """Open the sample behind a correctness-map row in the Samples tab."""
        if self.snapshot is None:
            return
        pk = self.snapshot.result.sample_pks.get(label)
        if pk is not None:
            self.window_.open_sample(pk)

    # Re-scoring and export --------------------------------------------------------------

    def rescore_current(self) -> Task[RescoreOutcome] | None:
        """Re-score the chosen collection in the background (progress dialog with Cancel)."""
        collection = self.collection_combo.currentText()
        library = self.window_.library
        if not collection or library is None:
            return None
        path = library.path

        def work(ctx: TaskContext) -> RescoreOutcome:
            with Library.open(path, create=False) as lib:
                return rescore(lib, collection, progress=ctx.progress, cancel=ctx.cancelled)

        def done(report: RescoreOutcome) -> None:
            self.window_.show_status(report.summary, 15000)
            self.window_.notify_data_changed(DataChanges(answers=True, initiator=self))

        return self.window_.run_task(f"Re-scoring {collection}…", work, done)

    def restore_current(self) -> Task[int] | None:
        """Put back the chosen collection's imported correctness (undoes Re-score)."""
        collection = self.collection_combo.currentText()
        if not collection or self.window_.library is None:
            return None
        path = self.window_.library.path

        def work(_ctx: TaskContext) -> int:
            with Library.open(path, create=False) as lib:
                return restore_original_scoring(lib, collection)

        def done(restored: int) -> None:
            self.window_.show_status(
                f"{restored:,} answer(s) of {collection} restored to the imported correctness", 15000
            )
            self.window_.notify_data_changed(DataChanges(answers=True, initiator=self))

        return self.window_.run_task(f"Restoring the imported scoring of {collection}…", work, done)

    def current_plot(self):
        """The plot the export buttons act on: the visible one of the visible view, or None."""
        if self.views.currentWidget() is self.critiques:
            return self.critiques.current_plot()
        if self.views.currentWidget() is self.statistics:
            return self.statistics.current_plot()
        if self.views.currentWidget() is self.judges:
            return self.judges.current_plot()
        return (self.accuracy_plot, self.pareto_plot, self.correctness_map, None)[self.plots.currentIndex()]

    def update_export_buttons(self) -> None:
        enabled = self.current_plot() is not None
        for button in self.export_buttons:
            button.setEnabled(enabled)
            button.setToolTip("" if enabled else "Nothing to export here: choose a plot tab with data")

    def export_current(self, kind: str, path: str | Path) -> Path:
        """Export the visible plot: ``kind`` "png", "svg" or "csv" (its data). Never onto the
        open library or its -wal/-shm files (:class:`~thoughtdesk.core.files.ExportTargetError`);
        the save dialog has asked before replacing another file."""
        plot = self.current_plot()
        if plot is None:
            raise ValueError("this tab has no plot to export")
        library = self.window_.library
        target = check_export_target(path, libraries=[library.path] if library is not None else [], force=True)
        return {"png": plot.export_png, "svg": plot.export_svg, "csv": plot.export_csv}[kind](target)

    def export_dialog(self, kind: str) -> None:
        if self.current_plot() is None:
            self.window_.show_error("Export", "Choose a plot tab with data first.")
            return
        if self.views.currentWidget() is self.critiques:
            tab = "critiques_" + self.critiques.current_plot_name()
        elif self.views.currentWidget() is self.statistics:
            tab = "statistics_" + self.statistics.current_plot_name()
        elif self.views.currentWidget() is self.judges:
            tab = "judges_strengths"
        else:
            tab = self.plots.tabText(self.plots.currentIndex())
        name = tab.lower().replace(" ", "_")
        filters = {"png": "PNG images (*.png)", "svg": "SVG images (*.svg)", "csv": "CSV files (*.csv)"}
        path, _ = QFileDialog.getSaveFileName(self, "Export plot", str(Path.home() / f"{name}.{kind}"), filters[kind])
        if not path:
            return
        try:
            self.export_current(kind, path)
        except ThoughtDeskError as error:
            self.window_.show_error("Export failed", str(error))
            return
        self.window_.show_status(f"Written to {path}", 10000)
