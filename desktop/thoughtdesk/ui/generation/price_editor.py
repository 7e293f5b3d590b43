"""An editable price table (USD per million tokens) for the run planner's cost estimate.

The user's table is saved to ``<user config folder>/prices.json`` when edited; until then the
defaults of :mod:`thoughtdesk.core.generation.backends.pricing` are shown. A row's model may be a glob
(``gpt-4o-mini*``); exact names win over patterns.
"""

from __future__ import annotations

from pathlib import Path

from thoughtdesk.core.generation.backends import ModelPrice, PriceTable
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    Qt,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label

PRICE_COLUMNS = ("Provider", "Model (glob)", "Input $/M tokens", "Output $/M tokens", "Note")


class PriceEditor(QWidget):
    """The price table as an editable grid; ``changed`` when a valid edit was made (and saved)."""

    changed = Signal()

    def __init__(self, table: PriceTable, path: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.grid = QTableWidget(0, len(PRICE_COLUMNS), objectName="priceTable")
        self.grid.setHorizontalHeaderLabels(PRICE_COLUMNS)
        self.grid.verticalHeader().setVisible(False)
        self.grid.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.grid.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.message = plain_label(name="priceMessage")
        add = QPushButton("Add price", objectName="addPrice")
        add.clicked.connect(self.add_row)
        remove = QPushButton("Remove", objectName="removePrice")
        remove.clicked.connect(self.remove_row)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.grid, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        self._filling = False
        self.set_table(table)
        self.grid.itemChanged.connect(self._edited)

    def set_table(self, table: PriceTable) -> None:
        self._filling = True
        self.grid.setRowCount(0)
        for price in table.prices:
            self._append(price)
        self._filling = False

    def _append(self, price: ModelPrice) -> None:
        row = self.grid.rowCount()
        self.grid.insertRow(row)
        values = (
            price.provider,
            price.model,
            f"{price.input_per_million:g}",
            f"{price.output_per_million:g}",
            price.note,
        )
        for column, value in enumerate(values):
            item = QTableWidgetItem(value)
            if column in (2, 3):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.grid.setItem(row, column, item)

    def table(self) -> PriceTable:
        """The table as edited; rows that do not parse are left out (and reported)."""
        prices, problems = [], []
        for row in range(self.grid.rowCount()):
            cells = [
                (item.text().strip() if (item := self.grid.item(row, c)) is not None else "")
                for c in range(len(PRICE_COLUMNS))
            ]
            if not cells[0] or not cells[1]:
                problems.append(f"row {row + 1}: a provider and a model (or pattern) are needed")
                continue
            try:
                prices.append(ModelPrice(cells[0], cells[1], float(cells[2]), float(cells[3]), cells[4]))
            except ValueError:
                problems.append(f"row {row + 1}: prices must be numbers (USD per million tokens)")
        self.message.setText("; ".join(problems) if problems else "")
        return PriceTable(prices)

    def _edited(self, _item: QTableWidgetItem | None) -> None:
        if self._filling:
            return
        table = self.table()
        if self.path is not None and not self.message.text():
            try:
                table.save(self.path)
            except OSError as error:
                self.message.setText(f"Could not save prices to {self.path}: {error}")
        self.changed.emit()

    def add_row(self) -> None:
        self._filling = True
        self._append(ModelPrice("openai", "model-name", 0.0, 0.0))
        self._filling = False
        self.grid.setCurrentCell(self.grid.rowCount() - 1, 1)
        self._edited(self.grid.item(self.grid.rowCount() - 1, 0))

    def remove_row(self) -> None:
        row = self.grid.currentRow()
        if row >= 0:
            self.grid.removeRow(row)
            self._edited(None)
