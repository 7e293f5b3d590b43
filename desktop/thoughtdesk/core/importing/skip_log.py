"""The skip log of an import that skipped bad records: its text and the file saved beside the library.

With ``on_error="skip"`` an import leaves malformed records out; the user must be able to see
which ones (file, line, reason) after the import, in the GUI and from the CLI, and later. The
report is saved as ``<library stem>.import-<timestamp>.txt`` in the library's folder.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.importing.importer import ImportOutcome


def bad_record_line(error: DataFileError) -> str:
    """One bad record as ``file<TAB>line<TAB>reason`` (line is ``-`` when unknown)."""
    reason = error.message
    if error.where:
        reason = f"{error.where}: {reason}"
    if error.hint:
        reason += f" ({error.hint})"
    line = "-" if error.line is None else str(error.line)
    return f"{error.path if error.path is not None else '<input>'}\t{line}\t{reason}"


def skip_log_text(report: ImportOutcome, source: str | Path, when: datetime | None = None) -> str:
    """The plain-text report: what was imported from where, then one bad record per line."""
    when = when or datetime.now()
    lines = [
        f"ThoughtDesk import skip log, {when.isoformat(timespec='seconds')}",
        f"Source: {source}",
        f"Collection: {report.collection}",
        f"Result: {report.summary}",
        f"Bad records skipped: {len(report.bad_records)}",
        "",
        "file\tline\treason",
    ]
    lines.extend(bad_record_line(error) for error in report.bad_records)
    return "\n".join(lines) + "\n"


def skip_log_path(library_path: str | Path, when: datetime) -> Path:
    """``<library folder>/<library stem>.import-<YYYYmmdd-HHMMSS>.txt``, made unique if taken."""
    library_path = Path(library_path)
    stem = f"{library_path.stem}.import-{when.strftime('%Y%m%d-%H%M%S')}"
    candidate = library_path.with_name(stem + ".txt")
    number = 1
    while candidate.exists():
        number += 1
        candidate = library_path.with_name(f"{stem}-{number}.txt")
    return candidate


def save_skip_log(
    library_path: str | Path, report: ImportOutcome, source: str | Path, when: datetime | None = None
) -> Path | None:
    """Write the report beside the library when records were skipped; set and return its path.

    Returns ``None`` (and writes nothing) when the import skipped no bad record.
    """
    if not report.bad_records:
        return None
    when = when or datetime.now()
    path = skip_log_path(library_path, when)
    path.write_text(skip_log_text(report, source, when), encoding="utf-8")
    report.skip_log_path = path
    return path
