"""Renaming and deleting runs from the Runs tab (issue 16, point 8)."""

from __future__ import annotations

from tests.helpers.screenshots import save_screenshot
from tests.ui.generation.conftest import COLLECTION
from thoughtdesk.core.generation.runs import ModelSpec, RunSpec, SampleSelection, create_run, list_runs, plan_run
from thoughtdesk.core.library.store import Library

LOCAL = ModelSpec("openai", "local-model", base_url="http://127.0.0.1:1/v1")


def stored_runs(path) -> list:
    with Library.open(path) as lib:
        return list_runs(lib)


def test_rename_and_delete_from_the_runs_tab(window, generation, qtbot, tmp_path):
    with Library.open(window.library.path) as lib:
        run_id = create_run(lib, plan_run(lib, RunSpec(samples=SampleSelection(COLLECTION), models=(LOCAL,))))
    panel = generation.runs_panel
    panel.reload()
    qtbot.waitUntil(lambda: panel.model.row_of(run_id) is not None, timeout=5000)
    assert panel.select_run(run_id)
    assert panel.rename_button.isEnabled() and panel.delete_button.isEnabled()
    window.show_tab(panel)
    window.resize(1366, 740)  # a laptop screen less a taskbar: the button row must fit
    save_screenshot(window, tmp_path, "runs_tab_rename_delete")
    assert panel.delete_button.geometry().right() < panel.width()

    task = panel.rename_selected("ward round check")
    assert task is not None
    qtbot.waitUntil(lambda: panel.message.text() == f"Run {run_id} renamed.", timeout=5000)
    assert stored_runs(window.library.path)[0].name == "ward round check"
    assert panel.rename_selected("   ") is None and "cannot be empty" in panel.message.text()

    assert panel.select_run(run_id)
    assert panel.delete_selected(confirm=False) is not None
    qtbot.waitUntil(lambda: panel.model.row_of(run_id) is None, timeout=5000)
    assert stored_runs(window.library.path) == []
    assert "deleted; its CoTs and answers are kept" in panel.message.text()
    assert not panel.delete_button.isEnabled()  # nothing selected any more


def test_start_of_a_run_that_cannot_run_is_refused_and_leaves_it_unchanged(window, generation, qtbot, tmp_path):
    missing = ModelSpec.parse(f"llamacpp:{tmp_path / 'moved-away.gguf'}")
    with Library.open(window.library.path) as lib:
        run_id = create_run(lib, plan_run(lib, RunSpec(samples=SampleSelection(COLLECTION), models=(missing,))))
    panel = generation.runs_panel
    panel.reload()
    qtbot.waitUntil(lambda: panel.model.row_of(run_id) is not None, timeout=5000)
    assert panel.select_run(run_id)
    assert panel.resume_selected() is None and run_id not in panel.workers
    assert "moved-away.gguf does not exist" in panel.message.text() and "unchanged" in panel.message.text()
    (stored,) = stored_runs(window.library.path)
    assert stored.status == "planned" and not stored.last_error


def test_the_planner_refuses_a_model_its_server_does_not_have(window, generation, qtbot):
    """Audit of issue 16, point 8: a typo in the model left a failed run behind."""
    from tests.helpers.servers import FakeModelServer
    from tests.ui.generation.test_planner import add_model, open_planner, wait_plan

    with FakeModelServer(models=("served-a", "served-b")) as server:
        planner = open_planner(generation, qtbot)
        add_model(planner, server.base_url, "served-c")
        wait_plan(qtbot, planner)
        created: list[int] = []
        planner.run_created.connect(lambda run_id, _limits: created.append(run_id))
        task = planner.start()
        assert task is not None
        qtbot.waitUntil(lambda: task.done, timeout=10000)
        assert "has no model 'served-c'" in planner.summary.text() and "nothing was written" in planner.summary.text()
        assert planner.isVisible() and not created and stored_runs(window.library.path) == []
        assert server.gets == ["/v1/models"] and not server.requests
        planner.reject()


def test_a_run_whose_model_is_not_found_offers_to_delete_it(window, generation, qtbot, tmp_path):
    from tests.helpers.servers import FakeModelServer
    from thoughtdesk.ui.qt import QApplication, QMessageBox

    with FakeModelServer(models=("served",), list_models=False) as server:
        typo = ModelSpec("openai", "typo", base_url=server.base_url)
        with Library.open(window.library.path) as lib:
            spec = RunSpec(samples=SampleSelection(COLLECTION, limit=1), models=(typo,))
            run_id = create_run(lib, plan_run(lib, spec))
        panel = generation.runs_panel
        with qtbot.waitSignal(panel.run_ended, timeout=30000):
            panel.start_run(run_id)
    # The run list is read again in a worker, which a loaded machine can finish after the run
    # ended: the message is the selected run's, shown once the list holds the run.
    qtbot.waitUntil(lambda: panel.selected_run() == run_id and bool(panel.message.text()), timeout=30000)
    text = panel.message.text()
    assert "model 'typo' was not found" in text and "cannot be resumed with another model" in text
    assert "Start / Resume sends" not in text  # resuming cannot fix it
    offer = next(w for w in QApplication.topLevelWidgets() if w.objectName() == "emptyRunOffer" and w.isVisible())
    assert isinstance(offer, QMessageBox)
    assert "cannot be resumed" in offer.text() and "start a new run with the right model name" in offer.text()
    window.show_tab(panel)
    save_screenshot(offer, tmp_path, "empty-run-offer")
    next(b for b in offer.buttons() if b.objectName() == "deleteEmptyRun").click()
    qtbot.waitUntil(lambda: stored_runs(window.library.path) == [], timeout=5000)


def test_an_interrupted_run_shows_so_and_resumes_from_the_runs_tab(window, generation, qtbot, fake_server):
    """Issue 15, points 3 and 14 (audit: no GUI test): a run whose holder died (killed, crashed)
    showed "running" for ever. The Runs tab says it is interrupted and Start / Resume finishes it."""
    import socket
    import subprocess
    import sys
    import time

    from thoughtdesk.ui.generation.run_table import RUN_COLUMNS
    from thoughtdesk.ui.qt import Qt

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a process of this machine that no longer exists held the run
    model = ModelSpec("openai", "m", base_url=fake_server.base_url)
    with Library.open(window.library.path) as lib:
        run_id = create_run(lib, plan_run(lib, RunSpec(samples=SampleSelection(COLLECTION), models=(model,))))
        with lib.transaction() as conn:
            conn.execute(
                "UPDATE run SET status = 'running', holder = ?, lease_expires = ? WHERE id = ?",
                (f"{socket.gethostname()}:{gone.pid}:dead", time.time() + 30, run_id),
            )
    panel = generation.runs_panel
    window.show_tab(panel)
    panel.reload()
    qtbot.waitUntil(lambda: panel.model.row_of(run_id) is not None, timeout=5000)
    row = panel.model.row_of(run_id)
    shown = [panel.model.index(row, c).data(Qt.ItemDataRole.DisplayRole) for c in range(len(RUN_COLUMNS))]
    assert "interrupted: select it and press Resume" in shown
    assert panel.select_run(run_id)
    assert panel.start_button.isEnabled() and "Resume" in panel.start_button.text()
    panel.start_button.click()
    qtbot.waitUntil(lambda: stored_runs(window.library.path)[0].status == "done", timeout=30000)
    (run,) = stored_runs(window.library.path)
    assert not run.interrupted and run.done == run.total > 0


def test_deleting_a_critique_run_says_its_critiques_are_kept(window, generation, qtbot, tmp_path):
    # Issue 28: it said "its CoTs and answers are kept", which a critique run never made.
    from tests.helpers.libraries import DEMO, demo_library
    from thoughtdesk.core.generation.runs import CotSelection, CritiqueSpec, create_critique_run, plan_critique_run

    path = demo_library(tmp_path / "critiqued.thoughtdesk")
    window.open_library(path)
    qtbot.waitUntil(lambda: window.library is not None and window.library.path == path, timeout=10000)
    with Library.open(path) as lib:
        spec = CritiqueSpec(CotSelection(DEMO), models=(LOCAL,))
        run_id = create_critique_run(lib, plan_critique_run(lib, spec))
    panel = generation.runs_panel
    panel.reload()
    qtbot.waitUntil(lambda: panel.model.row_of(run_id) is not None, timeout=10000)
    assert panel.select_run(run_id)
    assert panel.delete_selected(confirm=False) is not None
    qtbot.waitUntil(lambda: panel.model.row_of(run_id) is None, timeout=10000)
    assert panel.message.text() == f"Run {run_id} deleted; its critiques are kept."


def test_the_output_pane_shows_the_selected_runs_stream_only(window, generation, qtbot):
    # Issue 28: two local runs at once mixed word by word under one run's title, and a finished
    # run's text stayed as if it were the current request's.
    with Library.open(window.library.path) as lib:
        first, second = (
            create_run(lib, plan_run(lib, RunSpec(samples=SampleSelection(COLLECTION), models=(LOCAL,))))
            for _ in range(2)
        )
    panel = generation.runs_panel
    panel.reload()
    qtbot.waitUntil(lambda: panel.model.row_of(second) is not None, timeout=10000)
    output = panel.output
    output.start(first, "prompt of the first")
    output.start(second, "prompt of the second")
    for a, b in (("The ", "Zebra "), ("answer ", "yak "), ("is 7.", "xylophone")):
        output.append(first, a)
        output.append(second, b)
    for run_id, text in ((first, "The answer is 7."), (second, "Zebra yak xylophone"), (first, "The answer is 7.")):
        assert panel.select_run(run_id)
        output.draw()
        assert output.text.toPlainText() == text
        assert output.title.text().startswith(f"Local model output — run {run_id}, current request")
    panel._ended(first, None, "")
    output.draw()
    assert output.title.text().startswith(f"Local model output — run {first}, ended: its last request")
    assert output.text.toPlainText() == "The answer is 7."
    panel.table.clearSelection()
    panel.table.setCurrentIndex(panel.table.model().index(-1, -1))
    output.draw()
    assert output.title.text() == "Local model output (current request)" and not output.text.toPlainText()
