"""The model registry: add a file or a folder (in place or copied), one entry per file, missing
files shown as missing, all or nothing on bad input, and listing without opening model files."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.helpers.gguf_files import write_tiny_gguf
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.models import GgufError, ModelRegistry, ModelRegistryError, resolve_model_name
from thoughtdesk.core.models import gguf as gguf_module
from thoughtdesk.core.models.registry import ModelEntry, sha256_of


@pytest.fixture
def registry(tmp_path: Path) -> ModelRegistry:
    return ModelRegistry(tmp_path / "data" / "models.json", tmp_path / "models")


def test_add_the_test_model_records_header_and_checksum(registry: ModelRegistry, gguf_model: Path):
    seen: list[tuple[int, int]] = []
    [result] = registry.add(gguf_model, progress=lambda done, total, _path: seen.append((done, total)))
    entry = result.entry
    assert result.outcome == "added"
    assert entry.name == gguf_model.stem and entry.path == str(gguf_model.resolve())
    assert entry.size == gguf_model.stat().st_size
    assert entry.sha256 == sha256_of(gguf_model)
    assert (entry.architecture, entry.quantization, entry.context_length) == ("gemma3", "Q4_K_M", 32768)
    assert seen[-1] == (entry.size, entry.size)
    stored = json.loads(registry.file.read_text())["models"][0]
    for key in (
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
    ):
        assert key in stored
    # The same file again is the same entry, not hashed again.
    [again] = registry.add(gguf_model, name=None)
    assert again.outcome == "known" and len(registry.entries()) == 1


def test_add_a_folder_in_place_and_the_same_bytes_elsewhere(registry: ModelRegistry, tmp_path: Path):
    stick = tmp_path / "stick"
    (stick / "sub").mkdir(parents=True)
    write_tiny_gguf(stick / "a.gguf")
    write_tiny_gguf(stick / "sub" / "b.gguf", template="<think>")
    (stick / "notes.txt").write_text("not a model")
    results = registry.add(stick)
    assert [r.entry.name for r in results] == ["a", "b"]
    # b.gguf has other bytes than a.gguf; a copy of a.gguf elsewhere is the same model: one entry.
    shutil.copy(stick / "a.gguf", tmp_path / "a-copy.gguf")
    [same] = registry.add(tmp_path / "a-copy.gguf")
    assert same.outcome == "known" and same.entry.name == "a"
    assert [e.name for e in registry.entries()] == ["a", "b"]


def test_moved_file_is_missing_then_found_again(registry: ModelRegistry, tmp_path: Path):
    path = write_tiny_gguf(tmp_path / "m.gguf")
    registry.add(path, name="mine")
    assert registry.get("mine").status() == "ok"
    moved = tmp_path / "elsewhere" / "m.gguf"
    moved.parent.mkdir()
    path.rename(moved)
    assert registry.get("mine").status() == "missing"  # shown, never a crash
    [result] = registry.add(moved)
    assert result.outcome == "moved" and result.entry.name == "mine"
    assert registry.get("mine").path == str(moved.resolve()) and registry.get("mine").status() == "ok"


def test_copy_into_the_models_folder(registry: ModelRegistry, tmp_path: Path):
    (tmp_path / "usb").mkdir()
    source = write_tiny_gguf(tmp_path / "usb" / "m.gguf")
    [result] = registry.add(source, copy=True)
    copy = registry.models_dir / "m.gguf"
    assert result.entry.path == str(copy) and result.entry.copied
    assert copy.read_bytes() == source.read_bytes()
    assert not list(registry.models_dir.glob("*.part"))
    [again] = registry.add(source, copy=True)  # already there: not copied a second time
    assert again.outcome == "known"
    assert sorted(p.name for p in registry.models_dir.iterdir()) == ["m.gguf"]


def test_one_bad_file_registers_nothing(registry: ModelRegistry, tmp_path: Path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    write_tiny_gguf(folder / "good.gguf")
    (folder / "zbad.gguf").write_bytes(b"GGUF\x03\x00\x00\x00")
    with pytest.raises(GgufError) as caught:
        registry.add(folder, copy=True)
    assert "zbad.gguf" in str(caught.value) and "truncated" in str(caught.value)
    assert registry.entries() == [] and not registry.file.exists()
    assert not registry.models_dir.exists() or not list(registry.models_dir.iterdir())


def test_names_taken_invalid_unknown_and_removed(registry: ModelRegistry, tmp_path: Path):
    registry.add(write_tiny_gguf(tmp_path / "a.gguf"), name="tiny")
    other = tmp_path / "b.gguf"
    write_tiny_gguf(other, template="x")
    with pytest.raises(ModelRegistryError, match="'tiny' is taken"):
        registry.add(other, name="tiny")
    with pytest.raises(ModelRegistryError, match="cannot be a model's name"):
        registry.add(other, name="a/b")
    with pytest.raises(ModelRegistryError, match="no registered model is named 'nope'; registered: tiny"):
        registry.get("nope")
    [result] = registry.add(tmp_path / "b.gguf")
    assert result.entry.name == "b"
    assert registry.remove("tiny").name == "tiny"
    assert [e.name for e in registry.entries()] == ["b"]
    assert (tmp_path / "a.gguf").exists()  # removing unregisters; the file stays
    assert resolve_model_name("b", registry) == str(other.resolve())
    assert resolve_model_name("tiny", registry) is None


def test_default_names_are_made_unique(registry: ModelRegistry, tmp_path: Path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    registry.add(write_tiny_gguf(tmp_path / "x" / "m.gguf"))
    [second] = registry.add(write_tiny_gguf(tmp_path / "y" / "m.gguf", template="t"))
    assert second.entry.name == "m-2"


def test_empty_folder_missing_path_and_damaged_registry(registry: ModelRegistry, tmp_path: Path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelRegistryError, match="no .gguf files"):
        registry.add(tmp_path / "empty")
    with pytest.raises(ModelRegistryError, match="no such file or folder"):
        registry.add(tmp_path / "nothing.gguf")
    registry.file.parent.mkdir(parents=True)
    registry.file.write_text("{not json")
    with pytest.raises(DataFileError, match="models.json: the model registry cannot be read"):
        registry.entries()


def test_listing_50_models_reads_no_model_file(registry: ModelRegistry, tmp_path: Path, monkeypatch):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(50):
        write_tiny_gguf(folder / f"m{i:02}.gguf", template=str(i))  # 50 different files
    registry.add(folder)

    def no_reading(*_args, **_kwargs):
        raise AssertionError("a model file was read while listing")

    monkeypatch.setattr(gguf_module, "read_header", no_reading)
    start = time.perf_counter()
    entries = registry.entries()
    statuses = [entry.status() for entry in entries]
    elapsed = time.perf_counter() - start
    assert len(entries) == 50 and set(statuses) == {"ok"}
    assert elapsed < 0.1, elapsed


def test_the_same_file_with_its_own_name_again_is_no_error(registry: ModelRegistry, tmp_path: Path):
    path = write_tiny_gguf(tmp_path / "m.gguf")
    registry.add(path, name="mine")
    [again] = registry.add(path, name="mine")
    assert again.outcome == "known" and [e.name for e in registry.entries()] == ["mine"]


def test_a_cancel_from_the_progress_callback_leaves_nothing(registry: ModelRegistry, tmp_path: Path):
    from thoughtdesk.core.errors import Cancelled

    folder = tmp_path / "two"
    folder.mkdir()
    write_tiny_gguf(folder / "a.gguf")
    write_tiny_gguf(folder / "b.gguf", template="t")
    seen: list[Path] = []

    def progress(_done: int, _total: int, path: Path) -> None:
        seen.append(path)
        if path.name == "b.gguf":
            raise Cancelled("adding models")

    with pytest.raises(Cancelled):
        registry.add(folder, copy=True, progress=progress)
    assert registry.entries() == [] and not list(registry.models_dir.iterdir())  # a.gguf's copy removed


def test_split_models_are_added_by_their_first_part(registry: ModelRegistry, tmp_path: Path):
    folder = tmp_path / "split"
    folder.mkdir()
    write_tiny_gguf(folder / "big-00001-of-00002.gguf")
    write_tiny_gguf(folder / "big-00002-of-00002.gguf", template="x")
    [result] = registry.add(folder)
    assert result.entry.name == "big-00001-of-00002"
    with pytest.raises(
        ModelRegistryError, match=r"part 2 of 2 of a split model; add its first part \(big-00001-of-00002"
    ):
        registry.add(folder / "big-00002-of-00002.gguf")


def test_changes_made_by_another_process_while_hashing_are_kept(registry: ModelRegistry, tmp_path: Path):
    """`models add` of a big file takes minutes; a remove or an add in the dialog meanwhile is kept."""
    registry.add(write_tiny_gguf(tmp_path / "old.gguf"), name="old")
    other_process = ModelRegistry(registry.file, registry.models_dir)
    (tmp_path / "b").mkdir()
    elsewhere = write_tiny_gguf(tmp_path / "b" / "new.gguf", template="meanwhile")
    changed: list[bool] = []

    def meanwhile(_done: int, _total: int, _path: Path) -> None:
        if not changed:
            changed.append(True)
            other_process.remove("old")
            other_process.add(elsewhere)  # takes the name "new" first

    [result] = registry.add(write_tiny_gguf(tmp_path / "new.gguf", template="mine"), progress=meanwhile)
    assert result.entry.name == "new-2"
    assert [e.name for e in registry.entries()] == ["new", "new-2"]


def test_vocab_size_recorded_and_older_entries_load_without_it(registry: ModelRegistry, tmp_path: Path):
    [result] = registry.add(write_tiny_gguf(tmp_path / "tiny.gguf"))
    assert result.entry.vocab_size == 2000
    record = result.entry.to_json()
    assert record["vocab_size"] == 2000
    del record["vocab_size"]  # a models.json written before the key existed
    assert ModelEntry.from_json(record).vocab_size is None
    assert ModelEntry.from_json({**record, "a_later_key": 1}) == ModelEntry.from_json(record)
