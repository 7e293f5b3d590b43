"""Hostile answers (issue 15, points 6 and 12): bodies far larger than the request allows, an
endless body, malformed choices and token counts. Each is a failed request with a clear message
(or a reading that drops what is not plausible), never a crash or a MemoryError."""

from __future__ import annotations

import asyncio
import json
import resource
import time

import pytest

from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.backends import (
    AnthropicBackend,
    Backend,
    BadResponse,
    Capabilities,
    OpenAICompatBackend,
    ProviderGate,
    ProviderLimits,
    Request,
    ResilientBackend,
    RetryPolicy,
)
from thoughtdesk.core.generation.backends.response_cap import DEFAULT_MB, MB, response_byte_limit

NO_RETRY = RetryPolicy(max_attempts=1, initial_wait=0.01, max_wait=0.01, jitter=0.0)


def complete(backend: Backend, request: Request):
    async def go():
        try:
            return await backend.complete(request)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def choice_body(text: str, **extra) -> dict:
    return {"id": "x", "model": "m", "choices": [{"index": 0, "message": {"content": text}}], **extra}


def test_the_limit_grows_with_max_tokens_and_is_capped() -> None:
    assert response_byte_limit(256) == 1024 * 1024 + 256 * 256
    assert response_byte_limit(256, n=4) == 1024 * 1024 + 4 * 256 * 256
    assert response_byte_limit(10**9) == DEFAULT_MB * MB == 64 * 1024 * 1024


def test_a_20_mb_answer_to_a_256_token_request_fails_clearly(fake_server: FakeModelServer) -> None:
    fake_server.replies.append(Reply(body=choice_body("word " * 4_000_000)))
    backend = OpenAICompatBackend(fake_server.base_url, api_key="k")
    with pytest.raises(BadResponse, match=r"larger than the 1,114,112 bytes allowed .*it announces 20,000,"):
        complete(backend, Request(prompt="hi", model="m", max_tokens=256))


def test_an_endless_body_is_cut_off_without_exhausting_memory(fake_server: FakeModelServer) -> None:
    # 300 MB streamed with no Content-Length: before the cap, the whole body was read into memory.
    fake_server.replies.append(Reply(body=b'{"choices": [{"text": "' + b"a" * 1000, stream_bytes=300_000_000))
    backend = OpenAICompatBackend(fake_server.base_url, api_key="k", endpoint="completions")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with pytest.raises(BadResponse, match="went on past that") as caught:
        complete(backend, Request(prompt="hi", model="m", max_tokens=100))
    assert time.monotonic() - started < 30
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    assert grown_kib < 100 * 1024, f"memory grew by {grown_kib} KiB"
    assert caught.value.raw_body and caught.value.raw_body.startswith('{"choices"')  # the start is kept


def test_the_anthropic_backend_has_the_same_limit(fake_server: FakeModelServer) -> None:
    big = {"content": [{"type": "text", "text": "x" * 3_000_000}], "model": "c", "usage": {}}
    fake_server.replies.append(Reply(body=big))
    backend = AnthropicBackend("k", base_url=fake_server.root_url)
    with pytest.raises(BadResponse, match="larger than"):
        complete(backend, Request(prompt="hi", model="c", max_tokens=64))


@pytest.mark.parametrize(
    "choices, texts",
    [
        # A string index beside an int one made sorted() raise TypeError and the run stuck "running".
        ([{"index": "1", "message": {"content": "b"}}, {"index": 0, "message": {"content": "a"}}], ["a", "b"]),
        ([{"index": None, "message": {"content": "a"}}, {"index": 1, "message": {"content": "b"}}], ["a", "b"]),
        ([{"index": True, "message": {"content": "a"}}, {"message": {"content": "b"}}], ["a", "b"]),
        ([{"index": 1, "message": {"content": "b"}}, {"index": 0, "message": {"content": "a"}}], ["a", "b"]),
    ],
)
def test_choice_indexes_of_any_type_are_read_in_a_sensible_order(fake_server, choices, texts) -> None:
    fake_server.replies.append(Reply(body={"id": "x", "model": "m", "choices": choices}))
    response = complete(OpenAICompatBackend(fake_server.base_url, api_key="k"), Request(prompt="q", model="m"))
    assert response.texts == texts


@pytest.mark.parametrize(
    "body, match",
    [
        ({"choices": [1, "two"]}, "a choice is not a JSON object"),
        ({"choices": {"0": {}}}, "no choices"),
        ({"choices": [{"index": 0, "message": {"content": 7}}]}, "a choice has no text"),
        ([1, 2, 3], "not a JSON object"),
    ],
)
def test_malformed_choices_are_a_bad_response_with_the_body_kept(fake_server, body, match) -> None:
    fake_server.replies.append(Reply(body=body))
    with pytest.raises(BadResponse, match=match) as caught:
        complete(OpenAICompatBackend(fake_server.base_url, api_key="k"), Request(prompt="q", model="m"))
    assert json.loads(caught.value.raw_body or "null") == body


@pytest.mark.parametrize(
    "usage, expected",
    [
        ({"prompt_tokens": -5, "completion_tokens": 3}, (None, 3)),
        ({"prompt_tokens": 2.5, "completion_tokens": "9"}, (None, None)),
        ({"prompt_tokens": True, "completion_tokens": 2**40}, (None, None)),
        ("lots", (None, None)),
        ({"prompt_tokens": 4, "completion_tokens": 0}, (4, 0)),
    ],
)
def test_implausible_token_counts_are_not_stored_as_true(fake_server, usage, expected) -> None:
    fake_server.replies.append(Reply(body=choice_body("fine", usage=usage)))
    response = complete(OpenAICompatBackend(fake_server.base_url, api_key="k"), Request(prompt="q", model="m"))
    assert (response.prompt_tokens, response.completion_tokens) == expected


def test_anthropic_negative_usage_is_dropped(fake_server: FakeModelServer) -> None:
    body = {"content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": -1, "output_tokens": 3}}
    fake_server.replies.append(Reply(body=body))
    response = complete(AnthropicBackend("k", base_url=fake_server.root_url), Request(prompt="q", model="c"))
    assert (response.prompt_tokens, response.completion_tokens) == (None, 3)


class _Buggy(Backend):
    provider = "buggy"
    capabilities = Capabilities(
        chat=True, completion=True, multiple_samples=False, seed=False, logprobs=False, prompt_logprobs=False
    )

    async def complete(self, request, on_token=None):
        raise TypeError("'<' not supported between instances of 'str' and 'int'")


def test_an_unforeseen_error_in_a_backend_is_a_failed_request_not_a_crash() -> None:
    backend = ResilientBackend(_Buggy(), retry=NO_RETRY, gate=ProviderGate(ProviderLimits(1)))
    with pytest.raises(BadResponse, match=r"could not be read \(TypeError: '<' not supported"):
        complete(backend, Request(prompt="q", model="m"))


def test_the_ceiling_is_a_setting_and_an_option(fake_server: FakeModelServer, tmp_path, capsys) -> None:
    """Issue 15, point 6 (audit): the 64 MB ceiling could not be changed. It is the settings
    file's generation/max_response_mb (Edit > Settings > Network) or --max-response-mb, checked."""
    from tests.helpers.libraries import DEMO, demo_library
    from thoughtdesk.cli.main import main
    from thoughtdesk.core.generation.backends import response_cap
    from thoughtdesk.core.library.store import Library
    from thoughtdesk.core.paths import settings_file

    big = 10**6  # tokens: the per-request bound (1 MiB + 256 B a token) is far above any ceiling here
    settings = settings_file()
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("[generation]\nmax_response_mb=2\n", encoding="utf-8")
    response_cap.reset_response_cap()
    assert response_byte_limit(big) == 2 * MB
    settings.write_text("[generation]\nmax_response_mb=lots\n", encoding="utf-8")
    response_cap.reset_response_cap()
    assert response_byte_limit(big) == DEFAULT_MB * MB  # an unusable value: the default, never a crash
    with pytest.raises(response_cap.ResponseCapError, match="from 1 to 4096, not '0'"):
        response_cap.set_response_cap_mb(0)

    library = demo_library(tmp_path / "lib.thoughtdesk")
    fake_server.script(Reply(body=choice_body("word " * 600_000)))  # 3 MB
    command = ["--library", str(library), "generate", DEMO, "--model", "openai:m", "--base-url", fake_server.base_url]
    command += ["--dataset", "gsm8k", "--limit", "1", "--one-step", "--max-tokens", "1000000", "--max-response-mb", "1"]
    assert main(command) == 1
    capsys.readouterr()
    with Library.open(library) as lib:
        (error,) = lib.conn.execute("SELECT error FROM request WHERE status = 'failed'").fetchone()
    assert "larger than the 1,048,576 bytes allowed" in error and "--max-response-mb" in error
