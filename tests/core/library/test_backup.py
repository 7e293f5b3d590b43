"""Backups of a library: the online copy and the automatic copy before an upgrade (issue 16, point 12)."""

from __future__ import annotations

import sqlite3

import pytest

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
