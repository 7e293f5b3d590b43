"""The item model of the runs list and the delegate that draws its progress bars."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from thoughtdesk.core.generation.runs import RunInfo, RunProgress
from thoughtdesk.ui.qt import (
    QAbstractTableModel,
    QApplication,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionProgressBar,
    Qt,
)


@dataclass(frozen=True, slots=True)
class RunFigures:
    """What the runs list shows of one run: stored figures, or live ones while it executes."""

    status: str
    total: int
    done: int
    failed: int
    remaining: int
    tokens: int
    cost: float
    eta: float | None  # seconds left, while running
    in_flight: int


RUN_COLUMNS = ("Run", "Status", "Progress", "Done", "Failed", "Remaining", "Tokens", "Cost", "ETA", "Models")
FRACTION_ROLE = Qt.ItemDataRole.UserRole + 1


def format_duration(seconds: float | None) -> str:
    """``1h 02m``, ``3m 12s``, ``8s``; an em dash when unknown."""
    if seconds is None:
        return "—"
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


class RunTableModel(QAbstractTableModel):
    """Runs as rows; stored figures (``RunInfo``) overlaid with live ones (``RunProgress``)."""

    PROGRESS_COLUMN = RUN_COLUMNS.index("Progress")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runs: list[RunInfo] = []
        self.live: dict[int, RunProgress] = {}
        #: ``runs -> {run id: labels of its models without a price}`` (their cost is unknown, not
        #: $0); asked once per ``set_runs``, never while painting.
        self.unpriced_of: Callable[[list[RunInfo]], dict[int, list[str]]] = lambda _runs: {}
        self._unpriced: dict[int, list[str]] = {}

    def set_runs(self, runs: list[RunInfo]) -> None:
        self.beginResetModel()
        self.runs = list(runs)
        self._unpriced = self.unpriced_of(self.runs)
        self.endResetModel()

    def refresh_live(self) -> None:
        if self.runs:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.runs) - 1, len(RUN_COLUMNS) - 1))

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # Qt API
        return 0 if parent.isValid() else len(self.runs)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(RUN_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return RUN_COLUMNS[section]
        return None

    def run_id_at(self, row: int) -> int | None:
        return self.runs[row].id if 0 <= row < len(self.runs) else None

    def row_of(self, run_id: int) -> int | None:
        return next((row for row, run in enumerate(self.runs) if run.id == run_id), None)

    def status(self, run_id: int) -> str | None:
        live = self.live.get(run_id)
        if live is not None:
            return live.status
        row = self.row_of(run_id)
        return self.runs[row].status if row is not None else None

    def last_error(self, run_id: int) -> str | None:
        live = self.live.get(run_id)
        if live is not None and live.last_error:
            return live.last_error
        row = self.row_of(run_id)
        return self.runs[row].last_error if row is not None else None

    def figures(self, row: int) -> RunFigures:
        """The values shown for one run (live ones when the run is being executed)."""
        run = self.runs[row]
        live = self.live.get(run.id)
        if live is None:
            return RunFigures(
                status="interrupted: select it and press Resume" if run.interrupted else run.status,
                total=run.total,
                done=run.done,
                failed=run.failed,
                remaining=run.pending,
                tokens=run.prompt_tokens + run.completion_tokens,
                cost=run.cost,
                eta=None,
                in_flight=0,
            )
        return RunFigures(
            status=live.status,
            total=live.total,
            done=live.done,
            failed=live.failed,
            remaining=live.remaining,
            tokens=live.tokens,
            cost=live.cost,
            eta=live.eta if live.status == "running" else None,
            in_flight=live.in_flight,
        )

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        run, column = self.runs[index.row()], index.column()
        values = self.figures(index.row())
        total = values.total or 0
        finished = values.done + values.failed
        if role == FRACTION_ROLE:
            return finished / total if total else 1.0
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 3 and column != len(RUN_COLUMNS) - 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        name = RUN_COLUMNS[column]
        if name == "Run":
            kind = f"  [{run.kind}]" if run.kind in ("critique", "revision", "judge", "autolabel") else ""
            return f"#{run.id}  {run.name}{kind}"
        if name == "Status":
            in_flight = values.in_flight
            return f"{values.status} ({in_flight} in flight)" if in_flight else values.status
        if name == "Progress":
            return f"{finished:,} / {total:,}"
        counts = {"Done": values.done, "Failed": values.failed, "Remaining": values.remaining, "Tokens": values.tokens}
        if name in counts:
            return f"{counts[name]:,}"
        if name == "Cost":
            unpriced = self._unpriced.get(run.id, [])
            if unpriced and len(unpriced) == len(run.models):
                return "unpriced"
            return f"${values.cost:.4f}" + (" + unpriced" if unpriced else "")
        if name == "ETA":
            return format_duration(values.eta)
        return ", ".join(run.models)


class ProgressDelegate(QStyledItemDelegate):
    """Draws the Progress column as a progress bar with ``done / total`` on it."""

    def paint(self, painter, option, index) -> None:
        fraction = index.data(FRACTION_ROLE) or 0.0
        bar = QStyleOptionProgressBar()
        bar.rect = option.rect.adjusted(2, 3, -2, -3)
        bar.minimum, bar.maximum = 0, 1000
        bar.progress = int(round(fraction * 1000))
        bar.text = index.data(Qt.ItemDataRole.DisplayRole) or ""
        bar.textVisible = True
        bar.state = option.state | QStyle.StateFlag.State_Horizontal
        style = option.widget.style() if option.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ProgressBar, bar, painter, option.widget)
