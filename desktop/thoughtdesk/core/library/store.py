"""The library file: one SQLite database holding collections of ThoughtSource samples.

One :class:`Library` is one connection; a worker thread opens its own ``Library`` on the same
file (WAL mode lets the GUI read while a worker writes). Writes go through :meth:`transaction`,
so an import that fails or is cancelled leaves the file exactly as it was.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from thoughtdesk.core.errors import LibraryError
from thoughtdesk.core.library import migrations
from thoughtdesk.core.library.records import CollectionInfo, SplitStats
from thoughtdesk.core.library.timestamps import now_iso

SQLITE_MAGIC = b"SQLite format 3\x00"


def _check_before_opening(path: Path) -> None:
    """Refuse files that are not ThoughtDesk libraries, or are too new, without writing to them."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as handle:
        header = handle.read(len(SQLITE_MAGIC))
    if header != SQLITE_MAGIC:
        raise LibraryError(
            f"{path} is not a ThoughtDesk library (it is not an SQLite database); "
            "it was left untouched. Choose another file or create a new library."
        )
    try:
        probe = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise LibraryError(f"{path} cannot be opened: {error}; it was left untouched.") from None
    try:
        version = probe.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in probe.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        applied: set[str] = set()
        if "_migrations" in tables:
            applied = {row[0] for row in probe.execute("SELECT name FROM _migrations")}
    except sqlite3.DatabaseError as error:
        raise LibraryError(f"{path} is not a readable SQLite database ({error}); it was left untouched.") from None
    finally:
        probe.close()
    known = {name for name, _ in migrations.MIGRATIONS}
    if version > migrations.current_version() or applied - known:
        raise LibraryError(
            f"{path} was written by a newer ThoughtDesk (schema version {version}; this version "
            f"reads up to {migrations.current_version()}); it was left untouched. "
            "Update ThoughtDesk to open it."
        )
    if tables and "_migrations" not in tables:
        raise LibraryError(f"{path} is an SQLite database but not a ThoughtDesk library; it was left untouched.")


def inserted_id(cursor: sqlite3.Cursor) -> int:
    """The rowid the INSERT just run on ``cursor`` gave its row."""
    rowid = cursor.lastrowid
    if rowid is None:  # sqlite3 sets it after every INSERT; this narrows the type
        raise LibraryError("the row was not inserted")
    return rowid


class Library:
    """An open library file. Create with :meth:`open`."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

    @classmethod
    def open(cls, path: str | Path, *, create: bool = True) -> Library:
        """Open (and migrate) the library at ``path``; create it if ``create`` and it is absent.

        Raises :class:`LibraryError` for a file that is not a library or is from a newer schema.
        """
        path = Path(path)
        if not path.exists():
            if not create:
                raise LibraryError(f"{path} does not exist; create a new library there first.")
            path.parent.mkdir(parents=True, exist_ok=True)
        _check_before_opening(path)
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.Error as error:
            raise LibraryError(f"{path} cannot be opened: {error}") from None
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 10000")
        conn.execute("PRAGMA cache_size = -16384")  # 16 MiB: enough for bulk writes
        conn.execute("PRAGMA temp_store = MEMORY")
        migrations.apply_migrations(conn)
        return cls(path, conn)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed when the block ends, rolled back on any exception."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # Collections -------------------------------------------------------------------------

    def collections(self) -> list[CollectionInfo]:
        rows = self.conn.execute(
            """SELECT c.id, c.name, c.created, c.source,
                      (SELECT count(*) FROM sample s WHERE s.collection_id = c.id)
               FROM collection c ORDER BY c.name COLLATE NOCASE"""
        ).fetchall()
        return [CollectionInfo(id=r[0], name=r[1], created=r[2], source=r[3], samples=r[4]) for r in rows]

    def collection_id(self, name: str) -> int | None:
        row = self.conn.execute("SELECT id FROM collection WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def require_collection(self, name: str) -> int:
        """The id of the collection called ``name``; a clear error listing the names if absent."""
        cid = self.collection_id(name)
        if cid is None:
            names = ", ".join(repr(c.name) for c in self.collections()) or "none"
            raise LibraryError(f"no collection named {name!r} in {self.path} (collections: {names})")
        return cid

    def create_collection(self, name: str, source: str = "") -> int:
        """Create a collection (inside the caller's transaction, if any) and return its id."""
        name = name.strip()
        if not name:
            raise LibraryError("a collection needs a name")
        if self.collection_id(name) is not None:
            raise LibraryError(f"a collection named {name!r} already exists in {self.path}")
        cur = self.conn.execute(
            "INSERT INTO collection (name, created, source) VALUES (?, ?, ?)", (name, now_iso(), source)
        )
        return inserted_id(cur)

    # Counts ------------------------------------------------------------------------------

    def split_stats(self, collection_id: int) -> list[SplitStats]:
        """Samples, generated CoTs, answers and annotations per dataset and split."""
        rows = self.conn.execute(
            """SELECT dataset, split, count(*), sum(n_cots), sum(n_answers), sum(n_annotations),
                      min(id)
               FROM sample WHERE collection_id = ? GROUP BY dataset, split ORDER BY min(id)""",
            (collection_id,),
        ).fetchall()
        return [SplitStats(r[0], r[1], r[2], r[3] or 0, r[4] or 0, r[5] or 0) for r in rows]

    def tree_stats(self) -> list[tuple[CollectionInfo, list[SplitStats]]]:
        """Every collection with its per-split counts: what the collection tree shows."""
        return [(info, self.split_stats(info.id)) for info in self.collections()]

    def splits(self, collection_id: int) -> list[tuple[str, str]]:
        """(dataset, split) pairs of a collection, in the order they were first stored."""
        return [(s.dataset, s.split) for s in self.split_stats(collection_id)]
