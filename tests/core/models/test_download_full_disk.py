"""A disk that fills during a download (a real one: a 4 MiB tmpfs in a child's own mount
namespace, tests/helpers/full_disk.py): one line, nothing registered, the partial download kept
for a resume, or removed when the user chose --remove-partial."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from tests.helpers.file_server import Served, file_server
from tests.helpers.full_disk import run_on_a_small_disk
from thoughtdesk.core.models import ModelRegistry


@pytest.mark.parametrize("remove", [False, True], ids=["kept", "removed"])
def test_a_full_disk_is_one_line_and_registers_nothing(tmp_path: Path, gguf_model: Path, remove: bool):
    small = tmp_path / "small"
    with file_server() as server:
        server.files["/gemma.gguf"] = Served(gguf_model)
        argv = [sys.executable, "-m", "thoughtdesk", "models", "download", server.url("/gemma.gguf"), "--name", "g"]
        command = " ".join(shlex.quote(part) for part in argv + (["--remove-partial"] if remove else []))
        listing = f"ls -l {shlex.quote(str(small))}"
        result = run_on_a_small_disk(
            small, "4m", ["sh", "-c", f"{command}; echo exit=$?; {listing}"], env={"THOUGHTDESK_MODELS_DIR": str(small)}
        )
    lines = result.stdout.splitlines()
    assert lines[0] == "exit=1", result.stdout + result.stderr
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message, message
    assert f"the disk is full ({small}): free some space; nothing was registered" in message
    parts = [line.split() for line in lines[1:] if line.endswith("gguf.part")]
    if remove:
        assert "bytes downloaded were removed" in message and parts == []
    else:
        assert f"are kept in {small}/gemma.gguf.part: download it again to resume, or delete that file" in message
        assert len(parts) == 1 and 0 < int(parts[0][4]) <= 4 << 20  # the bytes that fitted, kept
    assert ModelRegistry().entries() == []  # the registry (in the data folder) is untouched
