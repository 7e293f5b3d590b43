"""Applying migrations: ``run_script`` (what every migration writes its SQL with) and the runner
that applies a list of them, each once, in order, in its own transaction, recorded in the
``_migrations`` table. The list itself is ``MIGRATIONS`` in the package's ``__init__.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from thoughtdesk.core.library.timestamps import now_iso

Migration = Callable[[sqlite3.Connection], None]


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Execute several statements inside the caller's transaction.

    ``Connection.executescript`` would COMMIT the open transaction first, which would make a
    failed migration leave half a schema behind.
    """
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""
    if statement.strip():
        conn.execute(statement)


def pending(conn: sqlite3.Connection, migrations: Sequence[tuple[str, Migration]]) -> list[str]:
    """The names of the ``migrations`` a library lacks (read only: nothing is written)."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")} if "_migrations" in tables else set()
    return [name for name, _ in migrations if name not in done]


def apply(conn: sqlite3.Connection, migrations: Sequence[tuple[str, Migration]]) -> list[str]:
    """Apply the ``migrations`` the file lacks, each in its own transaction; return their names."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied TEXT NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied: list[str] = []
    for index, (name, fn) in enumerate(migrations, start=1):
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            fn(conn)
            conn.execute("INSERT INTO _migrations (name, applied) VALUES (?, ?)", (name, now_iso()))
            # The number of migrations the file now has, not this one's place: numbers are given
            # out to branches ahead of time (m019 merged before m017 and m018), so a library can
            # get an earlier migration after a later one, and must still read as complete.
            conn.execute(f"PRAGMA user_version = {max(index, len(done) + len(applied) + 1)}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied
