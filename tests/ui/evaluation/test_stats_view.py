"""The Results tab's Statistics view, offscreen with a real library (the Demo collection):
computed in a background task, table and plots filled, exports, hostile dataset names shown as
plain text, cancelling, and the view within a 1366x768 screen."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from thoughtdesk.core.importing.importer import import_records
from thoughtdesk.core.library.records import Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.stats import collection_statistics
from thoughtdesk.ui.evaluation.stats_plots import LengthPlot, OverlapHeatmap
from thoughtdesk.ui.evaluation.view import ResultsView


def statistics(window, qtbot) -> ResultsView:
    view = window.evaluation
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: view.snapshot is not None and view.is_idle(), timeout=30000)
    view.views.setCurrentWidget(view.statistics)
    return view


def compute(view, qtbot) -> None:
    task = view.statistics.compute()
    assert task is not None and not view.statistics.compute_button.isEnabled()
    qtbot.waitUntil(lambda: view.statistics.is_idle(), timeout=30000)


def test_nothing_to_export_before_compute(window, qtbot):
    view = statistics(window, qtbot)
    assert view.statistics.stats is None and view.statistics.model.rowCount() == 0
    assert not any(b.isEnabled() for b in view.export_buttons)
    with pytest.raises(ValueError):
        view.export_current("png", "/nonexistent/x.png")


def test_compute_fills_table_and_plots_and_exports(window, qtbot, tmp_path):
    view = statistics(window, qtbot)
    panel = view.statistics
    panel.n_spin.setValue(3)
    compute(view, qtbot)
    collection = view.collection_combo.currentText()
    with Library.open(window.library.path, create=False) as lib:
        expected = collection_statistics(lib, collection, overlap=True, n=3)
    assert panel.stats is not None and panel.stats.to_json() == expected.to_json()
    assert panel.model.rowCount() == len(expected.splits) == 4
    first = expected.splits[0]
    assert panel.model.cells[0][:3] == [first.dataset, first.split, str(first.samples)]
    assert panel.model.cells[0][9] == f"{first.lengths['question'].percentiles[50]:g}"
    assert f"{sum(s.samples for s in expected.splits):,} sample(s)" in panel.status.text()
    assert all(b.isEnabled() for b in view.export_buttons)
    headers = {0: "dataset,split,field,texts", 1: "field,n,row,column", 2: "field,n,row,column"}
    for tab, header in headers.items():
        panel.plots.setCurrentIndex(tab)
        png = view.export_current("png", tmp_path / f"s{tab}.png")
        svg = view.export_current("svg", tmp_path / f"s{tab}.svg")
        lines = view.export_current("csv", tmp_path / f"s{tab}.csv").read_text(encoding="utf-8").splitlines()
        assert png.stat().st_size > 1000 and "<svg" in svg.read_text(encoding="utf-8")
        assert lines[0].startswith(header) and len(lines) > 2
    assert len(lines) == 1 + 4 * 4  # 4 datasets: every pair, long form
    panel.field_combo.setCurrentIndex(1)  # contexts: only pubmed_qa has them
    assert [r[0] for r in panel.length_plot.rows()] == ["pubmed_qa"]
    assert panel.question_overlap.matrix is expected.overlap[0] or panel.question_overlap.matrix == expected.overlap[0]


def test_cancel_keeps_the_view_usable(window, qtbot):
    view = statistics(window, qtbot)
    task = view.statistics.compute()
    assert task is not None
    task.cancel()
    qtbot.waitUntil(lambda: view.statistics.is_idle(), timeout=30000)
    assert view.statistics.compute_button.isEnabled()
    # Either the work finished before it saw the cancel, or nothing was shown.
    assert view.statistics.stats is not None or "cancelled" in view.statistics.status.text()


def test_hostile_dataset_names_are_plain_text(window, qtbot, tmp_path):
    hostile = "<b>bold</b><img src=x>"
    with Library.open(window.library.path) as lib:
        import_records(
            lib, [(hostile, "test", Sample(id="1", question="<script>alert(1)</script> what", cot=["a b c"]), "")],
            collection="evil",
        )  # fmt: skip
    view = statistics(window, qtbot)
    view.reload_collections()
    view.collection_combo.setCurrentText("evil")
    compute(view, qtbot)
    assert view.statistics.model.cells[0][0] == hostile
    # Axis ticks are drawn by QPainter.drawText (never rich text): the names go there unchanged.
    matrix = view.statistics.question_overlap.matrix
    assert matrix is not None and matrix.units == [hostile]
    assert [r[0] for r in view.statistics.length_plot.rows()] == [hostile]


def test_empty_plots_export_a_header_and_an_image(qtbot, tmp_path):
    for plot in (LengthPlot(), OverlapHeatmap()):
        qtbot.addWidget(plot)
        plot.resize(600, 400)
        if isinstance(plot, LengthPlot):
            plot.set_statistics(None)
        else:
            plot.set_matrix(None)
        assert len(plot.export_csv(tmp_path / "p.csv").read_text(encoding="utf-8").splitlines()) == 1
        assert plot.export_png(tmp_path / "p.png").stat().st_size > 0


def test_fits_a_laptop_screen(window, qtbot, tmp_path):
    view = statistics(window, qtbot)
    compute(view, qtbot)
    window.resize(1366 - 20, 768 - 60)  # room for the frame and a taskbar
    qtbot.wait(50)
    # The view's minimum fits, so the window is not forced wider or taller than the screen.
    assert window.width() <= 1366 and window.height() <= 768
    hint = view.statistics.minimumSizeHint()
    assert hint.width() <= 1366 - 40 and hint.height() <= 768 - 160
    window.grab().save(str(tmp_path / "stats.png"))
    view.statistics.plots.setCurrentIndex(1)
    qtbot.wait(50)
    window.grab().save(str(tmp_path / "overlap.png"))
