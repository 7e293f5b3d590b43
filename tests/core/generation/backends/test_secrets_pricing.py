"""API keys in a keyring (never the real one in tests), prices and token estimates."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import keyring.backends.fail
import pytest

from tests.helpers.servers import FakeModelServer
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.generation.backends import (
    AuthError,
    ChatMessage,
    ModelPrice,
    OpenAICompatBackend,
    PriceTable,
    Request,
    estimate_request_tokens,
    estimate_tokens,
)
from thoughtdesk.core.settings import secrets


@pytest.fixture
def memory_keyring():
    store = secrets.MemoryKeyring()
    secrets.use_keyring(store)
    yield store
    secrets.use_keyring(None)


def test_keys_set_get(memory_keyring: secrets.MemoryKeyring) -> None:
    assert secrets.get_api_key("openai") is None
    secrets.set_api_key("openai", "  sk-live-abcdef123456  ")
    secrets.set_api_key("anthropic", "sk-ant-1")
    assert secrets.get_api_key("openai") == "sk-live-abcdef123456"
    assert memory_keyring.get_password("thoughtdesk", "anthropic") == "sk-ant-1"
    with pytest.raises(secrets.SecretStoreError, match="empty"):
        secrets.set_api_key("openai", "   ")


def test_testing_mode_uses_memory_not_the_system_keyring(monkeypatch) -> None:
    monkeypatch.setenv("THOUGHTDESK_TESTING", "1")
    secrets.use_keyring(None)
    secrets.set_api_key("x", "k1")
    assert isinstance(secrets.active_keyring(), secrets.MemoryKeyring)
    secrets.use_keyring(None)


def test_unusable_keyring_gives_clear_error_without_key() -> None:
    secrets.use_keyring(keyring.backends.fail.Keyring())
    try:
        with pytest.raises(secrets.SecretStoreError) as error:
            secrets.set_api_key("openai", "sk-secret-777")
        assert "openai" in str(error.value) and "sk-secret-777" not in str(error.value)
        assert "install one" in str(error.value)
    finally:
        secrets.use_keyring(None)


def test_masked() -> None:
    assert secrets.masked("sk-1234567890abcd") == "••••abcd"
    assert secrets.masked(None) == "(none)"


def test_key_from_keyring_reaches_server_but_no_log_or_error(
    memory_keyring, keyed_server: FakeModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    secrets.set_api_key("local", "sk-right")
    secrets.set_api_key("other", "sk-wrong-key-424242")
    caplog.set_level(logging.DEBUG)

    async def main() -> tuple[str, str]:
        good = OpenAICompatBackend(keyed_server.base_url, secrets.get_api_key("local"), provider="local")
        bad = OpenAICompatBackend(keyed_server.base_url, secrets.get_api_key("other"), provider="other")
        ok = await good.complete(Request(model="known-model", prompt="P"))
        try:
            await bad.complete(Request(model="known-model", prompt="P"))
        except AuthError as error:
            failure = f"{error} {error!r} {error.raw_body}"
        await good.aclose()
        await bad.aclose()
        return ok.raw_body, failure

    raw, failure = asyncio.run(main())
    assert keyed_server.requests[0].headers["authorization"] == "Bearer sk-right"
    for text in (raw, failure, caplog.text):
        assert "sk-right" not in text and "sk-wrong-key-424242" not in text


def test_price_lookup_exact_beats_pattern_and_cost() -> None:
    table = PriceTable()
    price = table.price_for("openai", "gpt-4o-mini-2024-07-18")
    assert price is not None and price.input_per_million == 0.15
    table.set(ModelPrice("openai", "gpt-4o-mini-2024-07-18", 1.0, 2.0))
    assert table.cost("openai", "gpt-4o-mini-2024-07-18", 1_000_000, 500_000) == pytest.approx(2.0)
    assert table.cost("llamacpp", "gemma.gguf", 10**6, 10**6) == 0.0
    assert table.cost("openai", "unknown-model", 1, 1) is None


def test_price_table_save_load_and_bad_file(tmp_path: Path) -> None:
    table = PriceTable()
    table.set(ModelPrice("vllm", "my-model", 0.1, 0.2, "own GPU"))
    table.save(tmp_path / "prices.json")
    assert PriceTable.load(tmp_path / "prices.json").prices == table.prices
    (tmp_path / "bad.json").write_text('{"prices": [{"provider": "x", "model": "y"}]}')
    with pytest.raises(DataFileError, match="entry 1"):
        PriceTable.load(tmp_path / "bad.json")
    (tmp_path / "broken.json").write_text('{"prices": [\n}')
    with pytest.raises(DataFileError, match="line 2"):
        PriceTable.load(tmp_path / "broken.json")


def test_token_estimates() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd" * 25) == 25
    assert estimate_request_tokens(Request(model="m", prompt="abcd" * 25, max_tokens=10, n=2)) == (50, 20)
    chat = Request(model="m", messages=(ChatMessage("user", "abcd" * 5),), max_tokens=3)
    assert estimate_request_tokens(chat) == (9, 3)
