"""The OpenAI-compatible backend and the retry layer against a fault-injecting server."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from tests.helpers.servers import FakeModelServer, Reply, free_port
from thoughtdesk.core.generation.backends import (
    AuthError,
    BadResponse,
    ChatMessage,
    ConnectionLost,
    ModelNotFound,
    OpenAICompatBackend,
    ProviderGate,
    ProviderLimits,
    RateLimited,
    Request,
    ResilientBackend,
    RetryPolicy,
    ServerDown,
    ServerError,
    Timeout,
)

FAST_RETRY = RetryPolicy(max_attempts=4, initial_wait=0.05, max_wait=0.2, jitter=0.05)


def run(coroutine):
    return asyncio.run(coroutine)


async def call(backend, request: Request):
    try:
        return await backend.complete(request)
    finally:
        await backend.aclose()


def test_chat_request_and_response(fake_server: FakeModelServer) -> None:
    backend = OpenAICompatBackend(fake_server.base_url, api_key="sk-abc")
    request = Request(
        model="m1",
        messages=(ChatMessage("system", "Be brief."), ChatMessage("user", "Hi there")),
        temperature=0.7,
        max_tokens=12,
        n=3,
        seed=5,
        stop=("\n\n",),
    )
    response = run(call(backend, request))
    assert response.texts == ["echo 0: Hi there", "echo 1: Hi there", "echo 2: Hi there"]
    assert response.finish_reasons == ["stop"] * 3
    assert (response.prompt_tokens, response.completion_tokens) == (2, 9)
    assert json.loads(response.raw_body)["id"] == "cmpl-test"
    sent = fake_server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-abc"
    assert sent.json == {
        "model": "m1",
        "temperature": 0.7,
        "max_tokens": 12,
        "n": 3,
        "seed": 5,
        "stop": ["\n\n"],
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"}],
    }


def test_completions_endpoint_sends_raw_prompt(fake_server: FakeModelServer) -> None:
    backend = OpenAICompatBackend(fake_server.base_url, endpoint="completions")
    response = run(call(backend, Request(model="m", prompt="Q {x}\nA:", max_tokens=4)))
    assert response.texts == ["echo 0: Q {x}\nA:"]
    assert fake_server.requests[0].path == "/v1/completions"
    assert fake_server.requests[0].json["prompt"] == "Q {x}\nA:"
    assert "authorization" not in fake_server.requests[0].headers
    assert backend.capabilities.completion and backend.capabilities.prompt_logprobs


def test_chat_endpoint_wraps_prompt_as_user_message(fake_server: FakeModelServer) -> None:
    run(call(OpenAICompatBackend(fake_server.base_url), Request(model="m", prompt="P")))
    assert fake_server.requests[0].json["messages"] == [{"role": "user", "content": "P"}]


def test_emulated_n_makes_seeded_single_calls(fake_server: FakeModelServer) -> None:
    backend = OpenAICompatBackend(fake_server.base_url, native_n=False)
    response = run(call(backend, Request(model="m", prompt="P", n=3, seed=10)))
    assert len(response.texts) == 3 and len(fake_server.requests) == 3
    assert sorted(r.json["seed"] for r in fake_server.requests) == [10, 11, 12]
    assert all(r.json["n"] == 1 for r in fake_server.requests)
    assert len(json.loads(response.raw_body)) == 3


def test_server_ignoring_n_gets_the_rest_fetched(fake_server: FakeModelServer) -> None:
    one_choice = {
        "model": "m",
        "choices": [{"index": 0, "text": "only", "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1},
    }
    fake_server.script(Reply(body=one_choice))
    backend = OpenAICompatBackend(fake_server.base_url, endpoint="completions")
    response = run(call(backend, Request(model="m", prompt="P", n=2)))
    assert response.texts[0] == "only" and len(response.texts) == 2
    assert len(fake_server.requests) == 2


def test_429_with_retry_after_is_honoured(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "1"}))
    backend = ResilientBackend(OpenAICompatBackend(fake_server.base_url), retry=FAST_RETRY)
    response = run(call(backend, Request(model="m", prompt="P")))
    assert response.attempts == 2
    first, second = fake_server.requests
    # Backoff alone would wait at most 0.2 s; the server asked for 1 s.
    assert second.time - first.time >= 0.95


def test_503_with_retry_after_is_a_rate_limit(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply(503, "busy", {"Retry-After": "0.3"}))
    errors = []
    backend = ResilientBackend(
        OpenAICompatBackend(fake_server.base_url),
        retry=FAST_RETRY,
        on_retry=lambda error, attempt, wait: errors.append((error, wait)),
    )
    assert run(call(backend, Request(model="m", prompt="P"))).attempts == 2
    assert isinstance(errors[0][0], RateLimited) and errors[0][0].retry_after == pytest.approx(0.3)
    assert errors[0][1] >= 0.3


def test_500_is_retried_then_succeeds(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply(500, "oops"), Reply(502, "bad gateway"))
    backend = ResilientBackend(OpenAICompatBackend(fake_server.base_url), retry=FAST_RETRY)
    assert run(call(backend, Request(model="m", prompt="P"))).attempts == 3


def test_500_forever_raises_server_error_after_all_attempts(fake_server: FakeModelServer) -> None:
    fake_server.script(*[Reply(500, {"error": {"message": "database on fire"}})] * 4)
    backend = ResilientBackend(OpenAICompatBackend(fake_server.base_url), retry=FAST_RETRY)
    with pytest.raises(ServerError) as error:
        run(call(backend, Request(model="m", prompt="P")))
    assert len(fake_server.requests) == 4
    assert "openai: server error (HTTP 500)" in str(error.value)
    assert "database on fire" in str(error.value)


def test_slow_answer_times_out(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply(delay=3.0))
    started = time.monotonic()
    with pytest.raises(Timeout, match="within 0.5 s"):
        run(call(OpenAICompatBackend(fake_server.base_url), Request(model="m", prompt="P", timeout=0.5)))
    assert time.monotonic() - started < 2.5


def test_connection_dropped_mid_body(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply(body={"choices": [{"text": "x" * 500}]}, drop_after=20))
    with pytest.raises(ConnectionLost, match="broke before the answer was complete") as error:
        run(call(OpenAICompatBackend(fake_server.base_url), Request(model="m", prompt="P")))
    assert error.value.retryable


def test_invalid_json_keeps_raw_body_and_is_not_retried(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply(body="<html>not an API</html>"))
    backend = ResilientBackend(OpenAICompatBackend(fake_server.base_url), retry=FAST_RETRY)
    with pytest.raises(BadResponse, match="not valid JSON") as error:
        run(call(backend, Request(model="m", prompt="P")))
    assert error.value.raw_body == "<html>not an API</html>"
    assert len(fake_server.requests) == 1


def test_empty_choices_is_a_bad_response(fake_server: FakeModelServer) -> None:
    body = {"id": "x", "choices": [], "usage": {}}
    fake_server.script(Reply(body=body))
    with pytest.raises(BadResponse, match="no choices") as error:
        run(call(OpenAICompatBackend(fake_server.base_url), Request(model="m", prompt="P")))
    assert error.value.raw_body is not None and json.loads(error.value.raw_body) == body


def test_wrong_key_is_an_auth_error_without_the_key(keyed_server: FakeModelServer) -> None:
    backend = ResilientBackend(OpenAICompatBackend(keyed_server.base_url, api_key="sk-wrong-123456"), retry=FAST_RETRY)
    with pytest.raises(AuthError) as error:
        run(call(backend, Request(model="known-model", prompt="P")))
    message = str(error.value)
    assert message.startswith("openai: the API key was refused (HTTP 401)")
    assert "Settings > Providers" in message and "sk-wrong-123456" not in message
    assert "sk-wrong-123456" not in repr(backend)
    assert len(keyed_server.requests) == 1  # not retried


def test_unknown_model_is_model_not_found(keyed_server: FakeModelServer) -> None:
    with pytest.raises(ModelNotFound, match="model 'gpt-nope' was not found") as error:
        run(call(OpenAICompatBackend(keyed_server.base_url, api_key="sk-right"), Request(model="gpt-nope", prompt="P")))
    assert "check the model name" in str(error.value)


def test_server_down_is_reported() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    backend = ResilientBackend(
        OpenAICompatBackend(url, provider="local"),
        retry=RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.01, jitter=0),
    )
    with pytest.raises(ServerDown) as error:
        run(call(backend, Request(model="m", prompt="P")))
    assert str(error.value).startswith(f"local: cannot connect to {url}/chat/completions")
    assert "start the server" in str(error.value)


def test_concurrency_limit_is_kept(fake_server: FakeModelServer) -> None:
    fake_server.script(*[Reply(delay=0.2) for _ in range(6)])
    gate = ProviderGate(ProviderLimits(concurrency=2))

    async def main() -> None:
        backend = ResilientBackend(OpenAICompatBackend(fake_server.base_url), gate=gate)
        await asyncio.gather(*(backend.complete(Request(model="m", prompt=str(i))) for i in range(6)))
        await backend.aclose()

    run(main())
    assert fake_server.max_in_flight == 2 and len(fake_server.requests) == 6


def test_requests_per_period_limit_spaces_requests(fake_server: FakeModelServer) -> None:
    gate = ProviderGate(ProviderLimits(concurrency=10, requests_per_minute=2, period=1.0))

    async def main() -> None:
        backend = ResilientBackend(OpenAICompatBackend(fake_server.base_url), gate=gate)
        await asyncio.gather(*(backend.complete(Request(model="m", prompt=str(i))) for i in range(4)))
        await backend.aclose()

    run(main())
    times = sorted(r.time for r in fake_server.requests)
    # A bucket of 2 per second: the 4th request cannot start before about 1 s after the 1st.
    assert times[3] - times[0] >= 0.9


def test_tokens_per_period_limit_spaces_requests(fake_server: FakeModelServer) -> None:
    # Each request budgets its prompt (1 token) + max_tokens (499): 500 tokens of a 600-per-second
    # bucket, so after the first one every request waits for about 500 tokens to drain.
    gate = ProviderGate(ProviderLimits(concurrency=10, tokens_per_minute=600, period=1.0))

    async def main() -> None:
        backend = ResilientBackend(OpenAICompatBackend(fake_server.base_url), gate=gate)
        await asyncio.gather(*(backend.complete(Request(model="m", prompt="P", max_tokens=499)) for _ in range(3)))
        await backend.aclose()

    run(main())
    times = sorted(r.time for r in fake_server.requests)
    assert len(times) == 3
    assert times[1] - times[0] >= 0.55 and times[2] - times[0] >= 1.3


def test_one_429_does_not_pause_the_other_requests_of_the_provider(fake_server: FakeModelServer) -> None:
    # Only the rejected request waits its Retry-After; the others go on (the old gate paused
    # the whole provider for a second at every 429).
    fake_server.script(Reply(429, "wait", {"Retry-After": "1"}, delay=0.05), *[Reply(delay=0.05) for _ in range(3)])
    gate = ProviderGate(ProviderLimits(concurrency=4))

    async def main() -> None:
        backend = ResilientBackend(OpenAICompatBackend(fake_server.base_url), gate=gate, retry=FAST_RETRY)
        await asyncio.gather(*(backend.complete(Request(model="m", prompt=str(i))) for i in range(4)))
        await backend.aclose()

    run(main())
    times = sorted(r.time for r in fake_server.requests)
    assert len(times) == 5
    assert times[3] - times[0] < 0.5  # the other three did not wait for the rejected one
    assert times[4] - times[0] >= 0.95  # the rejected one waited what the server asked
    assert gate.rejected == 1 and 2.0 <= gate.window < 4.0  # halved once, growing back
