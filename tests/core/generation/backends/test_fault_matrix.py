"""Every backend failure class against every HTTP backend (issue 15: a fault-injecting server for
every backend failure class stays in the suite).

Rows are the failure classes the probe used (429 with and without Retry-After, 5xx, timeout,
connection reset, garbage, truncated and endless bodies, malformed choices, negative usage, a web
page's content type, a redirect); columns are OpenAI-compatible Chat Completions, Completions
and Anthropic's Messages API. Each cell is a typed error with a one-line message (and the raw
body where the server sent one), or, for implausible usage, an answer without the figure;
never a crash, a traceback or a hang.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.backends import (
    AnthropicBackend,
    Backend,
    BackendError,
    BadRequest,
    BadResponse,
    ConnectionLost,
    OpenAICompatBackend,
    RateLimited,
    Request,
    ServerError,
    Timeout,
)

BACKENDS = ["chat", "completions", "anthropic"]


def make(server: FakeModelServer, kind: str) -> Backend:
    if kind == "anthropic":
        return AnthropicBackend("k", base_url=server.root_url)
    return OpenAICompatBackend(server.base_url, api_key="k", endpoint=kind)


def good_body(kind: str, text: str = "fine", usage: object = None) -> dict:
    """A well-formed answer of ``kind`` (with ``usage`` as given, when given)."""
    if kind == "anthropic":
        body: dict = {"type": "message", "model": "m", "content": [{"type": "text", "text": text}]}
        body["usage"] = usage if usage is not None else {"input_tokens": 1, "output_tokens": 1}
        return body
    choice = {"index": 0, "message": {"content": text}} if kind == "chat" else {"index": 0, "text": text}
    body = {"id": "x", "model": "m", "choices": [choice]}
    body["usage"] = usage if usage is not None else {"prompt_tokens": 1, "completion_tokens": 1}
    return body


def malformed_body(kind: str) -> dict:
    if kind == "anthropic":
        return {"type": "message", "content": [{"type": "text", "text": 7}, 3]}
    return {"id": "x", "choices": [{"index": 0, "message": {"content": ["not", "text"]}, "text": None}, 1]}


def negative_usage(kind: str) -> dict:
    if kind == "anthropic":
        return {"input_tokens": -7, "output_tokens": -1}
    return {"prompt_tokens": -7, "completion_tokens": -1}


@dataclass(frozen=True)
class Fault:
    """One failure class: the replies to script, the error expected (None: an answer), and a
    check of the error or the answer."""

    replies: Callable[[str], list[Reply]]
    error: type[BackendError] | None
    check: Callable[[object], bool] = lambda _outcome: True
    timeout: float = 5.0


FAULTS: dict[str, Fault] = {
    "429 with Retry-After": Fault(
        lambda k: [Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "7"})],
        RateLimited,
        lambda e: e.retry_after == 7 and e.retryable and "slow down" in str(e),
    ),
    "429 without Retry-After": Fault(
        lambda k: [Reply(429, "too many")], RateLimited, lambda e: e.retry_after is None and e.retryable
    ),
    "500": Fault(
        lambda k: [Reply(500, {"error": {"message": "db on fire"}})], ServerError, lambda e: "db on fire" in str(e)
    ),
    "502 with an HTML page": Fault(
        lambda k: [Reply(502, "<html>Bad gateway</html>", content_type="text/html")], ServerError
    ),
    "timeout": Fault(lambda k: [Reply(delay=2.0)], Timeout, lambda e: "within 0.5 s" in str(e), timeout=0.5),
    "connection reset mid-body": Fault(
        lambda k: [Reply(body=good_body(k, "x" * 500), drop_after=20)], ConnectionLost, lambda e: e.retryable
    ),
    "garbage body": Fault(
        lambda k: [Reply(body=b"\x00\xff garbage \xfe")],
        BadResponse,
        lambda e: "not valid JSON" in str(e) and e.raw_body,
    ),
    "truncated JSON": Fault(
        lambda k: [Reply(body=json.dumps(good_body(k))[:25])],
        BadResponse,
        lambda e: "not valid JSON" in str(e) and e.raw_body and not e.retryable,
    ),
    "endless body": Fault(
        lambda k: [Reply(body=b'{"choices": [{"text": "' + b"a" * 1000, stream_bytes=50_000_000)],
        BadResponse,
        lambda e: "went on past that" in str(e),
    ),
    "malformed choices or content": Fault(
        lambda k: [Reply(body=malformed_body(k))], BadResponse, lambda e: json.loads(e.raw_body) is not None
    ),
    "negative usage": Fault(
        lambda k: [Reply(body=good_body(k, usage=negative_usage(k)))],
        None,
        lambda r: r.texts == ["fine"] and r.prompt_tokens is None and r.completion_tokens is None,
    ),
    "a web page (text/html, 200)": Fault(
        lambda k: [Reply(body="<!doctype html><title>Login</title>", content_type="text/html")],
        BadResponse,
        lambda e: "not valid JSON" in str(e) and "base URL" in (e.hint or ""),
    ),
    "JSON under another content type": Fault(
        lambda k: [Reply(body=json.dumps(good_body(k)), content_type="text/plain")], None, lambda r: r.texts == ["fine"]
    ),
    "redirect": Fault(
        lambda k: [Reply(307, "", {"Location": "http://127.0.0.1:9/elsewhere"})],
        BadRequest,
        lambda e: "redirected the request (HTTP 307) to http://127.0.0.1:9/elsewhere" in str(e),
    ),
}


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize("fault", list(FAULTS))
def test_every_failure_class_on_every_backend(fake_server: FakeModelServer, fault: str, kind: str) -> None:
    spec = FAULTS[fault]
    fake_server.script(*spec.replies(kind))
    backend = make(fake_server, kind)
    request = Request(prompt="q", model="m", max_tokens=64, timeout=spec.timeout)

    async def go():
        try:
            return await asyncio.wait_for(backend.complete(request), timeout=30)
        finally:
            await backend.aclose()

    if spec.error is None:
        response = asyncio.run(go())
        assert spec.check(response), response
        return
    with pytest.raises(BackendError) as caught:
        asyncio.run(go())
    error = caught.value
    assert isinstance(error, spec.error), f"{type(error).__name__}: {error}"
    assert spec.check(error), str(error)
    message = str(error)
    assert "\n" not in message and "Traceback" not in message
    assert message.startswith(("openai", "anthropic")) or error.provider in message
    assert len(fake_server.requests) == 1  # one call: no retries inside a backend
