"""Generate > Revise from critiques…: counts, cost and the exact prompt before anything is sent,
then a run in the Runs tab whose revised CoTs show in Results > Revisions (before/after,
McNemar, the changed CoTs opening their samples)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.generation.test_revision_runs import N_COTS, N_INCORRECT, ReviseServer
from tests.helpers.screenshots import save_screenshot
from thoughtdesk.core.generation.runs import (
    CotSelection,
    CritiqueSpec,
    ModelSpec,
    create_critique_run,
    execute_run,
    plan_critique_run,
    run_info,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.generation.revise_dialog import LATEST
from thoughtdesk.ui.generation.run_table import RUN_COLUMNS


@pytest.fixture
def window_library(tmp_path: Path) -> Path:
    """A new library, which gets the demo collection."""
    return tmp_path / "lib.thoughtdesk"


def wait_plan(qtbot, dialog, total: int | None = None):
    def ready() -> bool:
        if dialog._timer.isActive() or dialog._tasks:
            return False
        assert dialog.plan is not None, dialog.error
        return total is None or dialog.plan.total == total

    qtbot.waitUntil(ready, timeout=10000)
    return dialog.plan


def test_revise_dialog_plans_runs_and_results_show_before_and_after(window, qtbot, tmp_path):
    generation = window.generation
    assert generation.action_revise.text() == "Re&vise from critiques…"
    path = window.library.path
    with ReviseServer() as server:
        with Library.open(path) as lib:
            judge = ModelSpec("openai", "key-judge", base_url=server.base_url, max_tokens=200)
            run_id = create_critique_run(lib, plan_critique_run(lib, CritiqueSpec(CotSelection("Demo"), (judge,))))
        assert execute_run(path, run_id).done == N_COTS
        dialog = generation.open_revise_dialog()
        assert dialog is not None and dialog.collection.currentText() == "Demo"
        assert [dialog.critic.itemText(i) for i in range(dialog.critic.count())] == [LATEST, "key-judge"]
        qtbot.waitUntil(lambda: "Add at least one revising model" in dialog.summary.text(), timeout=5000)
        form = dialog.models.form
        form.provider.setCurrentIndex(form.provider.findData("openai"))
        form.model_name.setText("fixer")
        form.base_url.setText(server.base_url)
        assert dialog.models.add_from_form() is not None
        plan = wait_plan(qtbot, dialog, N_COTS)
        assert (
            f"{N_COTS} revision request(s): {N_COTS} critiqued CoT(s) x 1 revising model(s)." in dialog.summary.text()
        )
        assert "The reviewer's feedback:" in dialog.preview.toPlainText()
        assert dialog.preview.toPlainText().endswith(plan.requests[0].prompt)
        dialog.only.setCurrentIndex(dialog.only.findData("incorrect"))
        wait_plan(qtbot, dialog, N_INCORRECT)
        dialog.critic.setCurrentIndex(dialog.critic.findData("key-judge"))
        plan = wait_plan(qtbot, dialog, N_INCORRECT)
        assert plan.spec.critique_models == ("key-judge",)
        dialog.resize(1366 - 40, 768 - 60)
        assert save_screenshot(dialog, tmp_path, "revise-dialog").stat().st_size > 10_000
        assert dialog.width() <= 1366 and dialog.height() <= 768
        sent = len(server.requests)
        panel = generation.runs_panel
        with qtbot.waitSignal(panel.run_ended, timeout=60000):
            dialog.start_button.click()
            qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=10000)
        revision_run = panel.model.runs[0].id
        qtbot.waitUntil(lambda: panel.model.status(revision_run) == "done", timeout=10000)
        row = panel.model.row_of(revision_run)
        assert row is not None
        assert panel.model.data(panel.model.index(row, RUN_COLUMNS.index("Run"))).endswith("[revision]")
        assert len(server.requests) - sent == N_INCORRECT
    with Library.open(path) as lib:
        assert run_info(lib, revision_run).kind == "revision"
    view = window.evaluation
    window.show_tab(view)
    view.views.setCurrentWidget(view.revisions)
    qtbot.waitUntil(lambda: bool(view.revisions.groups) and view.is_idle(), timeout=30000)
    groups = view.revisions.groups
    assert sum(g.n for g in groups) == N_INCORRECT and sum(g.after_correct for g in groups) == N_INCORRECT
    assert sum(g.before_correct for g in groups) == 0
    assert view.revisions.model.rowCount() == len(groups)
    assert view.revisions.changes_model.rowCount() == groups[0].n  # every one of them fixed
    assert view.revisions.changes_model.cells[0][1] == "fixed"
    window.resize(1366, 768)
    assert save_screenshot(window, tmp_path, "results-revisions").stat().st_size > 10_000
    first = view.revisions.changes_model.index(0, 0)
    assert view.revisions.open_change(first)
    assert window.samples.current_sample_key() == view.revisions.changed_pks[0]
