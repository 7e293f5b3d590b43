"""The first rows of a table file as a column mapping turns them into samples (live preview).

Unlike :func:`load_generic`, a preview never stops at a bad record: each row comes back with its
line and either the sample it maps to or the reason it cannot be mapped, in file order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from thoughtdesk.core.datasets.generic import ColumnMapping, mapped_sample, table_records
from thoughtdesk.core.datasets.loading import RecordError
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import Sample


@dataclass(frozen=True, slots=True)
class PreviewRow:
    """One previewed record: ``line`` is 1-based; exactly one of ``sample``/``error`` is set."""

    line: int | None
    split: str | None = None
    sample: Sample | None = None
    error: str | None = None


def preview_mapping(path: str | Path, mapping: ColumnMapping, n: int = 10, records=None) -> list[PreviewRow]:
    """The first ``n`` records of ``path`` mapped through ``mapping``, errors inline.

    ``records`` (from :func:`~thoughtdesk.core.datasets.generic.head_records`) saves reading the
    file again. Raises :class:`DataFileError` only when the file as a whole cannot be read
    (missing, unsupported type, a JSON document with a syntax error).
    """
    source = Path(path)
    if records is None:
        if not source.is_file():
            raise DataFileError(source, "no such file")
        records = table_records(source, header=mapping.header)
    rows: list[PreviewRow] = []
    for index, (line, record) in enumerate(records):
        if len(rows) >= n:
            break
        if isinstance(record, DataFileError):
            rows.append(PreviewRow(line, error=record.message))
            continue
        try:
            split, sample = mapped_sample(record, index, mapping, source.stem)
        except RecordError as error:
            where = f"field {error.field}: " if error.field else ""
            rows.append(PreviewRow(line, error=where + error.message))
            continue
        rows.append(PreviewRow(line, split, sample))
    return rows
