"""Copies of a library file: ``thoughtdesk backup`` and the automatic copy before an upgrade.

SQLite's online backup API copies a consistent snapshot page by page while the library stays
open (other readers and a run's writer may go on), which a plain file copy of a WAL database
cannot promise. Before the schema of an existing library is migrated, a copy is written next
to it (Anki does the same), and only the most recent few of those automatic copies are kept.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from thoughtdesk.core.errors import LibraryError
from thoughtdesk.core.files import is_full_disk_error

#: The folder beside a library that its backups go to.
BACKUP_FOLDER = "backups"
#: How many automatic pre-upgrade copies of one library are kept.
KEEP_UPGRADE_BACKUPS = 3
_UPGRADE_MARK = "-before-upgrade-"


def default_backup_path(library: Path, *, before_upgrade: bool = False) -> Path:
    """``<library folder>/backups/<name>-<YYYYmmdd-HHMMSS>.thoughtdesk`` (``-before-upgrade-``
    for the automatic copies); a second backup within the same second gets ``-2``, ``-3``..."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = library.parent / BACKUP_FOLDER
    stem = f"{library.stem}{_UPGRADE_MARK if before_upgrade else '-'}{stamp}"
    candidate = folder / f"{stem}{library.suffix}"
    count = 1
    while candidate.exists():
        count += 1
        candidate = folder / f"{stem}-{count}{library.suffix}"
    return candidate


def backup_connection(
    conn: sqlite3.Connection,
    library: Path,
    target: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Copy the open library ``conn`` (the file ``library``) to ``target``, a new file.

    Refuses the library itself and an existing file (a backup never overwrites anything); the
    copy is written to ``target.part`` and renamed into place when complete, so an interrupted
    backup leaves no file that looks whole. ``progress(done_pages, total_pages)`` is told as it goes.
    """
    target = Path(target).expanduser()
    part = target.with_name(target.name + ".part")
    for path in (target, *(part.with_name(part.name + suffix) for suffix in _COMPANIONS)):
        _refuse_the_library(path, library, target)
    if target.exists():
        raise LibraryError(f"{target} already exists; a backup never overwrites a file: name a new one")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise LibraryError(f"cannot create the folder {target.parent}: {error.strerror or error}") from None
    _remove_part(part)

    def step(status: int, remaining: int, total: int) -> None:
        if progress is not None:
            progress(total - remaining, total)

    try:
        copy = sqlite3.connect(part)
        try:
            conn.backup(copy, pages=256, progress=step)
            copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file, no -wal beside it
        finally:
            copy.close()
        part.replace(target)
    except (sqlite3.Error, OSError) as error:
        full = is_full_disk_error(error, part)  # asked before the part file frees its space
        _remove_part(part)
        if full:
            raise LibraryError(
                f"the backup of {library} to {target} failed: the disk holding {target.parent} is full; nothing "
                "was written there. Free some space or name a backup on another disk, then try again"
            ) from None
        raise LibraryError(f"the backup of {library} to {target} failed: {error}") from None
    return target


#: What SQLite may keep beside a file it writes (rollback journal, write-ahead log, shared memory).
_COMPANIONS = ("", "-journal", "-wal", "-shm")


def _refuse_the_library(path: Path, library: Path, target: Path) -> None:
    """Refuse a backup whose file (``target``) or part file (``path``) is the library or a file
    SQLite keeps beside it: the backup would write over it, and remove it when it failed
    (``--library X.part backup X`` deleted the library, issue 23, point 4)."""
    for suffix in _COMPANIONS:
        companion = library.with_name(library.name + suffix)
        if _same(path, companion):
            what = "the library itself" if not suffix else f"the library's {suffix[1:]} file"
            via = "" if path == target else f" (the backup is written to {path.name} first)"
            raise LibraryError(
                f"{target} cannot be the backup of {library}: {path.name} is {what}{via}; "
                "name a new file elsewhere for the backup"
            )


def _same(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _remove_part(part: Path) -> None:
    """Remove a part file and what SQLite left beside it (a failed write leaves its journal)."""
    for suffix in _COMPANIONS:
        part.with_name(part.name + suffix).unlink(missing_ok=True)


def backup_before_upgrade(conn: sqlite3.Connection, library: Path) -> Path:
    """The automatic copy of an existing library before its schema is migrated; older
    automatic copies beyond :data:`KEEP_UPGRADE_BACKUPS` are removed."""
    target = backup_connection(conn, library, default_backup_path(library, before_upgrade=True))
    earlier = sorted(  # oldest first ("-2" of the same second sorts before "." by name, not by age)
        target.parent.glob(f"{library.stem}{_UPGRADE_MARK}*{library.suffix}"),
        key=lambda p: (p.stat().st_mtime_ns, len(p.name), p.name),
    )
    for old in earlier[:-KEEP_UPGRADE_BACKUPS]:
        old.unlink(missing_ok=True)
    return target
