"""The library file's faults: the one-line error a user reads for an SQLite failure on it
(:func:`library_error`), whether this process may write it (:func:`writable`), a read-only
connection (:func:`connect_read_only`), and the refusal, before anything is written, of files that
are not ThoughtDesk libraries or were written by a newer or another build
(:func:`check_before_opening`). :class:`~thoughtdesk.core.library.store.Library` opens through these.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from thoughtdesk.core.errors import LibraryError
from thoughtdesk.core.files import is_full_disk_error
from thoughtdesk.core.library import migrations


class LibraryReadOnlyError(LibraryError):
    """A write was asked of a library opened read-only (its file or folder cannot be written)."""


class LibraryBusyError(LibraryError):
    """A write gave up waiting for another process that is writing to the library."""


def library_error(error: sqlite3.Error, path: Path) -> LibraryError | None:
    """The one-line error a user should read for an SQLite failure on the library at ``path``
    (read-only, damaged, disk full, locked, I/O), or None for errors that are the caller's to
    handle (a constraint, a syntax error: bugs or expected conflicts, not the file's state)."""
    text = str(error).lower()
    name = path.name
    if "readonly" in text or "read-only" in text:
        return LibraryReadOnlyError(
            f"the library {path} cannot be written (SQLite: {error}); open it read-only, or give yourself write "
            "permission on the file and its folder, or copy it to a folder you can write to"
        )
    if "malformed" in text or "not a database" in text or "file is not a database" in text:
        return LibraryError(
            f"the library {path} is damaged (SQLite: {error}); restore {name} from a backup, or export what still "
            "opens and import it into a new library"
        )
    if is_full_disk_error(error, path):  # SQLITE_FULL, or an I/O error on a disk with no space left
        return LibraryError(
            f"the disk holding the library {path} is full, so nothing was changed in it; "
            "free some space on that disk and try again"
        )
    if "locked" in text or "busy" in text:
        return LibraryBusyError(
            f"the library {path} is busy: another ThoughtDesk process is writing to it (SQLite: {error}); "
            "wait for it to finish and try again"
        )
    if "disk i/o" in text or "unable to open" in text:
        return LibraryError(
            f"the library {path} could not be read or written (SQLite: {error}); check that its disk is "
            "still there and has space, then try again"
        )
    return None


def writable(path: Path) -> bool:
    """Whether this process can write the library file and the files SQLite keeps beside it
    (permissions, a read-only mount or folder, an immutable file).

    Never by opening the library with Python's ``open()``: on POSIX, closing any descriptor of
    a file drops every lock the process holds on it, SQLite's included, so another process
    could take this process's open library for unused and delete its write-ahead log with the
    commits in it (issue 23, point 1; SQLite's "How To Corrupt An SQLite Database File", 2.2).
    ``os.access`` asks the kernel without opening the file (it refuses a read-only mount and an
    immutable file too); the folder is tried with a temporary file of its own."""
    if not _may_write(path):
        return False
    if not (path.with_name(path.name + "-wal").exists() and path.with_name(path.name + "-shm").exists()):
        import tempfile  # here: `thoughtdesk collections` and the window's start need neither it nor uuid

        try:
            with tempfile.TemporaryFile(dir=path.parent):
                pass
        except OSError:
            return False
    return True


def _may_write(path: Path) -> bool:
    """``os.access(path, W_OK)`` for the effective user where the platform can say so."""
    effective = os.access in os.supports_effective_ids
    try:
        return os.access(path, os.W_OK, effective_ids=effective)
    except OSError:
        return False


#: The smallest file that can be an SQLite database (one page of the smallest page size).
SMALLEST_DATABASE = 512


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection; ``immutable`` where SQLite cannot even keep its shared-memory file
    beside the library (a read-only folder): then no other process may be writing it, which a
    folder nobody can write guarantees."""
    uri = path.resolve().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None, check_same_thread=False)


def check_before_opening(path: Path) -> None:
    """Refuse files that are not ThoughtDesk libraries, or are too new, without writing to them."""
    if not path.exists() or path.stat().st_size == 0:
        return
    # The file is read through SQLite only, never with Python's open(): this process may hold
    # it open already (the app opens the library again for every worker), and closing a
    # descriptor of it would drop SQLite's locks (see writable). SQLite itself tells a file
    # that is no database ("file is not a database"), except one too short to be one, which it
    # would take for an empty database and write over: that one is told by its size.
    not_sqlite = LibraryError(
        f"{path} is not a ThoughtDesk library (it is not an SQLite database, or its first page is damaged); "
        "it was left untouched. Choose another file or create a new library (restore a damaged library "
        "from a backup)."
    )
    if path.stat().st_size < SMALLEST_DATABASE:
        raise not_sqlite
    # immutable: the probe never creates -wal/-shm files beside a file it may refuse. When they
    # exist, another process has the library open and may be writing (a staged import commits
    # and checkpoints as it goes): an immutable read of a file changing under it can look
    # "malformed", so the probe then reads through the write-ahead log like any reader.
    in_use = path.with_name(path.name + "-wal").exists() and path.with_name(path.name + "-shm").exists()
    mode = "mode=ro" if in_use else "mode=ro&immutable=1"
    try:
        probe = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True)
    except sqlite3.Error as error:
        raise library_error(error, path) or LibraryError(
            f"{path} cannot be opened: {error}; it was left untouched."
        ) from None
    try:
        probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as error:
        probe.close()
        if getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_NOTADB:
            raise not_sqlite from None
        raise library_error(error, path) or LibraryError(
            f"{path} cannot be opened: {error}; it was left untouched."
        ) from None
    try:
        version = probe.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in probe.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        applied: set[str] = set()
        if "_migrations" in tables:
            applied = {row[0] for row in probe.execute("SELECT name FROM _migrations")}
    except sqlite3.DatabaseError as error:
        raise library_error(error, path) or LibraryError(
            f"{path} is not a readable SQLite database ({error}); it was left untouched."
        ) from None
    finally:
        probe.close()
    known = {name for name, _ in migrations.MIGRATIONS}
    if version > migrations.current_version():
        raise LibraryError(
            f"{path} was written by a newer ThoughtDesk (schema version {version}; this version "
            f"reads up to {migrations.current_version()}); it was left untouched. "
            "Update ThoughtDesk to open it."
        )
    unknown = sorted(applied - known)
    if unknown:
        # Same or lower version number, but steps this version never had: another branch or
        # build of ThoughtDesk changed it. Not "newer": say what was found.
        raise LibraryError(
            f"{path} has schema changes this ThoughtDesk does not know ({', '.join(unknown[:3])}"
            f"{', ...' if len(unknown) > 3 else ''}), made by another build of ThoughtDesk; it was left "
            "untouched. Open it with the ThoughtDesk that made those changes"
        )
    if tables and "_migrations" not in tables:
        raise LibraryError(f"{path} is an SQLite database but not a ThoughtDesk library; it was left untouched.")
