"""Reasoning effort requested (issue 24, point 3): ``generate --reasoning-effort`` (or the effort
set in Settings for the provider) reaches the server as each provider's switch, max tokens
default to room for a typical trace, and the plan warns when max tokens will likely cut the
thinking."""

from __future__ import annotations

import pytest

from tests.helpers.libraries import DEMO
from tests.helpers.servers import ReasoningServer
from thoughtdesk.cli.main import main
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import CONFIG_DIR_ENV, settings_file


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    folder = tmp_path / "config"
    monkeypatch.setenv(CONFIG_DIR_ENV, str(folder))
    return folder


def generate(library_path, *options: str) -> int:
    return main(
        ["--library", str(library_path), "generate", DEMO, "--dataset", "gsm8k", "--limit", "1", "--json", *options]
    )


def test_reasoning_effort_reaches_the_server_and_raises_the_default_max_tokens(library_path, config_dir, capsys):
    with ReasoningServer("reasoning_content") as server:
        code = generate(
            library_path,
            "--model",
            "openai:thinker",
            "--base-url",
            server.base_url,
            "--reasoning-effort",
            "high",
            "--extraction",
            "none",
        )
        sent = server.requests[0].json
    out, err = capsys.readouterr()
    assert code == 0, err
    assert sent["reasoning_effort"] == "high" and sent["max_tokens"] == 16384
    assert sent["chat_template_kwargs"] == {"enable_thinking": True}  # a server on this machine
    assert "reasoning effort high" in err
    with Library.open(library_path) as lib:
        (reasoning, cot) = lib.conn.execute(
            "SELECT reasoning, cot FROM generated_cot WHERE cot_id LIKE 'td-%'"
        ).fetchone()
    assert (reasoning, cot) == (server.thinking, server.answer)


def test_the_plan_warns_when_max_tokens_will_cut_the_thinking(library_path, config_dir, capsys):
    code = generate(
        library_path,
        "--model",
        "anthropic:claude-sonnet-4-5",
        "--reasoning-effort",
        "medium",
        "--max-tokens",
        "1500",
        "--plan-only",
    )
    _out, err = capsys.readouterr()
    assert code == 0, err
    (warning,) = [line for line in err.splitlines() if "warning" in line]
    assert "max tokens 1,500 leave no room for a thinking budget" in warning and "8,192" in warning
    code = generate(
        library_path, "--model", "openai:o4-mini", "--reasoning-effort", "low", "--max-tokens", "512", "--plan-only"
    )
    _out, err = capsys.readouterr()
    assert "max tokens 512 will likely cut its thinking" in err
    code = generate(library_path, "--model", "openai:o4-mini", "--reasoning-effort", "low", "--plan-only")
    _out, err = capsys.readouterr()
    assert "warning" not in err and "max 4096 tokens" in err  # the effort's default: no warning


def test_the_effort_set_in_settings_is_used_and_the_option_wins(library_path, config_dir, capsys):
    settings_file().parent.mkdir(parents=True, exist_ok=True)
    settings_file().write_text("[providers]\nopenai\\reasoning_effort=low\n", encoding="utf-8")
    with ReasoningServer("reasoning") as server:
        base = ["--model", "openai:thinker", "--base-url", server.base_url, "--extraction", "none"]
        assert generate(library_path, *base) == 0
        assert generate(library_path, *base, "--reasoning-effort", "none", "--force") == 0
        first, second = (r.json for r in server.requests)
    capsys.readouterr()
    assert first["reasoning_effort"] == "low" and first["max_tokens"] == 4096
    assert second["reasoning_effort"] == "none" and second["chat_template_kwargs"] == {"enable_thinking": False}


def test_a_bad_effort_or_think_tags_is_one_line(library_path, config_dir, capsys):
    with pytest.raises(SystemExit):
        generate(library_path, "--model", "openai:x", "--reasoning-effort", "huge", "--plan-only")
    code = generate(library_path, "--model", "openai:x", "--think-tags", "<think>", "--plan-only")
    _out, err = capsys.readouterr()
    assert code != 0
    assert [line for line in err.splitlines() if line.strip()][-1].endswith(
        "--think-tags: think tags '<think>': write OPEN,CLOSE, e.g. '<think>,</think>', or 'none'"
    )


def test_critique_and_helper_models_keep_the_provider_s_default(config_dir):
    from thoughtdesk.cli.models import model_spec
    from thoughtdesk.core.generation.defaults import model_defaults

    settings_file().parent.mkdir(parents=True, exist_ok=True)
    settings_file().write_text("[providers]\nopenai\\reasoning_effort=high\n", encoding="utf-8")
    defaults = model_defaults()
    assert defaults.effort("openai") == "high"
    critic = model_spec("openai:judge", {"max_tokens": 512}, defaults)  # what critique builds
    assert critic.reasoning_effort is None and critic.max_tokens == 512
    assert model_spec("openai:thinker", {}, defaults, settings_effort=True).reasoning_effort == "high"
