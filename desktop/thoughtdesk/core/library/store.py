"""The library file: one SQLite database holding collections of ThoughtSource samples.

One :class:`Library` is one connection; a worker thread opens its own ``Library`` on the same
file (WAL mode lets the GUI read while a worker writes). Writes go through :meth:`transaction`,
so an import that fails or is cancelled leaves the file exactly as it was.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from thoughtdesk.core.errors import LibraryError
from thoughtdesk.core.library import bulk_fts, migrations, sort_indexes
from thoughtdesk.core.library.backup import backup_before_upgrade
from thoughtdesk.core.library.file_faults import (
    LibraryBusyError,  # noqa: F401 - re-exported: ui/review's writes catch it from here
    LibraryReadOnlyError,
    check_before_opening,
    connect_read_only,
    library_error,
    writable,
)
from thoughtdesk.core.library.processes import process_alive, process_tag
from thoughtdesk.core.library.records import CollectionInfo, SplitStats
from thoughtdesk.core.library.timestamps import now_iso

log = logging.getLogger(__name__)


#: The ``source`` prefix of a collection an import is still writing (hidden until published).
STAGING = "thoughtdesk-importing:"


def _writer_note_path(path: Path) -> Path:
    return path.with_name(path.name + "-writer.json")


def _waiting_path(path: Path) -> Path:
    return path.with_name(path.name + "-waiting")


#: How recent a waiting process's mark must be for a long write to pause for it: longer than
#: SQLite's busy timeout (10 s), after which a waiting process marks again.
WAITING_FRESH_SECONDS = 12.0


def read_writer_note(path: Path) -> str | None:
    """What another process said it is writing to the library at ``path`` ("importing x.json
    (process 123)"), or None."""
    try:
        note = json.loads(_writer_note_path(path).read_text(encoding="utf-8"))
        return f"{note['what']} (process {note['pid']})"
    except (OSError, ValueError, KeyError, TypeError):
        return None


def inserted_id(cursor: sqlite3.Cursor) -> int:
    """The rowid the INSERT just run on ``cursor`` gave its row."""
    rowid = cursor.lastrowid
    if rowid is None:  # sqlite3 sets it after every INSERT; this narrows the type
        raise LibraryError("the row was not inserted")
    return rowid


#: Called while a write waits for another process to finish writing: seconds waited so far,
#: and what that process said it is doing (the writer note), if anything.
WaitCallback = Callable[[float, str | None], None]


def _backup_if_upgrading(conn: sqlite3.Connection, path: Path) -> Path | None:
    """Copy an existing library aside before its schema is migrated (core/library/backup.py).
    A copy that cannot be written is logged and the upgrade goes on: each migration is its own
    transaction, and refusing would lock the user out of their data."""
    if not migrations.pending_migrations(conn):
        return None
    try:
        copy = backup_before_upgrade(conn, path)
    except LibraryError as error:
        log.warning("no backup before upgrading %s: %s", path, error)
        return None
    log.info("backed up %s to %s before upgrading its schema", path, copy)
    return copy


class Library:
    """An open library file. Create with :meth:`open`."""

    #: How long a write waits for another process's write before giving up, in seconds
    #: (SQLite's own busy timeout covers the first 10 s of it). A run sets this much higher:
    #: it must never die because another process is importing.
    max_write_wait: float = 120.0
    #: Told every ~10 s while a write waits (the CLI prints it, the GUI shows it). Set on the
    #: class (:meth:`report_write_waits`) it is every connection's of this process that sets none.
    on_write_wait: WaitCallback | None = None
    #: The copy written before this open migrated an older library's schema, if one was.
    upgrade_backup: Path | None = None

    def __init__(self, path: Path, conn: sqlite3.Connection, *, read_only: bool = False) -> None:
        self.path = path
        self.conn = conn
        self._long_writing = False  # this connection holds the writer note (see long_write)
        self._writer_note = str(_writer_note_path(path))  # checked before every write: a string
        #: True when the file or its folder cannot be written: reading, searching, evaluating and
        #: exporting work; :meth:`transaction` refuses with :class:`LibraryReadOnlyError`.
        self.read_only = read_only

    @classmethod
    def open(cls, path: str | Path, *, create: bool = True) -> Library:
        """Open (and migrate) the library at ``path``; create it if ``create`` and it is absent.

        A library whose file or folder cannot be written opens read-only (``read_only``).
        Raises :class:`LibraryError` for a file that is not a library or is from a newer schema,
        and for an older one that needs an upgrade it cannot be given read-only.
        """
        path = Path(path)
        if not path.exists():
            if not create:
                raise LibraryError(f"{path} does not exist; create a new library there first.")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise LibraryError(f"cannot create the library {path}: {error.strerror or error}") from None
        check_before_opening(path)
        if path.exists() and path.stat().st_size > 0 and not writable(path):
            return cls._open_read_only(path)
        had_data = path.exists() and path.stat().st_size > 0
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.Error as error:  # a full disk cannot take the shared-memory file: "disk I/O error"
            raise library_error(error, path) or LibraryError(f"{path} cannot be opened: {error}") from None
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 10000")
        conn.execute("PRAGMA cache_size = -16384")  # 16 MiB: enough for bulk writes
        conn.execute("PRAGMA temp_store = MEMORY")
        try:
            conn.execute("PRAGMA quick_check(1)").fetchone()  # a damaged file is told now, not mid-work
            backup = _backup_if_upgrading(conn, path) if had_data else None
            migrations.apply_migrations(conn)
        except sqlite3.Error as error:
            conn.close()
            raise library_error(error, path) or LibraryError(f"{path} cannot be opened: {error}") from None
        except BaseException:
            conn.close()
            raise
        library = cls(path, conn)
        library.upgrade_backup = backup
        library.remove_abandoned_imports()  # an import killed mid-way left a hidden collection
        # ... or its table without sort indexes (sort_indexes.deferred): built again, unless an
        # import is still at work (it has a hidden collection; it builds them at its end).
        if sort_indexes.missing(conn) and not library.read_only and not library.imports_under_way():
            with library.transaction() as c:
                sort_indexes.create(c)
        # ... or its search index set for a large import (bulk_fts): set back the same way.
        if bulk_fts.is_bulk(conn) and not library.read_only and not library.imports_under_way():
            with library.transaction() as c:
                bulk_fts.set_default(c)
        return library

    @classmethod
    def open_reader(cls, path: str | Path) -> Library:
        """Another connection, for reading only, to a library this process has already opened
        with :meth:`open` (so checked and migrated): for workers that list or count.

        It skips ``open``'s integrity check and migrations, which read the whole file (seconds
        for a million samples), so it opens in milliseconds whatever the library's size; it
        sees other connections' commits as any connection does (no ``immutable``), and
        refuses writes (``query_only``). Raises :class:`LibraryError` when the file cannot be
        opened.
        """
        path = Path(path)
        if not path.exists():
            raise LibraryError(f"{path} does not exist any more; open the library again.")
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA query_only = ON")
            conn.execute("PRAGMA busy_timeout = 10000")
            conn.execute("PRAGMA cache_size = -16384")
            conn.execute("PRAGMA temp_store = MEMORY")
        except sqlite3.Error as error:
            raise library_error(error, path) or LibraryError(f"{path} cannot be opened: {error}") from None
        return cls(path, conn, read_only=True)

    @classmethod
    def _open_read_only(cls, path: Path) -> Library:
        try:
            conn = connect_read_only(path)
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA cache_size = -16384")
            conn.execute("PRAGMA temp_store = MEMORY")
            pending = migrations.pending_migrations(conn)
        except sqlite3.Error as error:
            raise library_error(error, path) or LibraryError(f"{path} cannot be opened: {error}") from None
        if pending:
            conn.close()
            raise LibraryError(
                f"{path} was written by an older ThoughtDesk and needs an upgrade ({len(pending)} step(s)), "
                "which cannot be saved: the file or its folder is read-only. Copy it to a folder you can write "
                "to and open the copy"
            )
        return cls(path, conn, read_only=True)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def report_write_waits(cls, callback: WaitCallback | None) -> None:
        """Tell ``callback`` of every write of this process that waits for another process,
        on any thread (a connection with its own ``on_write_wait`` tells that one instead)."""
        cls.on_write_wait = callback

    def set_write_patience(self, seconds: float, *, report_every: float = 10.0) -> None:
        """Give up a write after waiting ``seconds`` for another process (raising
        :class:`LibraryBusyError`), telling ``on_write_wait`` every ``report_every`` seconds
        meanwhile: the GUI thread's connection waits a moment, never minutes."""
        self.max_write_wait = seconds
        self.conn.execute(f"PRAGMA busy_timeout = {max(0, int(min(seconds, report_every) * 1000))}")

    @property
    def read_only_reason(self) -> str | None:
        """Why nothing can be written to this library (shown beside every writing action the
        GUI disables), or None when it can be written."""
        if not self.read_only:
            return None
        return (
            f"{self.path.name} is open read-only (the file or its folder cannot be written): browsing, search, "
            "evaluation and export work; to change it, copy the library to a folder you can write to and open the copy"
        )

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed when the block ends, rolled back on any exception.

        SQLite failures that come from the file's state (read-only, damaged, disk full, locked)
        are raised as :class:`LibraryError` naming the library and what to do; others (a
        constraint) as they are. Inside another transaction (a group of writes committed
        together, as a run stores its results) the block is a savepoint: an exception undoes
        this block only, and the outer transaction commits it.
        """
        if self.read_only:
            raise LibraryReadOnlyError(
                f"the library {self.path} is open read-only (the file or its folder cannot be written), so this "
                "change cannot be saved; copy the library to a folder you can write to and open the copy"
            )
        if self.conn.in_transaction:
            try:
                with self._savepoint():
                    yield self.conn
            except sqlite3.Error as error:
                translated = library_error(error, self.path)
                if translated is not None:
                    raise translated from error
                raise
            return
        self._begin()
        try:
            yield self.conn
        except BaseException as error:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # SQLite rolled back already (a full disk does): the first error is the one to tell
            translated = library_error(error, self.path) if isinstance(error, sqlite3.Error) else None
            if translated is not None:
                raise translated from error
            raise
        try:
            self.conn.execute("COMMIT")
        except sqlite3.Error as error:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise self._translated(error) from None

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        self.conn.execute("SAVEPOINT nested")
        try:
            yield
        except BaseException:
            try:
                self.conn.execute("ROLLBACK TO nested")
                self.conn.execute("RELEASE nested")
            except sqlite3.Error:
                pass  # SQLite undid the whole transaction already (a full disk does): the outer one fails
            raise
        self.conn.execute("RELEASE nested")

    def _begin(self) -> None:
        """BEGIN IMMEDIATE, waiting (up to ``max_write_wait``) while another process writes."""
        started = time.monotonic()
        while True:
            self._mark_waiting()
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                text = str(error).lower()
                waited = time.monotonic() - started
                if ("locked" not in text and "busy" not in text) or waited >= self.max_write_wait:
                    raise self._translated(error) from None
                if self.on_write_wait is not None:
                    self.on_write_wait(waited, read_writer_note(self.path))
            except sqlite3.Error as error:
                raise self._translated(error) from None

    def _mark_waiting(self) -> None:
        """Before a write begins while another connection holds a long write (its note beside
        the library): mark that a writer waits, so the long write pauses for it between its
        transactions (:meth:`writers_waiting`) instead of at every one."""
        if self._long_writing or not os.path.exists(self._writer_note):
            return
        try:
            _waiting_path(self.path).write_text(str(os.getpid()), encoding="utf-8")
        except OSError:
            pass  # then the long write does not pause for this one: it waits a chunk or two longer

    def writers_waiting(self) -> bool:
        """Whether another connection marked, in the last :data:`WAITING_FRESH_SECONDS`, that it
        waits to write (what a long write checks between its transactions)."""
        try:
            return time.time() - _waiting_path(self.path).stat().st_mtime < WAITING_FRESH_SECONDS
        except OSError:
            return False

    @contextmanager
    def long_write(self, what: str) -> Iterator[None]:
        """Say, beside the library, what this process writes for a long time (an import), so
        another process that waits for it can tell its user (see :func:`read_writer_note`) and
        mark that it waits (see :meth:`writers_waiting`)."""
        note = _writer_note_path(self.path)
        try:
            note.write_text(
                json.dumps({"pid": os.getpid(), "process": process_tag(), "what": what, "since": time.time()}),
                encoding="utf-8",
            )
        except OSError:
            pass  # only a courtesy to other processes
        self._long_writing = True
        try:
            yield
        finally:
            self._long_writing = False
            note.unlink(missing_ok=True)
            _waiting_path(self.path).unlink(missing_ok=True)

    def _translated(self, error: sqlite3.Error) -> Exception:
        return library_error(error, self.path) or error

    # Collections -------------------------------------------------------------------------

    def collections(self) -> list[CollectionInfo]:
        """Every collection, by name; a collection an import is still writing is not one yet."""
        rows = self.conn.execute(
            f"""SELECT c.id, c.name, c.created, c.source,
                      (SELECT count(*) FROM sample s WHERE s.collection_id = c.id)
               FROM collection c WHERE c.source NOT LIKE '{STAGING}%' ORDER BY c.name COLLATE NOCASE"""
        ).fetchall()
        return [CollectionInfo(id=r[0], name=r[1], created=r[2], source=r[3], samples=r[4]) for r in rows]

    def collection_id(self, name: str) -> int | None:
        row = self.conn.execute(
            f"SELECT id FROM collection WHERE name = ? AND source NOT LIKE '{STAGING}%'", (name,)
        ).fetchone()
        return row[0] if row else None

    # Staged imports (issue 15, point 5) ---------------------------------------------------
    # A long import commits in chunks, so other writers get the library between them, into a
    # collection hidden from every list and lookup until its last transaction names it (a new
    # collection) or moves its samples into an existing one (a merge, whose replaced samples go
    # into another hidden collection to be deleted in parts). Its ``source`` says who writes
    # it: 'thoughtdesk-importing:<pid>@<start mark>:<source>' (see process_tag).

    def create_staging_collection(self, source: str) -> int:
        """A hidden collection for an import to fill (inside the caller's transaction)."""
        import uuid

        cur = self.conn.execute(
            "INSERT INTO collection (name, created, source) VALUES (?, ?, ?)",
            (f"{STAGING}{uuid.uuid4().hex}", now_iso(), f"{STAGING}{process_tag()}:{source}"),
        )
        return inserted_id(cur)

    def publish_collection(self, collection_id: int, name: str, source: str) -> None:
        """Give a filled staging collection its name (inside the caller's transaction): from now
        on it is seen, all at once."""
        if self.collection_id(name) is not None:
            raise LibraryError(
                f"a collection named {name!r} was created in {self.path} while this import ran; "
                "nothing was imported: import again under another name"
            )
        self.conn.execute("UPDATE collection SET name = ?, source = ? WHERE id = ?", (name, source, collection_id))

    def merge_staged(
        self,
        staging_id: int,
        target_id: int,
        name: str,
        replaced: list[int],
        last_positions: dict[tuple[str, str], int],
    ) -> int | None:
        """Move a filled staging collection's samples into the existing collection ``target_id``
        (called ``name``), moving its samples ``replaced`` out first (inside the caller's
        transaction): from now on the merge is seen, all at once. The staged samples keep their
        keys, so their CoTs, search index rows and counters stay as written; the samples'
        ``collection_id`` is all that changes, and the positions of new ones if another import
        added samples to a split meanwhile (``last_positions``: each split's last position when
        the staged ones were numbered; new ones come after it).

        The replaced samples go into a new hidden collection, whose id is returned (None if none
        were replaced), for the caller to delete a part at a time (:meth:`drop_collection_part`):
        deleting 50,000 samples with their CoTs here would hold the lock for seconds; moving them
        aside costs what moving the new ones in does. If the caller is killed first, the next
        :meth:`open` deletes them."""
        if self.collection_id(name) != target_id:
            raise LibraryError(
                f"the collection {name!r} was deleted or renamed in {self.path} while this import ran; "
                "nothing was imported: import again"
            )
        for (dataset, split), last in last_positions.items():
            now = self.conn.execute(
                "SELECT max(position) FROM sample WHERE collection_id = ? AND dataset = ? AND split = ?",
                (target_id, dataset, split),
            ).fetchone()[0]
            if now is not None and now > last:  # keep the split's positions distinct: ours after theirs
                self.conn.execute(
                    "UPDATE sample SET position = position + ? "
                    "WHERE collection_id = ? AND dataset = ? AND split = ? AND position > ?",
                    (now - last, staging_id, dataset, split, last),
                )
        aside = None
        if replaced:
            aside = self.create_staging_collection(f"replaced by an import into {name}")
            self.conn.executemany(
                "UPDATE sample SET collection_id = ? WHERE id = ? AND collection_id = ?",
                ((aside, pk, target_id) for pk in replaced),
            )
        try:
            self.conn.execute("UPDATE sample SET collection_id = ? WHERE collection_id = ?", (target_id, staging_id))
        except sqlite3.IntegrityError:  # the same (dataset, split, id): stored by another process meanwhile
            raise LibraryError(
                f"samples with the same ids as this import's were added to {name!r} in {self.path} while it ran; "
                "nothing was imported: import again (choosing what to do with duplicates)"
            ) from None
        self.conn.execute("DELETE FROM collection WHERE id = ?", (staging_id,))
        return aside

    def drop_collection_part(self, collection_id: int, samples: int) -> bool:
        """Delete up to ``samples`` samples of a (hidden) collection with their search index rows,
        or the collection itself once it is empty (inside the caller's transaction); return True
        when the collection is gone. For deleting a big one in several short transactions."""
        pks = [
            (row[0],)
            for row in self.conn.execute(
                "SELECT id FROM sample WHERE collection_id = ? LIMIT ?", (collection_id, samples)
            )
        ]
        if not pks:
            self.conn.execute("DELETE FROM collection WHERE id = ?", (collection_id,))
            return True
        self.conn.executemany("DELETE FROM sample_fts WHERE rowid = ?", pks)
        self.conn.executemany("DELETE FROM sample WHERE id = ?", pks)
        return False

    def drop_collection_rows(self, collection_id: int) -> None:
        """Delete a collection and everything in it, its search index rows too (inside the
        caller's transaction; rows that refer to its samples go with them)."""
        self.conn.execute(
            "DELETE FROM sample_fts WHERE rowid IN (SELECT id FROM sample WHERE collection_id = ?)", (collection_id,)
        )
        self.conn.execute("DELETE FROM collection WHERE id = ?", (collection_id,))

    def imports_under_way(self) -> bool:
        """Whether a live process is importing into this library (a hidden collection of its,
        or its long-write note)."""
        if self.conn.execute(f"SELECT 1 FROM collection WHERE source LIKE '{STAGING}%' LIMIT 1").fetchone():
            return True
        try:
            note = json.loads(_writer_note_path(self.path).read_text(encoding="utf-8"))
            return process_alive(str(note.get("process") or note["pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            return False

    def remove_abandoned_imports(self) -> int:
        """Delete hidden collections whose importing process is gone (killed mid-import, or before
        it deleted the samples a merge replaced); return how many. Never fails: a library another
        process is writing is left for later."""
        rows = self.conn.execute(f"SELECT id, source FROM collection WHERE source LIKE '{STAGING}%'").fetchall()
        gone = [cid for cid, source in rows if not process_alive(source[len(STAGING) :].split(":", 1)[0])]
        if not gone or self.read_only:
            return 0
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error:
            return 0
        try:
            for cid in gone:
                self.drop_collection_rows(cid)
            self.conn.execute("COMMIT")
        except sqlite3.Error:
            self.conn.execute("ROLLBACK")
            return 0
        return len(gone)

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
