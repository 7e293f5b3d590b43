"""Generate > Critique…: counts, cost and the exact prompt before anything is sent, the DS preset,
templates from the fragment editor, then a run that shows in the Runs tab and stores critiques."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_critique import DSCB
from tests.core.generation.test_critique_runs import N_COTS, N_INCORRECT, CritiqueServer
from tests.helpers.screenshots import save_screenshot
from tests.helpers.servers import Reply
from tests.ui.generation.test_runs_panel import PAUSE_MS
from thoughtdesk.core.critiques import critiques_for_cots
from thoughtdesk.core.generation.runs import run_info, run_requests
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.generation.critique_dialog import CritiqueRunDialog
from thoughtdesk.ui.generation.run_table import RUN_COLUMNS
from thoughtdesk.ui.qt import QLabel


def wait_plan(qtbot, dialog: CritiqueRunDialog, total: int | None = None):
    def ready() -> bool:
        if dialog._timer.isActive() or dialog._tasks:
            return False
        assert dialog.plan is not None, dialog.error
        return total is None or dialog.plan.total == total

    qtbot.waitUntil(ready, timeout=10000)
    return dialog.plan


def add_judge(dialog: CritiqueRunDialog, base_url: str, model: str = "tidy-judge") -> None:
    models = dialog.models
    form = models.form
    form.provider.setCurrentIndex(form.provider.findData("openai"))
    form.model_name.setText(model)
    form.base_url.setText(base_url)
    assert models.add_from_form() is not None, models.error.text()


@pytest.fixture
def window_library(tmp_path: Path) -> Path:
    """A new library, which gets the demo collection (not this folder's "Lab quiz" library)."""
    return tmp_path / "lib.thoughtdesk"


def test_dialog_plans_counts_and_exact_prompt_then_runs_into_the_runs_tab(window, qtbot, tmp_path):
    generation = window.generation
    assert generation.action_critique.text() == "&Critique…"
    assert generation.action_critique.shortcut().toString() == "Ctrl+Shift+G"
    with CritiqueServer() as server:
        dialog = generation.open_critique_dialog()
        assert dialog is not None and dialog.collection.currentText() == "Demo"
        qtbot.waitUntil(lambda: "Add at least one critique model" in dialog.summary.text(), timeout=5000)
        assert not dialog.start_button.isEnabled()
        add_judge(dialog, server.base_url)
        add_judge(dialog, server.base_url, "untidy-judge")
        plan = wait_plan(qtbot, dialog, 2 * N_COTS)
        assert all(m.max_tokens == 512 for m in plan.spec.models)  # the critique default, not a CoT's
        form = dialog.models.form
        assert form.extraction_max_tokens.isHidden()
        labels = [label.text() for label in form.findChildren(QLabel) if not label.isHidden()]
        assert "Max tokens (critique)" in labels and "Max tokens (extraction)" not in labels
        assert f"{2 * N_COTS} critique request(s): {N_COTS} CoT(s)" in dialog.summary.text()
        assert "Cost: at most $0.0000" in dialog.summary.text()
        assert dialog.preview.toPlainText().endswith(plan.requests[0].prompt)
        assert "Explanation to review:" in dialog.preview.toPlainText()
        dialog.only.setCurrentIndex(dialog.only.findData("incorrect"))
        wait_plan(qtbot, dialog, 2 * N_INCORRECT)
        # The DS preset: the card's wrapper, greedy, 512 tokens.
        dialog.wrapper.setCurrentIndex(dialog.wrapper.findData("ds"))
        plan = wait_plan(qtbot, dialog, 2 * N_INCORRECT)
        assert plan.requests[0].prompt.startswith("[INST] <<SYS>>\n")
        assert all(m.max_tokens == 512 and m.temperature == 0 and m.endpoint == "completions" for m in plan.spec.models)
        assert dialog.preview.toPlainText().count("[INST]") == 1  # one wrapper: one preview
        dialog.resize(1366 - 40, 768 - 60)
        shot = save_screenshot(dialog, tmp_path, "critique-dialog")
        assert shot.stat().st_size > 10_000
        dialog.tabs.setCurrentIndex(1)
        assert save_screenshot(dialog, tmp_path, "critique-dialog-models").stat().st_size > 10_000
        dialog.tabs.setCurrentIndex(0)
        assert dialog.width() <= 1366 and dialog.height() <= 768
        assert server.requests == []  # nothing sent before Start
        panel = generation.runs_panel
        with qtbot.waitSignal(panel.run_ended, timeout=60000):
            dialog.start_button.click()
            qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=10000)
        assert window.tabs.currentWidget() is panel
        run_id = panel.model.runs[0].id
        qtbot.waitUntil(lambda: panel.model.status(run_id) == "done", timeout=10000)
        row = panel.model.row_of(run_id)
        assert row is not None
        assert panel.model.data(panel.model.index(row, RUN_COLUMNS.index("Run"))).endswith("[critique]")
        assert panel.model.data(panel.model.index(row, RUN_COLUMNS.index("Progress"))) == "20 / 20"
        assert len(server.requests) == 2 * N_INCORRECT
    with Library.open(window.library.path) as lib:
        assert run_info(lib, run_id).kind == "critique"
        rows = run_requests(lib, run_id)
        critiques = critiques_for_cots(lib, [r.target_cot_pk or 0 for r in rows])
    assert sum(len(c) for c in critiques.values()) == 2 * N_INCORRECT


def test_templates_added_in_the_fragment_editor_appear_and_a_bad_choice_is_explained(window, qtbot):
    generation = window.generation
    markup = "<b>not bold</b> & <script>alert(1)</script>"
    with window.library.transaction() as conn:  # model text is untrusted: shown literally
        conn.execute("UPDATE generated_cot SET cot = ? WHERE id = (SELECT min(id) FROM generated_cot)", (markup,))
    with CritiqueServer() as server:
        dialog = generation.open_critique_dialog()
        add_judge(dialog, server.base_url)
        plan = wait_plan(qtbot, dialog, N_COTS)
        assert markup in plan.requests[0].prompt and markup in dialog.preview.toPlainText()
        editor = generation.open_fragment_editor()
        editor.select("critique", "td-critique-v1")
        assert editor.tabs.tabText(editor.tabs.currentIndex()) == "Critique prompts"
        editor.add_new("Is [[EXPLANATION]] right for [[QUESTION]]?", "short-critique")
        qtbot.waitUntil(lambda: dialog.template.findData("short-critique") >= 0, timeout=5000)
        editor.undo_stack.undo()
        qtbot.waitUntil(lambda: dialog.template.findData("short-critique") < 0, timeout=5000)
        editor.undo_stack.redo()
        qtbot.waitUntil(lambda: dialog.template.findData("short-critique") >= 0, timeout=5000)
        # The built-in template cannot be lost: deleted in the editor, runs still offer it.
        editor.select("critique", "td-critique-v1")
        with qtbot.waitSignal(editor.fragments_changed, timeout=5000):  # the dialogs are told
            editor.delete_current()
        assert ("critique", "td-critique-v1") not in generation.fragments
        assert dialog.template.findData("td-critique-v1") >= 0
        # DSCB-prompts.json imported in the editor: its critique template is offered.
        editor.import_file(DSCB)
        qtbot.waitUntil(lambda: dialog.template.findData("digital_socrates_v1") >= 0, timeout=5000)
        assert generation.fragments.get("instruction", "QA_explanation1").source == "import:DSCB-prompts.json"
        dialog.template.setCurrentIndex(dialog.template.findData("short-critique"))
        plan = wait_plan(qtbot, dialog, N_COTS)
        assert plan.requests[0].prompt.startswith("Is ") and plan.requests[0].system_chars == 0
        assert "<b>" not in dialog.summary.text()
        # An Anthropic model cannot take the one-string DS form: said in words, Start disabled.
        form = dialog.models.form
        form.provider.setCurrentIndex(form.provider.findData("anthropic"))
        form.model_name.setText("claude-test")
        dialog.models.add_from_form()
        dialog.wrapper.setCurrentIndex(dialog.wrapper.findData("ds"))
        qtbot.waitUntil(lambda: "Anthropic's API takes chat messages only" in dialog.summary.text(), timeout=5000)
        assert not dialog.start_button.isEnabled() and dialog.plan is None
        dialog.reject()
        assert server.requests == []


def test_critique_run_pauses_resumes_cancels_and_resumes_to_the_end_in_the_runs_tab(window, qtbot):
    generation = window.generation
    panel = generation.runs_panel
    with CritiqueServer() as server:
        server.script(*[Reply(delay=0.2) for _ in range(N_COTS)])
        dialog = generation.open_critique_dialog()
        add_judge(dialog, server.base_url)
        wait_plan(qtbot, dialog, N_COTS)
        dialog.concurrency.setValue(1)
        dialog.start_button.click()
        qtbot.waitUntil(lambda: panel.model.rowCount() == 1 and bool(panel.workers), timeout=10000)
        run_id = panel.model.runs[0].id
        live = lambda: panel.model.live.get(run_id)  # noqa: E731 - reads as the value it names
        qtbot.waitUntil(lambda: live() is not None and live().done >= 2, timeout=30000)
        panel.select_run(run_id)
        panel.pause_button.click()
        qtbot.waitUntil(lambda: live().status == "paused" and live().in_flight == 0, timeout=30000)
        paused_done, sent = live().done, len(server.requests)
        qtbot.wait(PAUSE_MS)  # (nothing to wait on but time passing: see PAUSE_MS)
        assert live().done == paused_done and len(server.requests) == sent, "nothing is sent while paused"
        panel.start_button.click()  # resume
        qtbot.waitUntil(lambda: live().done > paused_done, timeout=30000)
        with qtbot.waitSignal(panel.run_ended, timeout=30000):
            panel.cancel_button.click()
        qtbot.waitUntil(lambda: panel.model.status(run_id) == "cancelled", timeout=10000)
        with Library.open(window.library.path) as lib:
            stored = lib.conn.execute("SELECT count(*) FROM critique").fetchone()[0]
            done = lib.conn.execute(
                "SELECT count(*) FROM request WHERE run_id = ? AND status = 'done'", (run_id,)
            ).fetchone()[0]
        assert stored == done < N_COTS
        panel.select_run(run_id)
        with qtbot.waitSignal(panel.run_ended, timeout=60000):
            panel.start_button.click()  # a new worker sends exactly the missing critiques
        qtbot.waitUntil(lambda: panel.model.status(run_id) == "done", timeout=10000)
    with Library.open(window.library.path) as lib:
        assert lib.conn.execute("SELECT count(*) FROM critique").fetchone()[0] == N_COTS


def test_the_dialog_judges_the_thinking_when_asked(window, qtbot):
    # Issue 24, point 7: "Judge" chooses the visible explanation (default) or the thinking.
    with Library.open(window.library.path) as lib, lib.transaction() as conn:
        (pk,) = conn.execute("SELECT min(id) FROM generated_cot").fetchone()
        conn.execute("UPDATE generated_cot SET reasoning = 'Wait, I should check the dose first.' WHERE id = ?", (pk,))
    with CritiqueServer() as server:
        dialog = window.generation.open_critique_dialog()
        assert dialog is not None and dialog.judge.currentData() == "explanation"
        add_judge(dialog, server.base_url)
        wait_plan(qtbot, dialog, N_COTS)
        dialog.judge.setCurrentIndex(dialog.judge.findData("thinking"))
        plan = wait_plan(qtbot, dialog, 1)
        assert plan.spec.judge == "thinking" and plan.cots[0].pk == pk
        assert "Wait, I should check the dose first." in dialog.preview.toPlainText()
        assert server.requests == []
        dialog.reject()


def test_the_critique_model_from_settings_gets_the_critique_length(window, qtbot, tmp_path) -> None:
    # A model chosen in Settings is listed when the dialog opens: it must take the critique's
    # 512 tokens as a model added by hand does, not the CoT form's default.
    from thoughtdesk.ui.settings.options import AppSettings, save_settings

    model = tmp_path / "clinic-model.gguf"
    model.write_bytes(b"GGUF" + bytes(60))
    save_settings(AppSettings(local_model_path=str(model)))
    dialog = window.generation.open_critique_dialog()
    assert dialog is not None
    (spec,) = dialog.models.specs()
    assert spec.provider == "llamacpp" and spec.model == str(model)
    assert spec.max_tokens == 512
    dialog.reject()
