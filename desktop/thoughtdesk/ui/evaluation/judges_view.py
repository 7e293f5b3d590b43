"""The Results tab's Judges view: pairwise judges of the chosen collection (docs/judges.md).

A table per judge (model, template version, pairs judged in both orders, position consistency,
first-position rate, ties, inconsistent pairs, unparseable verdicts), the chosen judge's
conditions (wins, losses, ties, Bradley-Terry strength with its 95 % bootstrap interval) and a
plot of those strengths. Figures are computed in a background task on the task's own library
connection (:func:`thoughtdesk.core.judges.analysis.analyse_judgements`); data text is plain text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.judges.analysis import JudgementAnalysis, analyse_judgements
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.evaluation.critiques_view import SORT_ROLE, RowsModel
from thoughtdesk.ui.evaluation.judge_plots import StrengthPlot
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSortFilterProxyModel,
    QSplitter,
    Qt,
    QTableView,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.signals import blocked

JUDGE_HEADERS = [
    "judge",
    "template",
    "pairs",
    "position consistency",
    "first-position rate",
    "ties",
    "inconsistent",
    "unparseable",
    "one order only",
]
CONDITION_HEADERS = ["condition", "wins", "losses", "ties", "strength", "95 % interval"]


def _rate(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _table(model: RowsModel, name: str) -> QTableView:
    proxy = QSortFilterProxyModel(model)
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    table = QTableView(objectName=name)
    table.setModel(proxy)
    table.setSortingEnabled(True)
    table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setWordWrap(False)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(22)
    return table


class JudgesView(QWidget):
    """Pairwise judges' figures beside the Accuracy, Critiques and Statistics views."""

    #: New figures shown: the export buttons may change.
    computed = Signal()

    def __init__(self, window: WindowApi, collection: Callable[[], str]) -> None:
        super().__init__()
        self.setObjectName("judgesView")
        self.window_ = window
        self._collection = collection
        self.analysis: JudgementAnalysis | None = None
        self.task: Task[JudgementAnalysis] | None = None
        self._stale = False
        self._build()

    def _build(self) -> None:
        self.refresh_button = QPushButton("Refresh", objectName="judgesRefresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.judge_combo = QComboBox(objectName="judgesJudge")
        self.judge_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.judge_combo.setMinimumContentsLength(16)
        self.judge_combo.currentIndexChanged.connect(lambda _: self._show_judge())
        self.status = plain_label(name="judgesStatus", wrap=True)
        top = QHBoxLayout()
        top.addWidget(self.refresh_button)
        top.addWidget(QLabel("Conditions under:"))
        top.addWidget(self.judge_combo)
        top.addWidget(self.status, 1)
        self.judges_model = RowsModel(JUDGE_HEADERS, self)
        self.judges_table = _table(self.judges_model, "judgesTable")
        self.conditions_model = RowsModel(CONDITION_HEADERS, self)
        self.conditions_table = _table(self.conditions_model, "judgeConditionsTable")
        self.strength_plot = StrengthPlot()
        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.addWidget(self.conditions_table)
        lower.addWidget(self.strength_plot)
        lower.setSizes([420, 700])
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.judges_table)
        splitter.addWidget(lower)
        splitter.setSizes([160, 520])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        self._apply(None)

    # Computing ---------------------------------------------------------------------------

    def refresh(self) -> Task[JudgementAnalysis] | None:
        """Compute the chosen collection's judge figures in the background."""
        library = self.window_.library
        collection = self._collection()
        if library is None or not collection:
            self.status.setText("No collection selected.")
            return None
        if self.task is not None:
            self._stale = True  # asked again while computing: once more after this one
            return self.task
        path = library.path

        def work(_ctx: TaskContext) -> JudgementAnalysis:
            with Library.open(path, create=False) as lib:
                return analyse_judgements(lib, collection)

        self.status.setText(f"Reading the verdicts of {collection}…")
        self.task = (
            Task(work).on_success(self._apply).on_failure(self._failed).on_finished(self._finished).owned_by(self)
        )
        return self.task.start()

    def _failed(self, error: BaseException) -> None:
        if isinstance(error, ThoughtDeskError | OSError | sqlite3.Error):
            self.status.setText(f"Judges: {error}")
        else:
            self.window_.show_error("Unexpected error", f"{type(error).__name__}: {error}")

    def _finished(self) -> None:
        self.task = None
        if self._stale:
            self._stale = False
            self.refresh()

    def is_idle(self) -> bool:
        """No computation running (for tests)."""
        return self.task is None

    # Drawing ----------------------------------------------------------------------------

    def _apply(self, analysis: JudgementAnalysis | None) -> None:
        self.analysis = analysis
        judges = analysis.judges if analysis else []
        cells: list[list[str]] = []
        keys: list[list[float | str]] = []
        for j in judges:
            cells.append(
                [
                    j.model,
                    f"{j.template} {j.template_version}",
                    f"{j.pairs:,}",
                    _rate(j.position_consistency),
                    _rate(j.first_position_rate),
                    f"{j.ties:,}",
                    f"{j.inconsistent:,}",
                    f"{j.unparseable:,}",
                    f"{j.incomplete:,}",
                ]
            )
            keys.append(
                [
                    j.model,
                    j.template_version,
                    float(j.pairs),
                    -1.0 if j.position_consistency is None else j.position_consistency,
                    -1.0 if j.first_position_rate is None else j.first_position_rate,
                    float(j.ties),
                    float(j.inconsistent),
                    float(j.unparseable),
                    float(j.incomplete),
                ]
            )
        self.judges_model.set_rows(cells, keys)
        self.judges_table.resizeColumnsToContents()
        current = self.judge_combo.currentData()
        with blocked(self.judge_combo):
            self.judge_combo.clear()
            for j in judges:
                self.judge_combo.addItem(f"{j.model} ({j.template_version})", (j.model, j.template_version))
            index = self.judge_combo.findData(current)
            self.judge_combo.setCurrentIndex(max(0, index))
        if analysis is None:
            self.status.setText("")
        elif not judges:
            self.status.setText(
                f"{analysis.collection} has no pairwise verdicts: Generate > Judge pairs… (or `thoughtdesk judge "
                "--pairwise`) makes them."
            )
        else:
            self.status.setText(
                f"{analysis.collection}: {len(judges)} judge(s). A verdict that flips with the order is a tie "
                "(inconsistent); strengths are over pairs of CoTs of different conditions."
            )
        self._show_judge()
        self.computed.emit()

    def _show_judge(self) -> None:
        chosen = self.judge_combo.currentData()
        rows = (
            [c for c in self.analysis.conditions if (c.judge, c.template_version) == tuple(chosen)]
            if self.analysis is not None and chosen
            else []
        )
        self.conditions_model.set_rows(
            [
                [
                    c.condition,
                    f"{c.wins:,}",
                    f"{c.losses:,}",
                    f"{c.ties:,}",
                    f"{c.strength:+.3f}",
                    f"[{c.low:+.3f}, {c.high:+.3f}]",
                ]
                for c in rows
            ],
            [[c.condition, float(c.wins), float(c.losses), float(c.ties), c.strength, c.low] for c in rows],
        )
        self.conditions_table.resizeColumnsToContents()
        self.strength_plot.set_conditions(chosen[0] if chosen else "", rows)

    def current_plot(self) -> StrengthPlot | None:
        """The plot the export buttons act on, or None when no condition has a strength."""
        return self.strength_plot if self.strength_plot.rows else None
