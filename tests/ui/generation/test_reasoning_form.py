"""Reasoning effort in the GUI (issue 24, point 3): Edit > Settings keeps an effort per provider
and for the local model, the same settings file the command line reads; the planner's model
form starts from it, proposes max tokens that fit a typical trace, keeps think tags, and the
plan summary warns when max tokens will likely cut the thinking."""

from __future__ import annotations

import pytest

from thoughtdesk.core.generation.defaults import model_defaults
from thoughtdesk.core.generation.runs import ModelSpec, RunSpecError
from thoughtdesk.ui.generation.controller import critique_model_list
from thoughtdesk.ui.generation.model_form import ModelForm
from thoughtdesk.ui.settings.dialog import SettingsDialog
from thoughtdesk.ui.settings.options import AppSettings, load_settings, save_settings


def test_settings_keep_an_effort_per_provider_that_the_planner_and_cli_start_from(qtbot):
    save_settings(AppSettings(openai_enabled=True, anthropic_enabled=True))
    dialog = SettingsDialog()
    qtbot.addWidget(dialog)
    providers = dialog.forms.providers
    providers.openai.effort.setCurrentIndex(providers.openai.effort.findData("high"))
    providers.anthropic.effort.setCurrentIndex(providers.anthropic.effort.findData("low"))
    dialog.forms.model.effort.setCurrentIndex(dialog.forms.model.effort.findData("none"))
    dialog.accept()
    saved = load_settings()
    assert (saved.openai_reasoning_effort, saved.anthropic_reasoning_effort, saved.local_reasoning_effort) == (
        "high",
        "low",
        "none",
    )
    defaults = model_defaults()  # what the CLI and the planner read, without Qt
    assert defaults.efforts == {"openai": "high", "anthropic": "low", "llamacpp": "none"}
    form = ModelForm()
    qtbot.addWidget(form)
    form.start_from(defaults)
    assert form.reasoning_effort.currentData() == "high"  # openai comes first
    assert form.max_tokens.value() == 16384  # room for a typical trace
    form.provider.setCurrentIndex(form.provider.findData("anthropic"))
    assert form.reasoning_effort.currentData() == "low"
    # Critique models keep the provider's default: their max tokens are no thinking budget.
    critics = critique_model_list()
    qtbot.addWidget(critics)
    assert critics.form.reasoning_effort.currentData() is None and critics.form.max_tokens.value() == 512
    assert all(spec.reasoning_effort is None for spec in critics.specs())


def test_the_model_form_builds_effort_and_think_tags_into_the_spec_and_back(qtbot):
    form = ModelForm()
    qtbot.addWidget(form)
    form.provider.setCurrentIndex(form.provider.findData("openai"))
    form.model_name.setText("qwq")
    form.reasoning_effort.setCurrentIndex(form.reasoning_effort.findData("medium"))
    assert form.max_tokens.value() == 8192
    form.think_tags.setText("<|begin_of_thought|>,<|end_of_thought|>")
    spec = form.spec()
    assert spec.reasoning_effort == "medium"
    assert spec.think_tags == ("<|begin_of_thought|>", "<|end_of_thought|>")
    form.set_spec(ModelSpec("openai", "plain", max_tokens=300))
    assert form.reasoning_effort.currentData() is None and form.max_tokens.value() == 300
    assert form.think_tags.text() == "<think>,</think>"
    form.set_spec(spec)
    assert form.spec() == spec
    form.think_tags.setText("none")
    assert form.spec().think_tags is None
    form.think_tags.setText("<think>")
    with pytest.raises(RunSpecError, match="OPEN,CLOSE"):
        form.spec()
