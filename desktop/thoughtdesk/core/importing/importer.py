"""Importing samples into a library: all or nothing, progress, cancel, duplicate handling.

Every importer (ThoughtSource JSON, the dataset loaders, generic files) produces
``(dataset, split, Sample, where)`` records and hands them to :func:`import_records`.

Every import is staged (issue 15, point 5): it writes into a hidden collection in transactions
of about :data:`CHUNK_SECONDS`, pausing :data:`YIELD_SECONDS` between them so another process
waiting to write (an annotation, a run's result) gets in within about two seconds instead of after
the whole import. Its last transaction makes it visible, so people see all of it at once or none:
for a new collection it names the hidden one; for an existing one (a merge) it moves the samples
the import replaces out into another hidden collection and the staged samples into the collection
(``Library.merge_staged``: UPDATEs of ``collection_id``; keys, CoTs, search index rows and
counters stay as written). Duplicates are looked for in the existing collection (the writer's
target) and within the file, so the duplicate policy acts as it did when a merge was one
transaction: ``fail`` writes nothing (the staged rows go), ``skip`` leaves the existing sample,
``replace`` puts the new one in the old one's position. The existing collection is untouched until
that last transaction. Hidden collections (a failed or cancelled import's staged rows, a merge's
replaced samples) are deleted in parts with pauses, as they were written (:func:`_drop_hidden`);
what a killed import left is deleted by the next ``Library.open``.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from thoughtdesk.core.datasets.thoughtsource import ThoughtSourceFile, write_collection
from thoughtdesk.core.datasets.ts_extras import side_path
from thoughtdesk.core.errors import Cancelled, DataFileError, LibraryError
from thoughtdesk.core.files import check_export_target
from thoughtdesk.core.importing.ts_critiques import CritiqueRestore, collection_with_critiques, has_critiques
from thoughtdesk.core.library import bulk_fts, sort_indexes
from thoughtdesk.core.library.reader import iter_collection
from thoughtdesk.core.library.records import Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.writer import OnDuplicate, SampleWriter

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from thoughtdesk.core.datasets.generic import ColumnMapping

Progress = Callable[[int, int], None]
Cancel = Callable[[], bool]

#: How often (in samples) progress is reported and cancel is checked.
TICK = 500
#: Seconds of writing a staged import commits at a time: what a waiting writer waits at most
#: (an annotation saved in another window).
CHUNK_SECONDS = 2.0
#: Seconds a staged import pauses after a commit when a writer waits (``Library.writers_waiting``:
#: a ThoughtDesk connection marks that it waits before it begins): longer than SQLite's busy
#: handler sleeps between tries (at most 100 ms), so the waiting process gets the library. With
#: nobody waiting there is no pause, so an import alone costs nothing for being staged.
YIELD_SECONDS = 0.11


class ImportHook(Protocol):
    """Rows an importer stores beside the samples (critiques and ratings), in the same transaction."""

    def queued(self, first_cot_pk: int, sample: Sample) -> None:
        """``sample`` was queued for writing; its generated CoTs get ``first_cot_pk``, +1, ... in order."""

    def finish(self, conn: sqlite3.Connection) -> None:
        """Every sample is written: store the rest (still inside the import's transaction)."""


@dataclass
class ImportOutcome:
    """What an import did."""

    collection: str
    collection_id: int
    created: bool
    inserted: int = 0
    replaced: int = 0
    skipped: int = 0
    bad_records: list[DataFileError] = field(default_factory=list)
    #: The skip log (the bad records skipped) written next to the library (see ``save_skip_log``), if any.
    skip_log_path: Path | None = None

    @property
    def summary(self) -> str:
        parts = [f"{self.inserted} sample(s) imported into {self.collection!r}"]
        if self.replaced:
            parts.append(f"{self.replaced} replaced")
        if self.skipped:
            parts.append(f"{self.skipped} duplicate(s) skipped")
        if self.bad_records:
            parts.append(f"{len(self.bad_records)} bad record(s) skipped")
        return ", ".join(parts)


def import_records(
    library: Library,
    records: Iterable[tuple[str, str, Sample, str]],
    *,
    collection: str,
    on_duplicate: OnDuplicate | str = OnDuplicate.FAIL,
    total: int | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    source: str = "",
    path: Path | None = None,
    hook: ImportHook | None = None,
) -> ImportOutcome:
    """Store ``records`` in ``collection`` (created if absent, else merged into), all or nothing,
    staged in chunks so other writers get in (module notes).

    ``hook`` is told which CoT keys each written sample got, and stores its own rows (critiques,
    ratings) at the end, inside the same transaction.

    Raises :class:`DataFileError` for a bad record, :class:`DuplicateSamplesError` when
    ``on_duplicate`` is ``fail`` and a sample exists, :class:`Cancelled` when ``cancel()`` turns
    true; in every such case the library is left exactly as it was.
    """
    name = collection.strip()
    target = library.collection_id(collection)  # an existing collection: merged into
    if target is None and not name:
        raise LibraryError("a collection needs a name")
    began = time.monotonic()
    what = Path(source).name or "records"
    log.info(
        "import of %s into %s %r started%s",
        what,
        "the new collection" if target is None else "the existing collection",
        collection,
        f" ({total} record(s))" if total else "",
    )
    with library.transaction():  # (waits, telling whom for, while another process writes)
        cid = library.create_staging_collection(source)
        # A large import builds the sample table's sort indexes afresh at its end (a quarter
        # of its time saved); Library.open builds them should the import be killed.
        rebuild = sort_indexes.worth_deferring(library.conn, total)
        if rebuild:
            sort_indexes.drop(library.conn)
            # ... and writes its search index in larger segments, merged less often (bulk_fts).
            bulk_fts.set_bulk(library.conn)
    try:
        with library.long_write(f"importing {Path(source).name or collection}"):
            writer = SampleWriter(library, cid, OnDuplicate(on_duplicate), target=target)
            iterator = iter(records)
            done = chunks = 0
            exhausted = False
            while not exhausted:
                if chunks:
                    _yield_to_writers(library)
                with library.transaction():
                    writer.resync()  # above keys other processes took meanwhile
                    started = time.monotonic()
                    for dataset, split, sample, where in iterator:
                        first_cot = writer.next_cot_pk
                        writer.add(dataset, split, sample, where=where, path=path)
                        if hook is not None and writer.next_cot_pk > first_cot:
                            hook.queued(first_cot, sample)
                        done += 1
                        if done % TICK == 0:
                            if cancel is not None and cancel():
                                raise Cancelled("import")
                            if progress is not None:
                                progress(done, total or 0)
                            if time.monotonic() - started >= CHUNK_SECONDS:
                                break
                    else:
                        exhausted = True
                    writer.flush()
                chunks += 1
            if done == 0:
                raise _nothing_read(path, source, collection)
            if chunks > 1:
                _yield_to_writers(library)
            # The step that makes it visible, alone in its transaction so that it holds the lock
            # no longer than it must (a merge's move: 0.5-1.7 s for 50,000 samples, docs/design.md).
            with library.transaction() as conn:
                result = writer.close(collection)
                if hook is not None:
                    hook.finish(conn)
                aside = None
                if target is None:
                    library.publish_collection(cid, name, source)
                else:
                    aside = library.merge_staged(cid, target, collection, writer.replaced_pks, writer.last_positions)
    except BaseException as error:
        _drop_hidden(library, cid)
        if rebuild:
            _end_bulk_fts(library)
            _rebuild_sort_indexes(library)
        log.info("import of %s into %r stopped, nothing kept: %s", what, collection, error or type(error).__name__)
        raise
    if rebuild:
        # Not in the step that publishes: the defaults merge sooner, and that step stays short.
        _end_bulk_fts(library)
        _build_sort_indexes(library)
    if aside is not None:  # the samples the merge replaced, already out of sight
        _drop_hidden(library, aside)
    if progress is not None:
        progress(done, total or done)
    log.info(
        "import of %s into %r finished: %d record(s) read, %d inserted, %d replaced, %d skipped in %.1f s",
        what,
        collection,
        done,
        result.inserted,
        result.replaced,
        result.skipped,
        time.monotonic() - began,
    )
    if target is None:
        return ImportOutcome(name, cid, True, result.inserted, result.replaced, result.skipped)
    return ImportOutcome(collection, target, False, result.inserted, result.replaced, result.skipped)


def _nothing_read(path: Path | None, source: str, collection: str) -> DataFileError:
    return DataFileError(
        path or source or collection,
        "holds no samples that could be read, so nothing was imported",
        hint="check that this is the file you meant",
    )


def _build_sort_indexes(library: Library) -> None:
    """Build the sort indexes an import dropped, one a transaction so that a waiting writer gets
    in between (about 2 s each at a million samples)."""
    with library.long_write("building the sample table's sort indexes"):
        for name, definition in sort_indexes.SORT_INDEXES:
            _yield_to_writers(library)
            with library.transaction() as conn:
                conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {definition}")


def _end_bulk_fts(library: Library) -> None:
    """The search index's default settings again at an import's end (best effort: if even that
    fails, the next ``Library.open`` sets them)."""
    try:
        with library.transaction() as conn:
            bulk_fts.set_default(conn)
    except Exception:
        pass


def _rebuild_sort_indexes(library: Library) -> None:
    """Build the sort indexes again after a failed import (best effort: if even that fails, the
    next ``Library.open`` builds them)."""
    try:
        _build_sort_indexes(library)
    except Exception:
        pass


def _yield_to_writers(library: Library) -> None:
    """Between a staged import's transactions: when another connection waits to write, pause
    so that it gets in now."""
    if library.writers_waiting():
        time.sleep(YIELD_SECONDS)


#: Samples deleted at a time when a hidden collection is deleted in parts (:func:`_drop_hidden`).
DROP_PART = 500


def _drop_hidden(library: Library, collection_id: int) -> None:
    """Delete a hidden collection: what a failed or cancelled import staged, or the samples a
    merge replaced. In transactions of about :data:`CHUNK_SECONDS` with pauses, as the import
    wrote it (deleting 50,000 samples with their CoTs takes seconds). Best effort: if even that
    fails, the next ``Library.open`` removes the rest, as after a kill."""
    try:
        gone = False
        while not gone:
            with library.transaction():
                started = time.monotonic()
                while True:  # at least one part a transaction
                    gone = library.drop_collection_part(collection_id, DROP_PART)
                    if gone or time.monotonic() - started >= CHUNK_SECONDS:
                        break
            if not gone:
                _yield_to_writers(library)
    except Exception:
        pass


def import_thoughtsource(
    library: Library,
    path: str | os.PathLike[str],
    *,
    collection: str | None = None,
    on_duplicate: OnDuplicate | str = OnDuplicate.FAIL,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> ImportOutcome:
    """Import a ThoughtSource collection file; the collection is named after the file by default.

    Critiques and ratings a ThoughtDesk export put into CoTs (the ``thoughtdesk_critiques``
    extension field) are stored again as critiques and ratings.
    """
    path = Path(path)
    source = ThoughtSourceFile(path)
    name = collection or path.stem
    restore = CritiqueRestore(path)
    records = ((r.dataset, r.split, r.sample, r.where) for r in source.records())
    return import_records(
        library,
        restore.samples(records),
        collection=name,
        on_duplicate=on_duplicate,
        total=len(source),
        progress=progress,
        cancel=cancel,
        source=str(path),
        path=path,
        hook=restore,
    )


def _limited(items: list[Sample], limit: int | None, seed: int | None) -> list[Sample]:
    if limit is None or limit >= len(items):
        return items
    if seed is None:
        return items[:limit]
    import random

    chosen = sorted(random.Random(seed).sample(range(len(items)), limit))
    return [items[i] for i in chosen]


#: ``on_error`` values: stop at the first bad record with nothing stored, or skip bad records.
ON_ERROR_CHOICES = ("abort", "skip")


def _selected(
    stream: Iterable[tuple[str, Sample]], name: str, limit: int | None, seed: int | None
) -> Iterator[tuple[str, str, Sample, str]]:
    """``(dataset, split, sample, where)`` records, ``limit`` per split (first N or seeded)."""
    if limit is None:
        # Streamed: no per-split lists, so a 200,000-record file is never held twice.
        for split, sample in stream:
            yield name, split, sample, ""
        return
    by_split: dict[str, list[Sample]] = {}
    for split, sample in stream:
        kept = by_split.setdefault(split, [])
        if seed is not None or len(kept) < limit:
            kept.append(sample)
    for split, items in by_split.items():
        for sample in _limited(items, limit, seed):
            yield name, split, sample, ""


def import_dataset(
    library: Library,
    path: str | os.PathLike[str],
    *,
    dataset: str | None = None,
    mapping: str | ColumnMapping | None = None,
    collection: str | None = None,
    splits: list[str] | None = None,
    limit: int | None = None,
    seed: int | None = None,
    on_duplicate: OnDuplicate | str = OnDuplicate.FAIL,
    on_error: str = "abort",
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> ImportOutcome:
    """Import a dataset from its original files (``dataset``) or any table file (``mapping``).

    ``mapping`` is a :class:`ColumnMapping`, ``field=column,...`` text, or a saved mapping's name.
    ``limit`` keeps the first N samples of each split, or N drawn at random with ``seed``.
    ``on_error="abort"`` stops at the first bad record (its :class:`DataFileError` names file
    and line) and stores nothing; ``"skip"`` leaves bad records out and lists them in
    ``ImportOutcome.bad_records``. ``progress(done, total)`` counts samples (total 0 = unknown).
    """
    from thoughtdesk.core.datasets import get_dataset, load_dataset, load_generic
    from thoughtdesk.core.datasets.generic import ColumnMapping

    if on_error not in ON_ERROR_CHOICES:
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR_CHOICES)}, not {on_error!r}")
    path = Path(path)
    errors: list[DataFileError] = []
    policy = "raise" if on_error == "abort" else "skip"
    if mapping:
        name = dataset or path.stem
        if isinstance(mapping, ColumnMapping):
            column_mapping = mapping
        else:
            from thoughtdesk.core.importing.mappings import resolve_mapping

            column_mapping = resolve_mapping(mapping)  # field=column text, or a saved name
        stream = load_generic(path, column_mapping, splits=splits, on_error=policy, errors=errors)
    else:
        if dataset is None:
            raise ValueError("import_dataset needs a dataset name or a column mapping")
        get_dataset(dataset)  # a clear error for an unknown name
        name = dataset
        stream = load_dataset(dataset, path, splits=splits, on_error=policy, errors=errors)
    report = import_records(
        library,
        _selected(stream, name, limit, seed),
        collection=collection or name,
        on_duplicate=on_duplicate,
        total=None,
        progress=progress,
        cancel=cancel,
        source=str(path),
        path=path,
    )
    report.bad_records = errors
    return report


def export_thoughtsource(
    library: Library,
    collection: str,
    path: str | os.PathLike[str],
    *,
    progress: Callable[[int], None] | None = None,
    side_file: bool = True,
) -> int:
    """Write a collection as a ThoughtSource JSON file; return the number of samples written.

    CoTs with critiques or explanation ratings carry them in the ``thoughtdesk_critiques``
    extension field (see :mod:`thoughtdesk.core.importing.ts_critiques`). That field and every
    other key outside ThoughtSource's schema go to the side file beside ``path``
    (:mod:`thoughtdesk.core.datasets.ts_extras`), so ThoughtSource's loader opens the export;
    ``side_file=False`` keeps them inline (an export to standard output).
    """
    started = time.monotonic()
    cid = library.require_collection(collection)
    if side_file:  # the side file beside the export is written too: the same checks for its name
        check_export_target(side_path(os.fspath(path)), libraries=[library.path], force=True)
    splits = collection_with_critiques(library, cid) if has_critiques(library, cid) else iter_collection(library, cid)
    count = write_collection(path, splits, progress=progress, side_file=side_file)
    log.info(
        "exported %d sample(s) of %r to %s (ThoughtSource JSON) in %.1f s",
        count,
        collection,
        path,
        time.monotonic() - started,
    )
    return count
