"""The CLI uses what the user set up in the app: fragments added in the fragment editor and the
edited price table; and API keys from the environment when the keyring holds none."""

from __future__ import annotations

import json

import pytest

from tests.helpers.libraries import DEMO
from tests.helpers.servers import FakeModelServer
from thoughtdesk.cli.main import main
from thoughtdesk.core.generation.backends import ModelPrice, PriceTable
from thoughtdesk.core.generation.fragment_store import FragmentStore
from thoughtdesk.core.generation.prompts import Fragment
from thoughtdesk.core.generation.runs import api_key_for
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import CONFIG_DIR_ENV
from thoughtdesk.core.settings.secrets import MemoryKeyring, set_api_key, use_keyring


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    folder = tmp_path / "config"
    monkeypatch.setenv(CONFIG_DIR_ENV, str(folder))
    return folder


def test_generate_uses_fragments_added_in_the_app(library_path, config_dir, capsys):
    store = FragmentStore()
    fragments = store.load()
    fragments.add(Fragment("lab-own", "cot_trigger", "Answer: Our own {careful} trigger."))
    store.save(fragments)  # what the fragment editor does
    code = main(
        [
            "--library",
            str(library_path),
            "generate",
            DEMO,
            "--model",
            "openai:gpt-4o-mini",
            "--dataset",
            "gsm8k",
            "--trigger",
            "lab-own",
            "--plan-only",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Answer: Our own {careful} trigger." in out


def test_generate_and_resume_use_the_edited_price_table(library_path, config_dir, capsys):
    config_dir.mkdir(parents=True)
    PriceTable([ModelPrice("local", "priced", 1000.0, 2000.0)]).save(config_dir / "prices.json")
    with FakeModelServer() as server:
        code = main(
            [
                "--library",
                str(library_path),
                "generate",
                DEMO,
                "--model",
                "openai:priced",
                "--base-url",
                server.base_url,
                "--dataset",
                "gsm8k",
                "--trigger",
                "kojima-01",
                "--one-step",
            ]
        )
        _, err = capsys.readouterr()
    assert code == 0, err
    with Library.open(library_path) as lib:
        rows = lib.conn.execute("SELECT prompt_tokens, completion_tokens, cost FROM request").fetchall()
        extra = json.loads(lib.conn.execute("SELECT extra FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()[0])[
            "thoughtdesk"
        ]
    assert len(rows) == 5
    for prompt_tokens, completion_tokens, cost in rows:
        assert cost == pytest.approx((prompt_tokens * 1000.0 + completion_tokens * 2000.0) / 1e6)
    assert extra["cost"] == pytest.approx((extra["prompt_tokens"] * 1000.0 + extra["completion_tokens"] * 2000.0) / 1e6)
    assert "cost at most $" in err and "cost at most $0.0000" not in err


def test_unreadable_price_table_is_named_and_defaults_are_used(library_path, config_dir, capsys):
    config_dir.mkdir(parents=True)
    (config_dir / "prices.json").write_text('{"prices": [', encoding="utf-8")
    code = main(
        [
            "--library",
            str(library_path),
            "generate",
            DEMO,
            "--model",
            "openai:gpt-4o-mini",
            "--dataset",
            "gsm8k",
            "--trigger",
            "kojima-01",
            "--plan-only",
        ]
    )
    _, err = capsys.readouterr()
    assert code == 0
    assert "prices.json" in err and "using the default prices" in err


def test_environment_key_is_a_fallback_after_the_keyring(monkeypatch):
    use_keyring(MemoryKeyring())
    try:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        assert api_key_for("openai") is None
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment")
        assert api_key_for("openai") == "sk-from-environment"
        set_api_key("openai", "sk-from-keyring")
        assert api_key_for("openai") == "sk-from-keyring"  # the keyring wins
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
        assert api_key_for("anthropic") == "sk-ant-env"
        assert api_key_for("llamacpp") is None  # no variable for other providers
    finally:
        use_keyring(None)


def test_a_stored_key_goes_only_to_the_server_it_was_saved_for(monkeypatch):
    from thoughtdesk.core.settings.config import key_origin, store_api_key

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    use_keyring(MemoryKeyring())
    try:
        store_api_key("openai", "sk-for-the-lab-server", "http://127.0.0.1:8000/v1")
        assert api_key_for("openai", "http://127.0.0.1:8000/v1/") == "sk-for-the-lab-server"
        assert api_key_for("openai", "http://127.0.0.1:8001/v1") is None  # another port
        assert api_key_for("openai", "https://api.example-host.com/v1") is None  # a third party
        assert api_key_for("openai") is None  # the official address is not the one it was saved for
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment")
        assert api_key_for("openai", "https://api.example-host.com/v1") == "sk-from-environment"
        # A key stored without an address belongs to the provider's official one.
        set_api_key("anthropic", "sk-ant-official")
        assert api_key_for("anthropic") == "sk-ant-official"
        assert api_key_for("anthropic", "https://API.anthropic.com/") == "sk-ant-official"
        assert api_key_for("anthropic", "http://127.0.0.1:9/") is None
        assert key_origin("HTTPS://Api.OpenAI.com/v1") == "https://api.openai.com:443"
    finally:
        use_keyring(None)


def test_a_model_without_a_price_has_an_unknown_cost_not_zero(library_path, config_dir, capsys):
    config_dir.mkdir(parents=True)
    PriceTable([]).save(config_dir / "prices.json")  # a table that prices nothing
    with FakeModelServer() as server:
        code = main(
            [
                "--library",
                str(library_path),
                "generate",
                DEMO,
                "--model",
                "openai:unlisted",
                "--base-url",
                server.base_url,
                "--dataset",
                "gsm8k",
                "--trigger",
                "kojima-01",
                "--one-step",
            ]
        )
        out, err = capsys.readouterr()
    assert code == 0, err
    assert "cost unknown (no price for openai:unlisted)" in out
    assert "$0.0000" not in out
