"""The Runs tab polls runs waiting for a provider's batch API in the background, also when it
opens a library again (after a restart), and Start / Resume polls a batch run instead of
sending its requests directly (issue 17, point 1)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.batch_server import BatchServer
from tests.helpers.libraries import DEMO, demo_library
from tests.ui.generation.test_planner import add_model, open_planner, wait_plan
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunSpec,
    SampleSelection,
    advance_batch_run,
    create_run,
    plan_run,
    run_info,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.generation.runs_panel import RunsPanel


def _batch_run(path, server) -> int:
    spec = RunSpec(
        samples=SampleSelection(DEMO, datasets=("med_qa",)),
        models=(ModelSpec("openai", "m", base_url=server.base_url + "/v1"),),
        mode=PromptMode.ONE_STEP,
        batch=True,
    )
    with Library.open(path) as lib:
        return create_run(lib, plan_run(lib, spec))


def test_a_waiting_batch_run_is_polled_when_the_tab_opens_the_library(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-gui-batch")
    path = demo_library(tmp_path / "library.thoughtdesk")
    with BatchServer(polls_before_done=0) as server:
        run_id = _batch_run(path, server)
        assert advance_batch_run(path, run_id).status == "batched"  # submitted; then the app closed
        panel = RunsPanel(path)  # the app started again
        qtbot.addWidget(panel)
        qtbot.waitUntil(lambda: panel.model.status(run_id) == "done", timeout=20000)
        assert panel.batch_timer.isActive() is False  # nothing left to poll
    with Library.open(path) as lib:
        assert run_info(lib, run_id).done == run_info(lib, run_id).total


def test_start_resume_on_a_batch_run_submits_a_batch_not_direct_requests(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-gui-batch")
    path = demo_library(tmp_path / "library.thoughtdesk")
    with BatchServer(polls_before_done=5) as server:
        run_id = _batch_run(path, server)
        panel = RunsPanel(path)
        qtbot.addWidget(panel)
        qtbot.waitUntil(lambda: panel.model.row_of(run_id) is not None, timeout=10000)
        panel.select_run(run_id)
        assert panel.resume_selected() is None and not panel.workers
        qtbot.waitUntil(lambda: panel.model.status(run_id) == "batched", timeout=20000)
        assert server.submitted and len(server.jobs) == 1


def test_planner_batch_option_shows_the_batch_price_and_the_run_is_submitted_as_a_batch(
    window, generation, qtbot, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-gui-batch")
    with BatchServer(polls_before_done=5) as server:
        planner = open_planner(generation, qtbot)
        add_model(planner, base_url=server.base_url + "/v1", model="gemma-test")
        planner.batch.setChecked(True)
        plan = wait_plan(qtbot, planner)
        assert plan.spec.batch
        qtbot.waitUntil(lambda: "Batch API:" in planner.summary.text(), timeout=5000)
        assert "results due within 24 h" in planner.summary.text()
        grab = planner.grab()
        assert grab.width() <= 1366 and grab.height() <= 768
        grab.save(str(Path("/tmp") / "h17b-planner-batch.png"))
        with qtbot.waitSignal(planner.run_created, timeout=10000) as created:
            planner.start_button.click()
        run_id = created.args[0]
        panel = generation.runs_panel
        qtbot.waitUntil(lambda: panel.model.status(run_id) == "batched", timeout=20000)
        assert not panel.workers and len(server.jobs) == 1


def test_cancel_in_the_runs_tab_cancels_a_waiting_batch_run(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-gui-batch")
    path = demo_library(tmp_path / "library.thoughtdesk")
    with BatchServer(polls_before_done=50) as server:
        run_id = _batch_run(path, server)
        advance_batch_run(path, run_id)
        panel = RunsPanel(path)
        qtbot.addWidget(panel)
        qtbot.waitUntil(lambda: panel.model.status(run_id) == "batched", timeout=10000)
        panel.select_run(run_id)
        assert panel.cancel_button.isEnabled()
        panel.cancel_button.click()
        # The run is marked cancelled before the provider is asked (so a poll under way submits
        # nothing more); the panel says it is done once the provider has answered.
        qtbot.waitUntil(lambda: "cancelled at the provider" in panel.message.text(), timeout=10000)
        assert panel.model.status(run_id) == "cancelled"
        assert all(job.cancelled for job in server.jobs.values())
        # The background poll leaves a cancelled run alone; Start / Resume takes it up again,
        # also when asked while a poll is under way.
        panel.poll_batches()
        assert len(server.jobs) == 1
        panel.poll_batch(run_id)  # a poll under way (in a worker) when the user resumes
        assert panel.resume_selected() is None
        qtbot.waitUntil(lambda: panel.model.status(run_id) == "batched" and len(server.jobs) == 2, timeout=10000)
