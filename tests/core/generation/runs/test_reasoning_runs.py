"""A run stores a reasoning model's thinking apart from its visible text (issue 24, points 1,
2 and 8): ``generated_cot.reasoning``, ``cot`` (the visible text), ``finish_reason`` and
``reasoning_tokens``, from every answer shape, with the raw answer kept reproducible; bad
thinking (unclosed, nested, repeated tags, a field that is not text, 10 MB) ends as a stored
CoT that says what was odd, or one failed request: never a traceback."""

from __future__ import annotations

import json

import pytest

from tests.core.generation.runs.conftest import DEMO
from tests.helpers.servers import ReasoningServer, Reply
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunLimits,
    RunSpec,
    SampleSelection,
    create_run,
    execute_run,
    plan_run,
    run_requests,
)
from thoughtdesk.core.generation.runs.commit_base import restore_raw_body
from thoughtdesk.core.library.store import Library

ONCE = RunLimits(concurrency=1, max_attempts=1, initial_wait=0.01)


def generate(library_path, server: ReasoningServer, n_samples: int = 1, **model_options) -> int:
    anthropic = server.shape.startswith("anthropic")
    model = ModelSpec(
        "anthropic" if anthropic else "openai",
        "thinker",
        base_url=server.root_url if anthropic else server.base_url,
        timeout=20.0,
        max_tokens=model_options.pop("max_tokens", 4096),
        stream=server.shape.startswith("stream"),
        **model_options,
    )
    spec = RunSpec(
        samples=SampleSelection(DEMO, datasets=("med_qa",), limit=n_samples),
        models=(model,),
        instructions=("qa-01",),
        cot_triggers=("kojima-01",),
        answer_extractions=(None,),
    )
    with Library.open(library_path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    execute_run(library_path, run_id, limits=ONCE)
    return run_id


def stored(library_path) -> list[dict]:
    with Library.open(library_path) as lib:
        rows = lib.conn.execute(
            "SELECT c.cot, c.reasoning, c.finish_reason, c.reasoning_tokens, c.extra, r.raw_response, r.cost "
            "FROM generated_cot c JOIN request r ON r.result_cot_pk = c.id WHERE c.cot_id LIKE 'td-%' ORDER BY c.id"
        ).fetchall()
    names = ("cot", "reasoning", "finish_reason", "reasoning_tokens", "extra", "raw", "cost")
    return [dict(zip(names, row, strict=True)) for row in rows]


SHAPES = [
    "reasoning_content",
    "reasoning",
    "think_tags",
    "closing_tag_only",
    "stream_reasoning_content",
    "stream_reasoning",
    "anthropic_thinking",
    "anthropic_redacted",
]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_stores_thinking_visible_text_finish_reason_and_tokens(library_path, shape):
    with ReasoningServer(shape) as server:
        generate(library_path, server)
    (cot,) = stored(library_path)
    assert cot["cot"] == server.answer  # the visible text only: the answer is read from here
    assert cot["reasoning"] == server.thinking
    assert cot["finish_reason"] == ("end_turn" if shape.startswith("anthropic") else "stop")
    facts = json.loads(cot["extra"])["thoughtdesk"]["reasoning"]
    if shape.startswith("anthropic"):  # Anthropic's usage gives no thinking count: estimated
        assert cot["reasoning_tokens"] == round(len(server.thinking) / 4)
        assert facts["tokens_source"] == "estimate"
    else:
        assert cot["reasoning_tokens"] == 17 and facts["tokens_source"] == "reported"
    assert facts["source"] == ("tags" if shape in ("think_tags", "closing_tag_only") else "field")
    if shape == "anthropic_redacted":
        assert "redacted thinking: 1 block" in facts["note"]
    # The raw answer stays as the server sent it (the thinking, the tags, a redacted block).
    if shape.startswith("stream"):
        assert cot["raw"].startswith("data: ") and '"delta": {"' + shape.removeprefix("stream_") in cot["raw"]
    else:
        assert server.thinking in cot["raw"]
    if shape == "anthropic_redacted":
        assert "EmwKAhgBEgy3va3pzix" in cot["raw"]


def test_a_long_thinking_is_stored_once_and_the_raw_answer_restores(library_path):
    with ReasoningServer("reasoning_content") as server:
        server.thinking = "Let me think about this step by step. " * 200
        server.answer = "Answer: " + "B. " * 400
        generate(library_path, server)
    (cot,) = stored(library_path)
    assert cot["reasoning"] == server.thinking
    assert server.thinking not in cot["raw"]  # a reference in its place
    restored = json.loads(restore_raw_body(cot["raw"], cot["cot"], {"generated_cot.reasoning": cot["reasoning"]}))
    assert restored["choices"][0]["message"] == {
        "role": "assistant",
        "reasoning_content": server.thinking,
        "content": server.answer,
    }


def test_cost_counts_the_thinking_when_the_server_reports_no_usage(library_path):
    with ReasoningServer("reasoning_content") as server:
        server.thinking = "x" * 4000
        server.answer = "The answer is A."
        # No usage: the completion is estimated from the answer and the thinking (4 characters a token).
        server.responder = lambda record, reply=server._reply: _without_usage(reply(record))
        generate(library_path, server)
    with Library.open(library_path) as lib:
        (tokens,) = lib.conn.execute("SELECT completion_tokens FROM request WHERE step = 'cot'").fetchone()
    assert tokens >= 1000


def _without_usage(reply: Reply) -> Reply:
    body = dict(reply.body)
    body.pop("usage")
    return Reply(200, body)


def test_think_tags_are_configurable_per_model_and_can_be_switched_off(library_path):
    with ReasoningServer("think_tags") as server:
        generate(library_path, server, think_tags=None)
    (cot,) = stored(library_path)
    assert cot["reasoning"] is None and cot["cot"].startswith("<think>")


def test_other_tags_split_when_named(library_path):
    with ReasoningServer("closing_tag_only") as server:
        server.answer = "The answer is 9.8"
        server.responder = lambda record, reply=server._reply: _retagged(reply(record))
        generate(library_path, server, think_tags=("<|begin_of_thought|>", "<|end_of_thought|>"))
    (cot,) = stored(library_path)
    assert cot["reasoning"] == server.thinking and cot["cot"] == "The answer is 9.8"


def _retagged(reply: Reply) -> Reply:
    body = json.loads(json.dumps(reply.body))
    message = body["choices"][0]["message"]
    message["content"] = "<|begin_of_thought|>" + message["content"].replace("</think>", "<|end_of_thought|>")
    return Reply(200, body)


# --- bad input (point 8) ------------------------------------------------------------------


def _content(text: str, finish: str = "stop"):
    def reply(record) -> Reply:
        return Reply(
            200,
            {
                "id": "x",
                "object": "chat.completion",
                "model": "thinker",
                "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 9},
            },
        )

    return reply


@pytest.mark.parametrize(
    ("content", "reasoning", "visible", "note"),
    [
        ("<think>I was cut off in the middle of", "I was cut off in the middle of", "", "never closed"),
        ("<think>a<think>b</think>c</think>The answer is A.", "a<think>b</think>c", "The answer is A.", "nested"),
        ("<think>a</think>b<think>c</think>The answer is A.", "a</think>b<think>c", "The answer is A.", "repeated"),
        ("</think></think>The answer is A.", "</think>", "The answer is A.", "nested or repeated"),
        (
            "The tag <think> is mentioned. The answer is A.",
            None,
            "The tag <think> is mentioned. The answer is A.",
            None,
        ),
    ],
)
def test_malformed_think_tags_end_as_a_stored_cot_that_says_what_was_odd(
    library_path, content, reasoning, visible, note
):
    with ReasoningServer("think_tags") as server:
        server.responder = _content(content, "length" if "cut off" in content else "stop")
        generate(library_path, server)
        with Library.open(library_path) as lib:
            assert [r.status for r in run_requests(lib, 1)] == ["done"]
    (cot,) = stored(library_path)
    assert (cot["reasoning"], cot["cot"]) == (reasoning, visible)
    facts = json.loads(cot["extra"])["thoughtdesk"].get("reasoning", {})
    if note is None:
        assert facts == {}
    else:
        assert note in facts["note"]
    if "cut off" in content:
        assert facts["unclosed"] is True and cot["finish_reason"] == "length"


def test_a_thinking_field_that_is_not_text_stores_the_answer_with_a_note(library_path):
    with ReasoningServer("reasoning_content") as server:
        server.thinking_value = {"oops": [1, 2]}
        generate(library_path, server)
    (cot,) = stored(library_path)
    assert cot["cot"] == server.answer and cot["reasoning"] is None
    note = json.loads(cot["extra"])["thoughtdesk"]["reasoning"]["note"]
    assert "reasoning_content is an object, not text" in note


def test_a_ten_megabyte_thinking_block_is_stored_whole(library_path):
    with ReasoningServer("think_tags") as server:
        server.thinking = "Wait, let me check that again. " * 340_000  # 10.5 MB
        server.answer = "The answer is A."
        generate(library_path, server, max_tokens=100_000)
    (cot,) = stored(library_path)
    assert cot["reasoning"] == server.thinking.strip() and cot["cot"] == "The answer is A."
    assert len(cot["raw"]) > 10_000_000  # the raw answer, with its tags, as sent


def test_a_ten_megabyte_thinking_block_beyond_the_request_s_limit_is_one_failed_request(library_path):
    with ReasoningServer("reasoning_content") as server:
        server.thinking = "Wait. " * 1_800_000
        generate(library_path, server, max_tokens=1000)
        with Library.open(library_path) as lib:
            (request,) = run_requests(lib, 1)
    assert request.status == "failed" and request.error_kind == "BadResponse"
    assert "larger than the" in (request.error or "") and "\n" not in (request.error or "")
    assert stored(library_path) == []


def test_an_answer_with_nothing_but_empty_thinking_and_text_fails_as_empty(library_path):
    with ReasoningServer("think_tags") as server:
        server.responder = _content("   ")
        generate(library_path, server)
        with Library.open(library_path) as lib:
            (request,) = run_requests(lib, 1)
    assert request.status == "failed" and "empty text" in (request.error or "")


def test_an_extraction_answer_is_read_from_the_visible_text_after_the_thinking(library_path):
    # Two-step: the CoT request, then the extraction request; a reasoning model thinks in both.
    with ReasoningServer("think_tags") as server:

        def reply(record) -> Reply:
            if len(server.requests) >= 2:  # the extraction, sent after the CoT was stored
                return _content("<think>Maybe A? No: the CoT says B, and not C.</think>\n\nB")(record)
            return server._reply(record)

        server.responder = reply
        model = ModelSpec("openai", "thinker", base_url=server.base_url, timeout=20.0, max_tokens=4096)
        spec = RunSpec(
            samples=SampleSelection(DEMO, datasets=("med_qa",), limit=1),
            models=(model,),
            instructions=("qa-01",),
            cot_triggers=("kojima-01",),
            answer_extractions=("kojima-01",),
        )
        with Library.open(library_path) as lib:
            run_id = create_run(lib, plan_run(lib, spec))
        execute_run(library_path, run_id, limits=ONCE)
    with Library.open(library_path) as lib:
        rows = lib.conn.execute(
            "SELECT a.answer, a.extra FROM answer a JOIN request r ON r.result_answer_pk = a.id "
            "WHERE r.step = 'extraction'"
        ).fetchall()
    ((answer, extra),) = rows
    assert answer == "B"  # not "<think>Maybe A? ...": the thinking names A and C too
    assert json.loads(extra)["thoughtdesk"]["reasoning"]["source"] == "tags"


def test_thinking_the_backend_split_itself_is_recorded_as_split_at_tags():
    from thoughtdesk.core.generation.backends import Response
    from thoughtdesk.core.generation.runs.commit_base import thought_of

    def response(reasoning_from):
        return Response(
            "llamacpp", "m.gguf", [""], ["length"], 3, 12, 0.1, "{}", reasonings=["cut"], reasoning_from=reasoning_from
        )

    assert thought_of(response("unclosed"), None).facts == {
        "source": "tags",
        "unclosed": True,
        "tokens_source": "estimate",
    }
    assert thought_of(response("tags"), None).facts["source"] == "tags"
    assert thought_of(response(None), None).facts["source"] == "field"
