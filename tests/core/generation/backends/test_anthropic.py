"""The Anthropic Messages backend against a fake Anthropic-shaped server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.backends import (
    AnthropicBackend,
    AuthError,
    BadResponse,
    ChatMessage,
    ModelNotFound,
    Request,
    ResilientBackend,
    RetryPolicy,
    ServerError,
)


def run(backend, request):
    async def main():
        try:
            return await backend.complete(request)
        finally:
            await backend.aclose()

    return asyncio.run(main())


def test_messages_request_headers_and_response(keyed_server: FakeModelServer) -> None:
    backend = AnthropicBackend("sk-right", base_url=keyed_server.root_url)
    request = Request(
        model="known-model",
        temperature=0.2,
        max_tokens=20,
        stop=("END",),
        messages=(ChatMessage("system", "Be terse."), ChatMessage("user", "Why is the sky blue")),
    )
    response = run(backend, request)
    assert response.texts == ["echo: Why is the sky blue"]
    assert response.finish_reasons == ["end_turn"]
    assert (response.prompt_tokens, response.completion_tokens) == (5, 7)
    assert json.loads(response.raw_body)["type"] == "message"
    sent = keyed_server.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-right"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    assert sent.json == {
        "model": "known-model",
        "max_tokens": 20,
        "temperature": 0.2,
        "messages": [{"role": "user", "content": "Why is the sky blue"}],
        "system": "Be terse.",
        "stop_sequences": ["END"],
    }
    assert not backend.capabilities.multiple_samples and not backend.capabilities.seed


def test_n_samples_are_concurrent_calls(keyed_server: FakeModelServer) -> None:
    response = run(
        AnthropicBackend("sk-right", base_url=keyed_server.root_url), Request(model="known-model", prompt="Q", n=3)
    )
    assert response.texts == ["echo: Q"] * 3 and len(keyed_server.requests) == 3
    assert response.prompt_tokens == 3 and len(json.loads(response.raw_body)) == 3


def test_wrong_key(keyed_server: FakeModelServer) -> None:
    with pytest.raises(AuthError) as error:
        run(
            AnthropicBackend("sk-ant-wrong-999", base_url=keyed_server.root_url),
            Request(model="known-model", prompt="Q"),
        )
    assert str(error.value).startswith("anthropic: the API key was refused (HTTP 401)")
    assert "invalid api key" in str(error.value) and "sk-ant-wrong-999" not in str(error.value)


def test_unknown_model(keyed_server: FakeModelServer) -> None:
    with pytest.raises(ModelNotFound, match="model 'claude-9' was not found"):
        run(AnthropicBackend("sk-right", base_url=keyed_server.root_url), Request(model="claude-9", prompt="Q"))


def test_overloaded_529_is_retried(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
    backend = ResilientBackend(
        AnthropicBackend("k", base_url=fake_server.root_url),
        retry=RetryPolicy(initial_wait=0.01, max_wait=0.05, jitter=0),
    )
    assert run(backend, Request(model="m", prompt="Q")).attempts == 2


def test_overloaded_forever_names_provider(fake_server: FakeModelServer) -> None:
    fake_server.script(
        *[Reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})] * 2
    )
    backend = ResilientBackend(
        AnthropicBackend("k", base_url=fake_server.root_url),
        retry=RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.05, jitter=0),
    )
    with pytest.raises(ServerError, match=r"anthropic: server error \(HTTP 529\).*Overloaded"):
        run(backend, Request(model="m", prompt="Q"))


def test_answer_without_text_is_bad_response(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply(body={"type": "message", "content": []}))
    with pytest.raises(BadResponse, match="no text content") as error:
        run(AnthropicBackend("k", base_url=fake_server.root_url), Request(model="m", prompt="Q"))
    assert error.value.raw_body is not None and json.loads(error.value.raw_body)["content"] == []
