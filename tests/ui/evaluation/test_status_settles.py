"""Issue 28, point 9: no "Computing…" left beside a final result. A burst of collection changes,
tab switches and data changes from another connection, then every Results page settles with a
status that describes what it shows."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.helpers.expected_results import FIXTURES
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.qt import QLabel


def _all_idle(view) -> bool:
    return (
        view.is_idle()
        and view.human_agreement.is_idle()
        and view.judges.is_idle()
        and view.snapshot is not None
        and view.snapshot.collection == view.collection_combo.currentText()
    )


def test_no_page_says_computing_once_the_results_settled(window, qtbot):
    view = window.evaluation
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: view.snapshot is not None and view.is_idle(), timeout=30000)
    with Library.open(window.library.path) as other:
        import_thoughtsource(other, FIXTURES / "bad_input.json", collection="bad")
    window.notify_data_changed(DataChanges.imported())
    qtbot.waitUntil(lambda: view.collection_combo.findText("bad") >= 0, timeout=10000)
    names = ["Demo", "bad"]
    for i in range(12):
        view.collection_combo.setCurrentText(names[i % 2])
        view.views.setCurrentIndex(i % view.views.count())
        if i % 3 == 0:
            window.tabs.setCurrentIndex(0)  # the Results tab hidden while its pages compute
            window.notify_data_changed(DataChanges.imported())
            window.tabs.setCurrentWidget(view)
        if i % 4 == 1:
            with Library.open(window.library.path) as other:
                other.conn.execute("UPDATE answer SET td_outcome = 'incorrect' WHERE rowid % 2 = 0")
        qtbot.wait(i * 7 % 40)  # the burst's rhythm: some changes land while a page computes
    for index in range(view.views.count()):  # every page shown once, so a stale one refreshes
        view.views.setCurrentIndex(index)
        qtbot.waitUntil(lambda: _all_idle(view), timeout=30000)
    stuck = [
        label.objectName() or type(label.parent()).__name__
        for label in view.findChildren(QLabel)
        if label.text().startswith(("Computing", "Reading "))
    ]
    assert stuck == []
