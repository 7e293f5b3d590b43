"""The Results tab's Critiques view: the critique analysis of the chosen collection.

Tables per critique model, per student condition and of agreement (critique models with each
other and with the human scores), Krippendorff's alpha among human raters, and three plots
(dimensions per student model, score distribution per critique model, critique vs human
score). The analysis (``core.critiques.analysis``) runs in the thread pool on its own library
connection; the GUI thread only fills the tables and redraws. It is recomputed, debounced and
only while the view is shown, when the Results tab asks (collection changed, data changed, the
library's data version moved). A collection without critiques shows how to get some.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from thoughtdesk.core.critiques.analysis import CritiqueAnalysis, analyse_collection
from thoughtdesk.core.critiques.analysis_tables import (
    AGREEMENT_HEADERS,
    EMPTY_HINT,
    MODEL_HEADERS,
    STUDENT_HEADERS,
    agreement_cells,
    human_lines,
    model_cells,
    student_cells,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.steps.judge import ProcessScore
from thoughtdesk.ui.base.tasks import Task
from thoughtdesk.ui.base.throttle import Throttle
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.evaluation.critique_plots import DimensionPlot, ScoreDistributionPlot, ScoreScatterPlot
from thoughtdesk.ui.evaluation.plots import ExportablePlot
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QAbstractTableModel,
    QHeaderView,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    QSplitter,
    QStackedWidget,
    Qt,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.labels import plain_label

DEBOUNCE_MS = 250
SORT_ROLE = Qt.ItemDataRole.UserRole + 1

Sortable = float | str


class RowsModel(QAbstractTableModel):
    """A read-only table of display strings, each cell with a sort key (numbers sort as numbers)."""

    def __init__(self, headers: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.headers = list(headers)
        self.cells: list[list[str]] = []
        self.keys: list[list[Sortable]] = []

    def set_rows(self, cells: list[list[str]], keys: list[list[Sortable]]) -> None:
        self.beginResetModel()
        self.cells, self.keys = cells, keys
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # Qt API
        return 0 if parent.isValid() else len(self.cells)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # Qt API
        return 0 if parent.isValid() else len(self.headers)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:  # Qt API
        if not index.isValid():
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self.cells[index.row()][index.column()]
        if role == SORT_ROLE:
            return self.keys[index.row()][index.column()]
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.headers[section]
        return None


#: The step-judge table's columns (ProcessBench's metric; core/steps/judge.py).
PROCESS_HEADERS = ("Step judge", "n", "with error", "without", "error acc.", "correct acc.", "F1", "unparseable")


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def process_cells(model: str, process: ProcessScore) -> list[str]:
    """A step judge's row: counts, the two accuracies and F1 in percent, unparseable answers."""
    return [
        model,
        str(process.n),
        str(process.n_error),
        str(process.n_correct),
        _share(process.error_accuracy),
        _share(process.correct_accuracy),
        _share(process.f1),
        str(process.unparseable),
    ]


def confusion_text(model: str, process: ProcessScore) -> str:
    """The confusion of true vs judged first error, one line: ``true -> judged xN`` (-1: none
    wrong; "unparseable" for answers without a readable index)."""
    cells = [
        f"{true} -> {'unparseable' if judged is None else judged} x{count}" for true, judged, count in process.confusion
    ]
    return f"{model}, true -> judged first error: " + ", ".join(cells)


def _key(value: float | int | None) -> float:
    return float("-inf") if value is None else float(value)


def _table(name: str, model: RowsModel, stretch: int) -> QTableView:
    proxy = QSortFilterProxyModel(model)
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    table = QTableView(objectName=name)
    table.setModel(proxy)
    table.setSortingEnabled(True)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setWordWrap(False)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(22)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.horizontalHeader().setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # analysis order until the user sorts
    return table


#: Widest a column is made to fit its contents (longer text is elided; the tooltip has it all).
MAX_COLUMN_WIDTH = 260


def _fit_columns(table: QTableView, model: RowsModel) -> None:
    """Column widths from the distinct texts of each column (cheaper than resizeColumnsToContents,
    which measures every cell of every row); the stretched column takes what is left."""
    metrics = table.fontMetrics()
    header = table.horizontalHeader()
    for column, title in enumerate(model.headers):
        if header.sectionResizeMode(column) == QHeaderView.ResizeMode.Stretch:
            continue
        texts = {row[column] for row in model.cells} | {title}
        width = max(metrics.horizontalAdvance(t) for t in texts) + 16
        table.setColumnWidth(column, min(width, MAX_COLUMN_WIDTH))


def _analyse_in_background(path: Path, collection: str) -> CritiqueAnalysis | None:
    with Library.open(path, create=False) as lib:
        if lib.collection_id(collection) is None:
            return None
        return analyse_collection(lib, collection)


CritiquePlot = DimensionPlot | ScoreDistributionPlot | ScoreScatterPlot


class CritiquesView(QWidget):
    """The Critiques view; ``collection()`` names the collection the Results tab shows."""

    def __init__(self, window: WindowApi, collection: Callable[[], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("critiquesView")
        self.window_ = window
        self.collection = collection
        self.analysis: CritiqueAnalysis | None = None
        self._tasks: set[Task[object]] = set()
        self._build()
        self._refresh = Throttle(self, self._refresh_task, delay_ms=DEBOUNCE_MS, visible_only=True)
        self._refresh.stale = True  # computed when first shown

    def _build(self) -> None:
        self.status = plain_label(name="critiquesStatus", wrap=False)
        self.models_model = RowsModel(MODEL_HEADERS, self)
        self.students_model = RowsModel(STUDENT_HEADERS, self)
        self.agreement_model = RowsModel(AGREEMENT_HEADERS, self)
        self.models_table = _table("critiqueModelsTable", self.models_model, 5)
        self.students_table = _table("critiqueStudentsTable", self.students_model, 8)
        self.agreement_table = _table("critiqueAgreementTable", self.agreement_model, 1)
        self.human_label = plain_label(name="critiquesHuman", wrap=True)
        agreement_page = QWidget()
        agreement_box = QVBoxLayout(agreement_page)
        agreement_box.setContentsMargins(0, 0, 0, 0)
        agreement_box.addWidget(self.agreement_table, 1)
        agreement_box.addWidget(self.human_label)
        self.tables = QTabWidget(objectName="critiqueTables")
        self.tables.addTab(self.models_table, "Critique models")
        self.tables.addTab(self.students_table, "Student conditions")
        self.tables.addTab(agreement_page, "Agreement")
        # Step judges (docs/steps.md): ProcessBench's scores and the confusion of first errors.
        self.process_model = RowsModel(PROCESS_HEADERS, self)
        self.process_table = _table("critiqueProcessTable", self.process_model, 0)
        self.confusion_label = plain_label(name="critiquesConfusion", wrap=True, selectable=True)
        process_page = QWidget()
        process_box = QVBoxLayout(process_page)
        process_box.setContentsMargins(0, 0, 0, 0)
        process_box.addWidget(self.process_table, 1)
        process_box.addWidget(self.confusion_label)
        self.tables.addTab(process_page, "Step judges")

        # The plots are made when first drawn: three pyqtgraph widgets cost ~0.16 s of start-up,
        # and most sessions never open this view.
        self._plot_widgets: list[CritiquePlot | None] = [None, None, None]
        self._plot_slots: list[QVBoxLayout] = []
        self.plots = QTabWidget(objectName="critiquePlots")
        for name in ("Dimensions by student model", "Scores by critique model", "Critique vs human score"):
            slot = QWidget()
            slot_layout = QVBoxLayout(slot)
            slot_layout.setContentsMargins(0, 0, 0, 0)
            self._plot_slots.append(slot_layout)
            self.plots.addTab(slot, name)
        self._drawn: set[int] = set()  # plot tabs drawn from the current analysis
        self.plots.currentChanged.connect(lambda _: self._draw_current_plot())

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.tables)
        splitter.addWidget(self.plots)
        splitter.setSizes([280, 420])
        self.empty = plain_label(name="critiquesEmpty", wrap=True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.pages = QStackedWidget()
        self.pages.addWidget(splitter)
        self.pages.addWidget(self.empty)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.status)
        layout.addWidget(self.pages, 1)

    # Refresh ------------------------------------------------------------------------------------

    def schedule_refresh(self) -> None:
        """Recompute soon (debounced); while hidden, only remember that it is stale."""
        self._refresh.request()

    def is_idle(self) -> bool:
        """No analysis running or waiting (tests, the benchmark)."""
        return not self._refresh.busy() and not self._tasks

    def _refresh_task(self) -> Task[CritiqueAnalysis | None] | None:
        library = self.window_.library
        collection = self.collection()
        if library is None or not collection:
            self.apply(None)
            return None
        self.status.setText("Computing…")
        path = library.path
        return (
            Task(lambda _ctx: _analyse_in_background(path, collection))
            .on_success(lambda analysis: self._done(collection, analysis))
            .on_failure(lambda error: self.status.setText(f"Could not analyse the critiques: {error}"))
            .owned_by(self, self._tasks)
        )

    def _done(self, collection: str, analysis: CritiqueAnalysis | None) -> None:
        if collection == self.collection():
            self.apply(analysis)
        else:
            self.schedule_refresh()  # another collection was chosen meanwhile

    # Drawing ------------------------------------------------------------------------------------

    def apply(self, analysis: CritiqueAnalysis | None) -> None:
        """Show ``analysis`` (None: no collection); tables, the human line and the three plots."""
        self.analysis = analysis
        empty = analysis is None or not analysis.n_critiques
        models = analysis.critique_models if analysis else []
        students = analysis.students if analysis else []
        agreement = analysis.agreement if analysis else []
        self.models_model.set_rows(
            [model_cells(r) for r in models],
            [
                [
                    r.model,
                    r.n,
                    r.n_scored,
                    _key(r.mean_explanation_score),
                    _key(r.score_low),
                    "",
                    _key(r.mean_critique_score),
                    r.n_critique_ratings,
                ]
                for r in models
            ],
        )
        student_rows = [student_cells(r) for r in students]  # ~0.1 ms a row: made once
        self.students_model.set_rows(
            student_rows,
            [
                [
                    *cells[:5],
                    r.n,
                    _key(r.mean_explanation_score),
                    _key(r.score_low),
                    cells[8],
                    r.correct,
                    _key(r.auroc),
                    _key(r.auroc_low),
                ]
                for r, cells in zip(students, student_rows, strict=True)
            ],
        )
        self.agreement_model.set_rows(
            [agreement_cells(r) for r in agreement],
            [
                [
                    r.first,
                    r.second,
                    r.n,
                    _key(r.spearman),
                    _key(r.spearman_low),
                    _key(r.kendall),
                    _key(r.kendall_low),
                    _key(r.dimension_match),
                    r.n_dimension,
                ]
                for r in agreement
            ],
        )
        self.human_label.setText(" ".join(human_lines(analysis)) if analysis else "")
        judges = [(r.model, r.process) for r in models if r.process is not None]
        self.process_model.set_rows(
            [process_cells(model, process) for model, process in judges],
            [
                [
                    model,
                    p.n,
                    p.n_error,
                    p.n_correct,
                    _key(p.error_accuracy),
                    _key(p.correct_accuracy),
                    _key(p.f1),
                    p.unparseable,
                ]
                for model, p in judges
            ],
        )
        self.confusion_label.setText(
            "\n".join(confusion_text(model, process) for model, process in judges)
            if judges
            else "No step judge: run one with Generate ▸ Critique… or `thoughtdesk critique --preset processbench`."
        )
        for table, model in (
            (self.models_table, self.models_model),
            (self.students_table, self.students_model),
            (self.agreement_table, self.agreement_model),
            (self.process_table, self.process_model),
        ):
            _fit_columns(table, model)
        # Only the visible plot is drawn now; the others when their tab is shown (a redraw of all
        # three would cost as much again on every refresh).
        self._drawn = set()
        self.pages.setCurrentIndex(1 if empty else 0)
        self._draw_current_plot()
        collection = self.collection()
        if analysis is None:
            self.status.setText("No collection selected." if not collection else "")
            self.empty.setText("Choose a collection to analyse its critiques.")
        elif empty:
            self.status.setText("")
            self.empty.setText(f"No critiques in {collection}. To get some, {EMPTY_HINT}.")
        else:
            self.status.setText(
                f"{analysis.n_critiques:,} critique(s) by {len(models)} critique model(s) of "
                f"{len({r.student for r in students})} student condition(s)"
            )

    def _draw_current_plot(self) -> None:
        index = self.plots.currentIndex()
        if index in self._drawn:
            return
        self._drawn.add(index)
        analysis = self.analysis if self.analysis is not None and self.analysis.n_critiques else None
        self._plot_at(index).set_analysis(analysis)

    # Export -------------------------------------------------------------------------------------

    def current_plot(self) -> ExportablePlot | None:
        """The plot on the visible plot tab, or None while the view shows no data."""
        if self.pages.currentIndex() != 0:
            return None
        return self._plot_at(self.plots.currentIndex())

    def _plot_at(self, index: int) -> CritiquePlot:
        plot = self._plot_widgets[index]
        if plot is None:
            plot = (DimensionPlot, ScoreDistributionPlot, ScoreScatterPlot)[index]()
            self._plot_slots[index].addWidget(plot)
            self._plot_widgets[index] = plot
        return plot

    @property
    def dimension_plot(self) -> DimensionPlot:
        plot = self._plot_at(0)
        assert isinstance(plot, DimensionPlot)
        return plot

    @property
    def score_plot(self) -> ScoreDistributionPlot:
        plot = self._plot_at(1)
        assert isinstance(plot, ScoreDistributionPlot)
        return plot

    @property
    def scatter_plot(self) -> ScoreScatterPlot:
        plot = self._plot_at(2)
        assert isinstance(plot, ScoreScatterPlot)
        return plot

    def current_plot_name(self) -> str:
        return self.plots.tabText(self.plots.currentIndex())
