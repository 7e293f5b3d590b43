"""Rationale-guided and stepwise generation with a reasoning model (issue 24, point 7): the
thinking a server sends, inline as ``<think>...</think>`` or apart as ``reasoning_content``,
never becomes a step, a rationale or a rating; a reply that is all thinking fails its request in
one line instead of ending the trajectory on an empty step. Real HTTP servers on 127.0.0.1."""

from __future__ import annotations

from typing import Any

from tests.core.generation.runs.test_guided import ONE, RatingServer, _run, _spec
from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.runs import GuideSpec, ModelSpec, cot_steps, run_requests
from thoughtdesk.core.library.store import Library


def _thinking_chat(*pairs: tuple[str | None, str], field: str = "reasoning_content") -> Reply:
    """A chat answer per (thinking, content): the thinking in ``field`` (None: inline or none)."""
    choices = []
    for index, (thinking, content) in enumerate(pairs):
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if thinking is not None:
            message[field] = thinking
        choices.append({"index": index, "message": message, "finish_reason": "stop"})
    return Reply(
        body={
            "id": "x",
            "object": "chat.completion",
            "model": "m",
            "choices": choices,
            "usage": {"prompt_tokens": 10, "completion_tokens": 50, "total_tokens": 60},
        }
    )


def _cot(library_path) -> tuple[int, str]:
    with Library.open(library_path) as lib:
        return lib.conn.execute("SELECT id, cot FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()


def test_inline_thinking_is_not_a_step(library_path, fake_server):
    fake_server.script(
        _thinking_chat((None, "<think>\nThe fever matters. Wait, the rash too.\n</think>\n\nThe patient has a fever.")),
        _thinking_chat(
            (None, "Rash and fever.</think>Fever with a rash suggests measles.")
        ),  # opening tag in the template
        _thinking_chat((None, "<think>So B.</think>\nThe answer is B.")),
    )
    _run(library_path, _spec(fake_server, GuideSpec(method="stepwise", max_steps=10)))
    cot_pk, cot = _cot(library_path)
    assert cot == "The patient has a fever. Fever with a rash suggests measles. The answer is B."
    # the context of every step is the visible steps: no thinking is sent back
    assert not any("think" in r.json["messages"][-1]["content"] for r in fake_server.requests)
    with Library.open(library_path) as lib:
        assert [s.chosen_text for s in cot_steps(lib, cot_pk)] == [
            "The patient has a fever.",
            "Fever with a rash suggests measles.",
            "The answer is B.",
        ]


def test_thinking_in_its_own_field_is_not_a_step(library_path, fake_server):
    fake_server.script(
        _thinking_chat(("Let me check: fever first.", "The patient has a fever.")),
        _thinking_chat(("Hmm, measles?", "The answer is B."), field="reasoning"),
    )
    _run(library_path, _spec(fake_server, GuideSpec(method="stepwise", max_steps=10)))
    assert _cot(library_path)[1] == "The patient has a fever. The answer is B."


def test_a_thinking_rater_is_read_after_its_thinking(library_path, fake_server):
    class ThinkingRater(RatingServer):
        def _normal(self, record, anthropic):
            prompt = record.json["messages"][-1]["content"]
            candidate = prompt.split("Next step: ", 1)[1].split("\n", 1)[0]
            return _thinking_chat((None, f"<think>Is it 0 or 1? Let me check.</think>{self.ratings[candidate]}"))

    ratings = {"Weak step.": "1", "Strong step.": "3", "The answer is B.": "2"}
    with ThinkingRater(ratings) as helper_server:
        rater = ModelSpec("openai", "rater", base_url=helper_server.base_url, timeout=5.0)
        fake_server.script(
            _thinking_chat((None, "<think>a</think>Weak step."), (None, "<think>b</think>Strong step.")),
            _thinking_chat((None, "<think>c</think>The answer is B."), (None, "<think>d</think>The answer is B.")),
        )
        _run(
            library_path, _spec(fake_server, GuideSpec(method="process", rater_model=rater, candidates=2, max_steps=5))
        )
    cot_pk, cot = _cot(library_path)
    with Library.open(library_path) as lib:
        steps = cot_steps(lib, cot_pk)
    assert [c.score for c in steps[0].candidates] == [1.0, 3.0]  # not the 0 or 1 the rater thought about
    assert cot == "Strong step. The answer is B."


def test_rationalyst_with_a_thinking_rationale_model_and_agent(library_path, fake_server):
    # RATIONALYST, explicit supervision: the rationale (after its model's thinking) goes into the
    # agent's prompt; the agent's thinking is not its step.
    with FakeModelServer() as helper_server:
        helper_server.script(
            _thinking_chat((None, "<think>Step 0? Wait, the rash.</think>\nThe rash matters.\nMore.")),
            _thinking_chat(("Hmm.", "Measles fits.")),
        )
        rationale = ModelSpec("openai", "rationale", base_url=helper_server.base_url, timeout=5.0)
        fake_server.script(
            _thinking_chat((None, "<think>fever, rash</think>Fever with a rash suggests measles.")),
            _thinking_chat(("So B.", "The answer is B.")),
        )
        guide = GuideSpec(method="rationalyst", supervision="explicit", rationale_model=rationale, max_steps=5)
        _run(library_path, _spec(fake_server, guide))
    cot_pk, cot = _cot(library_path)
    assert cot == "Fever with a rash suggests measles. The answer is B."
    first_prompt = fake_server.requests[0].json["messages"][-1]["content"]
    assert "The rash matters." in first_prompt and "think" not in first_prompt and "Wait" not in first_prompt
    with Library.open(library_path) as lib:
        assert [s.rationale for s in cot_steps(lib, cot_pk)] == ["The rash matters.", "Measles fits."]


def test_a_reply_that_is_all_thinking_fails_its_request_in_one_line(library_path, fake_server):
    cut = _thinking_chat((None, "<think>I need to think about the fever and the rash and"))
    fake_server.script(cut, cut)
    run_id = _run(library_path, _spec(fake_server, GuideSpec(method="stepwise", max_steps=10)))
    with Library.open(library_path) as lib:
        (request,) = run_requests(lib, run_id)
        assert lib.conn.execute("SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()[0] == 0
    assert request.status == "failed" and request.error is not None
    assert "all thinking" in request.error and "\n" not in request.error.strip()
    assert ONE.max_attempts == 2
