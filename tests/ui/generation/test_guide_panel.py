"""The run planner's Guide tab: a guided plan (counts, the guide's prompts in the preview), the
helper models it needs asked for in words, the scoring note, and the dialog still fitting 1366x768."""

from __future__ import annotations

from tests.ui.generation.test_planner import add_model, open_planner, wait_plan


def test_guide_tab_plans_guided_cots_and_names_what_is_missing(generation, qtbot, tmp_path):
    planner = open_planner(generation, qtbot)
    add_model(planner)
    wait_plan(qtbot, planner)
    guide = planner.guide
    assert "log-probs of given text" in guide.findChild(type(planner.summary), "guideScoringNote").text()
    guide.method.setCurrentIndex(guide.method.findData("rationalyst"))
    form = guide.rationale_form
    form.provider.setCurrentIndex(form.provider.findData("openai"))
    form.model_name.setText("")
    qtbot.waitUntil(lambda: "a model name is needed" in planner.summary.text(), timeout=5000)
    assert not planner.start_button.isEnabled()
    form.model_name.setText("rationale-model")
    form.base_url.setText("http://127.0.0.1:9/v1")
    guide.max_steps.setValue(4)
    plan = wait_plan(qtbot, planner, 3)  # one guided request per sample
    assert plan.spec.guide is not None and plan.spec.guide.label == "rationalyst-implicit"
    assert plan.spec.guide.max_steps == 4 and plan.spec.guide.scorer.model == "rationale-model"
    assert "3 guided CoTs (rationalyst-implicit): up to 4 steps of 3 candidate(s)" in planner.summary.text()
    preview = planner.preview.toPlainText()
    assert "RATIONALE ·" in preview and "SCORER PREFIX ·" in preview and "Rationale:" in preview
    assert guide.decay.isEnabled()  # for implicit supervision only
    guide.supervision.setCurrentIndex(guide.supervision.findData("explicit"))
    plan = wait_plan(qtbot, planner, 3)
    assert plan.spec.guide.label == "rationalyst-explicit" and not guide.decay.isEnabled()
    assert plan.spec.guide.n_candidates == 1 and not guide.candidates.isEnabled()
    assert "<BOT>" in planner.preview.toPlainText()
    guide.method.setCurrentIndex(guide.method.findData("process"))
    qtbot.waitUntil(
        lambda: "a model name" in planner.summary.text() or planner.plan.spec.guide.method == "process", timeout=5000
    )
    guide.method.setCurrentIndex(guide.method.findData("stepwise"))
    plan = wait_plan(qtbot, planner, 3)
    assert plan.spec.guide.label == "stepwise" and not guide.candidates.isEnabled()
    scroll = planner.findChild(type(guide.helpers.widget(0)), "guideScroll")
    planner.tabs.setCurrentIndex(planner.tabs.indexOf(scroll))
    # The Guide tab scrolls: it never makes the dialog larger than the other tabs do (the
    # "Samples and prompts" tab alone asks for ~1060 px of the planner's width).
    hint = scroll.minimumSizeHint()
    assert hint.width() <= 300 and hint.height() <= 300
    planner.show()
    planner.resize(1300, 700)
    qtbot.wait(50)
    shot = planner.grab()
    shot.save(str(tmp_path / "guide.png"))
    guide.method.setCurrentIndex(guide.method.findData(None))
    plan = wait_plan(qtbot, planner)
    assert plan.spec.guide is None
