"""Reasoning with real llama.cpp (issue 24, points 1 and 3): the in-process backend splits the
think tags its chat template opens, counts the thinking with the model's tokenizer and passes a
reasoning effort to the template as ``enable_thinking``; llama-cpp-python's own server takes
the reasoning fields ThoughtDesk sends a local server. The Gemma 3 270M test model does not
think: its template is swapped for a Qwen3-style one that opens (or closes) the thinking."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from tests.helpers.models import SERVER_KEY
from tests.helpers.servers import LlamaServer
from thoughtdesk.core.generation.backends import (
    ChatMessage,
    LlamaCppBackend,
    LlamaCppSettings,
    OpenAICompatBackend,
    Request,
)

#: Qwen3's switch in Gemma's turn markers: thinking opened by the template, or an empty block
#: when enable_thinking is false.
THINKING_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<start_of_turn>user\n{{ m['content'] }}<end_of_turn>\n{% endfor %}"
    "<start_of_turn>model\n{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n"
    "{% else %}<think>\n{% endif %}"
)


def ask(effort: str | None) -> Request:
    return Request(
        model="gemma",
        messages=(ChatMessage("user", "What is 2 + 3?"),),
        max_tokens=12,
        temperature=0.0,
        seed=1,
        reasoning_effort=effort,
    )


def test_the_template_s_opened_thinking_is_split_and_counted_and_effort_switches_it(gguf_model: Path) -> None:
    async def main():
        backend = LlamaCppBackend(LlamaCppSettings(model_path=gguf_model, n_ctx=256, n_threads=2))
        try:
            await backend.load()
            backend._llama.metadata["tokenizer.chat_template"] = THINKING_TEMPLATE
            thinking = await backend.complete(ask("high"))
            plain = await backend.complete(ask("none"))
            return backend._llama, thinking, plain
        finally:
            await backend.aclose()

    llama, thinking, plain = asyncio.run(main())
    # The template opened <think>: all 12 generated tokens are thinking, cut before it closed.
    (reasoning,) = thinking.reasonings
    assert reasoning and thinking.texts == [""]
    assert "never closed" in thinking.reasoning_notes[0]
    assert thinking.finish_reasons == ["length"] and thinking.reasoning_from == "unclosed"
    assert 0 < thinking.reasoning_tokens <= 12  # the model's tokenizer, not an estimate
    # enable_thinking=False reached the template: a longer prompt (the empty block), no thinking.
    assert plain.reasonings == [] and plain.reasoning_tokens is None and plain.texts[0]
    assert plain.prompt_tokens > thinking.prompt_tokens


def test_a_template_with_other_known_tags_is_split_at_them(gguf_model: Path) -> None:
    # Sky-T1 / OpenThoughts style: the template opens <|begin_of_thought|>; default tags chosen.
    template = THINKING_TEMPLATE.replace("<think>", "<|begin_of_thought|>").replace("</think>", "<|end_of_thought|>")

    async def main():
        backend = LlamaCppBackend(LlamaCppSettings(model_path=gguf_model, n_ctx=256, n_threads=2))
        try:
            await backend.load()
            backend._llama.metadata["tokenizer.chat_template"] = template
            return backend.think_tags(chat=True), await backend.complete(ask("high"))
        finally:
            await backend.aclose()

    tags, response = asyncio.run(main())
    assert tags == ("<|begin_of_thought|>", "<|end_of_thought|>")
    assert response.reasonings[0] and response.texts == [""] and "<|end_of_thought|>" in response.reasoning_notes[0]


def test_llama_cpp_python_s_server_accepts_the_reasoning_fields_sent_to_a_local_server(llama_server: LlamaServer):
    async def main():
        backend = OpenAICompatBackend(llama_server.base_url, SERVER_KEY, endpoint="chat", template_switch=True)
        try:
            asked = await backend.complete(replace(ask("none"), model=llama_server.model_alias))
            plain = await backend.complete(replace(ask(None), model=llama_server.model_alias))
            return asked, plain
        finally:
            await backend.aclose()

    asked, plain = asyncio.run(main())
    # Accepted (no 4xx), and ignored by a server whose model has no such switch: the same answer.
    assert asked.finish_reasons[0] in ("stop", "length") and asked.texts == plain.texts
    assert asked.reasonings == []  # Gemma does not think; nothing invented
