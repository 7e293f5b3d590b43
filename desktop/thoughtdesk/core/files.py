"""Writing small files so that a crash never leaves half of one."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from thoughtdesk.core.errors import ThoughtDeskError

#: The files SQLite keeps beside a library while it is open (write-ahead log, shared memory,
#: rollback journal): overwriting one destroys the library as surely as overwriting the file.
LIBRARY_COMPANIONS = ("", "-wal", "-shm", "-journal")


class ExportTargetError(ThoughtDeskError):
    """An export would overwrite something it must not (the library itself, or a file that is
    not an earlier export) or names no file at all; or it could not be written."""


#: The ending of an export being written: ``<target>.thoughtdesk.part``, renamed at the end.
PART_SUFFIX = ".thoughtdesk.part"
#: A part file untouched for this long belongs to an export that was killed (a running export
#: writes to it all the time): the next export into that folder removes it.
STALE_PART_SECONDS = 600.0


def remove_stale_parts(folder: Path, *, older_than: float = STALE_PART_SECONDS) -> list[Path]:
    """Delete the part files of killed exports in ``folder``; return what was removed."""
    removed = []
    now = time.time()
    for part in folder.glob("*" + PART_SUFFIX):
        try:
            if now - part.stat().st_mtime > older_than:
                part.unlink()
                removed.append(part)
        except OSError:
            continue  # gone already, or not ours to remove
    return removed


@contextlib.contextmanager
def export_part(path: Path) -> Iterator[Path]:
    """The part file an export to ``path`` writes (for writers that take a file name: Parquet,
    PDF, images), renamed to ``path`` only when the block ends without error. Stale part files
    of killed exports are removed first; a failed write (an :class:`OSError`: a full disk, a
    vanished drive) is an :class:`ExportTargetError` naming ``path``, with the part file gone."""
    path = Path(path)
    if not path.parent.is_dir():
        raise ExportTargetError(missing_folder(path))
    refuse_special_file(path)
    remove_stale_parts(path.parent)
    part = path.with_name(path.name + PART_SUFFIX)
    try:
        yield part
        os.replace(part, path)
    except OSError as error:
        part.unlink(missing_ok=True)
        raise ExportTargetError(write_failure(path, error)) from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def special_file_kind(path: Path) -> str | None:
    """What ``path`` is when it exists and is neither a regular file nor a folder (``"a named
    pipe (FIFO)"``, ``"a character device"``...), else None. Told by ``stat`` alone: opening a
    FIFO to look at it would wait for a writer."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    for test, what in (
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else "not a regular file"


def refuse_special_file(path: Path) -> None:
    """:class:`ExportTargetError` when ``path`` is a device, a FIFO or a socket: an export
    replaces its target with a new regular file, which would remove the device node or pipe
    (issue 23, point 5); even ``--force`` does not."""
    what = special_file_kind(path)
    if what is not None:
        raise ExportTargetError(
            f"{path} is {what}, not a regular file; an export writes a new file and would replace it. "
            "Name a regular file (or - for standard output where the command offers it)"
        )


#: Free space under which a failed write is taken for a full disk: SQLite reports some writes a
#: full disk refused (a write-ahead log's, its shared memory's) as "disk I/O error", not SQLITE_FULL.
FULL_DISK_BYTES = 1 << 20


def disk_is_full(path: str | os.PathLike[str]) -> bool:
    """Whether the disk holding ``path`` (a file or folder, or the nearest folder above it that
    exists) has less than :data:`FULL_DISK_BYTES` free for this user."""
    folder = Path(path)
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    try:
        info = os.statvfs(folder)
    except (OSError, AttributeError):  # no statvfs (Windows): say what the error said
        return False
    return info.f_bavail * info.f_frsize < FULL_DISK_BYTES


def is_full_disk_error(error: BaseException, path: str | os.PathLike[str]) -> bool:
    """Whether ``error`` (an OSError or an SQLite error) writing at ``path`` means the disk is
    full: ENOSPC/EDQUOT, SQLite's "database or disk is full", or an I/O error on a disk that
    has (next to) no space left."""
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(error).lower()
    if "full" in text and ("disk" in text or "database" in text):
        return True
    io_error = isinstance(error, OSError) or "disk i/o" in text
    return io_error and disk_is_full(path)


def missing_folder(path: Path) -> str:
    """What to say when the folder an export names does not exist (not "free some space")."""
    return (
        f"the folder {path.parent} does not exist, so {path.name} cannot be written there; "
        "create the folder first or choose another one"
    )


def write_failure(path: Path, error: OSError) -> str:
    """What to say when writing ``path`` failed, with the fix that fits the cause."""
    if not path.parent.is_dir():
        return missing_folder(path)
    if is_full_disk_error(error, path.parent):
        hint = "The disk is full: free some space or choose another folder, then export again"
    elif error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = "Choose a folder you can write to, then export again"
    else:
        hint = "Choose another folder, then export again"
    return f"{path} could not be written ({error.strerror or error}); nothing was written under that name. {hint}"


@contextlib.contextmanager
def export_file(path: Path) -> Iterator[TextIO]:
    """A text stream for an export to ``path``: written to a part file beside it and renamed
    into place only when the block ends without error, so ``path`` never holds half an export
    (see :func:`export_part`)."""
    with export_part(path) as part, part.open("w", encoding="utf-8", newline="\n") as out:
        yield out


def write_text_atomically(path: str | Path, text: str, *, private: bool = False) -> Path:
    """Write ``text`` (UTF-8) to a temporary file beside ``path``, then rename it into place.

    ``private`` makes the file readable by its owner only (0600), for key material.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        if private:
            os.chmod(temporary, 0o600)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def write_json_atomically(path: str | Path, document: Any, *, indent: int = 2) -> Path:
    """``document`` as indented JSON (non-ASCII kept) with a final newline, written atomically."""
    return write_text_atomically(path, json.dumps(document, indent=indent, ensure_ascii=False) + "\n")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def library_part(path: str | os.PathLike[str], library: str | os.PathLike[str]) -> str | None:
    """``"the open library"`` when ``path`` is the library file ``library``, ``"part of the open
    library"`` when it is one of the files SQLite keeps beside it, else None. Told by name and
    ``stat`` only: opening such a file with Python and closing it would drop the SQLite locks
    this process holds on it (docs/design.md, "Never Python I/O on an open library")."""
    path, library = Path(path).expanduser(), Path(library)
    for suffix in LIBRARY_COMPANIONS:
        companion = library.with_name(library.name + suffix)
        if _same_file(path, companion) or path.resolve() == companion.resolve():
            return "the open library" if not suffix else "part of the open library"
    return None


#: The first header columns of every CSV export (samples-csv and answers-csv).
CSV_EXPORT_HEADER = b"dataset,split,sample_id,"
#: The key a Parquet export stores in its file metadata (the footer, at the end of the file).
PARQUET_EXPORT_KEY = b"thoughtdesk_export"


def _parquet_footer(handle: BinaryIO) -> bytes:
    """The footer (file metadata) of a Parquet file: its length sits before the final ``PAR1``."""
    size = handle.seek(0, os.SEEK_END)
    if size < 12:
        return b""
    handle.seek(size - 8)
    tail = handle.read(8)
    length = int.from_bytes(tail[:4], "little")
    if tail[4:] != b"PAR1" or length > min(size - 12, 16 * 1024 * 1024):
        return b""
    handle.seek(size - 8 - length)
    return handle.read(length)


#: A JSON string as ThoughtDesk's exports write it (``json.dumps``, non-ASCII kept).
_JSON_STRING = r'"(?:[^"\\\n]|\\.)*"'
#: How each kind of earlier export starts, byte for byte as ThoughtDesk writes it. A file is an
#: earlier export only when its start is one of these: an unrelated JSON, JSON Lines or CSV file
#: (someone's notes.json, a downloaded dataset) is not, and is replaced only when asked to.
EXPORT_SIGNATURES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # thoughtdesk export (ThoughtSource JSON, core/datasets/thoughtsource.py:write_collection):
    # {dataset: {split: [sample objects, one a line, each starting with its "id"]}}
    (
        "ThoughtSource collection",
        re.compile(
            r"\{(?:\n\}\n?\Z|\n  " + _JSON_STRING + r": \{\n    " + _JSON_STRING + r': \[(?:\n      \{"id": |\n    \]))'
        ),
    ),
    ("samples-jsonl", re.compile(r'\{"dataset": ' + _JSON_STRING + r', "split": ' + _JSON_STRING + r', "id": ')),
    # chat-jsonl and `rationales export`: the chat format with ThoughtDesk's spacing
    ("chat-jsonl", re.compile(r'\{"messages": \[\{"role": "(?:system|user)", "content": ')),
    ("dscb", re.compile(r'\{"id": (?:null|' + _JSON_STRING + r'), "qid": ')),
    ("annotations", re.compile(r'\{\n "format": "thoughtdesk-annotations",\n')),
    ("Datasette metadata", re.compile(r'\{\n  "title": "ThoughtDesk library",\n')),
    ("CSV", re.compile(re.escape(CSV_EXPORT_HEADER.decode("ascii")))),
    ("HTML report", re.compile(r'<!DOCTYPE html>\n<html><head><meta charset="utf-8"/><title>')),
)
#: How much of a file's start is read to recognise it.
_HEAD_BYTES = 65536


def export_kind(path: Path) -> str | None:
    """Which earlier ThoughtDesk export ``path`` holds (a name from :data:`EXPORT_SIGNATURES`,
    ``"parquet"``, ``"PDF report"`` or ``"empty"``), or ``None`` when it is something else.

    Recognised by content ThoughtDesk writes, never by the file's name or by its being JSON: a
    Parquet export carries :data:`PARQUET_EXPORT_KEY` in its footer, a PDF report names
    ThoughtDesk as its creator, the text exports start exactly as :data:`EXPORT_SIGNATURES` say.
    An empty file holds nothing to lose and counts as one; a device or FIFO is never one (and
    is never opened)."""
    if special_file_kind(path) is not None:
        return None
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
            if head.startswith(b"PAR1"):
                return "parquet" if PARQUET_EXPORT_KEY in _parquet_footer(handle) else None
            if head.startswith(b"%PDF-"):
                return "PDF report" if _pdf_by_thoughtdesk(head) else None
    except OSError:
        return None
    if not head:
        return "empty"
    text = head.decode("utf-8", "replace").removeprefix("\ufeff")
    for name, signature in EXPORT_SIGNATURES:
        if signature.match(text):
            return name
    return None


#: How Qt's PDF writer records the creator a report sets (``QPdfWriter.setCreator``): in the
#: info dictionary at the file's start (UTF-16 text) and in its XMP metadata.
_PDF_CREATORS = (b"/Creator (\xfe\xff" + "ThoughtDesk".encode("utf-16-be") + b")", b'xmp:CreatorTool="ThoughtDesk"')


def _pdf_by_thoughtdesk(head: bytes) -> bool:
    """A PDF whose metadata names ThoughtDesk as its creator (a report ThoughtDesk wrote)."""
    return any(creator in head for creator in _PDF_CREATORS)


def looks_like_export(path: Path) -> bool:
    """True when ``path`` holds an earlier ThoughtDesk export (see :func:`export_kind`): it may
    be replaced without asking. A database, a spreadsheet, someone's JSON notes or any other file
    is not taken for one."""
    return export_kind(path) is not None


def check_export_target(
    target: str | os.PathLike[str], *, libraries: Iterable[str | os.PathLike[str]] = (), force: bool = False
) -> Path:
    """The path an export may write, or :class:`ExportTargetError` saying why not.

    Never: a library in ``libraries`` (the open one) or its ``-wal``/``-shm``/``-journal`` files,
    even with ``force``; an empty name; a folder; a device, FIFO or socket. Only with ``force`` (the GUI asks instead): an
    existing file that is not an earlier export (see :func:`looks_like_export`).
    """
    text = os.fspath(target)
    if not text.strip():
        raise ExportTargetError("no file was named for the export; give the path of the file to write")
    path = Path(text).expanduser()
    if path.is_dir():
        raise ExportTargetError(f"{path} is a folder; name a file inside it to write the export to")
    refuse_special_file(path)  # before anything reads it: opening a FIFO would wait forever
    for library in libraries:
        what = library_part(path, library)
        if what is not None:
            raise ExportTargetError(
                f"{path} is {what} ({Path(library).name}); exporting onto it would destroy every collection in it. "
                "Choose another file name"
            )
    if not path.parent.is_dir():
        raise ExportTargetError(missing_folder(path))
    if path.exists() and not force and not looks_like_export(path):
        raise ExportTargetError(
            f"{path} already exists and is not an earlier export; choose another name, or add --force to overwrite it"
        )
    return path
