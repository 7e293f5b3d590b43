"""The run planner's Guide tab: a guided plan (counts, the guide's prompts in the preview), the
helper models it needs asked for in words, the scoring note, and the dialog still fitting 1366x768."""

from __future__ import annotations

from tests.helpers.widgets import child
from tests.ui.generation.test_planner import add_model, open_planner, wait_plan
from thoughtdesk.ui.qt import QLabel, QScrollArea


def test_guide_tab_plans_guided_cots_and_names_what_is_missing(generation, qtbot, tmp_path):
    planner = open_planner(generation, qtbot)
    add_model(planner)
    wait_plan(qtbot, planner)
    guide = planner.guide
    assert "log-probs of given text" in child(guide, QLabel, "guideScoringNote").text()
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
        lambda: (
            "a model name" in planner.summary.text()
            or (
                planner.plan is not None
                and planner.plan.spec.guide is not None
                and planner.plan.spec.guide.method == "process"
            )
        ),
        timeout=5000,
    )
    guide.method.setCurrentIndex(guide.method.findData("stepwise"))
    plan = wait_plan(qtbot, planner, 3)
    assert plan.spec.guide.label == "stepwise" and not guide.candidates.isEnabled()
    scroll = child(planner, QScrollArea, "guideScroll")
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


def _rationalyst(planner, provider: str, **fields) -> None:
    guide = planner.guide
    guide.method.setCurrentIndex(guide.method.findData("rationalyst"))
    form = guide.rationale_form
    form.provider.setCurrentIndex(form.provider.findData(provider))
    for name, value in fields.items():
        widget = getattr(form, name)
        widget.setValue(value) if hasattr(widget, "setValue") else widget.setText(value)


def test_guide_tab_shows_a_local_scorers_memory_and_flags_one_that_cannot_score(
    generation, qtbot, tmp_path, gguf_model
):
    """Point 1 of issue 14: the scoring copy's memory is shown before the run (the note said "when
    it loads", and nothing did); a scorer that cannot score is flagged with the reason and the
    run cannot start."""
    from tests.helpers.screenshots import save_screenshot
    from thoughtdesk.ui.generation.guide_panel import PROBLEM_STYLE

    planner = open_planner(generation, qtbot)
    add_model(planner)
    guide = planner.guide
    _rationalyst(planner, "llamacpp", gguf_path=str(gguf_model), n_ctx=512)
    status = child(guide, QLabel, "guideScorerStatus")
    qtbot.waitUntil(lambda: "GB more memory" in status.text(), timeout=30000)
    assert status.text().startswith("Scorer: llamacpp:") and "logits of 512 positions x 262,144" in status.text()
    assert status.styleSheet() == ""
    wait_plan(qtbot, planner, 3)
    summary = planner.summary.text()
    assert "Scorer: llamacpp:" in summary and "scoring needs about 1.1 GB more memory" in summary
    assert planner.start_button.isEnabled()
    guide.rationale_form.n_ctx.setValue(1024)  # the memory follows the context size
    qtbot.waitUntil(lambda: "1,024 positions" in status.text(), timeout=30000)
    scroll = child(planner, QScrollArea, "guideScroll")
    planner.tabs.setCurrentIndex(planner.tabs.indexOf(scroll))
    planner.show()
    planner.resize(1366, 740)  # a 1366 x 768 screen less the title bar
    wait_plan(qtbot, planner, 3)
    save_screenshot(planner, tmp_path, "guide-gguf-scorer")

    guide.scorer_same.setChecked(False)
    scorer = guide.scorer_form
    scorer.provider.setCurrentIndex(scorer.provider.findData("anthropic"))
    qtbot.waitUntil(lambda: "cannot score text" in status.text(), timeout=10000)
    assert "Anthropic's Messages API returns no token log-probs" in status.text()
    assert "Implicit supervision cannot start with it" in status.text() and status.styleSheet() == PROBLEM_STYLE
    qtbot.waitUntil(lambda: "cannot score text" in planner.summary.text(), timeout=10000)
    assert "implicit supervision cannot start with it" in planner.summary.text()
    assert planner.plan is None and not planner.start_button.isEnabled()
    save_screenshot(planner, tmp_path, "guide-anthropic-scorer")
    # explicit supervision scores nothing: no scorer line, and the run can start
    guide.supervision.setCurrentIndex(guide.supervision.findData("explicit"))
    wait_plan(qtbot, planner, 3)
    qtbot.waitUntil(lambda: status.text() == "", timeout=5000)
    assert "Scorer:" not in planner.summary.text() and planner.start_button.isEnabled()


def _no_echo(record):
    """llama.cpp's own llama-server: /completions answers, but without the prompt's log-probs."""
    from tests.helpers.servers import Reply

    if not record.path.endswith("/completions") or record.path.endswith("/chat/completions"):
        return None
    return Reply(
        body={
            "id": "x",
            "object": "text_completion",
            "model": "m",
            "choices": [{"index": 0, "text": "!", "finish_reason": "length"}],
        }
    )


def test_start_probes_a_server_scorer_once_and_refuses_one_that_ignores_echo(generation, qtbot, fake_server):
    from thoughtdesk.core.generation.runs import list_runs
    from thoughtdesk.core.library.store import Library

    planner = open_planner(generation, qtbot)
    add_model(planner, base_url=fake_server.base_url, model="agent")
    _rationalyst(planner, "openai", model_name="rationale", base_url=fake_server.base_url)
    planner.guide.max_steps.setValue(1)
    wait_plan(qtbot, planner, 3)
    assert "one tiny request when the run starts" in planner.summary.text()
    assert fake_server.requests == []  # planning sends nothing
    fake_server.responder = _no_echo
    planner.start_button.click()
    qtbot.waitUntil(lambda: "echo ignored" in planner.summary.text(), timeout=20000)
    assert "cannot score text" in planner.summary.text() and "\n" not in planner.error
    (probe,) = fake_server.requests
    assert probe.path.endswith("/completions") and probe.json["echo"] is True and probe.json["max_tokens"] == 1
    with Library.open(planner.library_path) as lib:
        assert list_runs(lib) == []  # no run written
    assert planner.isVisible() or not planner.result()  # still open, to choose another scorer

    fake_server.responder = None  # now it echoes log-probs (the toy model)
    planner.guide.max_steps.setValue(2)
    wait_plan(qtbot, planner, 3)
    with qtbot.waitSignal(generation.runs_panel.run_ended, timeout=60000):
        with qtbot.waitSignal(planner.run_created, timeout=20000):
            planner.start_button.click()
    echoed = [r for r in fake_server.requests if (r.json or {}).get("echo")]
    # the second Start probed once, before the run's own scorings
    assert echoed[1].json["prompt"].startswith("Scoring check")
    assert not any(r.json["prompt"].startswith("Scoring check") for r in echoed[2:]) and len(echoed) > 2
    with Library.open(planner.library_path) as lib:
        (run,) = list_runs(lib)
        assert run.status == "done"


def test_guide_tab_offers_the_step_judge_rater_style(generation, qtbot, tmp_path) -> None:
    """Issue 25: ``--rater-style processbench`` was on the command line only. The Guide tab's
    "Rater style" (process supervision only) goes into the planned run's spec, its stored JSON
    and the rater's prompt in the preview."""
    from tests.helpers.screenshots import save_screenshot
    from thoughtdesk.core.generation.runs import RunSpec

    planner = open_planner(generation, qtbot)
    add_model(planner)
    guide = planner.guide
    style = guide.rater_style
    assert not style.isEnabled() and style.currentData() == "rating"
    guide.method.setCurrentIndex(guide.method.findData("process"))
    assert style.isEnabled()
    rater = guide.rater_form
    rater.provider.setCurrentIndex(rater.provider.findData("openai"))
    rater.model_name.setText("judge-model")
    rater.base_url.setText("http://127.0.0.1:9/v1")
    guide.max_steps.setValue(3)
    plan = wait_plan(qtbot, planner, 3)
    assert plan.spec.guide is not None and plan.spec.guide.rater_style == "rating"
    assert "<paragraph_0>" not in planner.preview.toPlainText()
    style.setCurrentIndex(style.findData("processbench"))
    qtbot.waitUntil(
        lambda: (
            not planner._timer.isActive()
            and not planner._tasks
            and planner.plan is not None
            and planner.plan.spec.guide is not None
            and planner.plan.spec.guide.rater_style == "processbench"
        ),
        timeout=10000,
    )
    plan = planner.plan
    assert plan is not None and plan.spec.guide is not None
    assert plan.spec.guide.rater_model is not None and plan.spec.guide.rater_model.model == "judge-model"
    stored = RunSpec.from_json(plan.spec.to_json())  # what the run row keeps
    assert stored.guide is not None and stored.guide.rater_style == "processbench"
    preview = planner.preview.toPlainText()
    assert "<paragraph_0>" in preview and "<a candidate step>" in preview
    scroll = child(planner, QScrollArea, "guideScroll")
    planner.tabs.setCurrentIndex(planner.tabs.indexOf(scroll))
    planner.show()
    planner.resize(1366, 740)  # a 1366 x 768 screen less the title bar
    wait_plan(qtbot, planner, 3)
    save_screenshot(planner, tmp_path, "guide-rater-style")
    # another guide: the style is not used, and the spec keeps the default
    guide.method.setCurrentIndex(guide.method.findData("stepwise"))
    plan = wait_plan(qtbot, planner, 3)
    assert not style.isEnabled() and plan.spec.guide is not None and plan.spec.guide.rater_style == "rating"
