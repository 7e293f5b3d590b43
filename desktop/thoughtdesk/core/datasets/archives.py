"""Unpacking a downloaded dataset archive (a zip) safely, next to the archive.

A zip from the internet is untrusted: member names may try to escape the target folder
(``../x``, ``/etc/x``, ``C:\\x``), be symlinks, or expand to far more than they claim. Every
member is checked before anything is written; the archive is unpacked into a temporary folder
that is renamed into place only when complete, so a folder with the final name is always whole.
"""

from __future__ import annotations

import os
import shutil
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from thoughtdesk.core.errors import DataFileError

#: Refuse archives that unpack to more than this many bytes (a zip bomb guard).
MAX_UNPACKED_BYTES = 8 * 1024**3
#: The marker written into a completely unpacked folder.
UNPACKED_MARKER = ".unpacked"


def _safe_member_path(archive: Path, info: zipfile.ZipInfo) -> PurePosixPath:
    """The member's relative path, or :class:`DataFileError` when it is unsafe."""
    name = info.filename.replace("\\", "/")
    relative = PurePosixPath(name)
    unsafe = (
        name.startswith("/")
        or (len(name) > 1 and name[1] == ":")  # a Windows drive letter
        or any(part == ".." for part in relative.parts)
    )
    if unsafe:
        raise DataFileError(
            archive, f"unsafe path in the archive: {info.filename!r}", hint="the archive was not unpacked"
        )
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise DataFileError(
            archive, f"the archive holds a symbolic link: {info.filename!r}", hint="the archive was not unpacked"
        )
    return relative


def unpacked_folder(archive: Path) -> Path:
    """Where :func:`unpack_zip` puts the contents of ``archive`` (its name without ``.zip``)."""
    return archive.with_name(archive.name[: -len(archive.suffix)] if archive.suffix else archive.name + ".d")


def unpack_zip(archive: str | os.PathLike[str], target: Path | None = None) -> Path:
    """Unpack ``archive`` into ``target`` (default: beside it, named without ``.zip``).

    Returns the folder. Does nothing when the folder is already completely unpacked. Raises
    :class:`DataFileError` for a file that is not a zip, for unsafe member paths or symlinks,
    and for archives larger than :data:`MAX_UNPACKED_BYTES` unpacked; nothing is left behind then.
    """
    archive = Path(archive)
    folder = Path(target) if target is not None else unpacked_folder(archive)
    if (folder / UNPACKED_MARKER).is_file():
        return folder
    try:
        bundle = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as error:
        raise DataFileError(archive, f"not a readable zip archive ({error})") from None
    staging = folder.with_name(folder.name + ".unpacking")
    with bundle:
        members = bundle.infolist()
        paths = [_safe_member_path(archive, info) for info in members]
        if sum(info.file_size for info in members) > MAX_UNPACKED_BYTES:
            raise DataFileError(
                archive, f"the archive unpacks to more than {MAX_UNPACKED_BYTES // 1024**3} GiB", hint="not unpacked"
            )
        shutil.rmtree(staging, ignore_errors=True)
        try:
            staging.mkdir(parents=True)
            for info, relative in zip(members, paths, strict=False):
                destination = staging.joinpath(*relative.parts)
                if info.is_dir():
                    destination.mkdir(parents=True, exist_ok=True)
                    continue
                destination.parent.mkdir(parents=True, exist_ok=True)
                # Stream with a byte budget: the header's file_size may lie.
                budget = info.file_size
                with bundle.open(info) as source, open(destination, "wb") as sink:
                    while block := source.read(1 << 20):
                        budget -= len(block)
                        if budget < 0:
                            raise DataFileError(
                                archive,
                                f"member {info.filename!r} is larger than the archive says",
                                hint="not unpacked",
                            )
                        sink.write(block)
            (staging / UNPACKED_MARKER).write_text(archive.name, encoding="utf-8")
            if folder.exists():
                shutil.rmtree(folder)
            os.replace(staging, folder)
        except (zipfile.BadZipFile, EOFError, zlib.error) as error:
            shutil.rmtree(staging, ignore_errors=True)
            raise DataFileError(archive, f"corrupt zip archive ({error})") from None
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return folder
