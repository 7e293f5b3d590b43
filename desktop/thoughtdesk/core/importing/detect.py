"""What a file offered for import holds, and what to tell a user who did not say.

The GUI's File ▸ Import routes a file by :func:`classify_import_file`; the CLI, given a file
without ``--dataset`` or ``--map``, uses :func:`import_guidance` to say which option imports
it, or that it is no file ThoughtDesk can import (a picture, a PDF, a binary file) before any
library is opened or created.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from thoughtdesk.core.critiques.dscb import looks_like_dscb
from thoughtdesk.core.datasets import detect_dataset
from thoughtdesk.core.datasets.generic import first_row_is_data, head_records, preview
from thoughtdesk.core.datasets.readers import first_json_item
from thoughtdesk.core.errors import DataFileError, ThoughtDeskError

ImportKind = Literal["thoughtsource", "dscb", "steps", "dataset", "table", "unknown"]

#: Suffixes of the tables the generic import reads through a column mapping.
TABLE_SUFFIXES = (".json", ".jsonl", ".jsonlines", ".ndjson", ".csv", ".tsv", ".parquet")
#: Suffixes a dataset's original files come in (besides the tables): MedQA's and others' text files.
DATASET_SUFFIXES = (".xml", ".txt")

#: The first bytes of common files that are certainly not data to import.
_MAGIC = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a zip archive (unpack it first, or import the folder it unpacks to)"),
    (b"\x1f\x8b", "a gzip archive (unpack it first)"),
    (b"SQLite format 3\x00", "an SQLite database (open it as a library with --library instead)"),
)


class NotImportableError(ThoughtDeskError):
    """A file that no import of ThoughtDesk reads; nothing was opened or written."""


def import_of_the_library(path: str | Path, what: str) -> str:
    """The error for importing the library (``what``: "the open library", or "part of" it) into
    itself."""
    return (
        f"{path} is {what}: it cannot be imported into itself (it was not read). To copy a collection, "
        "export it and import the export"
    )


def binary_kind(path: Path) -> str | None:
    """What a binary file is (``"a PNG image"``, ``"a binary file"``), or None for text."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None  # the import itself names the file that cannot be read
    if head.startswith(b"PAR1") and path.suffix.lower() == ".parquet":
        return None  # binary, but a table the generic import reads (with pyarrow)
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):  # NULs outside UTF-16 text
        return "a binary file"
    return None


def looks_like_thoughtsource(path: Path) -> bool:
    """True when ``path`` is a ThoughtSource collection: ``{dataset: {split: [samples]}}``."""
    if not path.is_file() or path.suffix.lower() != ".json":
        return False
    first = first_json_item(path)
    return isinstance(first, dict) and bool(first) and all(isinstance(value, list) for value in first.values())


def classify_import_file(path: str | Path) -> ImportKind:
    """``"thoughtsource"``, ``"dscb"`` (a DS Critique Bank file), ``"steps"`` (ProcessBench or
    PRM800K), ``"dataset"`` (a known
    dataset's original files, or a folder), ``"table"`` (JSON/JSONL/CSV/TSV for a column
    mapping) or ``"unknown"`` (a binary file, or a suffix no import reads)."""
    path = Path(path)
    if path.is_dir():
        return "dataset"
    if binary_kind(path) is not None:
        return "unknown"
    if looks_like_thoughtsource(path):
        return "thoughtsource"
    if looks_like_dscb(path):
        return "dscb"
    from thoughtdesk.core.importing.step_files import step_file_format  # imported when needed: it imports the importer

    if step_file_format(path) is not None:
        return "steps"
    if detect_dataset(path) is not None:
        return "dataset"
    suffix = path.suffix.lower()
    if suffix in TABLE_SUFFIXES:
        return "table"
    return "dataset" if suffix in DATASET_SUFFIXES else "unknown"


def not_importable(path: Path) -> NotImportableError:
    """The one-line refusal of a file no import reads, saying what it seems to be."""
    what = binary_kind(path)
    seems = f" (it is {what})" if what else f" (a {path.suffix or 'suffix-less'} file)"
    return NotImportableError(
        f"{path}: not a file ThoughtDesk can import{seems}. Import a ThoughtSource collection (.json), "
        "a DS Critique Bank file (.jsonl), a dataset's original files (--dataset NAME; see "
        "`thoughtdesk datasets`) or a JSON, JSONL, CSV, TSV or Parquet table (--map FIELD=COLUMN,...)"
    )


def check_importable(path: str | Path) -> None:
    """Raise :class:`NotImportableError` for a binary file (whatever options came with it), and
    :class:`DataFileError` for a path that does not exist, before any library is opened."""
    path = Path(path)
    if not path.exists():
        raise DataFileError(path, "cannot be read: No such file or directory")
    if path.is_file() and binary_kind(path) is not None:
        raise not_importable(path)


def options_needed(path: str | Path) -> str | None:
    """For a file given without ``--dataset``/``--map``: None when it goes to the ThoughtSource
    or DS Critique Bank import (or does not exist: that import names the missing file), else
    the one-line error saying which option imports it (:func:`import_guidance`).

    A ``.json`` file that is neither a recognised dataset nor a JSON array of records is left
    to the ThoughtSource reader, whose errors name the line of a damaged collection.
    """
    path = Path(path)
    if not path.exists():
        return None
    kind = classify_import_file(path)
    if kind in ("thoughtsource", "dscb", "steps"):
        return None
    if kind == "table" and path.suffix.lower() == ".json" and not _is_json_array(path):
        return None
    return import_guidance(path)


def _is_empty(path: Path) -> bool:
    """A file with nothing but white space (and a byte-order mark) in it."""
    try:
        if path.stat().st_size > 4096:
            return False
        head = path.read_bytes()
    except OSError:
        return False
    return not head.removeprefix(b"\xef\xbb\xbf").strip()


def _is_json_array(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")


def import_guidance(path: str | Path) -> str:
    """The error for a file given without ``--dataset``/``--map`` that is not a ThoughtSource
    collection or a DS Critique Bank file: which option imports it, with an example."""
    path = Path(path)
    if _is_empty(path):
        return f"{path} is empty (no record on line 1 or after): there is nothing to import"
    kind = classify_import_file(path)
    if kind == "unknown":
        return str(not_importable(path))
    name = detect_dataset(path)
    if name is not None:
        return (
            f"{path} holds the {name} dataset's original files; import them with --dataset {name} "
            f"(e.g. thoughtdesk import {_quoted(path)} --dataset {name})"
        )
    if kind == "table" and first_row_is_data(path):
        width = len(_columns(path, header=False))
        return (
            f"{path} is a table whose first row is data (no header); import it with --no-header and --map "
            f"naming columns by position 1 to {width}, e.g. --map question=1,answer={width} --no-header"
        )
    if kind == "table":
        columns = _columns(path)
        listed = f" Its columns: {', '.join(columns[:12])}{', ...' if len(columns) > 12 else ''}." if columns else ""
        return (
            f"{path} is a table, not a ThoughtSource collection; import it with --map naming the columns, "
            f"e.g. --map question=COLUMN,answer=COLUMN (or --dataset NAME if it is a catalogue dataset).{listed}"
        )
    return (
        f"{path} was not recognised as any dataset; name the dataset with --dataset NAME "
        "(see `thoughtdesk datasets`), or use --map FIELD=COLUMN,... for a table"
    )


def _columns(path: Path, *, header: bool = True) -> list[str]:
    try:
        columns, _ = preview(path, n=5, records=head_records(path, 5, header=header))
    except (ThoughtDeskError, DataFileError, OSError, ValueError):
        return []
    return columns


def _quoted(path: Path) -> str:
    text = str(path)
    return f"'{text}'" if any(c.isspace() for c in text) else text
