"""DS Critique Bank files into a library and back out (docs/critiques-dscb.md).

Import: the file's records are read and validated first (a bad record stops everything, or is
skipped and reported with ``on_error="skip"``), grouped into one sample per question (dataset,
qid) in the order questions first appear, then written in one transaction through
:func:`thoughtdesk.core.importing.importer.import_records` (progress, cancel and the duplicate
policy of every import) with each record's critiques and ratings stored by a hook in the same
transaction.

Dataset and split: DSCB's ``dataset`` field (e.g. ``ARC-Challenge``) is the ThoughtDesk dataset;
the split is the file's kind, from its name (``DSCB-train-silver.jsonl`` -> ``train-silver``)
unless given. A question appearing in two files imported into one collection is therefore two
samples (one per split), each with the records of its file.

Export: every generated CoT of a collection becomes one record; records imported from DSCB come
back equal as JSON to what was read, in file order within each split.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thoughtdesk.core.critiques.dscb import COT_EXTRA, DscbRecord, read_dscb
from thoughtdesk.core.critiques.dscb_export import record_from
from thoughtdesk.core.critiques.dscb_mapping import cot_for, queue_rows, sample_for
from thoughtdesk.core.critiques.store import ImportedRows, critiques_for_cots, explanation_ratings_for_cots
from thoughtdesk.core.errors import Cancelled, DataFileError
from thoughtdesk.core.files import export_file
from thoughtdesk.core.importing.importer import (
    ON_ERROR_CHOICES,
    TICK,
    Cancel,
    ImportOutcome,
    Progress,
    import_records,
)
from thoughtdesk.core.library.reader import StoredSample, iter_stored_split
from thoughtdesk.core.library.records import Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.writer import OnDuplicate

_PREFIX = re.compile(r"^(?:ds[-_ ]?critique[-_ ]?bank|dscb)[-_ .]+", re.IGNORECASE)
#: A question's records (their critiques and annotations become rows once their CoTs have keys).
_Payload = list[dict[str, Any]]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Automatic cycle collection off while an import builds its many small records (the
    collector would walk all of them again and again: a 10,000-record file imports about twice
    as fast without it); restored after. In the GUI it is off already (ui/app/gc_guard.py)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def split_for(path: str | Path) -> str:
    """The split of a DSCB file: its name without extension and a leading ``DSCB-``
    (``DSCB-dev-crowd-anno.jsonl`` -> ``dev-crowd-anno``)."""
    stem = Path(path).name.split(".")[0]
    return _PREFIX.sub("", stem) or stem


class _Question:
    """One question's sample and its records' critiques, in record order."""

    __slots__ = ("payload", "sample", "where")

    def __init__(self, sample: Sample, where: str) -> None:
        self.sample = sample
        self.where = where
        self.payload: _Payload = []


@dataclass
class DscbImportOutcome(ImportOutcome):
    """An import outcome that also counts DSCB records (generated CoTs), critiques and ratings."""

    records: int = 0
    critiques: int = 0
    ratings: int = 0

    @property
    def summary(self) -> str:
        parts = [
            f"{self.records} DS Critique Bank record(s) of {self.inserted + self.replaced} question(s) imported "
            f"into {self.collection!r} with {self.critiques} critique(s) and {self.ratings} human rating(s)"
        ]
        if self.replaced:
            parts.append(f"{self.replaced} question(s) replaced")
        if self.skipped:
            parts.append(f"{self.skipped} question(s) already there skipped")
        if self.bad_records:
            parts.append(f"{len(self.bad_records)} bad record(s) skipped")
        return ", ".join(parts)


class _Hook:
    """Stores each written sample's critiques and ratings (see ImportHook): their rows are built
    as the sample's CoTs get their keys and inserted in the import's last transaction."""

    def __init__(self, library: Library) -> None:
        self.records = self.critiques = self.ratings = 0
        self.current: tuple[Sample, _Payload] | None = None
        self.rows = ImportedRows(library.conn)

    def queued(self, first_cot_pk: int, sample: Sample) -> None:
        if self.current is None or self.current[0] is not sample:
            return
        self.records += len(self.current[1])
        for offset, data in enumerate(self.current[1]):
            critiques, ratings = queue_rows(self.rows, first_cot_pk + offset, data)
            self.critiques += critiques
            self.ratings += ratings
        self.current = None

    def finish(self, conn: sqlite3.Connection) -> None:
        self.rows.write()


def _group(records: Iterator[DscbRecord], cancel: Cancel | None) -> dict[tuple[str, str], _Question]:
    questions: dict[tuple[str, str], _Question] = {}
    for count, record in enumerate(records, start=1):
        data = record.data
        key = record.key
        question = questions.get(key)
        if question is None:
            question = questions[key] = _Question(sample_for(data), f"line {record.line}")
        question.sample.generated_cot.append(cot_for(data, question.sample, record.line))
        question.payload.append(data)
        if count % TICK == 0 and cancel is not None and cancel():
            raise Cancelled("import")
    return questions


def import_dscb(
    library: Library,
    path: str | os.PathLike[str],
    *,
    collection: str | None = None,
    split: str | None = None,
    on_duplicate: OnDuplicate | str = OnDuplicate.FAIL,
    on_error: str = "abort",
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> DscbImportOutcome:
    """Import a DS Critique Bank JSON Lines file (any of its five kinds) into ``collection``
    (default: the file's name). ``split`` defaults to :func:`split_for`. All or nothing: a bad
    record raises :class:`DataFileError` naming the file, line and field, and nothing is stored
    (``on_error="skip"`` leaves bad records out and lists them in ``bad_records``). Duplicates
    (a question already in the collection's split) follow ``on_duplicate`` as in every import.
    """
    if on_error not in ON_ERROR_CHOICES:
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR_CHOICES)}, not {on_error!r}")
    with _collector_paused():
        return _import(library, Path(path), collection, split, on_duplicate, on_error, progress, cancel)


def _import(
    library: Library,
    path: Path,
    collection: str | None,
    split: str | None,
    on_duplicate: OnDuplicate | str,
    on_error: str,
    progress: Progress | None,
    cancel: Cancel | None,
) -> DscbImportOutcome:
    split = split or split_for(path)
    errors: list[DataFileError] = []
    questions = _group(read_dscb(path, on_error=on_error, errors=errors), cancel)
    hook = _Hook(library)

    def records() -> Iterator[tuple[str, str, Sample, str]]:
        for (dataset, _qid), question in questions.items():
            hook.current = (question.sample, question.payload)
            yield dataset, split, question.sample, question.where

    report = import_records(
        library,
        records(),
        collection=collection or path.stem,
        on_duplicate=on_duplicate,
        total=len(questions),
        progress=progress,
        cancel=cancel,
        source=str(path),
        path=path,
        hook=hook,
    )
    return DscbImportOutcome(
        **{**vars(report), "bad_records": errors},
        records=hook.records,
        critiques=hook.critiques,
        ratings=hook.ratings,
    )


# Export -------------------------------------------------------------------------------------------


def _records(library: Library, batch: list[tuple[str, StoredSample]]) -> Iterator[tuple[int | None, dict[str, Any]]]:
    cot_pks = [pk for _, stored in batch for pk in stored.cot_pks]
    critiques = critiques_for_cots(library, cot_pks)
    ratings = explanation_ratings_for_cots(library, cot_pks)
    for dataset, stored in batch:
        for pk, cot in zip(stored.cot_pks, stored.sample.generated_cot, strict=True):
            fidelity = cot.extra.get(COT_EXTRA)
            line = fidelity.get("line") if isinstance(fidelity, dict) else None
            record = record_from(dataset, stored.sample, cot, critiques.get(pk, ()), ratings.get(pk, ()))
            yield (line if isinstance(line, int) else None), record


def dscb_records(library: Library, collection: str) -> list[dict[str, Any]]:
    """Every generated CoT of ``collection`` as a DSCB record: split by split (in stored order),
    within a split imported records in their file's line order, then the others in stored order."""
    cid = library.require_collection(collection)
    by_split: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
    sequence = 0
    for dataset, split in library.splits(cid):
        rows = by_split.setdefault(split, [])
        batch: list[tuple[str, StoredSample]] = []
        stream = iter_stored_split(library, cid, dataset, split)
        while True:
            stored = next(stream, None)
            if stored is not None:
                batch.append((dataset, stored))
            if batch and (stored is None or len(batch) >= 500):
                for line, record in _records(library, batch):
                    sequence += 1
                    # Imported records sort by their line; the rest after them, as stored.
                    rows.append((line if line is not None else 1 << 62, sequence, record))
                batch = []
            if stored is None:
                break
    out: list[dict[str, Any]] = []
    for rows in by_split.values():
        rows.sort(key=lambda row: (row[0], row[1]))
        out.extend(record for _, _, record in rows)
    return out


def export_dscb(
    library: Library,
    collection: str,
    path: str | os.PathLike[str],
    *,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Write ``collection`` as DS Critique Bank JSON Lines; return the number of records.

    Written through :func:`thoughtdesk.core.files.export_file` (a part file renamed at the end), so a failure never leaves half a file.
    """
    path = Path(path)
    records = dscb_records(library, collection)
    with export_file(path) as out:
        for count, record in enumerate(records, start=1):
            out.write(json.dumps(record, ensure_ascii=False))
            out.write("\n")
            if progress is not None and count % 1000 == 0:
                progress(count)
    logging.getLogger(__name__).info(
        "exported %d DS Critique Bank record(s) of %r to %s", len(records), collection, path
    )
    return len(records)
