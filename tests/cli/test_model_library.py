"""``thoughtdesk models``: add, list, show, remove with the keys the issue names; one line for bad
input and nothing half-registered; registered names in ``--model llamacpp:NAME``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.helpers.gguf_files import write_tiny_gguf
from tests.helpers.libraries import DEMO
from thoughtdesk.cli.main import main
from thoughtdesk.core.generation.runs import ModelSpec, RunSpecError
from thoughtdesk.core.models import ModelRegistry
from thoughtdesk.core.paths import MODELS_DIR_ENV

KEYS = {
    "name",
    "path",
    "size",
    "sha256",
    "architecture",
    "context_length",
    "quantization",
    "parameter_count",
    "chat_template",
    "thinks",
    "license",
    "status",
    "fit",
    "fit_with_scoring",
    "vocab_size",
}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def models_dir(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "models-folder"
    monkeypatch.setenv(MODELS_DIR_ENV, str(folder))
    return folder


def test_add_list_show_remove_the_test_model(gguf_model: Path, capsys):
    code, out, err = run(capsys, "models", "add", str(gguf_model), "--name", "gemma")
    assert code == 0, err
    assert out.startswith("gemma\tadded\t")
    code, out, _ = run(capsys, "models", "add", str(gguf_model))  # the same file again
    assert "gemma\talready registered" in out
    code, out, _ = run(capsys, "models", "list", "--json")
    listed = json.loads(out)
    [model] = listed["models"]
    assert KEYS <= set(model)
    assert (model["name"], model["architecture"], model["quantization"]) == ("gemma", "gemma3", "Q4_K_M")
    assert model["status"] == "ok" and model["context_length"] == 32768 and model["license"] == "gemma"
    assert model["fit"]["weights_bytes"] == gguf_model.stat().st_size
    assert model["fit"]["verdict"] in {"fits", "tight", "does not fit"}
    code, out, _ = run(capsys, "models", "list")
    assert out.startswith("gemma\tgemma3\tQ4_K_M\t268M\tctx 32768\t0.25 GB\t")
    assert "needs 0.29 GB (weights 0.25 GB + KV cache 0.04 GB at 2,048 tokens)" in out
    code, out, _ = run(capsys, "models", "show", "gemma", "--json", "--n-ctx", "4096")
    shown = json.loads(out)
    assert shown["fit"]["kv_cache_bytes"] == 18 * 512 * 2 * 4096
    # With scoring: the scorer's instance on top (4,096 + 512 positions' logits, a second KV cache).
    assert shown["vocab_size"] == 262_144 and shown["fit"]["scoring_bytes"] is None
    scoring = (4096 + 512) * 262_144 * 4 + 18 * 512 * 2 * 4096
    assert shown["fit_with_scoring"]["scoring_bytes"] == scoring
    assert shown["fit_with_scoring"]["needed_bytes"] == shown["fit"]["needed_bytes"] + scoring
    assert shown["gpu"]["n_gpu_layers"] in (-1, 0) or shown["gpu"]["n_gpu_layers"] > 0
    code, out, _ = run(capsys, "models", "show", "gemma")
    assert "quantization:   Q4_K_M" in out and "use it as:      --model llamacpp:gemma" in out
    scoring_line = next(line for line in out.splitlines() if line.startswith("with scoring:"))
    assert "needs 3.01 GB (weights 0.25 GB + KV cache 0.04 GB at 2,048 tokens + scoring 2.72 GB)" in scoring_line
    gpu_line = next(line for line in out.splitlines() if line.startswith("GPU:"))
    assert gpu_line.endswith(f"(n_gpu_layers {shown['gpu']['n_gpu_layers']})")
    code, out, _ = run(capsys, "models", "remove", "gemma", "--json")
    assert json.loads(out) == {"removed": "gemma", "path": str(gguf_model.resolve())}
    assert gguf_model.exists()
    assert json.loads(run(capsys, "models", "list", "--json")[1])["models"] == []


def test_bad_file_is_one_line_and_registers_nothing(tmp_path: Path, capsys, models_dir: Path):
    folder = tmp_path / "stick"
    folder.mkdir()
    write_tiny_gguf(folder / "a.gguf")
    (folder / "b.gguf").write_bytes(b"<html>not a model</html>")
    code, out, err = run(capsys, "models", "add", str(folder), "--copy")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and str(folder / "b.gguf") in err and "not a GGUF file" in err
    assert ModelRegistry().entries() == []
    assert not models_dir.exists() or not any(models_dir.iterdir())


def test_unknown_names_and_missing_files(tmp_path: Path, capsys):
    code, _, err = run(capsys, "models", "show", "nope")
    assert code == 1 and "no registered model is named 'nope'" in err and err.count("\n") == 1
    path = write_tiny_gguf(tmp_path / "tiny.gguf")
    assert run(capsys, "models", "add", str(path), "--json")[0] == 0
    path.unlink()
    code, out, err = run(capsys, "models", "list")
    assert code == 0 and f"MISSING: {path}" in out
    assert json.loads(run(capsys, "models", "list", "--json")[1])["models"][0]["status"] == "missing"


def test_add_a_folder_copied_with_json(tmp_path: Path, capsys, models_dir: Path):
    folder = tmp_path / "usb"
    (folder / "deep").mkdir(parents=True)
    write_tiny_gguf(folder / "one.gguf")
    write_tiny_gguf(folder / "deep" / "two.gguf", template="<think>")
    code, out, err = run(capsys, "models", "add", str(folder), "--copy", "--json")
    assert code == 0, err
    added = json.loads(out)["models"]
    assert sorted((m["name"], m["outcome"], m["thinks"]) for m in added) == [
        ("one", "added", False),
        ("two", "added", True),
    ]
    assert all(Path(m["path"]).parent == models_dir for m in added)


def test_registered_name_resolves_in_model_options(tmp_path: Path, capsys, library_path: Path):
    path = write_tiny_gguf(tmp_path / "tiny.gguf")
    run(capsys, "models", "add", str(path), "--name", "tiny")
    assert ModelSpec.parse("llamacpp:tiny").model == str(path.resolve())
    assert ModelSpec.parse(f"llamacpp:{path}").model == str(path)  # a path stays a path
    with pytest.raises(RunSpecError, match="llamacpp:nosuch: no registered model is named 'nosuch' and there is no"):
        ModelSpec.parse("llamacpp:nosuch")
    code, out, err = run(
        capsys,
        "--library",
        str(library_path),
        "generate",
        DEMO,
        "--model",
        "llamacpp:tiny",
        "--dataset",
        "gsm8k",
        "--plan-only",
    )
    assert code == 0, err
    assert "llamacpp:tiny.gguf" in out
    code, _, err = run(
        capsys, "--library", str(library_path), "generate", DEMO, "--model", "llamacpp:nosuch", "--plan-only"
    )
    assert code == 1 and "no registered model is named 'nosuch'" in err and "registered: tiny" in err


def test_download_resumes_and_registers(tmp_path: Path, capsys, models_dir: Path):
    from tests.helpers.file_server import Served, file_server

    model = write_tiny_gguf(tmp_path / "tiny.gguf")
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    with file_server() as server:
        server.files["/r/tiny.gguf"] = Served(model, cut_after=200)
        code, out, err = run(capsys, "models", "download", server.url("/r/tiny.gguf"), "--sha256", digest, "--json")
        assert code == 0, err
        assert [r for _, r in server.requests] == [None, "bytes=200-"]
        assert json.loads(out)["name"] == "tiny" and json.loads(out)["sha256"] == digest
        server.files["/r/other.gguf"] = Served(write_tiny_gguf(tmp_path / "o.gguf", template="x"))
        code, out, err = run(capsys, "models", "download", server.url("/r/other.gguf"), "--sha256", "1" * 64)
        assert code == 1 and out == "" and err.count("\n") == 1 and "checksum mismatch" in err
    assert [e.name for e in ModelRegistry().entries()] == ["tiny"]
    code, _, err = run(capsys, "--offline", "models", "download", "https://example.org/m.gguf")
    assert code == 1 and err.count("\n") == 1 and "offline mode is on" in err


def test_the_curated_list_and_names(capsys):
    from thoughtdesk.core.models.catalog import CATALOG

    code, out, err = run(capsys, "models", "download", "--list")
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split("\t")[0] for line in lines[:-1]] == [model.name for model in CATALOG]
    assert "nothing is downloaded until you ask" in lines[-1]
    code, out, _ = run(capsys, "models", "download", "--list", "--json")
    listed = json.loads(out)["models"]
    assert listed[0]["name"] == "digital-socrates-7b" and {"url", "size", "licence", "good_for"} <= set(listed[0])
    code, out, err = run(capsys, "models", "download", "nosuch")
    assert code == 1 and err.count("\n") == 1 and "neither a URL nor a curated model" in err
    code, _, err = run(capsys, "--offline", "models", "download", "qwen3-1.7b")
    assert code == 1 and err.count("\n") == 1 and "the download of model qwen3-1.7b needs the network" in err
    assert ModelRegistry().entries() == []
