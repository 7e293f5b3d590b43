"""The records a run queue stores: Request, Response, errors."""

from __future__ import annotations

import json

import pytest

from thoughtdesk.core.generation.backends import (
    AuthError,
    BackendError,
    ChatMessage,
    RateLimited,
    Request,
    Response,
)


def test_request_needs_prompt_or_messages() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Request(model="m")
    with pytest.raises(ValueError, match="exactly one"):
        Request(model="m", prompt="p", messages=(ChatMessage("user", "x"),))
    with pytest.raises(ValueError, match="at least 1"):
        Request(model="m", prompt="p", n=0)


def test_request_json_and_fingerprint() -> None:
    request = Request(model="m", messages=(ChatMessage("user", "hi"),), stop=("x",), seed=3)
    data = request.to_json()
    assert data["messages"] == [{"role": "user", "content": "hi"}] and data["stop"] == ["x"]
    json.dumps(data)
    same = Request(model="m", messages=(ChatMessage("user", "hi"),), stop=("x",), seed=3, timeout=5)
    assert request.fingerprint("openai@u") == same.fingerprint("openai@u")  # timeout is not identity
    assert request.fingerprint("openai@u") != request.fingerprint("openai@v")
    other_seed = Request(model="m", messages=(ChatMessage("user", "hi"),), stop=("x",), seed=4)
    assert request.fingerprint("openai@u") != other_seed.fingerprint("openai@u")


def test_response_json_round_trip() -> None:
    response = Response(
        provider="p",
        model="m",
        texts=["a"],
        finish_reasons=["stop"],
        prompt_tokens=1,
        completion_tokens=2,
        latency=0.5,
        raw_body="{}",
    )
    assert json.loads(json.dumps(response.to_json()))["texts"] == ["a"]


def test_error_text_names_provider_and_action() -> None:
    error = AuthError("openai", "the API key was refused (HTTP 401)", hint="check the key")
    assert str(error) == "openai: the API key was refused (HTTP 401); check the key"
    assert error.kind == "AuthError" and not error.retryable and isinstance(error, BackendError)
    limited = RateLimited("x", "slow", retry_after=2.0)
    assert limited.retryable and limited.retry_after == 2.0


def test_every_backend_reports_its_capabilities(tmp_path) -> None:
    from dataclasses import asdict

    from thoughtdesk.core.generation.backends import (
        AnthropicBackend,
        Capabilities,
        LlamaCppBackend,
        LlamaCppSettings,
        OpenAICompatBackend,
        ResilientBackend,
    )

    fields = {
        "chat",
        "completion",
        "multiple_samples",
        "seed",
        "logprobs",
        "prompt_logprobs",
        "streaming",
        "scoring",
        "stable_prefix_scores",
    }
    assert set(asdict(Capabilities(True, True, True, True, True, True))) == fields
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 16)  # the capabilities need no loaded model
    chat = OpenAICompatBackend("http://127.0.0.1:9/v1", endpoint="chat")
    completions = OpenAICompatBackend("http://127.0.0.1:9/v1", endpoint="completions", native_n=False)
    expected = {
        chat: dict(
            chat=True,
            completion=False,
            multiple_samples=True,
            seed=True,
            logprobs=True,
            prompt_logprobs=False,
            streaming=False,
            scoring=False,
            stable_prefix_scores=True,
        ),
        completions: dict(
            chat=True,
            completion=True,
            multiple_samples=False,
            seed=True,
            logprobs=True,
            prompt_logprobs=True,
            streaming=False,
            scoring=True,
            stable_prefix_scores=True,
        ),
        AnthropicBackend("k"): dict(
            chat=True,
            completion=False,
            multiple_samples=False,
            seed=False,
            logprobs=False,
            prompt_logprobs=False,
            streaming=False,
            scoring=False,
            stable_prefix_scores=True,
        ),
        LlamaCppBackend(LlamaCppSettings(gguf)): dict(
            chat=True,
            completion=True,
            multiple_samples=False,
            seed=True,
            logprobs=False,  # the generation instance has no logits_all; scoring has its own instance
            prompt_logprobs=False,
            streaming=True,
            scoring=True,
            stable_prefix_scores=False,
        ),
    }
    for backend, capabilities in expected.items():
        assert asdict(backend.capabilities) == capabilities, backend
        # The retry wrapper reports what the backend it wraps can do.
        assert ResilientBackend(backend).capabilities == backend.capabilities
