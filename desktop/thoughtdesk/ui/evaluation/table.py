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
        lambda r: _pct(r.accuracy) if r.scored else "",
        lambda r: r.accuracy if r.scored else -1.0,
        True,
        "correct / n; not extractable answers count in n, truncated ones only when counted as wrong",
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
        "Truncated",
        lambda r: _pct(r.share_truncated),
        lambda r: r.share_truncated,
        True,
        "answers whose CoT was cut by the token limit (thinking or answer); left out of the accuracy "
        "unless counted as wrong",
    ),
    Column(
        "With reasoning",
        lambda r: _pct(r.share_reasoning),
        lambda r: r.share_reasoning,
        True,
        "answers whose CoT has a reasoning model's thinking stored apart from the visible text",
    ),
    Column(
        "Reasoning tokens",
        lambda r: "" if r.median_reasoning_tokens is None else f"{r.median_reasoning_tokens:,.0f}",
        lambda r: -1.0 if r.median_reasoning_tokens is None else r.median_reasoning_tokens,
        True,
        "median reasoning tokens per answer, where the provider or the model counted them",
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


_ROLES = frozenset(
    {
        Qt.ItemDataRole.DisplayRole,
        SORT_ROLE,
        KEY_ROLE,
        Qt.ItemDataRole.TextAlignmentRole,
        Qt.ItemDataRole.ToolTipRole,
    }
)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


def _sort_key(value: Any) -> Any:
    """A sort value compared as Qt compares it: strings by UTF-16 code unit (QString), numbers by value."""
    return value.encode("utf-16-be", "surrogatepass") if isinstance(value, str) else value


class AccuracyTableModel(QAbstractTableModel):
    """One row per dataset x split x model x condition; display text only (never rich text).

    Sorts itself (``sort``, called by the view's sortable header) instead of sitting behind a
    QSortFilterProxyModel: the proxy re-sorted every redraw through Python ``data`` calls, about
    4,000 of them for 200 rows. The order is the proxy's: stable by ``SORT_ROLE``; ties keep the
    given order after new rows, the previous order after a click on a header. Display texts are
    formatted once per row, when first painted.
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        #: the rows in the order shown
        self.rows: list[AccuracyRow] = []
        self._given: list[AccuracyRow] = []
        self._order: list[int] = []
        self._texts: list[list[str] | None] = []
        self._sort_column = -1
        self._sort_order = Qt.SortOrder.AscendingOrder

    def set_rows(self, rows: Sequence[AccuracyRow]) -> None:
        self.beginResetModel()
        self._given = list(rows)
        self._order = self._sorted_order()
        self.rows = [self._given[i] for i in self._order]
        self._texts = [None] * len(self.rows)
        self.endResetModel()

    def _sorted_order(self, order: list[int] | None = None) -> list[int]:
        """Indices into the given rows, in the order shown: ``order`` (default: as given) sorted
        stably by the sort column, so ties keep ``order``."""
        order = list(range(len(self._given))) if order is None else order
        if not 0 <= self._sort_column < len(COLUMNS):
            return order
        key, given = COLUMNS[self._sort_column].sort, self._given
        return sorted(
            order,
            key=lambda i: _sort_key(key(given[i])),
            reverse=self._sort_order == Qt.SortOrder.DescendingOrder,
        )

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort_column, self._sort_order = column, order
        self.layoutAboutToBeChanged.emit()
        old_order = self._order
        # From the order shown, as the proxy sorted its current mapping: ties keep the previous
        # sort's order (sorting by model, then by dataset, groups models within a dataset).
        self._order = self._sorted_order(old_order)
        self.rows = [self._given[i] for i in self._order]
        self._texts = [None] * len(self.rows)
        # Selections and current indexes follow their rows, as they did behind a proxy model.
        shown_at = {given: shown for shown, given in enumerate(self._order)}
        persistent = self.persistentIndexList()
        moved = [self.index(shown_at[old_order[i.row()]], i.column()) for i in persistent]
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        r = index.row()
        if role not in _ROLES or not 0 <= r < len(self.rows):
            return None  # a view asks for about ten roles per painted cell; most have nothing
        if role == Qt.ItemDataRole.DisplayRole:
            texts = self._texts[r]
            if texts is None:
                row = self.rows[r]
                texts = self._texts[r] = [column.text(row) for column in COLUMNS]
            return texts[index.column()]
        row, column = self.rows[r], COLUMNS[index.column()]
        if role == SORT_ROLE:
            return column.sort(row)
        if role == KEY_ROLE:
            return row.key
        if role == Qt.ItemDataRole.TextAlignmentRole and column.numeric:
            return _RIGHT
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"{row.correct} correct, {row.incorrect} incorrect, {row.unextractable} not extractable, "
                f"{row.truncated} truncated; "
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
