"""The Results tab with reasoning traces (issue 24, point 4): Truncated, With reasoning and Median
reasoning tokens columns, the "Truncated as wrong" switch, truncated cells in the correctness map."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.helpers.reasoning import mixed_outcomes
from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.evaluation.table import COLUMNS


def _column(view, title: str) -> str:
    index = [c.title for c in COLUMNS].index(title)
    return view.table_model.index(0, index).data()


def test_truncated_answers_in_the_results_tab(window, qtbot):
    mixed_outcomes(window.library.path, "reasoned")
    with qtbot.waitSignal(window.samples.browse_refreshed, timeout=10000):
        window.notify_data_changed(DataChanges.imported())
    view = window.evaluation
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    view.collection_combo.setCurrentText("reasoned")
    qtbot.waitUntil(
        lambda: view.snapshot is not None and view.snapshot.collection == "reasoned" and view.is_idle(), timeout=30000
    )
    assert _column(view, "Truncated") == "40.0%"
    assert _column(view, "With reasoning") == "80.0%"
    assert _column(view, "Reasoning tokens") == "300"
    assert _column(view, "Accuracy") == "66.7%"  # 2 of the 3 answers not cut
    assert "2 answer(s) were cut by the token limit" in view.status.text()
    assert 3.0 in view.correctness_map.matrix  # truncated cells have their own colour

    view.truncated_box.setChecked(True)
    qtbot.waitUntil(lambda: view.is_idle() and view.snapshot.result.truncated_as_wrong, timeout=30000)
    assert _column(view, "Accuracy") == "40.0%"
    assert view.table_model.rows[0].accuracy == pytest.approx(0.4)
