"""Generate > Judge pairs…: pairs, both orders, cost and the exact prompts before anything is sent,
a condition without CoTs explained, then a run that shows in the Runs tab and stores verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.judge_servers import first_judge
from tests.helpers.screenshots import save_screenshot
from thoughtdesk.core.generation.runs import run_info
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.generation.judge_dialog import JudgeRunDialog
from thoughtdesk.ui.generation.run_table import RUN_COLUMNS


@pytest.fixture
def window_library(tmp_path: Path) -> Path:
    """A new library, which gets the demo collection."""
    return tmp_path / "lib.thoughtdesk"


def wait_plan(qtbot, dialog: JudgeRunDialog, total: int | None = None):
    def ready() -> bool:
        if dialog._timer.isActive() or dialog._tasks:
            return False
        assert dialog.plan is not None, dialog.error
        return total is None or dialog.plan.total == total

    qtbot.waitUntil(ready, timeout=10000)
    return dialog.plan


def test_judge_dialog_plans_pairs_in_both_orders_then_runs_into_the_runs_tab(window, qtbot, tmp_path):
    generation = window.generation
    assert generation.action_judge.text() == "&Judge pairs…"
    with first_judge() as server:
        dialog = generation.open_judge_dialog()
        assert dialog is not None and dialog.collection.currentText() == "Demo"
        qtbot.waitUntil(lambda: "Add at least one judge model" in dialog.summary.text(), timeout=5000)
        form = dialog.models.form
        form.provider.setCurrentIndex(form.provider.findData("openai"))
        form.model_name.setText("judge-1")
        form.base_url.setText(server.base_url)
        assert dialog.models.add_from_form() is not None
        plan = wait_plan(qtbot, dialog, 36)
        assert "36 judge request(s): 18 pair(s)" in dialog.summary.text() and "both orders" in dialog.summary.text()
        assert "(A first)" in dialog.preview.toPlainText() and "(swapped)" in dialog.preview.toPlainText()
        assert all(m.max_tokens == 512 for m in plan.spec.models)
        dialog.conditions.setText("gpt-4o-mini, nobody")
        qtbot.waitUntil(lambda: "'nobody' have no CoTs" in dialog.summary.text(), timeout=10000)
        assert not dialog.start_button.isEnabled()
        dialog.conditions.setText("")
        wait_plan(qtbot, dialog, 36)
        dialog.resize(1366 - 40, 768 - 60)
        assert save_screenshot(dialog, tmp_path, "judge-dialog").stat().st_size > 10_000
        assert dialog.width() <= 1366 and dialog.height() <= 768
        assert server.requests == []
        panel = generation.runs_panel
        with qtbot.waitSignal(panel.run_ended, timeout=60000):
            dialog.start_button.click()
            qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=10000)
        run_id = panel.model.runs[0].id
        qtbot.waitUntil(lambda: panel.model.status(run_id) == "done", timeout=10000)
        row = panel.model.row_of(run_id)
        assert row is not None
        assert panel.model.data(panel.model.index(row, RUN_COLUMNS.index("Run"))).endswith("[judge]")
        assert len(server.requests) == 36
    with Library.open(window.library.path) as lib:
        assert run_info(lib, run_id).kind == "judge"
        assert lib.conn.execute("SELECT count(*) FROM judge_verdict").fetchone()[0] == 36
