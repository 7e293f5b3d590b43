"""Model downloads from a real HTTP server on 127.0.0.1: a cut first transfer resumed with Range,
checksums checked before anything is registered, web pages and offline mode refused."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.helpers.file_server import Served, file_server
from tests.helpers.gguf_files import write_tiny_gguf
from thoughtdesk.core.errors import Cancelled
from thoughtdesk.core.models import ModelRegistry
from thoughtdesk.core.models.download import ModelDownloadError, download_model, file_name_for
from thoughtdesk.core.settings.network import OfflineError, set_offline


@pytest.fixture
def registry(tmp_path: Path) -> ModelRegistry:
    return ModelRegistry(tmp_path / "models.json", tmp_path / "models")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_test_model_survives_a_cut_connection(gguf_model: Path, registry: ModelRegistry):
    size = gguf_model.stat().st_size
    seen: list[tuple[int, int | None]] = []
    with file_server() as server:
        server.files["/m/gemma.gguf"] = Served(gguf_model, cut_after=size // 3)
        entry = download_model(
            server.url("/m/gemma.gguf"),
            name="gemma",
            sha256=_sha(gguf_model),
            registry=registry,
            progress=lambda done, total: seen.append((done, total)),
        )
    assert server.requests == [("/m/gemma.gguf", None), ("/m/gemma.gguf", f"bytes={size // 3}-")]
    assert entry.name == "gemma" and entry.quantization == "Q4_K_M" and entry.size == size
    assert Path(entry.path) == registry.models_dir / "gemma.gguf"
    assert not list(registry.models_dir.glob("*.part"))
    assert seen[-1] == (size, size) and all(b[0] >= a[0] for a, b in zip(seen, seen[1:], strict=False))
    assert [e.name for e in registry.entries()] == ["gemma"]


def test_a_wrong_checksum_registers_nothing(tmp_path: Path, registry: ModelRegistry):
    model = write_tiny_gguf(tmp_path / "tiny.gguf")
    with file_server() as server:
        server.files["/tiny.gguf"] = Served(model)
        with pytest.raises(ModelDownloadError, match="checksum mismatch .* nothing was registered"):
            download_model(server.url("/tiny.gguf"), sha256="0" * 64, registry=registry)
    assert registry.entries() == [] and not list(registry.models_dir.iterdir())


def test_web_pages_and_non_models_are_refused(tmp_path: Path, registry: ModelRegistry):
    with file_server() as server:
        server.files["/blob/x.gguf"] = Served(body=b"<!doctype html><p>log in</p>", content_type="text/html")
        server.files["/plain.gguf"] = Served(body=b"Not Found, sorry" * 10, content_type="application/octet-stream")
        with pytest.raises(ModelDownloadError, match=r"answered with a web page \(text/html\).*/resolve/"):
            download_model(server.url("/blob/x.gguf"), registry=registry)
        with pytest.raises(ModelDownloadError, match="is not a GGUF model"):
            download_model(server.url("/plain.gguf"), registry=registry)
        with pytest.raises(ModelDownloadError, match="HTTP 404"):
            download_model(server.url("/missing.gguf"), registry=registry)
    assert registry.entries() == [] and not list(registry.models_dir.iterdir())


def test_a_resume_later_and_a_cancel_keep_the_part_file(tmp_path: Path, registry: ModelRegistry):
    model = write_tiny_gguf(tmp_path / "tiny.gguf")
    size = model.stat().st_size
    with file_server() as server:
        server.files["/tiny.gguf"] = Served(model)
        with pytest.raises(Cancelled):
            download_model(server.url("/tiny.gguf"), registry=registry, cancel=lambda: True)
        part = registry.models_dir / "tiny.gguf.part"
        part.write_bytes(model.read_bytes()[:100])  # what an earlier, interrupted run left
        entry = download_model(server.url("/tiny.gguf"), registry=registry, sha256=_sha(model))
        assert server.requests[-1] == ("/tiny.gguf", "bytes=100-")
        assert entry.size == size and not part.exists()
        # Downloading the same model again registers it once.
        again = download_model(server.url("/tiny.gguf"), registry=registry)
        assert again.name == entry.name and len(registry.entries()) == 1


def test_offline_mode_refuses_before_any_connection(registry: ModelRegistry):
    set_offline(True)
    try:
        with pytest.raises(OfflineError, match="offline mode is on: the download of model m needs the network"):
            download_model("https://huggingface.co/x/y/resolve/main/m.gguf", name="m", registry=registry)
    finally:
        set_offline(False)
    assert registry.entries() == []


def test_file_names_from_urls():
    assert file_name_for("https://huggingface.co/a/b/resolve/main/Qwen3-1.7B-Q4_K_M.gguf?download=true") == (
        "Qwen3-1.7B-Q4_K_M.gguf"
    )
    assert file_name_for("https://example.org/get?id=3", "mine") == "mine.gguf"
    assert file_name_for("https://example.org/../..%2F.gguf") == "_.gguf"  # never a path out of the folder
