"""The Results tab's Statistics view: dataset statistics of the chosen collection (docs/stats.md).

A table per dataset split (counts, answer types, choice counts, median token lengths) and three
plots: token-length box plots of one field, and the n-gram overlap heatmaps of questions and of
reference CoTs. The statistics read every text of the collection, so they are computed only
when asked (Compute), in a background task with a progress dialog and Cancel, on the
task's own library connection; the GUI thread only fills the
table and redraws. Dataset names and other data text are shown as plain text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from thoughtdesk.core.errors import Cancelled, ThoughtDeskError
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.stats import DEFAULT_N, LENGTH_FIELDS, CollectionStatistics, collection_statistics
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.evaluation.critiques_view import SORT_ROLE, RowsModel
from thoughtdesk.ui.evaluation.plots import ExportablePlot
from thoughtdesk.ui.evaluation.stats_plots import FIELD_TITLES, LengthPlot, OverlapHeatmap
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSortFilterProxyModel,
    QSpinBox,
    QSplitter,
    Qt,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label

HEADERS = [
    "dataset",
    "split",
    "samples",
    "generated CoTs",
    "answers",
    "with context",
    "with reference CoT",
    "answer types",
    "choices: samples",
    "question tokens (median)",
    "reference CoT tokens (median)",
    "generated CoT tokens (median)",
]


def _cells(stats: CollectionStatistics) -> tuple[list[list[str]], list[list[float | str]]]:
    cells: list[list[str]] = []
    keys: list[list[float | str]] = []
    for s in stats.splits:
        medians = [s.lengths[f].percentiles[50] if s.lengths[f].count else None for f in LENGTH_FIELDS]
        question, _context, reference, generated = medians
        types = ", ".join(f"{t or '(none)'} {n}" for t, n in sorted(s.answer_types.items()))
        choices = ", ".join(f"{k}: {n}" for k, n in sorted(s.choice_counts.items()))
        numbers = [s.samples, s.generated_cots, s.answers, s.with_context, s.with_reference_cot]
        row = [s.dataset, s.split, *(f"{v:,}" for v in numbers), types, choices]
        key: list[float | str] = [s.dataset, s.split, *(float(v) for v in numbers), types, choices]
        for value in (question, reference, generated):
            row.append("" if value is None else f"{value:g}")
            key.append(-1.0 if value is None else float(value))
        cells.append(row)
        keys.append(key)
    return cells, keys


class StatsView(QWidget):
    """Dataset statistics beside the Accuracy and Critiques views."""

    #: New statistics shown (or cleared): the export buttons may change.
    computed = Signal()

    def __init__(self, window: WindowApi, collection: Callable[[], str]) -> None:
        super().__init__()
        self.setObjectName("statsView")
        self.window_ = window
        self._collection = collection
        self.stats: CollectionStatistics | None = None
        self.task: Task[CollectionStatistics] | None = None
        self._build()

    def _build(self) -> None:
        self.compute_button = QPushButton("Compute statistics", objectName="statsCompute")
        self.compute_button.setToolTip("Read every text of the collection in the background (Cancel stops it)")
        self.compute_button.clicked.connect(self.compute)
        self.overlap_box = QCheckBox("n-gram overlap", objectName="statsOverlap")
        self.overlap_box.setChecked(True)
        self.n_spin = QSpinBox(objectName="statsN")
        self.n_spin.setRange(1, 64)
        self.n_spin.setValue(DEFAULT_N)
        self.n_spin.setPrefix("n = ")
        self.n_spin.setToolTip("n-gram length in words (lower-cased, punctuation dropped)")
        self.by_combo = QComboBox(objectName="statsBy")
        self.by_combo.addItem("between datasets", "dataset")
        self.by_combo.addItem("between dataset splits", "split")
        self.status = plain_label(name="statsStatus", wrap=True)
        top = QHBoxLayout()
        for widget in (self.compute_button, self.overlap_box, self.n_spin, self.by_combo):
            top.addWidget(widget)
        top.addWidget(self.status, 1)

        self.model = RowsModel(HEADERS, self)
        proxy = QSortFilterProxyModel(self)
        proxy.setSourceModel(self.model)
        proxy.setSortRole(SORT_ROLE)
        self.table = QTableView(objectName="statsTable")
        self.table.setModel(proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # stored order until a header is clicked
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)

        self.length_plot = LengthPlot()
        self.field_combo = QComboBox(objectName="statsField")
        for name in LENGTH_FIELDS:
            self.field_combo.addItem(FIELD_TITLES[name], name)
        self.field_combo.currentIndexChanged.connect(lambda _: self._draw_lengths())
        lengths_page = QWidget()
        box = QVBoxLayout(lengths_page)
        box.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Tokens of:"))
        row.addWidget(self.field_combo)
        row.addWidget(QLabel("box p25-p75, white line median, whiskers p5-p95, dots min and max"))
        row.addStretch(1)
        box.addLayout(row)
        box.addWidget(self.length_plot, 1)
        self.question_overlap = OverlapHeatmap()
        self.cot_overlap = OverlapHeatmap()
        self.plots = QTabWidget(objectName="statsPlots")
        self.plots.addTab(lengths_page, "Token lengths")
        self.plots.addTab(self.question_overlap, "Overlap: questions")
        self.plots.addTab(self.cot_overlap, "Overlap: reference CoTs")

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.plots)
        splitter.setSizes([220, 480])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        self._apply(None)

    # Computing ---------------------------------------------------------------------------

    def compute(self) -> Task[CollectionStatistics] | None:
        """Compute the chosen collection's statistics in the background (progress, Cancel)."""
        library = self.window_.library
        collection = self._collection()
        if library is None or not collection:
            self.status.setText("No collection selected.")
            return None
        path = library.path
        overlap, n, by = self.overlap_box.isChecked(), self.n_spin.value(), str(self.by_combo.currentData())

        def work(ctx: TaskContext) -> CollectionStatistics:
            with Library.open(path, create=False) as lib:
                return collection_statistics(
                    lib, collection, overlap=overlap, n=n, overlap_by=by, progress=ctx.progress, cancel=ctx.cancelled
                )

        self.compute_button.setEnabled(False)
        self.status.setText(f"Reading {collection}…")
        # Every callback connected before start (a fast task could finish before a later one).
        self.task = (
            Task(work)
            .with_progress(f"Statistics of {collection}…", self)
            .on_success(self._apply)
            .on_failure(self._failed)
            .on_finished(self._finished)
            .owned_by(self)
        )
        return self.task.start()

    def _failed(self, error: BaseException) -> None:
        if isinstance(error, Cancelled):
            self.window_.show_status(str(error), 10000)
        elif isinstance(error, ThoughtDeskError | OSError | sqlite3.Error):
            self.window_.show_error("Statistics: failed", str(error))
        else:
            self.window_.show_error("Unexpected error", f"{type(error).__name__}: {error}")

    def _finished(self) -> None:
        self.compute_button.setEnabled(True)
        if self.status.text().startswith("Reading "):  # no result came: cancelled or failed
            self.status.setText("Not computed (cancelled or failed); the plots show the last result, if any.")
        self.task = None

    def is_idle(self) -> bool:
        """No computation running (for tests)."""
        return self.task is None

    # Drawing ----------------------------------------------------------------------------

    def _apply(self, stats: CollectionStatistics | None) -> None:
        self.stats = stats
        if stats is None:
            self.model.set_rows([], [])
            self.status.setText("Compute reads every text of the collection; large collections take a while.")
        else:
            self.model.set_rows(*_cells(stats))
            samples = sum(s.samples for s in stats.splits)
            overlap = f"; {stats.overlap[0].n}-gram overlap by {stats.overlap_by}" if stats.overlap else ""
            self.status.setText(f"{stats.collection}: {samples:,} sample(s) in {len(stats.splits)} split(s){overlap}")
        self.table.resizeColumnsToContents()
        self._draw_lengths()
        matrices = {m.field: m for m in stats.overlap} if stats else {}
        self.question_overlap.set_matrix(matrices.get("question"))
        self.cot_overlap.set_matrix(matrices.get("reference_cot"))
        self.computed.emit()

    def collection_changed(self) -> None:
        """Clear statistics of another collection than the chosen one (they are not recomputed
        by themselves: Compute reads every text)."""
        if self.stats is not None and self.stats.collection != self._collection():
            self._apply(None)

    def _draw_lengths(self) -> None:
        self.length_plot.set_statistics(self.stats, str(self.field_combo.currentData()))

    def current_plot(self) -> ExportablePlot | None:
        """The plot the export buttons act on, or None when nothing was computed."""
        if self.stats is None:
            return None
        plot = (self.length_plot, self.question_overlap, self.cot_overlap)[self.plots.currentIndex()]
        if isinstance(plot, OverlapHeatmap) and plot.matrix is None:
            return None
        return plot

    def current_plot_name(self) -> str:
        """A file-name stem for the visible plot."""
        if self.plots.currentIndex() == 0:
            return f"lengths_{self.field_combo.currentData()}"
        return ("", "overlap_questions", "overlap_reference_cots")[self.plots.currentIndex()]
