"""The library file in bad states (issue 15, points 9 and 10): read-only (its file, or its
folder), damaged pages, a full disk. Each ends in a one-line message naming the library and what
to do, never an SQLite traceback; a read-only library opens read-only, for reading, searching,
evaluating and exporting; nothing stored is lost."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.cli import CliResult, run_cli
from tests.helpers.full_disk import run_on_a_small_disk
from tests.helpers.libraries import DEMO, demo_library
from tests.helpers.paths import FIXTURES
from thoughtdesk.core.errors import LibraryError
from thoughtdesk.core.evaluation.evaluate import evaluate
from thoughtdesk.core.importing.importer import export_thoughtsource
from thoughtdesk.core.library.file_faults import LibraryReadOnlyError
from thoughtdesk.core.library.queries import SampleFilter, sample_keys
from thoughtdesk.core.library.store import Library


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make ``path`` (a file or a folder) unwritable even for root: chattr +i where the process
    may (root), else permission bits (which bind everyone else)."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode != 0:
            pytest.skip("running as root without chattr +i: cannot make a file read-only here")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)


def _cli(*args: str | Path) -> CliResult:
    return run_cli(*args)


@pytest.fixture
def library(tmp_path) -> Path:
    folder = tmp_path / "shared-drive"
    folder.mkdir()
    return demo_library(folder / "ward.thoughtdesk")


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_read_only_library_opens_for_reading_and_refuses_writes_clearly(library, tmp_path, what):
    before = library.read_bytes()
    target = library if what == "file" else library.parent
    with read_only(target):
        with Library.open(library) as lib:
            assert lib.read_only
            cid = lib.require_collection(DEMO)
            assert len(list(sample_keys(lib, SampleFilter(collection_id=cid, search="patient")))) > 0
            assert evaluate(lib, DEMO, comparisons=False).rows
            out = tmp_path / "export.json"
            assert export_thoughtsource(lib, DEMO, out) == 16 and json.loads(out.read_text())
            with pytest.raises(LibraryReadOnlyError, match=r"ward.thoughtdesk is open read-only .* copy the library"):
                with lib.transaction() as conn:
                    conn.execute("DELETE FROM sample")
        result = _cli("--library", library, "collections", "--json")
        assert result.returncode == 0, result.stderr
        assert [c["name"] for c in json.loads(result.stdout)] == [DEMO]
        result = _cli("--library", library, "import", tmp_path / "export.json", "--collection", "copy")
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert "read-only" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert library.read_bytes() == before
    assert not any(p.name.endswith(("-wal", "-shm")) for p in library.parent.iterdir()) or what == "file"


def test_a_damaged_library_is_named_with_what_to_do(library):
    with Library.open(library) as lib:
        page_size = lib.conn.execute("PRAGMA page_size").fetchone()[0]
        pages = lib.conn.execute("PRAGMA page_count").fetchone()[0]
    assert pages > 4
    with open(library, "r+b") as handle:  # scribble over the pages after the schema
        handle.seek(2 * page_size)
        handle.write(b"\xde\xad\xbe\xef" * (page_size * (pages - 2) // 4))
    result = _cli("--library", library, "stats", DEMO)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "ward.thoughtdesk" in message and "damaged" in message and "backup" in message


def test_a_full_disk_is_told_as_such_and_nothing_half_written(library, tmp_path):
    """SQLite's max_page_count stands in for a full disk: it answers SQLITE_FULL the same way.
    The real error used to be hidden behind "cannot rollback - no transaction is active"."""
    with Library.open(library) as lib:
        pages = lib.conn.execute("PRAGMA page_count").fetchone()[0]
        count = lib.conn.execute("SELECT count(*) FROM sample").fetchone()[0]
        lib.conn.execute(f"PRAGMA max_page_count = {pages + 2}")
        with pytest.raises(LibraryError, match=r"the disk holding the library .*ward.thoughtdesk is full"):
            with lib.transaction() as conn:
                for i in range(2000):
                    conn.execute(
                        "INSERT INTO collection (name, source, created) VALUES (?, '', '')", (f"c{i}" + "x" * 500,)
                    )
        assert lib.conn.execute("SELECT count(*) FROM sample").fetchone()[0] == count
        assert lib.collections()[0].name == DEMO and len(lib.collections()) == 1


def test_other_sqlite_errors_are_left_to_the_caller(library):
    with Library.open(library) as lib:
        with pytest.raises(sqlite3.IntegrityError):
            with lib.transaction() as conn:
                conn.execute("INSERT INTO sample (id) VALUES (NULL)")


def test_a_library_on_a_full_disk_says_the_disk_is_full_not_disk_io_error(library, tmp_path):
    """Issue 23, point 13: on a real full disk (a tmpfs just larger than the library, in a private
    mount namespace) opening the library said "cannot be opened: disk I/O error" and an import
    "could not be read or written (SQLite: disk I/O error)": SQLite reports the shared-memory
    file and write-ahead log it cannot grow as I/O errors, not SQLITE_FULL."""
    small = tmp_path / "small"
    on_small = small / library.name
    edge = FIXTURES / "thoughtsource" / "edge_cases.json"
    commands = [
        [sys.executable, "-m", "thoughtdesk", "--library", str(on_small), "collections"],
        [sys.executable, "-m", "thoughtdesk", "--library", str(on_small), "import", str(edge), "--collection", "e"],
    ]
    script = "; ".join(" ".join(shlex.quote(part) for part in command) + "; echo exit=$?" for command in commands)
    size = f"{library.stat().st_size // 1024 + 8}k"
    result = run_on_a_small_disk(small, size, ["sh", "-c", script], prepare=f"cp {shlex.quote(str(library))} {small}/")
    assert result.stdout.split() == ["exit=1", "exit=1"], result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in result.stderr
    for line in lines:
        assert f"the disk holding the library {on_small} is full" in line and "free some space" in line, line
        assert "disk I/O error" not in line
