"""Two processes changing the model library at once (the app and the command line) lose nothing:
every read-modify-write of models.json holds a lock file beside it. Real child processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.gguf_files import write_tiny_gguf
from thoughtdesk.core.models import ModelRegistry

PROCESSES = 4
EACH = 20
_CHILD = """
import sys
from pathlib import Path
from thoughtdesk.core.models import ModelRegistry
registry = ModelRegistry(Path(sys.argv[1]), Path(sys.argv[2]))
for path in sys.argv[3:]:
    registry.add(path)
"""


def test_processes_adding_at_once_lose_nothing(tmp_path: Path):
    registry = ModelRegistry(tmp_path / "models.json", tmp_path / "models")
    files: list[list[str]] = []
    for process in range(PROCESSES):
        folder = tmp_path / f"p{process}"
        folder.mkdir()
        own = []
        for index in range(EACH):
            path = write_tiny_gguf(folder / f"m{process}-{index}.gguf")
            with open(path, "ab") as handle:  # other bytes: another model, not the same one twice
                handle.write(f"{process}-{index}".encode())
            own.append(str(path))
        files.append(own)
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(registry.file), str(registry.models_dir), *own],
            env={**os.environ},
            stderr=subprocess.PIPE,
            text=True,
        )
        for own in files
    ]
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
    names = sorted(entry.name for entry in registry.entries())
    assert names == sorted(Path(path).stem for own in files for path in own)


def test_a_lock_held_too_long_is_one_line(tmp_path: Path, monkeypatch):
    import filelock
    import pytest

    from thoughtdesk.core.models import registry as registry_module

    registry = ModelRegistry(tmp_path / "models.json", tmp_path / "models")
    registry.add(write_tiny_gguf(tmp_path / "a.gguf"))
    monkeypatch.setattr(registry_module, "LOCK_TIMEOUT", 0.05)
    with filelock.FileLock(tmp_path / "models.json.lock"):  # another process in the middle of a change
        with pytest.raises(registry_module.ModelRegistryError, match="models.json.lock: another ThoughtDesk process"):
            registry.remove("a")
    assert [entry.name for entry in registry.entries()] == ["a"]
