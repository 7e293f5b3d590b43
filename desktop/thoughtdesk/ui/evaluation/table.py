"""The accuracy table of the Results view: a plain-text, sortable table model over AccuracyRow."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from thoughtdesk.core.evaluation.metrics import AccuracyRow
from thoughtdesk.ui.qt import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
KEY_ROLE = Qt.ItemDataRole.UserRole + 2


def _pct(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}%"


@dataclass(frozen=True)
class Column:
    title: str
    text: Callable[[AccuracyRow], str]
    sort: Callable[[AccuracyRow], Any]
    numeric: bool = False
    tip: str = ""


COLUMNS: tuple[Column, ...] = (
    Column("Dataset", lambda r: r.dataset, lambda r: r.dataset.lower()),
    Column("Split", lambda r: r.split, lambda r: r.split.lower()),
    Column("Model", lambda r: r.model, lambda r: r.model.lower()),
    Column(
        "Condition",
        lambda r: r.condition,
        lambda r: r.condition.lower(),
        tip="instruction / CoT trigger / answer extraction",
    ),
    Column("n", lambda r: f"{r.n:,}", lambda r: r.n, True, "answers (all samples of all questions)"),
    Column(
        "Accuracy",
        lambda r: _pct(r.accuracy),
        lambda r: r.accuracy,
        True,
        "correct / n; not extractable answers count in n",
    ),
    Column(
        "95% CI",
        lambda r: f"{100 * r.wilson_low:.1f}–{100 * r.wilson_high:.1f}",
        lambda r: r.wilson_low,
        True,
        "Wilson score interval, percent",
    ),
    Column(
        "Not extractable",
        lambda r: _pct(r.share_unextractable),
        lambda r: r.share_unextractable,
        True,
        "answers that could not be read or were ambiguous (e.g. 'A or C')",
    ),
    Column(
        "Majority vote",
        lambda r: _pct(r.majority_accuracy),
        lambda r: -1.0 if r.majority_accuracy is None else r.majority_accuracy,
        True,
        "self-consistency: accuracy of the majority answer per question",
    ),
    Column(
        "Mean tokens",
        lambda r: "" if r.mean_tokens is None else f"{r.mean_tokens:,.0f}",
        lambda r: -1.0 if r.mean_tokens is None else r.mean_tokens,
        True,
    ),
    Column(
        "Mean cost $",
        lambda r: "" if r.mean_cost is None else f"{r.mean_cost:.4f}",
        lambda r: -1.0 if r.mean_cost is None else r.mean_cost,
        True,
    ),
)


class AccuracyTableModel(QAbstractTableModel):
    """One row per dataset x split x model x condition; display text only (never rich text)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[AccuracyRow] = []

    def set_rows(self, rows: Sequence[AccuracyRow]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row, column = self.rows[index.row()], COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.text(row)
        if role == SORT_ROLE:
            return column.sort(row)
        if role == KEY_ROLE:
            return row.key
        if role == Qt.ItemDataRole.TextAlignmentRole and column.numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"{row.correct} correct, {row.incorrect} incorrect, {row.unextractable} not extractable; "
                f"{row.questions} question(s)"
            )
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section].title
        if role == Qt.ItemDataRole.ToolTipRole and COLUMNS[section].tip:
            return COLUMNS[section].tip
        return None
