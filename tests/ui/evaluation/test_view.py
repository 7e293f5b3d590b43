"""The Results tab, driven offscreen with a real library file: data, live update from another
connection, correctness-map click, re-score button, pairwise comparison, exports."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QImage
from scipy.stats import binomtest

from tests.helpers.expected_results import FIXTURES
from tests.helpers.window import last_message
from thoughtdesk.core.evaluation.evaluate import evaluate
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.evaluation.view import ResultsView
from thoughtdesk.ui.qt import QFileDialog

# The ``window`` fixture (tests/helpers/window.py) opens a new library with the Demo collection.


def results(window, qtbot) -> ResultsView:
    view = window.evaluation
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is view
    qtbot.waitUntil(lambda: view.snapshot is not None and view.is_idle(), timeout=30000)
    return view


def test_results_tab_renders_the_collection(window, qtbot):
    view = results(window, qtbot)
    expected = evaluate(window.library, "Demo", comparisons=False)
    assert view.collection_combo.currentText() == "Demo"
    assert view.table_model.rowCount() == len(expected.rows) > 0
    shown = {view.table_model.rows[i].key: view.table_model.rows[i].accuracy for i in range(len(expected.rows))}
    assert shown == {r.key: r.accuracy for r in expected.rows}
    model = view.table.model()
    first = model.index(0, 5).data()
    assert first.endswith("%")
    view.table.sortByColumn(5, Qt.SortOrder.DescendingOrder)  # accuracy, sorted by value not text
    values = [model.index(i, 5).data(Qt.ItemDataRole.UserRole + 1) for i in range(model.rowCount())]
    assert values == sorted(values, reverse=True)
    assert "stored in the imported file" in view.status.text()
    panels = [i for i in view.accuracy_plot.layout_widget.ci.items if hasattr(i, "titleLabel")]
    assert len(panels) == len({(r.dataset, r.split) for r in expected.rows})
    assert view.pareto_note.text().startswith("No token counts stored")
    assert view.correctness_map.sample_ids  # one dataset split's questions


def test_follows_the_tree_selection(window, qtbot):
    view = results(window, qtbot)
    with Library.open(window.library.path) as other:
        import_thoughtsource(other, FIXTURES / "bad_input.json", collection="bad")
    with qtbot.waitSignal(window.samples.browse_refreshed, timeout=10000):
        window.notify_data_changed(DataChanges.imported())
    window.samples.tree.select_collection("bad")
    qtbot.waitUntil(
        lambda: view.snapshot is not None and view.snapshot.collection == "bad" and view.is_idle(), timeout=30000
    )
    assert view.collection_combo.currentText() == "bad"
    assert sum(r.n for r in view.table_model.rows) == 7


def test_live_update_when_another_connection_writes_answers(window, qtbot):
    view = results(window, qtbot)
    before = sum(r.n for r in view.table_model.rows)
    with Library.open(window.library.path) as other:  # e.g. a generation run or the CLI
        import_thoughtsource(other, FIXTURES / "bad_input.json", collection="Demo")
    # no data_changed signal: only the data_version poll can notice
    qtbot.waitUntil(lambda: sum(r.n for r in view.table_model.rows) == before + 7, timeout=15000)
    with Library.open(window.library.path) as other:
        other.conn.execute("UPDATE answer SET td_outcome = 'incorrect'")
    qtbot.waitUntil(lambda: all(r.correct == 0 for r in view.table_model.rows) and view.is_idle(), timeout=15000)
    assert "ThoughtDesk" in view.status.text()


def _click_cell(qtbot, view, column: int, row: int) -> None:
    plot = view.correctness_map
    scene_point = plot.image.mapToScene(QPointF(column + 0.5, row + 0.5))
    view_point = plot.layout_widget.mapFromScene(scene_point)
    qtbot.mouseClick(plot.layout_widget.viewport(), Qt.MouseButton.LeftButton, pos=view_point)


def test_correctness_map_click_opens_the_sample(window, qtbot):
    view = results(window, qtbot)
    view.plots.setCurrentIndex(2)
    qtbot.wait(50)
    label = view.correctness_map.sample_ids[1]
    assert view.snapshot is not None
    pk = view.snapshot.result.sample_pks[label]
    with qtbot.waitSignal(window.sample_selected, timeout=5000, check_params_cb=lambda key: key == pk):
        _click_cell(qtbot, view, 0, 1)
    assert window.tabs.currentIndex() == 0
    assert window.samples.current_sample_key() == pk
    sample_id = label.split("/", 2)[2]
    assert window.samples.detail.current.sample.id == sample_id


def test_rescore_button_runs_in_background_and_redraws(window, qtbot):
    view = results(window, qtbot)
    assert view.rescore_current() is not None  # a small collection may finish before we could wait
    qtbot.waitUntil(
        lambda: view.snapshot is not None and view.snapshot.result.source == "thoughtdesk" and view.is_idle(),
        timeout=30000,
    )
    scored = window.library.conn.execute("SELECT count(*) FROM answer WHERE td_outcome IS NOT NULL").fetchone()[0]
    assert view.snapshot is not None and scored == view.snapshot.result.scored_by_thoughtdesk == 33
    # Restore imported: ThoughtDesk's verdicts are cleared and the file's correctness is back.
    view.restore_button.click()
    qtbot.waitUntil(
        lambda: view.snapshot is not None and view.snapshot.result.source != "thoughtdesk" and view.is_idle(),
        timeout=30000,
    )
    left = window.library.conn.execute("SELECT count(*) FROM answer WHERE td_outcome IS NOT NULL").fetchone()[0]
    assert left == 0 and view.snapshot is not None and view.snapshot.result.scored_by_thoughtdesk == 0
    assert "restored to the imported correctness" in window.statusBar().currentMessage()


def test_pairwise_comparison_of_two_chosen_conditions(window, qtbot, shared):
    path = shared("thoughtsource", "thoughtsource_67_openai_chat_gpt-3.5-turbo_None_None-kojima-01-zhou-01.json")
    with Library.open(window.library.path) as other:
        import_thoughtsource(other, path, collection="ts")
    with qtbot.waitSignal(window.samples.browse_refreshed, timeout=10000):
        window.notify_data_changed(DataChanges.imported())
    window.samples.tree.select_collection("ts")
    view = results(window, qtbot)
    qtbot.waitUntil(
        lambda: view.snapshot is not None and view.snapshot.collection == "ts" and view.is_idle(), timeout=30000
    )
    assert view.snapshot is not None
    keys = [r.key for r in view.snapshot.result.rows if r.dataset == "med_qa"]
    view.plots.setCurrentIndex(3)
    with qtbot.waitSignal(
        view.compare.compared,
        timeout=30000,
        check_params_cb=lambda c: c is not None and (c.condition_a, c.condition_b) == (keys[0][3], keys[2][3]),
    ) as compared:
        view.compare.choose(keys[0], keys[2])
    c = compared.args[0]
    expected = binomtest(c.only_a, c.only_a + c.only_b, 0.5).pvalue
    assert c.n == 67 and c.p_value == pytest.approx(expected)
    assert f"McNemar exact p = {c.p_value:.4g}" in view.compare.result_label.text()
    assert c.difference_low <= c.difference <= c.difference_high


@pytest.mark.parametrize("tab", [0, 1, 2])
def test_plot_exports_are_non_empty(window, qtbot, tmp_path, tab):
    view = results(window, qtbot)
    view.plots.setCurrentIndex(tab)
    qtbot.wait(50)
    png = view.export_current("png", tmp_path / "plot.png")
    image = QImage(str(png))
    assert png.stat().st_size > 1000 and image.width() == 1200 and image.height() > 100
    svg = view.export_current("svg", tmp_path / "plot.svg").read_text(encoding="utf-8")
    assert "<svg" in svg and len(svg) > 1000
    lines = view.export_current("csv", tmp_path / "plot.csv").read_text(encoding="utf-8").splitlines()
    assert len(lines) > 1 and "," in lines[0]


@pytest.mark.parametrize("kind", ["png", "svg", "csv"])
def test_a_plot_is_never_exported_onto_the_open_library(window, qtbot, monkeypatch, kind):
    """Issue 15, point 1 (audit): a plot export chosen onto the library wrote over it."""
    view = results(window, qtbot)
    library = window.library.path
    before = library.read_bytes()
    for target in (library, library.with_name(library.name + "-wal")):
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, t=target, **k: (str(t), ""))
        view.export_dialog(kind)  # the user picked the library in the save dialog
        box = last_message(window)
        assert "open library" in box.text() and "destroy" in box.text()
        box.close()
    assert library.read_bytes() == before
    assert [c.name for c in window.library.collections()] == ["Demo"]


def test_names_from_data_stay_plain_text(window, qtbot, tmp_path):
    data = json.loads((FIXTURES / "bad_input.json").read_text(encoding="utf-8"))
    data = {"<b>bold</b>": data["bad_cases"]}
    path = tmp_path / "markup.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with Library.open(window.library.path) as other:
        import_thoughtsource(other, path, collection="<i>markup</i>")
    with qtbot.waitSignal(window.samples.browse_refreshed, timeout=10000):
        window.notify_data_changed(DataChanges.imported())
    window.samples.tree.select_collection("<i>markup</i>")
    view = results(window, qtbot)
    qtbot.waitUntil(
        lambda: view.snapshot is not None and view.snapshot.collection == "<i>markup</i>" and view.is_idle(),
        timeout=30000,
    )
    assert view.table.model().index(0, 0).data() == "<b>bold</b>"
    assert view.status.textFormat() == Qt.TextFormat.PlainText


def test_export_buttons_follow_the_plot_tab(window, qtbot):
    """Issue 16, point 4: on "Compare two conditions" (a form, no plot) the export buttons are off."""
    view = results(window, qtbot)
    names = [view.plots.tabText(i) for i in range(view.plots.count())]
    view.plots.setCurrentIndex(names.index("Compare two conditions"))
    assert view.export_buttons and not any(b.isEnabled() for b in view.export_buttons)
    assert "Nothing to export here" in view.export_buttons[0].toolTip()
    view.plots.setCurrentIndex(names.index("Accuracy"))
    assert all(b.isEnabled() for b in view.export_buttons)


@pytest.fixture
def guided_library(tmp_path, fake_server):
    """The demo collection with three CoTs of one model per med_qa question, written by three
    runs against a local server: one-shot, plain step-by-step, and RATIONALYST (implicit
    supervision, the server's /completions echoing log-probs as the scorer). Each condition
    answers another letter, so their correctness differs from question to question."""
    from tests.helpers.libraries import DEMO, demo_library
    from tests.helpers.servers import Reply
    from thoughtdesk.core.generation.prompts import PromptMode
    from thoughtdesk.core.generation.runs import (
        GuideSpec,
        ModelSpec,
        RunLimits,
        RunSpec,
        SampleSelection,
        create_run,
        execute_run,
        plan_run,
    )

    letter = {"now": "A"}

    def answer(record):
        if not record.path.endswith("/chat/completions"):
            return None  # /completions with echo: the toy scorer's log-probs
        texts = [f"The answer is {letter['now']}."] * int(record.json.get("n", 1))
        choices = [{"index": i, "message": {"role": "assistant", "content": t}} for i, t in enumerate(texts)]
        return Reply(body={"id": "x", "model": "agent", "choices": choices, "usage": {}})

    fake_server.responder = answer
    path = demo_library(tmp_path / "guided.thoughtdesk")
    agent = ModelSpec("openai", "agent", base_url=fake_server.base_url, timeout=5.0)
    rationale = ModelSpec("openai", "rationale", base_url=fake_server.base_url, timeout=5.0)
    samples = SampleSelection(DEMO, datasets=("med_qa",))
    for now, options in (
        ("A", {"mode": PromptMode.ONE_STEP}),
        ("B", {"guide": GuideSpec(method="stepwise")}),
        ("C", {"guide": GuideSpec(rationale_model=rationale, candidates=2)}),
    ):
        letter["now"] = now
        with Library.open(path) as lib:
            run_id = create_run(lib, plan_run(lib, RunSpec(samples=samples, models=(agent,), **options)))
        assert execute_run(path, run_id, limits=RunLimits(concurrency=2)).status == "done"
    return path


def test_guided_stepwise_and_one_shot_cots_are_compared_as_conditions(make_window, guided_library, qtbot):
    """Issue 14 point 6, in the app: the Results tab lists guided, step-by-step and one-shot CoTs
    of the same model as separate conditions and compares two of them with McNemar's test."""
    window = make_window(guided_library)
    view = window.evaluation
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(
        lambda: view.snapshot is not None and view.snapshot.collection == "demo" and view.is_idle(), timeout=30000
    )
    table = view.table.model()
    shown = {
        (table.index(i, 0).data(), table.index(i, 2).data(), table.index(i, 3).data()): table.index(i, 4).data()
        for i in range(table.rowCount())
    }
    ours = {condition: n for (dataset, model, condition), n in shown.items() if (dataset, model) == ("med_qa", "agent")}
    assert set(ours) == {"- / - / -", "stepwise: - / - / -", "rationalyst-implicit: - / - / -"}
    questions = set(ours.values())
    assert len(questions) == 1 and int(questions.pop()) >= 2  # every condition answered each question
    keys = {r.key[3]: r.key for r in view.snapshot.result.rows if r.key[:3] == ("med_qa", "test", "agent")}
    view.plots.setCurrentIndex(view.plots.indexOf(view.compare))
    one_shot, guided = keys["- / - / -"], keys["rationalyst-implicit: - / - / -"]
    with qtbot.waitSignal(
        view.compare.compared,
        timeout=30000,
        check_params_cb=lambda c: c is not None and (c.condition_a, c.condition_b) == (one_shot[3], guided[3]),
    ) as compared:
        view.compare.choose(one_shot, guided)
    c = compared.args[0]
    assert c.n == int(ours["- / - / -"]) and c.only_a + c.only_b > 0  # they disagree on some questions
    assert c.p_value == pytest.approx(binomtest(c.only_a, c.only_a + c.only_b, 0.5).pvalue)
    assert f"McNemar exact p = {c.p_value:.4g}" in view.compare.result_label.text()
    expected = evaluate(window.library, "demo", n_resamples=99)
    assert {r.condition for r in expected.rows if r.model == "agent"} == set(ours)


def test_figure_columns_without_a_figure_are_hidden_and_the_condition_gets_the_room(window, qtbot):
    # Demo stores no token counts, costs or votes: those columns would only squeeze the
    # condition names ("- / kojima-0…") at 1366x768.
    window.resize(1366, 740)
    view = results(window, qtbot)
    model = view.table_model
    titles = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    for column, title in enumerate(titles):
        blank = all(model.index(row, column).data() in ("", None) for row in range(model.rowCount()))
        assert view.table.isColumnHidden(column) == (blank and column >= 4), title
    assert view.table.isColumnHidden(titles.index("Mean tokens"))
    assert not view.table.isColumnHidden(titles.index("Accuracy"))
    conditions = {r.condition for r in model.rows}
    widest = max(view.table.fontMetrics().horizontalAdvance(c) for c in conditions)
    assert view.table.columnWidth(3) >= widest  # no condition cut
