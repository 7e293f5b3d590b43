"""The app and a ``thoughtdesk`` command on the same library (issue 23, point 1).

``Library.open`` used to read the file's header and try its writability with Python's
``open()``. On POSIX, closing any descriptor of a file drops every lock the process holds on
it, SQLite's included: after the app opened the library a second time (as it does for every
worker), a command on the same file took itself for the only user, checkpointed and deleted
the write-ahead log the app was still writing to. The app's later commits were lost and its
reads failed with "disk I/O error". Here a process opens the library as the app does, keeps
writing through its first connection while real ``thoughtdesk`` processes run on the same file,
and every commit of it must be there afterwards."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.libraries import DEMO, demo_library
from thoughtdesk.core.importing.importer import export_thoughtsource
from thoughtdesk.core.library.store import Library

#: The commands run beside the app: an import, a listing, and a help text (each opens the library).
COMMANDS = (("import", "{export}", "--collection", "imported"), ("collections",), ("generate", "--help"))


def run_command(library: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "thoughtdesk", "--library", str(library), *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


def write_marks(lib: Library, first: int, count: int) -> int:
    """Commit ``count`` collections named mark-N (one transaction each), as the app's edits do."""
    for number in range(first, first + count):
        with lib.transaction() as conn:
            conn.execute("INSERT INTO collection (name, created, source) VALUES (?, '', '')", (f"mark-{number}",))
    return first + count


def marks(lib: Library) -> int:
    return lib.conn.execute("SELECT count(*) FROM collection WHERE name LIKE 'mark-%'").fetchone()[0]


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return demo_library(tmp_path / "ward.thoughtdesk")


@pytest.fixture
def export(library: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy.json"
    with Library.open(library) as lib:
        export_thoughtsource(lib, DEMO, target)
    return target


def test_a_command_beside_the_app_loses_none_of_its_commits(library, export):
    app = Library.open(library)  # the window's connection
    worker = Library.open(library)  # a worker's, opened while the window's is held
    written = write_marks(app, 0, 3)
    try:
        for command in COMMANDS:
            result = run_command(library, *(part.format(export=export) for part in command))
            assert result.returncode == 0, result.stderr
            written = write_marks(app, written, 3)  # the app goes on writing after the command ended
            worker.close()
            worker = Library.open(library)  # the next worker, as the app opens them
            assert marks(worker) == written  # another connection sees every commit
        assert marks(app) == written
    finally:
        worker.close()
        app.close()
    with Library.open(library) as again:
        assert marks(again) == written
        assert "imported" in {c.name for c in again.collections()}
        assert again.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_command_while_the_app_writes_keeps_every_commit(library, export):
    """The app commits while the import runs, not only between commands."""
    app = Library.open(library)
    worker = Library.open(library)
    child = subprocess.Popen(
        [sys.executable, "-m", "thoughtdesk", "--library", str(library), "import", str(export), "--collection", "x"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    written = 0
    try:
        while child.poll() is None:
            written = write_marks(app, written, 1)
        _, stderr = child.communicate(timeout=180)
        assert child.returncode == 0, stderr
        written = write_marks(app, written, 3)
        assert marks(worker) == written
    finally:
        if child.poll() is None:
            child.kill()
        worker.close()
        app.close()
    with Library.open(library) as again:
        assert marks(again) == written
        assert again.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.parametrize("suffix", ["", "-wal"])
def test_importing_the_library_into_itself_is_refused_unread(library, suffix):
    """Reading the library (or its write-ahead log) as an import file, with the library open in
    the same process, would drop that process's SQLite locks: refused by name and stat first."""
    with Library.open(library):  # keeps a -wal beside it while the command runs
        result = run_command(library, "import", f"{library}{suffix}", "--collection", "again")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "cannot be imported into itself (it was not read)" in message
    assert ("is the open library" if not suffix else "is part of the open library") in message
