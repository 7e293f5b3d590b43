"""Real llama.cpp: the OpenAI-compatible llama-cpp-python server and the in-process backend,
both with the Gemma 3 270M GGUF (a base model: these tests check plumbing, not answers)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.models import SERVER_KEY
from tests.helpers.servers import LlamaServer
from thoughtdesk.core.generation.backends import (
    AuthError,
    ChatMessage,
    LlamaCppBackend,
    LlamaCppSettings,
    ModelFileError,
    OpenAICompatBackend,
    Request,
    ResilientBackend,
    RetryPolicy,
    Timeout,
)
from thoughtdesk.core.generation.backends.openai_compat import Endpoint

PROMPT = "Question: What is the capital of France?\nAnswer: Let's think step by step."


def run(coroutine):
    return asyncio.run(coroutine)


# --- llama-cpp-python's OpenAI-compatible server --------------------------------------------


def _server_backend(server: LlamaServer, endpoint: Endpoint = "completions", key: str = SERVER_KEY):
    return OpenAICompatBackend(server.base_url, key, endpoint=endpoint, provider="local")


def test_server_completion(llama_server: LlamaServer) -> None:
    async def main():
        backend = _server_backend(llama_server)
        try:
            return await backend.complete(
                Request(model=llama_server.model_alias, prompt=PROMPT, max_tokens=8, temperature=0.0)
            )
        finally:
            await backend.aclose()

    response = run(main())
    assert len(response.texts) == 1 and response.texts[0].strip()
    assert 0 < response.completion_tokens <= 8
    assert response.prompt_tokens >= 10
    assert response.finish_reasons[0] in ("length", "stop")
    assert json.loads(response.raw_body)["object"] == "text_completion"
    assert response.latency > 0


def test_server_chat_and_n_samples_with_seeds(llama_server: LlamaServer) -> None:
    async def main():
        backend = _server_backend(llama_server, endpoint="chat")
        try:
            chat = await backend.complete(
                Request(model=llama_server.model_alias, max_tokens=8, messages=(ChatMessage("user", "Name a colour."),))
            )
            completions = _server_backend(llama_server)
            # llama.cpp samples a seed identically only from the same cache state: warm it up.
            await completions.complete(
                Request(model=llama_server.model_alias, prompt=PROMPT, max_tokens=8, temperature=1.0, seed=7)
            )
            sampled = await completions.complete(
                Request(model=llama_server.model_alias, prompt=PROMPT, max_tokens=8, temperature=1.0, n=2, seed=7)
            )
            again = await completions.complete(
                Request(model=llama_server.model_alias, prompt=PROMPT, max_tokens=8, temperature=1.0, n=1, seed=7)
            )
            await completions.aclose()
            return chat, sampled, again
        finally:
            await backend.aclose()

    chat, sampled, again = run(main())
    assert json.loads(chat.raw_body)["object"] == "chat.completion"
    assert len(chat.texts) == 1
    # The server ignores n: the backend fetched the second sample itself, seeded 7 and 8.
    assert len(sampled.texts) == 2
    assert sampled.texts[0] == again.texts[0]


def test_server_wrong_key(llama_server: LlamaServer) -> None:
    async def main():
        backend = ResilientBackend(
            _server_backend(llama_server, key="wrong-key-31337"), retry=RetryPolicy(initial_wait=0.01)
        )
        try:
            await backend.complete(Request(model=llama_server.model_alias, prompt="Hi", max_tokens=2))
        finally:
            await backend.aclose()

    with pytest.raises(AuthError) as error:
        run(main())
    assert str(error.value).startswith("local: the API key was refused (HTTP 401)")
    assert "wrong-key-31337" not in str(error.value)


# --- the in-process backend ------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_settings(gguf_model: Path) -> LlamaCppSettings:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra 'local')")
    return LlamaCppSettings(model_path=gguf_model, n_ctx=512, n_threads=2)


def test_inprocess_completion_streams_without_blocking_the_loop(local_settings: LlamaCppSettings) -> None:
    pieces: list[tuple[int, str]] = []

    async def main():
        backend = LlamaCppBackend(local_settings)
        await backend.load()
        ticks = 0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.005)

        tick_task = asyncio.create_task(ticker())
        try:
            streamed = await backend.complete(
                Request(model="local", prompt=PROMPT, max_tokens=12, seed=3),
                on_token=lambda index, piece: pieces.append((index, piece)),
            )
            plain = await backend.complete(Request(model="local", prompt=PROMPT, max_tokens=12, seed=3))
        finally:
            done.set()
            await tick_task
            await backend.aclose()
        return streamed, plain, ticks

    streamed, plain, ticks = run(main())
    assert streamed.texts == plain.texts and streamed.texts[0]
    assert "".join(piece for _, piece in pieces) == streamed.texts[0]
    assert {index for index, _ in pieces} == {0}
    assert streamed.completion_tokens == plain.completion_tokens <= 12
    assert streamed.prompt_tokens == plain.prompt_tokens > 5
    # Generation ran on the worker thread: the event loop kept ticking meanwhile.
    assert ticks >= 3


def test_inprocess_chat_n_and_template(local_settings: LlamaCppSettings) -> None:
    async def main():
        backend = LlamaCppBackend(
            LlamaCppSettings(
                model_path=local_settings.model_path,
                n_ctx=512,
                n_threads=2,
                completion_template="User: {prompt}\nAssistant:",
            )
        )
        try:
            chat = await backend.complete(
                Request(
                    model="local",
                    max_tokens=6,
                    n=2,
                    seed=1,
                    temperature=0.9,
                    messages=(ChatMessage("user", "Say {hi}"),),
                )
            )
            return chat, backend.uses_gguf_chat_template, backend.prompt_text(Request(model="local", prompt="Say {hi}"))
        finally:
            await backend.aclose()

    chat, gguf_template, prompt = run(main())
    assert len(chat.texts) == 2 and len(json.loads(chat.raw_body)) == 2
    assert prompt == "User: Say {hi}\nAssistant:"
    # This base model's GGUF has no chat template, so chat requests go through completion_template.
    assert gguf_template is False
    assert json.loads(json.loads(chat.raw_body)[0])["object"] == "text_completion"


def test_inprocess_cancel_stops_generation(local_settings: LlamaCppSettings) -> None:
    async def main():
        backend = LlamaCppBackend(local_settings)
        await backend.load()
        generating = threading.Event()  # set by the first token, whichever thread streams it
        task = asyncio.create_task(
            backend.complete(
                Request(model="local", prompt=PROMPT, max_tokens=400), on_token=lambda _i, _piece: generating.set()
            )
        )
        deadline = time.monotonic() + 120
        while not generating.is_set():  # cancelled mid-generation, not before it began
            assert time.monotonic() < deadline and not task.done(), "the model never started generating"
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The worker is free again soon: the next request completes normally.
        after = await asyncio.wait_for(backend.complete(Request(model="local", prompt="Hi", max_tokens=2)), timeout=60)
        await backend.aclose()
        return after

    assert run(main()).completion_tokens <= 2


def test_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError) as error:
        LlamaCppBackend(LlamaCppSettings(model_path=tmp_path / "absent.gguf"))
    assert str(error.value).startswith(f"llamacpp: model file {tmp_path / 'absent.gguf'} does not exist")
    assert "choose an existing .gguf model file" in str(error.value)
    assert "put the file back at this path and resume" in str(error.value)


def test_not_a_gguf_file(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"PK\x03\x04 this is a zip, not a model")
    with pytest.raises(ModelFileError, match=r"is not a GGUF model file \(it starts with b'PK"):
        LlamaCppBackend(LlamaCppSettings(model_path=fake))
    with pytest.raises(ModelFileError, match="is a folder"):
        LlamaCppBackend(LlamaCppSettings(model_path=tmp_path))


def test_truncated_gguf_fails_to_load_clearly(tmp_path: Path, gguf_model: Path) -> None:
    pytest.importorskip("llama_cpp")
    broken = tmp_path / "broken.gguf"
    with gguf_model.open("rb") as source:
        broken.write_bytes(source.read(4096))
    backend = LlamaCppBackend(LlamaCppSettings(model_path=broken, n_ctx=128))

    async def main():
        try:
            await backend.complete(Request(model="local", prompt="Hi", max_tokens=2))
        finally:
            await backend.aclose()

    with pytest.raises(ModelFileError, match="could not load"):
        run(main())


def test_inprocess_timeout_stops_generation(local_settings: LlamaCppSettings) -> None:
    async def main():
        backend = LlamaCppBackend(local_settings)
        await backend.load()
        try:
            with pytest.raises(Timeout, match="longer than 0.3 s") as error:
                await backend.complete(Request(model="local", prompt=PROMPT, max_tokens=400, timeout=0.3))
            after = await backend.complete(Request(model="local", prompt="Hi", max_tokens=2))
        finally:
            await backend.aclose()
        return error.value, after

    error, after = run(main())
    assert str(error).startswith("llamacpp: ") and error.retryable
    assert after.texts and after.completion_tokens <= 2


def test_completion_template_reaches_the_model_and_the_provenance(gguf_model: Path) -> None:
    from thoughtdesk.core.generation.backends import Request
    from thoughtdesk.core.generation.backends.llamacpp import LlamaCppBackend
    from thoughtdesk.core.generation.runs import ModelSpec, RunSpecError
    from thoughtdesk.core.generation.runs.providers import build_backend

    template = "<start_of_turn>user\n{prompt}<end_of_turn>\n<start_of_turn>model\n"
    spec = ModelSpec("llamacpp", str(gguf_model), completion_template=template)
    backend = build_backend(spec)
    assert isinstance(backend, LlamaCppBackend)
    assert (
        backend.prompt_text(Request(model="m", prompt="What is 2+2?"))
        == "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n"
    )
    assert spec.params()["completion_template"] == template  # stored with every CoT
    assert ModelSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec
    plain = ModelSpec("llamacpp", str(gguf_model))
    assert "completion_template" not in plain.params()
    assert plain.backend_id() == f"llamacpp@{gguf_model}#ctx=2048#chat=False"  # old fingerprints kept
    plain_backend = build_backend(plain)
    assert isinstance(plain_backend, LlamaCppBackend)
    assert plain_backend.prompt_text(Request(model="m", prompt="as it is")) == "as it is"
    old_json = {k: v for k, v in plain.to_json().items() if k != "completion_template"}
    assert ModelSpec.from_json(old_json) == plain  # runs stored before the field existed
    with pytest.raises(RunSpecError, match="must contain {prompt}"):
        ModelSpec("llamacpp", str(gguf_model), completion_template="Q: A:")
