"""An automatic step label run (Math-Shepherd rollouts, issue 25) in the Runs tab: listed with its
kind, paused (nothing sent while paused), resumed to the end, each step's rollouts asked once."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_autolabel import Completer
from tests.helpers.servers import Reply
from tests.ui.generation.test_runs_panel import PAUSE_MS, cell, shown_cell
from thoughtdesk.core.generation.runs import ModelSpec, RunLimits
from thoughtdesk.core.generation.runs.kind_specs import AutolabelSpec
from thoughtdesk.core.generation.runs.rollouts import create_autolabel_run, plan_autolabel_run
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.steps.store import StepTarget, review_of

STEPS = ["Tom has 3 apples.", "He buys 4 more.", "So 3 + 4 = 7.", "Check: 7 - 4 = 3.", "The answer is 7."]


def _collection(path: Path) -> Path:
    sample = {
        "id": "q1", "ref_id": "", "question": "Tom has 3 apples and buys 4. How many?", "type": "number",
        "choices": [], "context": "", "cot": [], "answer": ["7"], "feedback": [],
        "generated_cot": [
            {"id": "c1", "fragments_version": "", "instruction": None, "cot_trigger": None, "cot_trigger_template": "",
             "prompt_text": "", "cot": "\n\n".join(STEPS), "answers": [], "author": "", "date": "",
             "api_service": "", "model": "student", "comment": "", "annotations": []}
        ],
    }  # fmt: skip
    path.write_text(json.dumps({"toy": {"test": [sample]}}))
    return path


def test_an_autolabel_run_is_listed_paused_and_resumed_in_the_runs_tab(window, generation, qtbot, tmp_path) -> None:
    panel = generation.runs_panel
    path = window.library.path
    with Library.open(path) as lib:
        import_thoughtsource(lib, _collection(tmp_path / "toy.json"), collection="toy")
    with Completer() as server:
        server.responder = lambda _record: Reply(delay=0.3)  # the normal answer, a little later
        spec = AutolabelSpec("toy", (ModelSpec("openai", "completer", base_url=server.base_url, chat=True),), k=4)
        with Library.open(path) as lib:
            plan = plan_autolabel_run(lib, spec)
            assert plan.total == len(STEPS) and plan.cots == 1
            run_id = create_autolabel_run(lib, plan)
        live = lambda: panel.model.live.get(run_id)  # noqa: E731 - reads as the value it names
        panel.start_run(run_id, RunLimits(concurrency=1))
        qtbot.waitUntil(lambda: cell(panel, run_id, "Run") is not None, timeout=10000)
        assert shown_cell(panel, run_id, "Run").endswith("[autolabel]")
        qtbot.waitUntil(lambda: live() is not None and live().done >= 1, timeout=30000)
        panel.pause_button.click()
        qtbot.waitUntil(lambda: live().status == "paused" and live().in_flight == 0, timeout=30000)
        paused_done = live().done
        assert paused_done < len(STEPS)
        sent = len(server.requests)
        qtbot.wait(PAUSE_MS)  # (a pause holds: nothing to wait on but time passing; see PAUSE_MS)
        assert live().done == paused_done and len(server.requests) == sent, "nothing is sent while paused"
        with qtbot.waitSignal(panel.run_ended, timeout=60000):
            panel.start_button.click()
        qtbot.waitUntil(lambda: cell(panel, run_id, "Status") == "done", timeout=10000)
        assert shown_cell(panel, run_id, "Progress") == f"{len(STEPS)} / {len(STEPS)}"
        prompts = [r.json["messages"][-1]["content"] for r in server.requests if r.path.endswith("/chat/completions")]
    assert len(prompts) == len(set(prompts)) == len(STEPS)  # each step's rollouts asked once
    with Library.open(path) as lib:
        cot_pk, sample_pk = lib.conn.execute(
            "SELECT c.id, c.sample_pk FROM generated_cot c JOIN sample s ON s.id = c.sample_pk WHERE s.dataset = 'toy'"
        ).fetchone()
        review = review_of(lib.conn, StepTarget(sample_pk, cot_pk), "completer rollouts")
    assert review is not None and [x.rating for x in review.labels] == [1] * len(STEPS)


def test_generate_menu_plans_an_autolabel_run_that_labels_every_step_then_leaves_it_out(
    window, generation, qtbot, tmp_path
) -> None:
    # `thoughtdesk autolabel` had no window (docs/steps.md said "Not done"); it is a kind of the
    # one planning dialog now, opened from Generate > Label steps by rollouts….
    path = window.library.path
    with Library.open(path) as lib:
        import_thoughtsource(lib, _collection(tmp_path / "toy.json"), collection="toy")
    assert generation.action_autolabel.text() == "&Label steps by rollouts…"
    panel = generation.runs_panel
    with Completer() as server:
        dialog = generation.open_autolabel_dialog()
        assert dialog is not None
        dialog.collection.setCurrentText("toy")
        assert not dialog.dataset.isVisibleTo(dialog) and not dialog.seed.isVisibleTo(dialog)  # not choices here
        form = dialog.models.form
        assert form.max_tokens.value() == 256 and form.temperature.value() == 0.7  # the CLI's defaults
        form.provider.setCurrentIndex(form.provider.findData("openai"))
        form.model_name.setText("completer")
        form.base_url.setText(server.base_url)
        assert dialog.models.add_from_form() is not None
        qtbot.waitUntil(lambda: dialog.plan is not None and not dialog._timer.isActive(), timeout=10000)
        assert dialog.summary.text().startswith(
            f"{len(STEPS)} rollout request(s): every step of 1 CoT(s), 4 rollout(s) each by openai:completer."
        )
        assert "Solution so far:" in dialog.preview.toPlainText()
        dialog.models.add_from_form()  # a second completer: said, and nothing can start
        qtbot.waitUntil(lambda: "Keep one model in the Completer model tab" in dialog.error, timeout=10000)
        assert not dialog.start_button.isEnabled()
        dialog.models.list.setCurrentRow(1)
        dialog.models.remove_selected()
        qtbot.waitUntil(lambda: dialog.plan is not None and not dialog._timer.isActive(), timeout=10000)
        assert server.requests == []  # nothing sent before Start
        with qtbot.waitSignal(panel.run_ended, timeout=60000):
            dialog.start_button.click()
        run_id = panel.model.runs[0].id
        qtbot.waitUntil(lambda: cell(panel, run_id, "Status") == "done", timeout=10000)
        assert shown_cell(panel, run_id, "Run").endswith("[autolabel]")
        assert len(server.requests) == len(STEPS)
        # Labelled whole: a new plan leaves the CoT out (Start disabled) unless labelled again.
        again = generation.open_autolabel_dialog()
        assert again is not None
        again.collection.setCurrentText("toy")
        again.models.form.model_name.setText("completer")
        again.models.form.base_url.setText(server.base_url)
        again.models.add_from_form()
        qtbot.waitUntil(lambda: again.plan is not None and not again._timer.isActive(), timeout=10000)
        assert again.plan.total == 0 and not again.start_button.isEnabled()
        assert "Left out: 1 labelled before by 'completer rollouts'." in again.summary.text()
        again.force.setChecked(True)
        qtbot.waitUntil(
            lambda: again.plan is not None and again.plan.total == len(STEPS) and not again._timer.isActive(),
            timeout=10000,
        )
        again.reject()
    with Library.open(path) as lib:
        cot_pk, sample_pk = lib.conn.execute(
            "SELECT c.id, c.sample_pk FROM generated_cot c JOIN sample s ON s.id = c.sample_pk WHERE s.dataset = 'toy'"
        ).fetchone()
        review = review_of(lib.conn, StepTarget(sample_pk, cot_pk), "completer rollouts")
    assert review is not None and len(review.labels) == len(STEPS)


def test_the_completer_from_settings_samples_its_rollouts(window, generation, tmp_path) -> None:
    # A model chosen in Settings is listed when the dialog opens: it must take the rollouts'
    # temperature and length too (at temperature 0 the K rollouts of a step would be one).
    from thoughtdesk.ui.settings.options import AppSettings, save_settings

    model = tmp_path / "clinic-model.gguf"
    model.write_bytes(b"GGUF" + bytes(60))
    save_settings(AppSettings(local_model_path=str(model)))
    dialog = generation.open_autolabel_dialog()
    assert dialog is not None
    (spec,) = dialog.models.specs()
    assert spec.provider == "llamacpp" and spec.model == str(model)
    assert spec.temperature == 0.7 and spec.max_tokens == 256
    dialog.reject()
