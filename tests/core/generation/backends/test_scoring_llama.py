"""Scoring with the real small model: the in-process route against llama-cpp-python computed by
hand, and llama-cpp-python's server (echo + logprobs) against the in-process route.

llama.cpp's CPU results depend on how tokens are split into evaluations (by up to ~0.25 nats a
token on this Q4 model), so each comparison at 1e-3 is made with the same split: the direct
computation evaluates the shared tokens, then the rest, as the backend does with prefix reuse;
a fresh server evaluates a new text in one go, as the backend does without reuse.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.helpers.servers import LlamaServer
from thoughtdesk.core.generation.backends import (
    LlamaCppBackend,
    LlamaCppSettings,
    OpenAICompatBackend,
    ResilientBackend,
)
from thoughtdesk.core.generation.backends.llama_scoring import score_with_llama
from thoughtdesk.core.generation.scoring import TokenScores, continuation_start

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra 'local')")
pytestmark = pytest.mark.slow

PREFIX = "Question: Tom has 2 apples and buys 3 more. How many apples does he have?\nAnswer:"
# Different first tokens: a server reusing its cache then splits each text the same way.
CANDIDATES = (" He has 2 + 3 = 5 apples.", " Tom now has five apples in total.", " 6")
N_CTX = 512
SHORT_PREFIX = "Q: 2 + 3?\nA:"
SHORT = (" 5.", " Five")


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.fixture(scope="module")
def direct(gguf_model: Path):
    """A plain llama-cpp-python instance with logits_all=True, for computing by hand."""
    from llama_cpp import Llama

    llama = Llama(model_path=str(gguf_model), n_ctx=N_CTX, n_threads=2, logits_all=True, verbose=False)
    yield llama
    llama.close()


def by_hand(llama, prefix: str, continuation: str, *, splits: str) -> tuple[list[int], list[float]]:
    """The continuation's token ids and log-probs: tokenize, eval, logits_to_logprobs.

    ``splits="shared"`` evaluates the tokens before the last shared one, then the rest;
    ``"whole"`` evaluates everything at once.
    """
    from llama_cpp import Llama

    prefix_ids = llama.tokenize(prefix.encode(), add_bos=True, special=True)
    joint = llama.tokenize((prefix + continuation).encode(), add_bos=True, special=True)
    start = next(i for i, (a, b) in enumerate(zip(prefix_ids + [-1], joint, strict=False)) if a != b)
    llama.reset()
    if splits == "shared":
        llama.eval(joint[: start - 1])
        llama.eval(joint[start - 1 :])
    else:
        llama.eval(joint)
    logprobs = Llama.logits_to_logprobs(llama.scores[: llama.n_tokens])
    return joint[start:], [float(logprobs[i - 1, joint[i]]) for i in range(start, len(joint))]


def close(a, b, tolerance: float = 1e-3) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= tolerance for x, y in zip(a, b, strict=True))


def test_in_process_scores_equal_llama_cpp_computed_by_hand(gguf_model: Path, direct) -> None:
    async def main():
        backend = LlamaCppBackend(LlamaCppSettings(gguf_model, n_ctx=N_CTX, n_threads=2))
        try:
            assert backend.capabilities.scoring
            first = await backend.score(PREFIX, CANDIDATES)
            # Again in another order, after other texts: a score does not depend on history.
            await backend.score("Something else entirely.", ["Yes."])
            again = await backend.score(PREFIX, CANDIDATES[::-1])
            return first, again[::-1], backend.scoring_detail
        finally:
            await backend.aclose()

    first, again, detail = run(main())
    for text, scores, repeat in zip(CANDIDATES, first, again, strict=True):
        ids, expected = by_hand(direct, PREFIX, text, splits="shared")
        assert close(scores.logprobs, expected), (text, scores.logprobs, expected)
        assert scores.logprobs == repeat.logprobs
        assert "".join(scores.tokens) == text  # the tokens' texts give the continuation back
        assert len(ids) == len(scores.tokens)
        assert all(value <= 0 for value in scores.logprobs)
    # The prefix was evaluated once: the first continuation carries it, the others only their own tokens.
    prefix_len = len(direct.tokenize(PREFIX.encode(), add_bos=True, special=True))
    assert first[0].evaluated_tokens == prefix_len + len(first[0].tokens)
    assert [s.evaluated_tokens for s in first[1:]] == [1 + len(s.tokens) for s in first[1:]]
    assert "GB more memory" in detail and f"{N_CTX:,} positions" in detail


def test_without_reuse_each_text_is_evaluated_whole(gguf_model: Path, direct) -> None:
    results = score_with_llama(direct, PREFIX, CANDIDATES, reuse=False)
    for text, scores in zip(CANDIDATES, results, strict=True):
        _, expected = by_hand(direct, PREFIX, text, splits="whole")
        assert close(scores.logprobs, expected)
        assert scores.evaluated_tokens > 15
    reused = score_with_llama(direct, PREFIX, CANDIDATES, reuse=True)
    assert [s.tokens for s in reused] == [s.tokens for s in results]
    prefix_len = len(direct.tokenize(PREFIX.encode(), add_bos=True, special=True))
    assert sum(s.evaluated_tokens for s in results) == sum(prefix_len + len(s.tokens) for s in results)
    assert sum(s.evaluated_tokens for s in reused) == prefix_len - 1 + sum(1 + len(s.tokens) for s in reused)


def test_joint_tokenisation_at_the_boundary(direct) -> None:
    """A prefix ending in a space: the joint text has " The" where the prefix alone ends in
    " ", so the scored tokens start with the token straddling the boundary."""
    prefix = "Question: What is 2 + 3?\nAnswer: "
    prefix_ids = direct.tokenize(prefix.encode(), add_bos=True, special=True)
    joint = direct.tokenize((prefix + "The answer is 5.").encode(), add_bos=True, special=True)
    start = continuation_start(prefix_ids, joint)
    assert start == len(prefix_ids) - 1  # the prefix's last token (" ") is not in the joint text
    [scores] = score_with_llama(direct, prefix, ["The answer is 5."])
    assert scores.tokens[0] == " The" and "".join(scores.tokens) == " The answer is 5."
    assert score_with_llama(direct, prefix, [""]) == [TokenScores((), ())]


def test_server_route_equals_in_process_route(gguf_model: Path, tmp_path: Path, direct) -> None:
    """A fresh llama-cpp-python server evaluates a new text in one go: equal to the in-process
    route without reuse. Later texts reuse its cache (split as the in-process route with
    reuse when the first tokens differ): the same tokens and close log-probs."""
    pytest.importorskip("uvicorn", reason="llama-cpp-python[server] is not installed")
    server = LlamaServer(gguf_model, tmp_path / "server.log", n_ctx=N_CTX)
    try:
        server.wait_ready()

        async def main():
            backend = ResilientBackend(
                OpenAICompatBackend(server.base_url, endpoint="completions", provider="local", model="gemma-test")
            )
            try:
                assert backend.capabilities.scoring
                # Short texts: llama-cpp-python's server sorts the whole 262k vocabulary in
                # Python for every echoed token (seconds a token on a busy machine).
                [first] = await backend.score(SHORT_PREFIX, SHORT[:1])
                [second] = await backend.score(SHORT_PREFIX, SHORT[1:])
                return [first, second]
            finally:
                await backend.aclose()

        served = run(main())
    finally:
        server.stop()
    whole = score_with_llama(direct, SHORT_PREFIX, SHORT, reuse=False)
    reused = score_with_llama(direct, SHORT_PREFIX, SHORT, reuse=True)
    assert served[0].tokens == whole[0].tokens
    assert close(served[0].logprobs, whole[0].logprobs), (served[0].logprobs, whole[0].logprobs)
    for got, expected in zip(served[1:], reused[1:], strict=True):
        assert got.tokens == expected.tokens
        # An off-by-one position would be several nats away; batching moves values by < 0.3.
        assert close(got.logprobs, expected.logprobs, tolerance=0.3), (got.logprobs, expected.logprobs)


def test_capabilities_say_what_the_generation_instance_can_do(gguf_model: Path) -> None:
    """The issue's defect: the backend advertised log-probs and prompt log-probs while its
    generation instance, loaded without logits_all, refuses both. What it claims must work; the
    log-probs of given text come from ``score`` (its own logits_all instance)."""

    async def main():
        backend = LlamaCppBackend(LlamaCppSettings(gguf_model, n_ctx=N_CTX, n_threads=2))
        try:
            await backend.load()
            loop = asyncio.get_running_loop()

            def works(**options) -> bool:
                try:
                    backend._llama.create_completion("2 + 3 =", max_tokens=1, **options)
                except ValueError:
                    return False
                return True

            logprobs = await loop.run_in_executor(backend._executor, lambda: works(logprobs=1))
            echoed = await loop.run_in_executor(backend._executor, lambda: works(echo=True, logprobs=1))
            [scored] = await backend.score(SHORT_PREFIX, [SHORT[0]])
            return backend.capabilities, logprobs, echoed, scored
        finally:
            await backend.aclose()

    capabilities, logprobs, echoed, scored = run(main())
    assert capabilities.logprobs == logprobs
    assert capabilities.prompt_logprobs == echoed
    assert capabilities.scoring and scored.logprobs and all(value <= 0 for value in scored.logprobs)


def test_the_memory_estimate_before_loading_is_quiet_and_equals_the_loaded_one(gguf_model: Path, capfd) -> None:
    """The estimate shown before the scoring copy loads reads the file's vocabulary; llama.cpp
    printed "n_ctx_seq (512) > n_ctx_train (0)" on stderr for it despite verbose=False, and
    "llama_kv_cache_iswa: using full-size SWA cache" at every load of the model."""

    async def main():
        backend = LlamaCppBackend(LlamaCppSettings(gguf_model, n_ctx=N_CTX, n_threads=2))
        try:
            estimate = await backend.scoring_memory()
            said = capfd.readouterr()
            loaded = await backend.load_scorer()
            return estimate, said, loaded, capfd.readouterr()
        finally:
            await backend.aclose()

    estimate, said, loaded, loading = run(main())
    assert said.err == "" and said.out == ""
    # llama.cpp's own notes go to the log, not stderr (each load said "using full-size SWA cache")
    assert loading.err == ""
    assert estimate.n_vocab == 262_144 and estimate.n_ctx == N_CTX
    assert estimate.kv_bytes > 0
    assert estimate == loaded  # the file's figures are the loaded model's
