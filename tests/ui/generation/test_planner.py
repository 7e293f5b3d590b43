"""The run planner: counts, token and cost estimates, the exact prompt preview, sample sources."""

from __future__ import annotations

import pytest

from tests.helpers.widgets import cell
from tests.ui.generation.conftest import COLLECTION
from thoughtdesk.core.generation.runs import ModelSpec, RunSpecError
from thoughtdesk.ui.generation.planner import KEY_ROLE, RunPlannerDialog
from thoughtdesk.ui.qt import QPlainTextEdit

ISSUE_PROMPT = (
    "Answer the following question through step-by-step reasoning.\n\nQuestion\nA) choice A\n"
    "B) choice B\nC) choice C\nD) choice D\n\nAnswer: Let's think step by step."
)
BRACES_PROMPT = (
    "Answer the following question through step-by-step reasoning.\n\nWhich set {x | x > 2} "
    "contains <b>3</b>? Use {braces} literally.\nA) {3}\nB) <i>none</i>\n\n"
    "Answer: Let's think step by step."
)


def open_planner(generation, qtbot) -> RunPlannerDialog:
    planner = generation.open_planner()
    planner.collection.setCurrentText(COLLECTION)
    planner.dataset.setCurrentIndex(planner.dataset.findData("lab_quiz"))
    planner.split.setCurrentIndex(planner.split.findData("test"))
    return planner


def wait_plan(qtbot, planner: RunPlannerDialog, total: int | None = None):
    def ready() -> bool:
        if planner._timer.isActive() or planner._tasks:
            return False
        assert planner.plan is not None, planner.error
        return total is None or planner.plan.total == total

    qtbot.waitUntil(ready, timeout=10000)
    return planner.plan


def add_model(planner: RunPlannerDialog, base_url: str = "http://127.0.0.1:9/v1", model: str = "test-model") -> None:
    form = planner.models.form
    form.provider.setCurrentIndex(form.provider.findData("openai"))
    form.model_name.setText(model)
    form.base_url.setText(base_url)
    assert planner.models.add_from_form() is not None, planner.models.error.text()


def test_counts_samples_x_triggers_x_models_x_n(generation, qtbot):
    planner = open_planner(generation, qtbot)
    qtbot.waitUntil(lambda: "Add at least one model" in planner.summary.text(), timeout=5000)
    assert not planner.start_button.isEnabled()
    add_model(planner)
    planner.mode.setCurrentIndex(planner.mode.findData("one-step"))
    planner.set_checked("cot_trigger", ["kojima-01", "zhou-01"])
    planner.n.setValue(2)
    plan = wait_plan(qtbot, planner, 12)  # 3 samples x 2 triggers x 1 model x n=2
    assert plan.n_samples == 3 and plan.n_extraction_requests == 0
    assert "12 requests" in planner.summary.text()
    assert "Estimated tokens" in planner.summary.text()
    assert planner.start_button.isEnabled()

    planner.mode.setCurrentIndex(planner.mode.findData("two-step"))
    planner.set_checked("answer_extraction", ["kojima-01"])
    plan = wait_plan(qtbot, planner, 24)  # each CoT request gets its extraction request
    assert plan.n_cot_requests == plan.n_extraction_requests == 12
    planner.set_checked("answer_extraction", ["kojima-01", "kojima-A-D"])
    plan = wait_plan(qtbot, planner, 48)  # an extraction fragment is a prompt variant too
    assert len(plan.variants) == 4
    planner.limit.setValue(1)  # one sample per split
    plan = wait_plan(qtbot, planner)
    assert plan.n_samples == 1


def test_cost_uses_the_editable_price_table(generation, qtbot):
    planner = open_planner(generation, qtbot)
    add_model(planner, base_url="https://api.example.org/v1", model="my-hosted-model")
    plan = wait_plan(qtbot, planner)
    assert plan.estimated_cost is None and "no price for openai:my-hosted-model" in planner.summary.text()
    editor = planner.price_editor
    editor.add_row()
    row = editor.grid.rowCount() - 1
    cell(editor.grid, row, 1).setText("my-hosted-model")
    cell(editor.grid, row, 2).setText("1000000")  # $1 per prompt token: easy to check
    plan = wait_plan(qtbot, planner)
    assert plan.estimated_cost is not None and plan.estimated_cost >= plan.estimated_prompt_tokens
    assert generation.price_path.exists()  # the edit was saved for the next planner


def test_preview_shows_exact_thoughtsource_prompt_with_braces_and_markup_literal(generation, qtbot):
    planner = open_planner(generation, qtbot)
    add_model(planner)
    planner.set_checked("instruction", ["qa-01"])
    planner.set_checked("cot_trigger", ["kojima-01"])
    wait_plan(qtbot, planner)
    assert isinstance(planner.preview, QPlainTextEdit) and planner.preview.isReadOnly()
    text = planner.preview.toPlainText()
    assert ISSUE_PROMPT in text
    assert BRACES_PROMPT in text
    assert "<the CoT the model generates>\nTherefore, the answer is" in text
    # Nothing was interpreted as markup: the document's text is the prompt's text.
    assert "<b>3</b>" in planner.preview.document().toPlainText()


def test_main_window_filter_and_selection_as_sample_source(window, generation, qtbot):
    window.samples.tree.select_collection(COLLECTION)
    window.samples.search.setText("braces")
    window.samples.apply_filter()
    assert window.samples.model.rowCount() == 1
    planner = open_planner(generation, qtbot)
    add_model(planner)
    planner.source.setCurrentIndex(planner.source.findData("filter"))
    plan = wait_plan(qtbot, planner)
    assert [s.sample_id for s in plan.samples] == ["lab_2"]
    planner.source.setCurrentIndex(planner.source.findData("selection"))
    plan = wait_plan(qtbot, planner)
    assert [s.pk for s in plan.samples] == [window.samples.current_sample_key()]


def test_local_model_form_checks_the_gguf_file(generation, qtbot, tmp_path):
    planner = open_planner(generation, qtbot)
    form = planner.models.form
    form.provider.setCurrentIndex(form.provider.findData("llamacpp"))
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 a zip, not a model")
    form.gguf_path.setText(str(not_gguf))
    assert planner.models.add_from_form() is None
    assert "llamacpp" in planner.models.error.text() and "not a GGUF" in planner.models.error.text()
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 16)
    form.gguf_path.setText(str(gguf))
    form.n_ctx.setValue(4096)
    form.n_threads.setValue(2)
    form.template.setCurrentIndex(1)  # raw completion
    spec = planner.models.add_from_form()
    assert spec == ModelSpec(
        provider="llamacpp",
        model=str(gguf),
        chat=False,
        n_ctx=4096,
        n_threads=2,
        n_gpu_layers=0,
        temperature=0.0,
        max_tokens=256,
        extraction_max_tokens=32,
        seed=None,
        timeout=120.0,
    )
    plan = wait_plan(qtbot, planner)
    assert plan.estimated_cost == 0.0  # local models cost nothing

    # A completion template wraps raw prompts; it is kept in the spec and shown again on edit.
    assert form.completion_template.isEnabled()
    form.completion_template.setPlainText("<start_of_turn>user\n{prompt}<end_of_turn>\n<start_of_turn>model\n")
    wrapped = form.spec()
    assert wrapped.completion_template.startswith("<start_of_turn>user\n{prompt}")
    assert wrapped.backend_id() != spec.backend_id()  # stored answers of the plain prompt are not reused
    form.completion_template.setPlainText("no placeholder here")
    with pytest.raises(RunSpecError, match="must contain {prompt}"):
        form.spec()
    form.set_spec(wrapped)
    assert form.completion_template.toPlainText() == wrapped.completion_template
    form.template.setCurrentIndex(0)  # the GGUF's chat template: no wrapping
    assert not form.completion_template.isEnabled()
    assert form.spec().completion_template == "{prompt}"


def test_the_planner_opens_on_the_collection_selected_in_the_tree(window, generation, qtbot):
    from tests.ui.generation.conftest import GEN_UI
    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.core.library.store import Library
    from thoughtdesk.ui.base.changes import DataChanges
    from thoughtdesk.ui.samples.collection_tree import TreeNode

    # "Alpha quiz" sorts first: the planner used to open on it whatever the tree showed.
    with Library.open(window.library.path) as lib:
        import_thoughtsource(lib, GEN_UI / "planner_collection.json", collection="Alpha quiz")
    samples = window.samples
    with qtbot.waitSignal(samples.browse_refreshed, timeout=10000):
        window.notify_data_changed(DataChanges(collections=True, samples=True))
    lab = window.library.collection_id(COLLECTION)
    assert samples.tree.select_node(TreeNode(lab, COLLECTION, "lab_quiz", "train"))
    planner = generation.open_planner()
    assert planner.collection.currentText() == COLLECTION
    assert planner.dataset.currentData() == "lab_quiz" and planner.split.currentData() == "train"
    add_model(planner)
    plan = wait_plan(qtbot, planner)
    assert {s.split for s in plan.samples} == {"train"} and len(plan.samples) == 3
    planner.reject()

    assert samples.tree.select_collection("Alpha quiz")
    planner = generation.open_planner()
    assert planner.collection.currentText() == "Alpha quiz" and planner.dataset.currentData() is None
    planner.reject()


def test_the_model_form_starts_from_the_wizard_and_settings_choices(window, generation, qtbot, tmp_path):
    from thoughtdesk.ui.settings.options import AppSettings, save_settings

    planner = generation.open_planner()
    assert planner.models.form.provider.currentData() == "openai"  # nothing chosen: the built-in default
    planner.reject()

    model = tmp_path / "clinic-model.gguf"
    save_settings(
        AppSettings(local_model_path=str(model), openai_enabled=True, openai_base_url="http://127.0.0.1:8080/v1")
    )
    planner = generation.open_planner()
    form = planner.models.form
    assert form.provider.currentData() == "llamacpp" and form.gguf_path.text() == str(model)
    form.provider.setCurrentIndex(form.provider.findData("openai"))
    assert form.base_url.text() == "http://127.0.0.1:8080/v1"  # the server set in Settings
    planner.reject()

    save_settings(AppSettings(anthropic_enabled=True, anthropic_base_url="http://127.0.0.1:8081"))
    planner = generation.open_planner()
    form = planner.models.form
    assert form.provider.currentData() == "anthropic" and form.base_url.text() == "http://127.0.0.1:8081"
    planner.reject()
    critique = generation.open_critique_dialog()
    assert critique.models.form.provider.currentData() == "anthropic"
    critique.reject()


def test_fragment_lists_show_the_whole_text_in_a_plain_tooltip(generation, qtbot):
    planner = open_planner(generation, qtbot)
    triggers = planner.lists["cot_trigger"]
    item = next(
        triggers.item(row) for row in range(triggers.count()) if triggers.item(row).data(KEY_ROLE) == "kojima-01"
    )
    assert item.toolTip() == "<p>kojima-01 — Answer: Let's think step by step.</p>"
    planner.reject()


def test_the_cli_plans_what_the_planner_plans_from_the_same_settings(window, generation, qtbot, tmp_path, capsys):
    """Audit of issue 16, point 6: `generate --plan-only` showed no fragments (- / - / -), a raw
    completion for a local model, and ignored the local model and providers' addresses in the
    settings file, while the planner started from qa-01 / kojima-01 / kojima-01, the chat template
    and those choices."""
    from thoughtdesk.cli.main import main
    from thoughtdesk.ui.settings.options import AppSettings, save_settings

    model = tmp_path / "clinic-model.gguf"
    model.write_bytes(b"GGUF" + bytes(60))  # the planner's form checks the file's magic
    save_settings(
        AppSettings(local_model_path=str(model), openai_enabled=True, openai_base_url="http://127.0.0.1:8080/v1")
    )
    planner = open_planner(generation, qtbot)
    assert [spec.provider for spec in planner.models.specs()] == ["llamacpp"]  # in the run already: no click
    plan = wait_plan(qtbot, planner)
    assert planner.start_button.isEnabled()
    (local,) = plan.spec.models
    planner.models.form.provider.setCurrentIndex(planner.models.form.provider.findData("openai"))
    planner.models.form.model_name.setText("served-model")
    remote = planner.models.add_from_form()
    planner.reject()
    assert local.chat and remote is not None and remote.base_url == "http://127.0.0.1:8080/v1"
    variant = " / ".join(key or "-" for key in (*plan.spec.instructions, *plan.spec.cot_triggers))
    variant += " / " + " / ".join(key or "-" for key in plan.spec.answer_extractions)
    assert variant == "qa-01 / kojima-01 / kojima-01"

    library = ["--library", str(window.library.path)]
    where = ["--dataset", "lab_quiz", "--split", "test", "--plan-only"]
    assert main([*library, "generate", COLLECTION, *where]) == 0  # no --model: the planner's first model
    out, err = capsys.readouterr()
    assert f"model {local.describe()}" in err.splitlines(), err
    assert "chat template" in local.describe()
    assert f"| {local.label} | {variant}" in out.splitlines()[0], out.splitlines()[0]
    assert (
        main([*library, "generate", COLLECTION, *where, "--model", "llamacpp", "--model", "openai:served-model"]) == 0
    )
    out, err = capsys.readouterr()
    assert f"model {remote.describe()}" in err.splitlines() and "http://127.0.0.1:8080/v1" in remote.describe()
    assert f"model {local.describe()}" in err.splitlines()
    assert main([*library, "generate", COLLECTION, *where, "--model", "llamacpp", "--completion"]) == 0
    assert "raw completion" in capsys.readouterr().err  # the way out of the chat template
    assert main([*library, "generate", COLLECTION, *where, "--instruction", "none", "--extraction", "none"]) == 0
    assert "| - / kojima-01 / -" in capsys.readouterr().out  # and out of the default fragments


def test_one_temperature_range_for_the_planner_and_the_cli(generation, qtbot):
    from thoughtdesk.cli.main import build_parser, sub_commands
    from thoughtdesk.core.generation.defaults import TEMPERATURE_RANGE

    planner = generation.open_planner()
    spin = planner.models.form.temperature
    assert (spin.minimum(), spin.maximum()) == TEMPERATURE_RANGE == (0.0, 2.0)
    assert planner.guide.step_temperature.maximum() == TEMPERATURE_RANGE[1]
    planner.reject()
    for command in sub_commands(build_parser()):
        for action in command._actions:
            if action.dest in ("temperature", "step_temperature"):
                assert callable(action.type) and action.type("2") == 2.0, command.prog
                with pytest.raises(Exception, match="out of range"):
                    action.type("2.5")


def test_the_gguf_file_label_is_a_mnemonic_not_a_literal_ampersand(generation, qtbot):
    """Audit of issue 16: the Models tab showed "GGUF &file" (a form row whose field is a layout
    has no buddy, so Qt shows the "&")."""
    from thoughtdesk.ui.qt import QFormLayout, QLabel

    planner = generation.open_planner()
    form = planner.models.form
    form.provider.setCurrentIndex(form.provider.findData("llamacpp"))
    labels = [
        label for layout in form.findChildren(QFormLayout) for label in layout.parentWidget().findChildren(QLabel)
    ]
    gguf = next(label for label in labels if label.text() == "GGUF &file")
    assert gguf.buddy() is form.gguf_path
    for label in labels:  # every "&" in the form's labels marks a shortcut to a field
        if "&" in label.text():
            assert label.buddy() is not None, label.text()
    planner.reject()


def test_helper_models_start_from_settings_offline_aware_and_follow_a_local_main_model(
    window, generation, qtbot, tmp_path
):
    # Issue 28: the Guide tab's rationale model started as a remote model (with a cost estimate)
    # while offline mode was on, and switching it to Local left the GGUF path empty.
    from thoughtdesk.core.settings import network
    from thoughtdesk.ui.settings.options import AppSettings, save_settings

    model = tmp_path / "clinic-model.gguf"
    save_settings(AppSettings(local_model_path=str(model), openai_enabled=True))
    planner = generation.open_planner()
    guide = planner.guide
    for form in (guide.rationale_form, guide.scorer_form, guide.rater_form):
        assert form.provider.currentData() == "llamacpp" and form.gguf_path.text() == str(model)
    planner.reject()

    # No local model in Settings, offline, a remote provider enabled: no helper starts remote,
    # and once the run's main model is a local GGUF, the helpers take its file.
    save_settings(AppSettings(openai_enabled=True, offline=True))
    assert network.is_offline()
    try:
        planner = generation.open_planner()
        guide = planner.guide
        for helper in (guide.rationale_form, guide.scorer_form, guide.rater_form):
            assert helper.provider.currentData() == "llamacpp" and not helper.gguf_path.text()
        planner.models.list.clear()
        other = tmp_path / "main-model.gguf"
        guide.rater_form.provider.setCurrentIndex(guide.rater_form.provider.findData("openai"))
        planner.models.add(_local_spec(other))
        for helper in (guide.rationale_form, guide.scorer_form, guide.rater_form):
            assert helper.provider.currentData() == "llamacpp", "offline: the helper follows the local main model"
            assert helper.gguf_path.text() == str(other)
        planner.reject()
    finally:
        save_settings(AppSettings(offline=False))


def _local_spec(path):
    from thoughtdesk.core.generation.runs import ModelSpec

    return ModelSpec("llamacpp", str(path))


def test_the_planner_says_when_offline_mode_cuts_a_pool_to_its_local_servers(generation, qtbot):
    """Issue 23, point 13: a pool with a server on another machine ran, in offline mode, without a
    word about it (most of its requests failed on the refused server)."""
    from thoughtdesk.core.settings import network

    network.set_offline(True)  # the app_state fixture sets it back after the test
    planner = open_planner(generation, qtbot)
    form = planner.models.form
    form.provider.setCurrentIndex(form.provider.findData("openai"))
    form.model_name.setText("pooled")
    form.base_url.setText("http://127.0.0.1:9/v1")
    form.more_base_urls.setPlainText("http://models.example.org/v1")
    assert planner.models.add_from_form() is not None, planner.models.error.text()
    planner.mode.setCurrentIndex(planner.mode.findData("one-step"))
    wait_plan(qtbot, planner)
    qtbot.waitUntil(lambda: "offline mode is on: the pool of pooled" in planner.summary.text(), timeout=10000)
    warnings = [line for line in planner.summary.text().splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 1 and "http://models.example.org/v1 is on another machine" in warnings[0]
