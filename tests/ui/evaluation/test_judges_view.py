"""Results > Judges (issue 26, point 2): the judges' figures and the strengths plot over verdicts
of a real judge run, exports, an empty collection explained, within a 1366x768 screen."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.core.generation.test_judge_runs import correct_texts
from tests.helpers.judge_servers import first_judge, right_answer_judge
from tests.helpers.screenshots import save_screenshot
from thoughtdesk.core.generation.runs import (
    CotSelection,
    JudgeSpec,
    ModelSpec,
    create_judge_run,
    execute_run,
    plan_judge_run,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.evaluation.view import ResultsView


def judges(window, qtbot) -> ResultsView:
    view = window.evaluation
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: view.snapshot is not None and view.is_idle(), timeout=30000)
    view.views.setCurrentWidget(view.judges)
    qtbot.waitUntil(lambda: view.judges.is_idle() and view.judges.analysis is not None, timeout=30000)
    return view


def judge_collection(path, server, name: str) -> None:
    with Library.open(path) as lib:
        collection = lib.collections()[0].name
        spec = JudgeSpec(CotSelection(collection), (ModelSpec("openai", name, base_url=server.base_url),))
        run_id = create_judge_run(lib, plan_judge_run(lib, spec))
    assert execute_run(path, run_id).status == "done"


def test_judges_view_shows_figures_and_strengths_and_exports(window, qtbot, tmp_path):
    view = judges(window, qtbot)
    assert view.judges.judges_model.rowCount() == 0 and "has no pairwise verdicts" in view.judges.status.text()
    assert not any(b.isEnabled() for b in view.export_buttons)
    path = window.library.path
    with first_judge() as first, right_answer_judge(correct_texts(path)) as right:
        judge_collection(path, first, "first-judge")
        judge_collection(path, right, "right-judge")
    view.judges.refresh()
    qtbot.waitUntil(lambda: view.judges.is_idle() and view.judges.judges_model.rowCount() == 2, timeout=30000)
    rows = {cells[0]: cells for cells in view.judges.judges_model.cells}
    assert rows["first-judge"][3] == "0.000" and rows["first-judge"][4] == "1.000"
    assert rows["right-judge"][3] == "1.000"
    view.judges.judge_combo.setCurrentIndex(
        view.judges.judge_combo.findText("right-judge", Qt.MatchFlag.MatchStartsWith)
    )
    plot = view.judges.strength_plot
    assert plot.judge == "right-judge" and len(plot.rows) == view.judges.conditions_model.rowCount() > 1
    assert all(b.isEnabled() for b in view.export_buttons)
    lines = view.export_current("csv", tmp_path / "s.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "judge,condition,wins,losses,ties,strength,low,high" and len(lines) == 1 + len(plot.rows)
    assert view.export_current("png", tmp_path / "s.png").stat().st_size > 1000
    window.resize(1366 - 20, 768 - 60)
    qtbot.wait(50)
    assert window.width() <= 1366 and window.height() <= 768
    assert save_screenshot(window, tmp_path, "results-judges").stat().st_size > 10_000
