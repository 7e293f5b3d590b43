"""Filtering the rationales of one document together: the "without" scorings share one call
where that is exact, and every stored loss equals the one the record's own two calls give
(against a local fake server whose toy model gives echo log-probs)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.libraries import DEMO, demo_library
from tests.helpers.servers import FakeModelServer, Recorded, Reply, toy_echo_logprobs
from thoughtdesk.core.generation.backends import LlamaCppBackend, OpenAICompatBackend, ResilientBackend, RetryPolicy
from thoughtdesk.core.generation.runs import ModelSpec
from thoughtdesk.core.generation.scoring import TokenScores
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.rationales.extraction import DEFAULT, read_rewrite
from thoughtdesk.core.rationales.filtering import LossReduction, score_rationale, scored_following, shared_span
from thoughtdesk.core.rationales.setup import filter_pass, filter_setup
from thoughtdesk.core.rationales.store import Document, add_rewrite, rationales

STEPS = [
    "Anna buys 3 boxes of 12 eggs.",
    "She uses 7 eggs for a cake.",
    "Her neighbour gives her 5 more eggs.",
    "She now has 36 - 7 + 5 = 34 eggs.",
    "The answer is 34.",
]
WHYS = [
    "Boxes times eggs per box gives the eggs she starts with.",
    "Using eggs takes them away from what she has.",
    "A gift adds to what she has.",
    "Adding up the changes gives the eggs she has now.",
]


def fill(lib: Library, documents: int) -> None:
    """Documents of 5 steps with a rationale after each of the first 4 (a different text each)."""
    collection_id = lib.require_collection(DEMO)
    for doc in range(documents):
        steps = [f"{step[:-1]} (doc {doc})." if index == 2 else step for index, step in enumerate(STEPS)]
        original = " ".join(steps)
        output = " ".join(f"{step} <BOT>{why}<EOT>" for step, why in zip(steps, WHYS, strict=False)) + " " + steps[-1]
        rewrite = read_rewrite(original, output)
        assert rewrite.valid and len(rewrite.rationales) == 4
        add_rewrite(
            lib,
            collection_id,
            Document(f"file:t:{doc}", "file", original),
            model="openai:m",
            markers=DEFAULT,
            fragment_key=None,
            prompt_text="",
            output=output,
            rewrite=rewrite,
        )


def scorer(server: FakeModelServer) -> ResilientBackend:
    inner = OpenAICompatBackend(server.base_url, endpoint="completions", model="m")
    return ResilientBackend(inner, retry=RetryPolicy(max_attempts=1))


def run_filter(lib: Library, server: FakeModelServer, horizon: int, layout: str = "thoughtdesk"):
    """A filter pass (a run of the engine) scoring with ``scorer(server)``: no retries, no probe."""
    spec = ModelSpec("openai", "m", base_url=server.base_url, endpoint="completions")

    async def main():
        backend = scorer(server)
        try:
            return await filter_pass(lib, DEMO, filter_setup(spec, horizon=horizon, layout=layout), backend)
        finally:
            await backend.aclose()

    return asyncio.run(main())


def own_calls(lib: Library, server: FakeModelServer, horizon: int) -> list[LossReduction]:
    """Each stored record scored on its own: two calls, as before the calls were shared."""

    async def main():
        backend = scorer(server)
        try:
            return [
                await score_rationale(backend, r.preceding, r.rationale, r.following, horizon=horizon)
                for r in rationales(lib, DEMO)
            ]
        finally:
            await backend.aclose()

    return asyncio.run(main())


def merged_sentence_ends(record: Recorded) -> Reply | None:
    """The toy echo model with a coarser tokenizer: a word ending a sentence and the word after
    it are one token (so a rationale's span starts inside a token)."""
    body: dict[str, Any] = toy_echo_logprobs(str(record.json["prompt"]), "m")
    logprobs = body["choices"][0]["logprobs"]
    tokens, values, offsets = logprobs["tokens"], logprobs["token_logprobs"], logprobs["text_offset"]
    index = 1
    while index < len(tokens) - 2:  # the first token has no log-prob; the last is the generated one
        if tokens[index].endswith("."):
            tokens[index : index + 2] = [tokens[index] + tokens[index + 1]]
            values[index : index + 2] = [values[index] + values[index + 1]]
            del offsets[index + 1]
        index += 1
    return Reply(body=body)


@pytest.mark.parametrize("horizon", [600, 40])
def test_one_shared_call_per_document_gives_the_same_losses(
    tmp_path: Path, fake_server: FakeModelServer, horizon: int
) -> None:
    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        fill(lib, 3)
        summary = run_filter(lib, fake_server, horizon)
        assert (summary.done, summary.failed) == (12, 0)
        # 4 rationales a document: 4 calls with them + 1 shared call without, not 8.
        assert len(fake_server.requests) == 3 * 5
        without = [r for r in fake_server.requests if "<BOT>" not in r.json["prompt"]]
        assert len(without) == 3
        stored = [r.score for r in rationales(lib, DEMO, scorer="openai:m", decay=0.9)]
        expected = own_calls(lib, fake_server, horizon)
    assert len(stored) == len(expected) == 12
    for got, want in zip(stored, expected, strict=True):
        assert got is not None
        assert got.loss_without == pytest.approx(want.loss_without, abs=1e-12)
        assert got.loss_with == pytest.approx(want.loss_with, abs=1e-12)
        assert (got.tokens_without, got.tokens_with) == (want.tokens_without, want.tokens_with)
        assert got.tokens_without > 3


def test_a_span_cut_inside_a_token_gets_its_own_call(tmp_path: Path, fake_server: FakeModelServer) -> None:
    fake_server.responder = merged_sentence_ends
    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        fill(lib, 1)
        summary = run_filter(lib, fake_server, horizon=0)
        assert (summary.done, summary.failed) == (4, 0)
        # Every rationale's span starts inside a merged token: the shared call and 4 own calls.
        without = [r for r in fake_server.requests if "<BOT>" not in r.json["prompt"]]
        assert len(without) == 1 + 4
        stored = [r.score for r in rationales(lib, DEMO, scorer="openai:m", decay=0.9)]
        expected = own_calls(lib, fake_server, horizon=0)
    assert stored == expected


def test_a_failed_shared_call_fails_the_documents_rationales_until_the_next_pass(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    def refuse_without(record: Recorded) -> Reply | None:
        if "<BOT>" not in record.json["prompt"]:
            return Reply(status=400, body={"error": {"message": "refused"}})
        return None

    fake_server.responder = refuse_without
    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        fill(lib, 2)
        first = run_filter(lib, fake_server, horizon=600)
        assert (first.done, first.failed) == (0, 8)
        # One error a document (a filter request scores one rewrite's rationales; before the
        # passes were runs, one a rationale), each naming its document and how many failed.
        assert len(first.errors) == 2 and all("refused" in e and "4 of 4 rationale(s)" in e for e in first.errors)
        assert {d for d in ("file:t:0", "file:t:1") if any(d in e for e in first.errors)} == {
            "file:t:0",
            "file:t:1",
        }
        assert all(r.score is None for r in rationales(lib, DEMO, scorer="openai:m", decay=0.9))
        fake_server.responder = None
        second = run_filter(lib, fake_server, horizon=600)
        assert (second.done, second.skipped, second.failed) == (8, 0, 0)
        assert all(r.score is not None for r in rationales(lib, DEMO, scorer="openai:m", decay=0.9))


def test_a_refused_shared_call_falls_back_to_own_calls(tmp_path: Path, fake_server: FakeModelServer) -> None:
    # A server whose context holds the text up to the second rationale's scored span, not more
    # (the third's and the fourth's run to the end of the text, as the shared call does).
    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        fill(lib, 1)
        second = list(rationales(lib, DEMO))[1]
        room = len(second.preceding + scored_following(second.following, 40))

    def too_long(record: Recorded) -> Reply | None:
        if len(record.json["prompt"]) > room and "<BOT>" not in record.json["prompt"]:
            return Reply(status=400, body={"error": {"message": "the prompt is longer than the context"}})
        return None

    fake_server.responder = too_long
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        summary = run_filter(lib, fake_server, horizon=40)
        assert (summary.done, summary.failed) == (2, 2)
        assert "longer than the context" in summary.errors[0]
        stored = [r.score for r in rationales(lib, DEMO, scorer="openai:m", decay=0.9)]
        fake_server.responder = None
        expected = own_calls(lib, fake_server, horizon=40)
    assert stored[:2] == expected[:2] and stored[2:] == [None, None]


def test_shared_span_reads_only_spans_on_token_boundaries() -> None:
    text = "A b. C d. E f."
    # The scoring of text[4:] after text[:4]: tokens " C", " d.", " E", " f."
    shared = TokenScores((" C", " d.", " E", " f."), (-1.0, -2.0, -3.0, -4.0))
    assert shared_span(text, len(text), shared, 4, 9) == TokenScores((" C", " d."), (-1.0, -2.0))
    assert shared_span(text, len(text), shared, 9, 14) == TokenScores((" E", " f."), (-3.0, -4.0))
    assert shared_span(text, len(text), shared, 4, 14) == shared
    assert shared_span(text, len(text), shared, 4, 8) is None  # ends inside " d."
    assert shared_span(text, len(text), shared, 5, 14) is None  # starts inside " C"
    # Token texts that do not lie end to end as the text has them (e.g. a byte-level tokenizer's
    # partial characters): nothing is read from them.
    assert shared_span(text, len(text), TokenScores((" C", " x.", " E", " f."), (0.0,) * 4), 4, 9) is None
    assert shared_span(text, len(text), TokenScores((), ()), 4, 9) is None


def test_only_backends_with_split_independent_scores_share_calls(fake_server: FakeModelServer) -> None:
    backend = scorer(fake_server)
    try:
        assert backend.capabilities.scoring and backend.capabilities.stable_prefix_scores
    finally:
        asyncio.run(backend.aclose())
    # llama.cpp's results depend on how tokens are split into evaluations: no sharing there.
    assert not LlamaCppBackend.capabilities.stable_prefix_scores


# -- a server's impossible scores (issue 23, point 9) -----------------------------------------


def _spoiled(change):
    """A responder: the toy echo answer with ``change(logprobs, prompt)`` applied to its
    ``logprobs`` object (and sent as JSON, NaN and Infinity spelled as Python's json writes them)."""

    def responder(record: Recorded) -> Reply | None:
        prompt = str(record.json["prompt"])
        body: dict[str, Any] = toy_echo_logprobs(prompt, "m")
        change(body["choices"][0]["logprobs"], prompt)
        return Reply(body=json.dumps(body))

    return responder


def _last_prompt_token(field: str, value: Any):
    def change(logprobs: dict[str, Any], _prompt: str) -> None:
        logprobs[field][-2] = value  # the last token of the prompt (the scored text's last)

    return change


def _all_offsets(shift: int):
    def change(logprobs: dict[str, Any], _prompt: str) -> None:
        logprobs["text_offset"] = [offset + shift for offset in logprobs["text_offset"]]

    return change


@pytest.mark.parametrize(
    "change,field,value",
    [
        (_last_prompt_token("token_logprobs", 1e308), "logprobs.token_logprobs[", "] = 1e+308"),
        (_last_prompt_token("token_logprobs", -1e308), "logprobs.token_logprobs[", "] = -1e+308"),
        (_last_prompt_token("token_logprobs", float("nan")), "logprobs.token_logprobs[", "] = nan"),
        (_last_prompt_token("token_logprobs", float("-inf")), "logprobs.token_logprobs[", "] = -inf"),
        (_last_prompt_token("token_logprobs", 3.5), "logprobs.token_logprobs[", "] = 3.5"),
        (_all_offsets(100_000), "logprobs.text_offset[", "0] = 100000"),
        (_all_offsets(-5), "logprobs.text_offset[", "0] = -5"),
        (_last_prompt_token("text_offset", 1), "logprobs.text_offset[", "] = 1 "),
    ],
    ids=["1e308", "-1e308", "NaN", "-Infinity", "positive", "offsets past the end", "negative", "decreasing"],
)
def test_impossible_scores_from_a_server_fail_the_rationale_naming_them(
    tmp_path: Path, fake_server: FakeModelServer, change, field: str, value: str
) -> None:
    """1e308 gave an internal error (an overflowing sum), NaN and -Infinity a bare "NOT NULL
    constraint failed", out-of-range offsets a stored reduction of zero: each is now a failed
    rationale whose error names the field and the value, and nothing is stored."""
    fake_server.responder = _spoiled(change)
    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        fill(lib, 1)
        summary = run_filter(lib, fake_server, horizon=600)
        assert (summary.done, summary.failed) == (0, 4), summary
        assert len(summary.errors) == 1  # one a document (its filter request), naming the first rationale's error
        for error in summary.errors:
            assert "the server's answer" in error and "nothing was stored" in error, error
            assert field in error and value in error.split(field, 1)[1], error
        assert all(r.score is None for r in rationales(lib, DEMO, scorer="openai:m", decay=0.9))
        assert lib.conn.execute("SELECT count(*) FROM rationale_score").fetchone()[0] == 0


# -- the paper's prompt layout (issue 23, point 18) -------------------------------------------

PRECEDING = "Anna buys 3 boxes of 12 eggs."
RATIONALE = "Boxes times eggs per box gives the eggs she starts with."
FOLLOWING = " She uses 7 eggs."
#: The known tokenizer of the fake server: Llama-3's special tokens, a blank line, markers, words.
_TOKEN = re.compile(r"<\|[a-z_]+\|>|\n\n|\s*<[A-Z]+>|\s*[^\s<]+")
_TEMPLATE = {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "\n\n"}
_TEMPLATE |= {"system", "user", "assistant"}


def known_logprobs(record: Recorded) -> Reply:
    """Echo log-probs by a rule a person can apply by hand: a template token -0.25; a word -1.0,
    or -0.5 when the prompt holds the rationale (the first token has none, as in OpenAI's API)."""
    prompt = str(record.json["prompt"])
    tokens = _TOKEN.findall(prompt)
    assert "".join(tokens) == prompt, prompt
    word = -0.5 if RATIONALE in prompt else -1.0
    values = [None] + [-0.25 if token in _TEMPLATE else word for token in tokens[1:]]
    offsets = [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
    logprobs = {
        "tokens": [*tokens, "!"],
        "token_logprobs": [*values, -1.0],
        "text_offset": [*offsets, len(prompt)],
        "top_logprobs": None,
    }
    return Reply(
        body={
            "id": "cmpl-known",
            "object": "text_completion",
            "model": "m",
            "choices": [{"index": 0, "text": prompt + "!", "finish_reason": "length", "logprobs": logprobs}],
            "usage": {"prompt_tokens": len(tokens), "completion_tokens": 1, "total_tokens": len(tokens) + 1},
        }
    )


def _score(server: FakeModelServer, layout: str) -> LossReduction:
    async def main() -> LossReduction:
        backend = scorer(server)
        try:
            return await score_rationale(backend, PRECEDING, RATIONALE, FOLLOWING, layout=layout)
        finally:
            await backend.aclose()

    return asyncio.run(main())


def test_the_paper_layout_scores_the_chat_prompts_of_rationalysts_filter(fake_server: FakeModelServer) -> None:
    """RATIONALYST's filter script: system + user (preceding, or preceding + ". " + rationale) +
    assistant (following) in Llama-3's chat format; scored are the last tokens, as many as the
    assistant turn alone has with its BOS (user end of turn, header, following, end of turn)."""
    fake_server.responder = known_logprobs
    result = _score(fake_server, "paper")
    head = (
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
        "Your task is to generate future text given preceeding text<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\n"
    )
    tail = "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nShe uses 7 eggs.<|eot_id|>"
    prompts = sorted(str(r.json["prompt"]) for r in fake_server.requests)
    assert prompts == sorted(
        [
            head + "Anna buys 3 boxes of 12 eggs." + tail,
            head + "Anna buys 3 boxes of 12 eggs.. Boxes times eggs per box gives the eggs she starts with." + tail,
        ]
    )
    # The 10 scored tokens: <|eot_id|> <|start_header_id|> assistant <|end_header_id|> \n\n
    # (template, -0.25 each, weights 0.9^0..0.9^4), She / uses / 7 / eggs. (weights 0.9^5..0.9^8;
    # -1.0 each without the rationale, -0.5 with it), <|eot_id|> (-0.25, weight 0.9^9).
    template = 0.25 * (1 + 0.9 + 0.81 + 0.729 + 0.6561) + 0.25 * 0.387420489
    words = 0.59049 + 0.531441 + 0.4782969 + 0.43046721  # 2.03069511
    assert (result.tokens_without, result.tokens_with) == (10, 10)
    assert result.loss_without == pytest.approx(template + 1.0 * words, abs=1e-12)  # 3.15132523225
    assert result.loss_with == pytest.approx(template + 0.5 * words, abs=1e-12)  # 2.13597767725
    assert result.reduction == pytest.approx(1.015347555, abs=1e-12)
    assert not result.kept(1.2)  # the paper's GSM8K tau drops it in the paper's layout ...

    fake_server.requests.clear()
    ours = _score(fake_server, "thoughtdesk")
    # ... while ThoughtDesk's layout scores only She / uses / 7 / eggs. at weights 0.9^0..0.9^3:
    # 0.5 * (1 + 0.9 + 0.81 + 0.729) = 1.7195, kept at 1.2.
    assert (ours.tokens_without, ours.reduction) == (4, pytest.approx(1.7195, abs=1e-12))
    assert sorted(str(r.json["prompt"]) for r in fake_server.requests) == sorted(
        [PRECEDING + FOLLOWING, PRECEDING + " <BOT>" + RATIONALE + "<EOT>" + FOLLOWING]
    )


def test_the_paper_layout_is_stored_under_its_own_name(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """A filter pass in the paper's layout scores every rationale again (the two are not
    comparable) and never shares the "without" call (each is its own chat prompt)."""

    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        fill(lib, 1)
        run_filter(lib, fake_server, horizon=600)
        sent = len(fake_server.requests)
        assert sent == 5  # 4 with, 1 shared without

        summary = run_filter(lib, fake_server, horizon=600, layout="paper")
        assert (summary.done, summary.skipped) == (4, 0)
        assert len(fake_server.requests) - sent == 8
        assert all("<|start_header_id|>" in str(r.json["prompt"]) for r in fake_server.requests[sent:])
        paper = [r.score for r in rationales(lib, DEMO, scorer="openai:m [paper layout]", decay=0.9)]
        ours = [r.score for r in rationales(lib, DEMO, scorer="openai:m", decay=0.9)]
        assert all(paper) and all(ours) and paper != ours
