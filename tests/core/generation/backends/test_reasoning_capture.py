"""Reasoning traces captured from every route (issue 24, points 1 and 8): the thinking in
``reasoning_content`` or ``reasoning`` (answers and streamed deltas), Anthropic's thinking and
redacted thinking blocks, the reasoning tokens and finish reasons, against servers on 127.0.0.1
answering in each shape; thinking fields that are not text become a note, never a traceback."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.helpers.servers import ReasoningServer
from thoughtdesk.core.generation.backends import AnthropicBackend, ChatMessage, OpenAICompatBackend, Request


def run(backend, request):
    async def main():
        try:
            return await backend.complete(request)
        finally:
            await backend.aclose()

    return asyncio.run(main())


def chat(**options) -> Request:
    return Request(model="thinker", messages=(ChatMessage("user", "Which is larger, 9.11 or 9.8?"),), **options)


@pytest.mark.parametrize("shape", ["reasoning_content", "reasoning", "stream_reasoning_content", "stream_reasoning"])
def test_openai_compatible_thinking_fields_are_captured_apart_from_the_answer(shape):
    with ReasoningServer(shape) as server:
        backend = OpenAICompatBackend(server.base_url, stream=shape.startswith("stream"))
        response = run(backend, chat(max_tokens=2000))
        sent = server.requests[0].json
    assert response.texts == [server.answer]
    assert response.reasonings == [server.thinking]
    assert response.reasoning_tokens == 17
    assert response.finish_reasons == ["stop"]
    assert response.completion_tokens == 40
    if shape.startswith("stream"):
        assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
        assert response.raw_body.startswith("data: ")  # the event stream as received
        assert response.raw_body.rstrip().endswith("data: [DONE]")
    else:
        assert json.loads(response.raw_body)["choices"][0]["message"][shape] == server.thinking


def test_a_cut_trace_with_null_content_keeps_its_thinking_and_finish_reason():
    with ReasoningServer("reasoning_content") as server:
        server.answer, server.finish_reason = "", "length"
        response = run(OpenAICompatBackend(server.base_url), chat())
    assert response.texts == [""] and response.reasonings == [server.thinking]
    assert response.finish_reasons == ["length"]


@pytest.mark.parametrize("value", [42, {"text": None}, True, [1, 2]])
@pytest.mark.parametrize("shape", ["reasoning_content", "stream_reasoning"])
def test_a_thinking_field_that_is_not_text_is_a_note_not_a_failure(shape, value):
    with ReasoningServer(shape) as server:
        server.thinking_value = value
        response = run(OpenAICompatBackend(server.base_url, stream=shape.startswith("stream")), chat())
    assert response.texts == [server.answer]
    assert response.reasonings == []
    (note,) = response.reasoning_notes
    assert "not text" in note and ("reasoning_content" in note or "reasoning" in note)


def test_a_list_of_thinking_pieces_is_joined():
    with ReasoningServer("reasoning") as server:
        server.thinking_value = [{"type": "reasoning.text", "text": "a, "}, "b"]
        response = run(OpenAICompatBackend(server.base_url), chat())
    assert response.reasonings == ["a, b"]


def test_no_reasoning_tokens_reported_is_none_not_zero():
    with ReasoningServer("reasoning_content") as server:
        server.reasoning_tokens = None
        response = run(OpenAICompatBackend(server.base_url), chat())
    assert response.reasoning_tokens is None


def test_reasoning_effort_is_sent_as_reasoning_effort_and_as_the_template_switch_to_local_servers():
    with ReasoningServer("reasoning_content") as server:
        run(OpenAICompatBackend(server.base_url), chat(reasoning_effort="high"))
        run(OpenAICompatBackend(server.base_url, template_switch=True), chat(reasoning_effort="none"))
        run(OpenAICompatBackend(server.base_url), chat())
        first, second, third = (r.json for r in server.requests)
    assert first["reasoning_effort"] == "high" and "chat_template_kwargs" not in first
    assert second["reasoning_effort"] == "none"
    assert second["chat_template_kwargs"] == {"enable_thinking": False}
    assert "reasoning_effort" not in third


def test_a_request_without_effort_keeps_its_old_fingerprint():
    # Stored requests are answered from the store by fingerprint: a new field must not change it.
    assert chat().fingerprint("openai@x") == chat(reasoning_effort=None).fingerprint("openai@x")
    assert "reasoning_effort" not in chat().to_json()
    assert chat(reasoning_effort="low").fingerprint("openai@x") != chat().fingerprint("openai@x")


@pytest.mark.parametrize("shape", ["anthropic_thinking", "anthropic_redacted"])
def test_anthropic_thinking_blocks_are_captured_and_redacted_ones_only_marked(shape):
    with ReasoningServer(shape) as server:
        response = run(AnthropicBackend("k", base_url=server.root_url), chat(max_tokens=4096, reasoning_effort="low"))
        sent = server.requests[0].json
    assert response.texts == [server.answer]
    assert response.reasonings == [server.thinking]
    assert response.finish_reasons == ["end_turn"]
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in sent  # refused by the API with thinking on
    if shape == "anthropic_redacted":
        (note,) = response.reasoning_notes
        assert "redacted thinking: 1 block" in note and "never sent anywhere" in note
        assert "EmwKAhgBEgy3va3pzix" not in note + (response.reasonings[0] or "")
    else:
        assert response.reasoning_notes == []


def test_anthropic_thinking_budget_leaves_room_for_the_answer_or_is_not_sent():
    with ReasoningServer("anthropic_thinking") as server:
        run(AnthropicBackend("k", base_url=server.root_url), chat(max_tokens=3000, reasoning_effort="high"))
        run(AnthropicBackend("k", base_url=server.root_url), chat(max_tokens=1500, reasoning_effort="high"))
        run(AnthropicBackend("k", base_url=server.root_url), chat(max_tokens=1500, reasoning_effort="none"))
        first, second, third = (r.json for r in server.requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 1976}
    assert "thinking" not in second and second["temperature"] == 0.0  # no room for 1,024: not asked
    assert third["thinking"] == {"type": "disabled"}


def test_anthropic_answer_cut_while_thinking_is_kept_with_its_thinking():
    with ReasoningServer("anthropic_thinking") as server:
        server.answer, server.finish_reason = "", "length"
        response = run(AnthropicBackend("k", base_url=server.root_url), chat())
    assert response.texts == [""] and response.reasonings == [server.thinking]
    assert response.finish_reasons == ["max_tokens"]


def test_anthropic_thinking_that_is_not_text_is_a_note():
    with ReasoningServer("anthropic_thinking") as server:
        server.thinking_value = {"nested": 1}
        response = run(AnthropicBackend("k", base_url=server.root_url), chat())
    assert response.texts == [server.answer] and response.reasonings == []
    assert "content[0].thinking is an object, not text" in response.reasoning_notes[0]


def test_openai_s_own_api_gets_max_completion_tokens_with_an_effort():
    backend = OpenAICompatBackend("https://api.openai.com/v1")
    body = backend.batch_body(chat(max_tokens=5000, reasoning_effort="low"))[1]
    assert body["max_completion_tokens"] == 5000 and "max_tokens" not in body
    assert backend.batch_body(chat(max_tokens=300))[1]["max_tokens"] == 300  # no effort: as before
    other = OpenAICompatBackend("http://127.0.0.1:8000/v1").batch_body(chat(max_tokens=5000, reasoning_effort="low"))
    assert other[1]["max_tokens"] == 5000 and "max_completion_tokens" not in other[1]
