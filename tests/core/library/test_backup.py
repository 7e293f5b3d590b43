"""Backups of a library: the online copy and the automatic copy before an upgrade (issue 16, point 12)."""

from __future__ import annotations

import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.full_disk import run_on_a_small_disk
from tests.helpers.libraries import demo_library
from thoughtdesk.core.errors import LibraryError
from thoughtdesk.core.library import migrations
from thoughtdesk.core.library.backup import KEEP_UPGRADE_BACKUPS, backup_connection
from thoughtdesk.core.library.store import Library


def test_an_upgrade_copies_the_library_first_and_keeps_the_last_few(tmp_path, monkeypatch):
    path = tmp_path / "ward.thoughtdesk"
    with Library.open(path) as lib:
        assert lib.upgrade_backup is None  # a new library has nothing to keep
        lib.create_collection("before the upgrade")
    with Library.open(path) as lib:
        assert lib.upgrade_backup is None  # nothing pending: no copy
    seen = []
    for round_ in range(KEEP_UPGRADE_BACKUPS + 1):
        name = f"m9{round_:02d}_test"
        monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, (name, lambda conn: None)])
        with Library.open(path) as lib:
            assert lib.upgrade_backup is not None
            seen.append(lib.upgrade_backup)
        copy = sqlite3.connect(seen[-1])  # read as it is: opening it as a library would upgrade it too
        try:
            assert copy.execute("SELECT name FROM collection").fetchall() == [("before the upgrade",)]
            assert name not in {row[0] for row in copy.execute("SELECT name FROM _migrations")}
        finally:
            copy.close()
    kept = sorted((tmp_path / "backups").glob("ward-before-upgrade-*.thoughtdesk"))
    assert len(kept) == KEEP_UPGRADE_BACKUPS and seen[0] not in kept


def test_backup_refuses_the_library_itself_and_leaves_no_part_file(tmp_path):
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib:
        with pytest.raises(LibraryError, match="is the library itself"):
            backup_connection(lib.conn, path, path)
        done = []
        target = backup_connection(
            lib.conn, path, tmp_path / "sub" / "copy.thoughtdesk", progress=lambda d, t: done.append((d, t))
        )
    assert target.is_file() and done and done[-1][0] == done[-1][1]
    assert not list(tmp_path.rglob("*.part"))


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "thoughtdesk", *map(str, args)], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("name", ["ward.thoughtdesk.part", "ward.thoughtdesk.part-journal"])
def test_a_backup_never_writes_over_or_removes_the_library(tmp_path, name):
    """Issue 23, point 4: ``--library X.part backup X`` wrote the backup into the library itself
    (its part file) and, renaming it, deleted the library from its path."""
    library = demo_library(tmp_path / name)
    target = tmp_path / name.split(".part")[0]
    before = {c.name for c in Library.open(library).collections()}
    result = _cli("--library", library, "backup", target)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1
    assert name in message and "the library itself" in message and "name a new file" in message
    assert library.exists() and not target.exists()
    with Library.open(library) as lib:
        assert {c.name for c in lib.collections()} == before


def test_a_backup_onto_the_librarys_log_is_refused(tmp_path):
    library = demo_library(tmp_path / "ward.thoughtdesk")
    with Library.open(library) as lib:
        lib.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        for suffix in ("-wal", "-shm"):
            with pytest.raises(LibraryError, match=f"is the library's {suffix[1:]} file"):
                backup_connection(lib.conn, library, library.with_name(library.name + suffix))
        assert lib.collections()


@pytest.mark.parametrize("room", ["none", "the file only"])
def test_a_backup_on_a_full_disk_says_so_and_leaves_nothing(tmp_path, room):
    """Issue 23, point 4: a backup that failed on a full disk left files SQLite writes beside
    its part file behind (``.part-wal`` and ``.part-shm`` here; a ``.part-journal`` in the
    issue) and said "disk I/O error" or only "database or disk is full". A real full disk: a
    tmpfs of 64 KiB, or just larger than the library (the copy fits, turning it into one
    self-contained file does not)."""
    library = demo_library(tmp_path / "ward.thoughtdesk")
    size = "64k" if room == "none" else f"{library.stat().st_size // 1024 + 8}k"
    small = tmp_path / "small"
    command = " ".join(
        shlex.quote(part)
        for part in (sys.executable, "-m", "thoughtdesk", "--library", str(library), "backup", str(small / "copy"))
    )
    result = run_on_a_small_disk(small, size, ["sh", "-c", f"{command}; echo exit=$?; ls -A {shlex.quote(str(small))}"])
    lines = result.stdout.split()
    assert lines[0] == "exit=1", result.stdout + result.stderr
    assert lines[1:] == []  # nothing left on the small disk: no copy, no part file, no journal
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert "is full" in message and "Free some space" in message
