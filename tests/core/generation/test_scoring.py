"""Scoring without a model: the scores' arithmetic, reading echo log-probs from an
OpenAI-compatible answer, and the clear refusal of backends that cannot score."""

from __future__ import annotations

import asyncio
import math

import pytest

from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.backends import (
    AnthropicBackend,
    BadResponse,
    OpenAICompatBackend,
    ResilientBackend,
    RetryPolicy,
)
from thoughtdesk.core.generation.backends.base import ScoringUnsupported
from thoughtdesk.core.generation.scoring import TokenScores, continuation_start, weighted_loss


def run(coroutine):
    return asyncio.run(coroutine)


# --- arithmetic ------------------------------------------------------------------------------


def test_weighted_loss_by_hand() -> None:
    # -(1.0 * -2.0 + 0.9 * -1.0 + 0.81 * -0.5) = 2.0 + 0.9 + 0.405
    assert weighted_loss([-2.0, -1.0, -0.5]) == pytest.approx(3.305)
    assert weighted_loss([-2.0, -1.0, -0.5], decay=0.5) == pytest.approx(2.0 + 0.5 + 0.125)
    assert weighted_loss([]) == 0.0
    with pytest.raises(ValueError, match="decay"):
        weighted_loss([-1.0], decay=0.0)


def test_mean_and_decayed_mean_by_hand() -> None:
    scores = TokenScores(("a", "b", "c"), (-2.0, -1.0, -0.5))
    assert scores.mean == pytest.approx(-3.5 / 3)
    assert scores.total == pytest.approx(-3.5)
    # (1 * -2 + 0.9 * -1 + 0.81 * -0.5) / (1 + 0.9 + 0.81)
    assert scores.decayed_mean() == pytest.approx(-3.305 / 2.71)
    assert TokenScores(("x", "y"), (-0.7, -0.7)).decayed_mean(0.5) == pytest.approx(-0.7)
    empty = TokenScores((), ())
    assert empty.mean == -math.inf and empty.decayed_mean() == -math.inf
    assert scores.to_json() == {"tokens": ["a", "b", "c"], "logprobs": [-2.0, -1.0, -0.5]}
    with pytest.raises(ValueError, match="2 tokens but 1 log-probs"):
        TokenScores(("a", "b"), (-1.0,))


def test_continuation_start() -> None:
    assert continuation_start([1, 5, 6], [1, 5, 6, 7, 8]) == 3
    assert continuation_start([1, 5, 6], [1, 5, 9, 8]) == 2  # the last prefix token re-tokenised
    assert continuation_start([1, 5], [1, 5]) == 2


# --- OpenAI-compatible echo --------------------------------------------------------------------


def echo_body(prompt_tokens: list[str], logprobs: list[float | None], generated: str = "!") -> dict:
    """A /completions answer with echo and logprobs, shaped as llama-cpp-python sends it."""
    offsets, position = [], 0
    for token in [*prompt_tokens, generated]:
        offsets.append(position)
        position += len(token)
    return {
        "object": "text_completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "text": "".join(prompt_tokens) + generated,
                "finish_reason": "length",
                "logprobs": {
                    "tokens": [*prompt_tokens, generated],
                    "token_logprobs": [*logprobs, -0.1],
                    "text_offset": offsets,
                    "top_logprobs": [None] * (len(prompt_tokens) + 1),
                },
            }
        ],
        "usage": {"prompt_tokens": len(prompt_tokens) + 1, "completion_tokens": 1, "total_tokens": 9},
    }


def test_echo_answer_gives_the_continuations_tokens(fake_server: FakeModelServer) -> None:
    fake_server.script(
        Reply(body=echo_body(["Answer", ":", " The", " end"], [None, -1.0, -2.0, -3.0])),
        # The prefix "Answer: " ends inside the joint token " The": it is the continuation's.
        Reply(body=echo_body(["Answer", ":", " The", " end"], [None, -1.0, -2.5, -3.5])),
    )

    async def main():
        backend = OpenAICompatBackend(fake_server.base_url, endpoint="completions", model="m")
        try:
            first = await backend.score("Answer:", [" The end"])
            second = await backend.score("Answer: ", ["The end"])
            return first + second
        finally:
            await backend.aclose()

    first, second = run(main())
    assert first == TokenScores((" The", " end"), (-2.0, -3.0), evaluated_tokens=4)
    assert second.tokens == (" The", " end") and second.logprobs == (-2.5, -3.5)
    sent = fake_server.requests[0].json
    assert sent["prompt"] == "Answer: The end" and sent["echo"] is True and sent["max_tokens"] == 1
    assert sent["logprobs"] == 1 and fake_server.requests[0].path == "/v1/completions"


def test_server_without_prompt_logprobs_cannot_score(fake_server: FakeModelServer) -> None:
    """llama.cpp's own llama-server ignores echo: it is said, not approximated."""
    plain = {"object": "text_completion", "choices": [{"index": 0, "text": "!", "finish_reason": "length"}]}
    fake_server.script(
        Reply(body=plain),
        Reply(status=400, body={"error": {"message": "echo is not supported with logprobs", "type": "invalid"}}),
    )

    async def main(expected: str):
        backend = ResilientBackend(
            OpenAICompatBackend(fake_server.base_url, endpoint="completions", model="m"),
            retry=RetryPolicy(initial_wait=0.01, jitter=0),
        )
        try:
            with pytest.raises(ScoringUnsupported, match=expected) as caught:
                await backend.score("Q:", [" A"])
            return str(caught.value)
        finally:
            await backend.aclose()

    message = run(main("without the prompt's log-probs"))
    assert message.startswith("openai cannot score text:") and "llama-server" in message
    assert "echo" in run(main("refused echo"))
    assert len(fake_server.requests) == 2  # not retried


def test_echo_answer_with_a_missing_logprob_is_a_bad_response(fake_server: FakeModelServer) -> None:
    fake_server.script(Reply(body=echo_body(["Q", ":", " A"], [None, -1.0, None])))

    async def main():
        backend = OpenAICompatBackend(fake_server.base_url, endpoint="completions", model="m")
        try:
            await backend.score("Q:", [" A"])
        finally:
            await backend.aclose()

    with pytest.raises(BadResponse, match="no log-prob"):
        run(main())


def test_backends_that_cannot_score_say_so() -> None:
    chat = OpenAICompatBackend("http://127.0.0.1:9/v1", endpoint="chat", model="m")
    anthropic = AnthropicBackend("k", base_url="http://127.0.0.1:9")
    for backend, words in ((chat, "chat endpoint"), (anthropic, "Anthropic")):
        assert not backend.capabilities.scoring
        assert words in backend.scoring_detail and "cannot score text" in backend.scoring_detail
        wrapped = ResilientBackend(backend)
        with pytest.raises(ScoringUnsupported, match=f"cannot score text: .*{words}"):
            run(wrapped.score("prefix", ["continuation"]))
        run(wrapped.aclose())
