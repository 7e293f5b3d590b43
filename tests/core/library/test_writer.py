"""The bulk writer's insert: columns empty in every row are written as NULL, the same rows stored."""

from __future__ import annotations

import sqlite3

import pytest

from thoughtdesk.core.library.writer import insert_rows


@pytest.fixture
def conn(tmp_path):
    connection = sqlite3.connect(tmp_path / "t.sqlite")
    connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a, b TEXT DEFAULT 'dflt', c TEXT NOT NULL)")
    yield connection
    connection.close()


@pytest.mark.parametrize(
    "rows",
    [
        [(1, None, None, "x"), (2, None, None, "y")],  # a and b empty throughout: literal NULLs
        [(1, "p", None, "x"), (2, None, "q", "y")],  # empty only in some rows: bound as they are
        [(1, None, None, "x")],
        [(1, 0, "", "x"), (2, 0.0, "", "y")],  # falsy values are not empty
    ],
    ids=["empty-columns", "mixed", "one-row", "falsy"],
)
def test_rows_are_stored_exactly_as_bound(conn, rows):
    insert_rows(conn, "t", ("id", "a", "b", "c"), rows)
    assert conn.execute("SELECT id, a, b, c FROM t ORDER BY id").fetchall() == rows  # NULL, not b's default


def test_a_not_null_column_empty_in_every_row_still_fails(conn):
    with pytest.raises(sqlite3.IntegrityError, match="NOT NULL"):
        insert_rows(conn, "t", ("id", "a", "b", "c"), [(1, "p", "q", None), (2, "p", "q", None)])
    insert_rows(conn, "t", ("id", "a", "b", "c"), [])  # nothing to write: nothing done
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)
