"""Every backend failure class against every HTTP backend (issue 15: a fault-injecting server for
every backend failure class stays in the suite).

Rows are the failure classes the probe used (429 with and without Retry-After, 5xx, timeout,
connection reset, garbage, truncated and endless bodies, malformed choices, negative usage, a web
page's content type, a redirect) and those the audit added (401/403, 404 and 400 for an unknown
model, 422 for bad parameters, 503 with Retry-After, connection refused, a slow-drip body, a server
quoting the key); columns are OpenAI-compatible Chat Completions, Completions and Anthropic's
Messages API. Each cell is a typed error with a one-line message (and the raw body where the
server sent one), or, for implausible usage, an answer without the figure; never a crash, a
traceback or a hang, and never the API key in any text. The audit's rows also run as a whole
generation run: a failed request (retried first where that is right) with a clear error.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from tests.helpers.servers import FakeModelServer, Recorded, Reply, free_port
from thoughtdesk.core.generation.backends import (
    AnthropicBackend,
    AuthError,
    Backend,
    BackendError,
    BadRequest,
    BadResponse,
    ConnectionLost,
    ModelNotFound,
    OpenAICompatBackend,
    RateLimited,
    Request,
    ServerDown,
    ServerError,
    Timeout,
)

Kind = Literal["chat", "completions", "anthropic"]
BACKENDS: list[Kind] = ["chat", "completions", "anthropic"]
#: The key every backend sends: shaped like nothing the redaction patterns know, so only the
#: backend's own registration of its key can keep it out of the texts.
KEY = "lab7Q2w9E4r1T6y3U8i5"


def make(server: FakeModelServer, kind: Kind, *, root: str | None = None) -> Backend:
    if kind == "anthropic":
        return AnthropicBackend(KEY, base_url=root or server.root_url)
    return OpenAICompatBackend((root + "/v1") if root else server.base_url, api_key=KEY, endpoint=kind)


def echo_the_key(record: Recorded) -> Reply:
    """A 401 that quotes the key the request carried, in every form a server might."""
    key = record.headers.get("x-api-key") or record.headers.get("authorization", "").removeprefix("Bearer ")
    message = f"invalid x-api-key / Authorization: Bearer {key} (key {key} unknown)"
    return Reply(401, {"error": {"message": message, "type": "authentication_error", "key": key}})


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
    #: Takes the error raised (of type ``error``) or, when ``error`` is None, the answer.
    check: Callable[[Any], bool] = lambda _outcome: True
    timeout: float = 5.0
    #: Answers every request (instead of ``replies``): a reply made from what was sent.
    responder: Callable[[Recorded], Reply] | None = None
    #: Nothing listens at the address: the connection is refused (no request reaches a server).
    refused: bool = False
    #: Added by the audit: also run as a whole generation run (test_every_new_fault_in_a_run).
    audit: bool = False


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
    "401 key refused": Fault(
        lambda k: [Reply(401, {"error": {"message": "Incorrect API key provided"}})],
        AuthError,
        lambda e: "API key was refused (HTTP 401)" in str(e) and "Incorrect API key" in str(e) and not e.retryable,
        audit=True,
    ),
    "403 forbidden": Fault(
        lambda k: [Reply(403, {"error": {"message": "this key may not use that model"}})],
        AuthError,
        lambda e: "(HTTP 403)" in str(e) and not e.retryable,
        audit=True,
    ),
    "404 model not found": Fault(
        lambda k: [Reply(404, {"error": {"message": "The model `m` does not exist", "code": "model_not_found"}})],
        ModelNotFound,
        lambda e: "model 'm' was not found (HTTP 404)" in str(e) and not e.retryable,
        audit=True,
    ),
    "400 unknown model": Fault(
        lambda k: [Reply(400, {"error": {"message": "model_not_found: m", "type": "invalid_request_error"}})],
        ModelNotFound,
        lambda e: "model 'm' was not found (HTTP 400)" in str(e),
        audit=True,
    ),
    "422 bad parameters": Fault(
        lambda k: [Reply(422, {"detail": "max_tokens must be at most 32"})],
        BadRequest,
        lambda e: "rejected (HTTP 422)" in str(e) and "max_tokens must be at most 32" in str(e) and not e.retryable,
        audit=True,
    ),
    "503 with Retry-After": Fault(
        lambda k: [Reply(503, {"error": {"message": "overloaded"}}, {"Retry-After": "1"})],
        RateLimited,
        lambda e: e.retry_after == 1 and e.retryable and "busy (HTTP 503)" in str(e),
        audit=True,
    ),
    "connection refused": Fault(
        lambda k: [], ServerDown, lambda e: "cannot connect to" in str(e) and e.retryable, refused=True, audit=True
    ),
    "slow-drip body": Fault(
        lambda k: [Reply(body=good_body(k, "drip " * 40), drip=0.05)],
        Timeout,
        lambda e: "within 1 s" in str(e) and e.retryable,
        timeout=1.0,
        audit=True,
    ),
    "a server quoting the key": Fault(lambda k: [], AuthError, responder=echo_the_key, audit=True),
}


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize("fault", list(FAULTS))
def test_every_failure_class_on_every_backend(fake_server: FakeModelServer, fault: str, kind: Kind) -> None:
    spec = FAULTS[fault]
    fake_server.script(*spec.replies(kind))
    fake_server.responder = spec.responder
    backend = make(fake_server, kind, root=f"http://127.0.0.1:{free_port()}" if spec.refused else None)
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
    for text in (message, error.raw_body or "", error.hint or ""):
        assert KEY not in text  # the key never reaches a message or a stored body
    assert len(fake_server.requests) == (0 if spec.refused else 1)  # one call: no retries inside a backend


@pytest.fixture(scope="module")
def demo_copy(tmp_path_factory: pytest.TempPathFactory):
    """A fresh copy of one demo library per test (made once: copying is much faster)."""
    import shutil

    from tests.helpers.libraries import demo_library

    made = demo_library(tmp_path_factory.mktemp("matrix") / "demo.thoughtdesk")

    def copy(folder):
        return shutil.copy(made, folder / "lib.thoughtdesk")

    return copy


# One backend per row (the backends' own answers are the matrix above; the run is the same for all).
@pytest.mark.parametrize(
    ("fault", "kind"),
    [(name, BACKENDS[i % len(BACKENDS)]) for i, name in enumerate(n for n, f in FAULTS.items() if f.audit)],
)
def test_every_new_fault_in_a_run(
    fake_server: FakeModelServer, fault: str, kind: Kind, tmp_path, monkeypatch, demo_copy
) -> None:
    """The audit's rows through a whole run: a failed request with a clear, key-free error
    (retried first where that is right), the run stopped or finished, never crashed."""
    from tests.helpers.libraries import DEMO
    from thoughtdesk.core.generation.prompts import PromptMode
    from thoughtdesk.core.generation.runs import (
        ModelSpec,
        RunLimits,
        RunSpec,
        SampleSelection,
        create_run,
        execute_run,
        plan_run,
    )
    from thoughtdesk.core.library.store import Library

    spec = FAULTS[fault]
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    fake_server.responder = spec.responder or (lambda _record: spec.replies(kind)[0])  # every attempt alike
    root = f"http://127.0.0.1:{free_port()}" if spec.refused else fake_server.root_url
    if kind == "anthropic":
        model = ModelSpec("anthropic", "m", base_url=root, timeout=spec.timeout)
    else:
        model = ModelSpec("openai", "m", base_url=root + "/v1", endpoint=kind, timeout=spec.timeout)
    library = demo_copy(tmp_path)
    with Library.open(library) as lib:
        run_spec = RunSpec(
            samples=SampleSelection(DEMO, datasets=("gsm8k",), limit=1),
            models=(model,),
            cot_triggers=("kojima-01",),
            mode=PromptMode.ONE_STEP,
        )
        run_id = create_run(lib, plan_run(lib, run_spec))
    try:
        final = execute_run(library, run_id, limits=RunLimits(concurrency=1, max_attempts=2, initial_wait=0.05))
    except BackendError as error:  # a refused key or an unknown model stops the run, said once
        assert KEY not in str(error) and spec.error is not None and isinstance(error, spec.error)
    else:
        assert final.status == "failed" and final.failed == 1
    with Library.open(library) as lib:
        status, error_text, raw, attempts = lib.conn.execute(
            "SELECT status, error, coalesce(raw_response, ''), attempts FROM request WHERE run_id = ?", (run_id,)
        ).fetchone()
        (last_error,) = lib.conn.execute("SELECT coalesce(last_error, '') FROM run WHERE id = ?", (run_id,)).fetchone()
    assert status == "failed" and error_text and "\n" not in error_text
    assert error_text.startswith(("openai", "anthropic"))
    assert attempts == (2 if spec.error is not None and spec.error.retryable else 1)  # retried where right
    for text in (error_text, raw, last_error):
        assert KEY not in text
