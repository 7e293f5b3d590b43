"""The window and a ``thoughtdesk`` command on the same library (issue 23, point 1): the app's
workers opened the library again with ``Library.open``, which read the file with Python's
``open()`` and so dropped the window's SQLite locks; a command run meanwhile then deleted the
write-ahead log the window still wrote to. The window's later writes were lost ("done 12/12",
2/12 stored after a restart) and its reads failed with "disk I/O error"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.libraries import DEMO, demo_library
from tests.helpers.window import close_window
from thoughtdesk.core.library.store import Library


def run_command(library: Path, *args: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "thoughtdesk", "--library", str(library), *args],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr


def test_the_windows_writes_survive_a_command_on_its_library(make_window, qtbot, tmp_path):
    library = demo_library(tmp_path / "ward.thoughtdesk")
    window = make_window(library)
    export = tmp_path / "copy.json"
    task = window.importing.export_collection(DEMO, export)  # a worker opens the library again
    assert task is not None
    qtbot.waitUntil(lambda: task.done, timeout=30000)
    assert export.exists()
    names: list[str] = []
    for number, command in enumerate((("collections",), ("import", str(export), "--collection", "copy"))):
        run_command(library, *command)
        name = f"written by the window {number}"
        with window.library.transaction() as conn:  # the window's own connection, after the command
            conn.execute("INSERT INTO collection (name, created, source) VALUES (?, '', '')", (name,))
        names.append(name)
        assert {c.name for c in window.library.collections()} >= set(names)
    close_window(window)
    with Library.open(library) as again:  # as after a restart
        assert {c.name for c in again.collections()} == {DEMO, "copy", *names}
        assert again.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_importing_the_open_library_is_refused_unread(make_window, tmp_path):
    """File ▸ Import of the library itself would read it with Python I/O (to tell what it holds),
    dropping the window's SQLite locks: refused by name first."""
    from tests.helpers.window import last_message

    library = demo_library(tmp_path / "ward.thoughtdesk")
    window = make_window(library)
    window.importing.import_path(library)
    text = last_message(window).text()
    assert "ward.thoughtdesk is the open library" in text and "cannot be imported into itself" in text
