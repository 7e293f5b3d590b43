"""The Results tab's accuracy table sorts itself as a QSortFilterProxyModel over it did."""

from __future__ import annotations

import random

import pytest
from PySide6.QtCore import QItemSelectionModel, QSortFilterProxyModel, Qt

from thoughtdesk.core.evaluation.metrics import AccuracyRow
from thoughtdesk.ui.evaluation.table import COLUMNS, SORT_ROLE, AccuracyTableModel


def _rows() -> list[AccuracyRow]:
    rng = random.Random(7)
    # Names outside the Basic Multilingual Plane sort differently by code point and by UTF-16
    # code unit (Qt's order); repeated values check that ties keep the given order.
    names = ["med_qa", "Med_QA", "ä-set", "\U0001f600 set", "\ufffd set", "zeta"]
    rows = []
    for _ in range(40):
        n = rng.choice([10, 20, 20, 1000])
        correct = rng.randrange(n + 1)
        unextractable = rng.randrange(n - correct + 1)
        rows.append(
            AccuracyRow(
                rng.choice(names),
                rng.choice(["test", "train"]),
                rng.choice(["gpt", "llama", "Llama"]),
                f"- / trigger-{rng.randrange(5)} / x",
                n,
                correct,
                n - correct - unextractable,
                unextractable,
                correct / n,
                rng.choice([0.1, 0.2, 0.2]),
                0.9,
                unextractable / n,
                rng.randrange(1, 5),
                rng.choice([None, 0.5, 0.25]),
                rng.choice([None, 120.0, 80.5]),
                rng.choice([None, 0.001]),
            )
        )
    return rows


def _shown(model) -> list[list[str]]:
    return [[model.index(r, c).data() for c in range(model.columnCount())] for r in range(model.rowCount())]


@pytest.mark.parametrize("order", [Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder])
def test_the_table_sorts_as_a_sort_proxy_did(qtbot, order):
    """Issue 27, point 6: the proxy re-sorted the table through thousands of Python data() calls
    on every redraw; the model now sorts itself, in the proxy's order (stable, by SORT_ROLE)."""
    rows = _rows()
    unsorted = AccuracyTableModel()
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(unsorted)
    proxy.setSortRole(SORT_ROLE)
    model = AccuracyTableModel()
    # As the Results tab: sorted by the first column before the first rows arrive.
    proxy.sort(0, Qt.SortOrder.AscendingOrder)
    model.sort(0, Qt.SortOrder.AscendingOrder)
    unsorted.set_rows(rows)
    model.set_rows(rows)
    assert _shown(model) == _shown(proxy)
    # Every column, then a few again: ties keep the previous sort's order, as in the proxy.
    for column in [*range(len(COLUMNS)), 2, 0, 4, 1]:
        proxy.sort(column, order)
        model.sort(column, order)
        assert _shown(model) == _shown(proxy), COLUMNS[column].title
        model.set_rows(list(reversed(rows)))  # a redraw keeps the chosen order
        unsorted.set_rows(list(reversed(rows)))
        assert _shown(model) == _shown(proxy), COLUMNS[column].title
        model.set_rows(rows)
        unsorted.set_rows(rows)


def test_a_selected_row_stays_selected_when_the_table_is_sorted(qtbot):
    model = AccuracyTableModel()
    model.set_rows(_rows())
    selection = QItemSelectionModel(model)
    chosen = model.rows[17]
    selection.select(
        model.index(17, 0), QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    )
    for column in (5, 2, 0):
        model.sort(column, Qt.SortOrder.DescendingOrder)
        (row,) = {index.row() for index in selection.selectedIndexes()}
        assert model.rows[row] is chosen
