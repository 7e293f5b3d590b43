"""The Results tab's Critiques view, offscreen with a real library: empty state, tables and the
human line filled from the analysis, plots exported through the tab's buttons' path, live
update when another connection writes critiques, the export buttons per view."""

from __future__ import annotations

import random

import pytest
from PySide6.QtCore import Qt

from thoughtdesk.core.critiques import (
    DIMENSIONS,
    Critique,
    CritiqueRating,
    ExplanationRating,
    ParsedCritique,
    add_critique,
    add_explanation_rating,
)
from thoughtdesk.core.critiques.analysis import analyse_collection
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.evaluation.critique_plots import DimensionPlot, ScoreDistributionPlot, ScoreScatterPlot
from thoughtdesk.ui.evaluation.view import ResultsView


def seed(path, models=("DS-13B", "DS-7B"), seed_value: int = 1) -> int:
    """Critiques by ``models`` of every Demo CoT, with human ratings; returns how many critiques."""
    rng = random.Random(seed_value)
    count = 0
    with Library.open(path) as lib, lib.transaction() as conn:
        cots = [pk for (pk,) in conn.execute("SELECT id FROM generated_cot ORDER BY id")]
        for cot in cots:
            for model in models:
                parsed = ParsedCritique(dimension=rng.choice(DIMENSIONS), explanation_score=float(rng.randint(0, 5)))
                ratings = [CritiqueRating("w1", rng.randint(0, 3)), CritiqueRating("w2", rng.randint(0, 3))]
                add_critique(conn, Critique(cot, model, "critique text", parsed, ratings=ratings))
                count += 1
            add_explanation_rating(conn, cot, ExplanationRating("ann", rng.randint(0, 5)))
            add_explanation_rating(conn, cot, ExplanationRating("bob", rng.randint(0, 5)))
    return count


def critiques(window, qtbot) -> ResultsView:
    view = window.evaluation
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: view.snapshot is not None and view.is_idle(), timeout=30000)
    view.views.setCurrentWidget(view.critiques)
    qtbot.waitUntil(lambda: view.critiques.analysis is not None and view.is_idle(), timeout=30000)
    return view


def test_empty_collection_says_how_to_get_critiques(window, qtbot):
    view = critiques(window, qtbot)
    assert view.critiques.analysis is not None and view.critiques.analysis.n_critiques == 0
    assert view.critiques.pages.currentWidget() is view.critiques.empty
    assert "Generate > Critique" in view.critiques.empty.text() and "DS Critique Bank" in view.critiques.empty.text()
    assert not any(b.isEnabled() for b in view.export_buttons)  # nothing to export
    with pytest.raises(ValueError):
        view.export_current("png", "/nonexistent/x.png")
    view.views.setCurrentIndex(0)
    assert all(b.isEnabled() for b in view.export_buttons)  # the accuracy plot is back
    view.plots.setCurrentWidget(view.compare)
    assert not any(b.isEnabled() for b in view.export_buttons)  # the comparison has no plot


@pytest.mark.parametrize("plot_class", [DimensionPlot, ScoreDistributionPlot, ScoreScatterPlot])
def test_plots_without_data_export_a_header_and_an_image(qtbot, tmp_path, plot_class):
    plot = plot_class()
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    plot.set_analysis(None)
    assert len(plot.export_csv(tmp_path / "p.csv").read_text(encoding="utf-8").splitlines()) == 1
    assert plot.export_png(tmp_path / "p.png").stat().st_size > 0


def test_tables_and_plots_show_the_analysis_and_export(window, qtbot, tmp_path):
    n = seed(window.library.path)
    window.notify_data_changed(DataChanges(annotations=True))
    view = critiques(window, qtbot)
    qtbot.waitUntil(
        lambda: view.critiques.analysis is not None and view.critiques.analysis.n_critiques == n and view.is_idle(),
        timeout=30000,
    )
    expected = analyse_collection(window.library, window.evaluation.collection_combo.currentText())
    panel = view.critiques
    assert panel.pages.currentIndex() == 0
    assert panel.models_model.rowCount() == 2 and panel.students_model.rowCount() == len(expected.students)
    assert panel.agreement_model.rowCount() == 3  # DS-13B/DS-7B and each with the humans
    assert [panel.models_model.cells[i][0] for i in range(2)] == ["DS-13B", "DS-7B"]
    mean = expected.critique_models[0].mean_explanation_score
    assert panel.models_model.cells[0][3] == f"{mean:.2f}"
    assert "Krippendorff" in panel.human_label.text()
    assert f"{n:,} critique(s)" in panel.status.text()
    # sorting by a number column sorts numbers, not their text
    panel.students_table.sortByColumn(6, Qt.SortOrder.DescendingOrder)
    proxy = panel.students_table.model()
    values = [proxy.index(i, 6).data(Qt.ItemDataRole.UserRole + 1) for i in range(proxy.rowCount())]
    assert values == sorted(values, reverse=True)
    assert all(b.isEnabled() for b in view.export_buttons)
    for tab, header in enumerate(
        ("student_model,dimension", "critique_model,explanation_score", "critique_model,cot_pk")
    ):
        panel.plots.setCurrentIndex(tab)
        png = view.export_current("png", tmp_path / f"p{tab}.png")
        svg = view.export_current("svg", tmp_path / f"p{tab}.svg")
        lines = view.export_current("csv", tmp_path / f"p{tab}.csv").read_text(encoding="utf-8").splitlines()
        assert png.stat().st_size > 1000 and "<svg" in svg.read_text(encoding="utf-8")
        assert lines[0].startswith(header) and len(lines) > 2
    assert len(panel.scatter_plot.points) == len(expected.points) > 0
    assert panel.dimension_plot.models == sorted(expected.dimensions_by_student_model)


def test_live_update_when_another_connection_writes_critiques(window, qtbot):
    view = critiques(window, qtbot)
    assert view.critiques.analysis is not None and view.critiques.analysis.n_critiques == 0
    n = seed(window.library.path, models=("gpt-4o",))  # another connection: only the poll notices
    qtbot.waitUntil(
        lambda: view.critiques.analysis is not None and view.critiques.analysis.n_critiques == n and view.is_idle(),
        timeout=15000,
    )
    assert view.critiques.models_model.cells[0][0] == "gpt-4o"
    assert view.critiques.pages.currentIndex() == 0


def test_follows_the_chosen_collection(window, qtbot):
    seed(window.library.path)
    with Library.open(window.library.path) as other:
        other.create_collection("empty one")
    window.notify_data_changed(DataChanges(collections=True))
    view = critiques(window, qtbot)
    demo = view.collection_combo.currentText()
    qtbot.waitUntil(
        lambda: view.critiques.analysis is not None and view.critiques.analysis.n_critiques > 0 and view.is_idle(),
        timeout=30000,
    )
    view.collection_combo.setCurrentIndex(view.collection_combo.findText("empty one"))
    qtbot.waitUntil(
        lambda: (
            view.critiques.analysis is not None and view.critiques.analysis.collection == "empty one" and view.is_idle()
        ),
        timeout=30000,
    )
    assert view.critiques.pages.currentWidget() is view.critiques.empty
    assert "empty one" in view.critiques.empty.text()
    view.collection_combo.setCurrentIndex(view.collection_combo.findText(demo))
    qtbot.waitUntil(
        lambda: view.critiques.analysis is not None and view.critiques.analysis.collection == demo and view.is_idle(),
        timeout=30000,
    )
    assert view.critiques.models_model.rowCount() == 2


def test_step_judges_tab_shows_processbench_scores_and_the_confusion(window, qtbot):
    from thoughtdesk.core.steps.store import StepReview, StepTarget, put_review

    seed(window.library.path, models=("judge",))
    with Library.open(window.library.path) as lib, lib.transaction() as conn:
        cots = conn.execute("SELECT id, sample_pk FROM generated_cot ORDER BY id LIMIT 3").fetchall()
        truths, judged = [-1, 0, 2], [-1, 1, None]
        for (cot, sample), truth, verdict in zip(cots, truths, judged, strict=True):
            target = StepTarget(sample, cot)
            put_review(conn, target, "ann", StepReview("ann", first_error=truth))
            extra = {"unparseable": "no \\boxed{} answer"} if verdict is None else None
            put_review(conn, target, "judge", StepReview("judge", first_error=verdict, kind="model", extra=extra))
    window.notify_data_changed(DataChanges(annotations=True))
    view = critiques(window, qtbot)
    panel = view.critiques
    qtbot.waitUntil(lambda: panel.process_model.rowCount() == 1 and view.is_idle(), timeout=30000)
    assert panel.process_model.cells[0] == ["judge", "3", "2", "1", "0.0 %", "100.0 %", "0.0 %", "1"]
    assert panel.confusion_label.text() == (
        "judge, true -> judged first error: -1 -> -1 x1, 0 -> 1 x1, 2 -> unparseable x1"
    )
