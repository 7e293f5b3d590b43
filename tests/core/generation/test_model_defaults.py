"""The model a run (and each helper model) starts with, from Settings, offline-aware (issue 28:
offline, the defaults were a remote model with a cost estimate that could not be called)."""

from __future__ import annotations

import argparse

import pytest

from thoughtdesk.cli.models import model_texts
from thoughtdesk.core.generation.defaults import ModelDefaults
from thoughtdesk.core.generation.runs import RunSpecError

REMOTE = {"openai": "", "anthropic": "https://api.anthropic.com"}


def test_online_the_first_enabled_provider_is_the_default():
    assert ModelDefaults("", dict(REMOTE)).first_choice() == "openai"
    assert ModelDefaults("/m.gguf", dict(REMOTE)).default_model() == "llamacpp:/m.gguf"


def test_offline_only_the_local_model_or_a_provider_on_this_machine():
    assert ModelDefaults("/m.gguf", dict(REMOTE), offline=True).first_choice() == "llamacpp"
    assert ModelDefaults("", dict(REMOTE), offline=True).first_choice() is None
    on_this_machine = {**REMOTE, "openai": "http://127.0.0.1:8080/v1"}
    assert ModelDefaults("", on_this_machine, offline=True).default_model() == "openai:gpt-4o-mini"
    assert ModelDefaults("", {"openai": "http://localhost:8080/v1"}, offline=True).first_choice() == "openai"


def test_the_command_line_says_why_offline_has_no_default():
    args = argparse.Namespace(model=None)
    with pytest.raises(RunSpecError, match="offline mode is on and Settings choose no local model"):
        model_texts(args, ModelDefaults("", dict(REMOTE), offline=True))
    assert model_texts(args, ModelDefaults("", dict(REMOTE))) == ["openai:gpt-4o-mini"]
