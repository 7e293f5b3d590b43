"""Copies of a library file: ``thoughtdesk backup`` and the automatic copy before an upgrade.

SQLite's online backup API copies a consistent snapshot page by page while the library stays
open (other readers and a run's writer may go on), which a plain file copy of a WAL database
cannot promise. Before the schema of an existing library is migrated, a copy is written next
to it (Anki does the same), and only the most recent few of those automatic copies are kept.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from thoughtdesk.core.errors import LibraryError

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
    if target.exists() and target.resolve() == library.resolve():
        raise LibraryError(f"{target} is the library itself; name a new file for the backup")
    if target.exists():
        raise LibraryError(f"{target} already exists; a backup never overwrites a file: name a new one")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise LibraryError(f"cannot create the folder {target.parent}: {error.strerror or error}") from None
    part = target.with_name(target.name + ".part")
    part.unlink(missing_ok=True)

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
        part.unlink(missing_ok=True)
        raise LibraryError(f"the backup of {library} to {target} failed: {error}") from None
    return target


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
