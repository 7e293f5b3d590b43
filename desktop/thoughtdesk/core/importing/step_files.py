"""Step-labelled files into a library and back out (docs/steps.md): ProcessBench (a JSON array
or JSON Lines) and PRM800K (JSON Lines), and ``prm-jsonl`` training records.

Import: every record is read and checked first (a bad one stops the import with one line
naming the file, the line and the field; nothing is stored), then the samples go through
:func:`thoughtdesk.core.importing.importer.import_records` (progress, cancel, the duplicate
policy and the all-or-nothing staging of every import) and the step labels and reviews are
written by its hook in the same last transaction.

Export: ``processbench`` and ``prm800k`` write the records of a collection back, those that
were imported equal as JSON to the file's (unknown keys kept, in the file's line order within
each split); ``prm-jsonl`` writes ``{"prompt", "completions", "labels"}`` per labelled CoT and
reviewer, as TRL's stepwise (PRM) trainer reads them.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

from thoughtdesk.core.datasets.readers import (
    JsonLineError,
    first_json_item,
    first_jsonl_record,
    iter_json_container,
    iter_jsonl,
)
from thoughtdesk.core.errors import Cancelled, DataFileError
from thoughtdesk.core.files import export_file
from thoughtdesk.core.importing.formats import STEP_FORMATS
from thoughtdesk.core.importing.importer import TICK, Cancel, ImportOutcome, Progress, import_records
from thoughtdesk.core.library.reader import StoredSample, iter_stored_split
from thoughtdesk.core.library.records import Answer, GeneratedCot, Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.library.writer import OnDuplicate
from thoughtdesk.core.steps import prm800k, processbench
from thoughtdesk.core.steps.split import cot_steps
from thoughtdesk.core.steps.store import ImportedReview, ImportedStepRows, StepReview, StepTarget, reviews_for_cots

log = logging.getLogger(__name__)
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode

StepFormat = Literal["processbench", "prm800k"]


def step_file_format(path: str | Path) -> StepFormat | None:
    """``"processbench"`` or ``"prm800k"`` when the first record of ``path`` has that shape."""
    path = Path(path)
    if not path.is_file():
        return None
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            first = first_json_item(path)
            if isinstance(first, list):  # never: first_json_item gives the first element
                first = first[0] if first else None
        elif suffix in (".jsonl", ".jsonlines", ".ndjson"):
            first = first_jsonl_record(path)
        else:
            return None
    except (DataFileError, OSError, ValueError):
        return None
    if prm800k.is_record(first):
        return "prm800k"
    if processbench.is_record(first):
        return "processbench"
    return None


def split_for(path: str | Path) -> str:
    """The split of a file: its name without extension (``phase2_train``, ``gsm8k``)."""
    return Path(path).name.split(".")[0] or "data"


def _records(path: Path, keys: Callable[[Any], int] | None = None) -> Iterator[tuple[int, Any]]:
    """(line, value) of every record of a JSON array or JSON Lines file (``keys``: counts the
    keys of a record of the expected shape, which spares JSON Lines most duplicate-key checks)."""
    try:
        if path.suffix.lower() == ".json":
            for line, _key, value in iter_json_container(path):
                yield line, value
            return
        for line, value in iter_jsonl(path, keys):
            if isinstance(value, JsonLineError):
                raise DataFileError(path, f"invalid JSON: {value.message}", line=line)
            yield line, value
    except OSError as error:
        raise DataFileError(path, f"cannot be read: {error.strerror or error}") from None


@dataclass
class StepImportOutcome(ImportOutcome):
    """An import outcome that also counts solutions (CoTs), step labels and reviews."""

    format: str = ""
    solutions: int = 0
    step_labels: int = 0
    reviews: int = 0

    @property
    def summary(self) -> str:
        name = "ProcessBench" if self.format == "processbench" else "PRM800K"
        parts = [
            f"{self.solutions} {name} solution(s) of {self.inserted + self.replaced} problem(s) imported into "
            f"{self.collection!r} with {self.step_labels} step label(s) and {self.reviews} step review(s)"
        ]
        if self.replaced:
            parts.append(f"{self.replaced} problem(s) replaced")
        if self.skipped:
            parts.append(f"{self.skipped} problem(s) already there skipped")
        return ", ".join(parts)


_Payload = list[StepReview | ImportedReview]


class _Hook:
    """Keeps each written sample's step labels by CoT key, and writes them at the end."""

    def __init__(self) -> None:
        self.pending: list[tuple[int, StepReview | ImportedReview]] = []
        self.payloads: dict[int, _Payload] = {}  # id(sample) -> its CoTs' labels
        self.labels = self.reviews = 0

    def queued(self, first_cot_pk: int, sample: Sample) -> None:
        payload = self.payloads.pop(id(sample), None)
        if payload is None:
            return
        for offset, review in enumerate(payload):
            self.pending.append((first_cot_pk + offset, review))

    def finish(self, conn: sqlite3.Connection) -> None:
        rows = ImportedStepRows()
        for cot_pk, review in self.pending:
            rows.add(StepTarget(0, cot_pk), review)  # a CoT's row names the CoT only
            self.labels += len(review.labels) if isinstance(review, StepReview) else review.labels
            self.reviews += 1
            if len(rows.rows) >= 20_000:
                rows.write(conn)
        rows.write(conn)
        self.pending.clear()


@dataclass
class StepFile:
    """A ProcessBench or PRM800K file read and checked, ready to import: its samples (with
    their CoTs) and, by sample, each CoT's step labels and review."""

    path: Path
    kind: StepFormat
    samples: list[Sample]
    payloads: dict[int, _Payload]
    solutions: int


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Automatic cycle collection off while a file's many small records are built (the
    collector would walk them again and again; PRM800K's million steps), restored after. In the
    GUI it is off already (ui/app/gc_guard.py)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_step_file(
    path: str | os.PathLike[str], *, kind: StepFormat | None = None, cancel: Cancel | None = None
) -> StepFile:
    """Read and check a whole ProcessBench or PRM800K file (``kind``: found from its first
    record when not given). A bad record raises :class:`DataFileError` naming the file, line
    and field; nothing is opened or written."""
    with _collector_paused():
        return _read(Path(path), kind, cancel)


def _read(path: Path, kind: StepFormat | None, cancel: Cancel | None) -> StepFile:
    kind = kind or step_file_format(path)
    if kind is None:
        raise DataFileError(path, "is neither a ProcessBench nor a PRM800K file (its first record has neither shape)")
    date = now_iso()
    samples: list[Sample] = []
    payloads: dict[int, _Payload] = {}
    solutions = 0
    if kind == "processbench":
        seen: dict[str, int] = {}
        for count, (line, value) in enumerate(_records(path), start=1):
            record = processbench.check_record(value, path, line)
            sample, label = processbench.to_sample(record, line)
            if sample.id in seen:
                raise DataFileError(
                    path, f"id {sample.id!r} is also the id on line {seen[sample.id]}", line=line, where="field id"
                )
            seen[sample.id] = line
            payloads[id(sample)] = [StepReview(processbench.AUTHOR, first_error=label, date=date)]
            samples.append(sample)
            solutions += 1
            if count % TICK == 0 and cancel is not None and cancel():
                raise Cancelled("import")
    else:
        by_key: dict[tuple[Any, ...], Sample] = {}
        for count, (line, value) in enumerate(_records(path, prm800k.record_keys), start=1):
            record = prm800k.check_record(value, path, line)
            key = prm800k.sample_key(record)
            found = by_key.get(key)
            if found is None:
                found = by_key[key] = prm800k.sample_for(record)
                payloads[id(found)] = []
                samples.append(found)
            sample = found
            cot, review = prm800k.to_cot(record, line, date)
            sample.generated_cot.append(cot)
            payloads[id(sample)].append(review)
            solutions += 1
            if count % TICK == 0 and cancel is not None and cancel():
                raise Cancelled("import")
    if not samples:
        raise DataFileError(path, "holds no record: there is nothing to import")
    return StepFile(path, kind, samples, payloads, solutions)


def import_step_file(
    library: Library,
    path: str | os.PathLike[str] | StepFile,
    *,
    kind: StepFormat | None = None,
    collection: str | None = None,
    split: str | None = None,
    on_duplicate: OnDuplicate | str = OnDuplicate.FAIL,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> StepImportOutcome:
    """Import a ProcessBench or PRM800K file (a path, or one :func:`read_step_file` read) into
    ``collection`` (default: the file's name), split ``split`` (default: the file's name). All
    or nothing: a bad record raises :class:`DataFileError` naming the file, line and field,
    and the library is left as it was."""
    with _collector_paused():
        read = path if isinstance(path, StepFile) else read_step_file(path, kind=kind, cancel=cancel)
        return _import(library, read, collection, split, on_duplicate, progress, cancel)


def _import(
    library: Library,
    read: StepFile,
    collection: str | None,
    split: str | None,
    on_duplicate: OnDuplicate | str,
    progress: Progress | None,
    cancel: Cancel | None,
) -> StepImportOutcome:
    hook = _Hook()
    hook.payloads = read.payloads
    dataset = processbench.DATASET if read.kind == "processbench" else prm800k.DATASET
    where = split or split_for(read.path)

    def records() -> Iterator[tuple[str, str, Sample, str]]:
        for sample in read.samples:
            yield dataset, where, sample, f"sample {sample.id}"

    report = import_records(
        library,
        records(),
        collection=collection or read.path.stem,
        on_duplicate=on_duplicate,
        total=len(read.samples),
        progress=progress,
        cancel=cancel,
        source=str(read.path),
        path=read.path,
        hook=hook,
    )
    return StepImportOutcome(
        **vars(report), format=read.kind, solutions=read.solutions, step_labels=hook.labels, reviews=hook.reviews
    )


# Export -------------------------------------------------------------------------------------------


@dataclass
class _Cot:
    sample: Sample
    cot: GeneratedCot
    steps: list[str]
    reviews: list[StepReview] = field(default_factory=list)

    def line(self, meta_key: str) -> int | None:
        meta = self.cot.extra.get(meta_key) if isinstance(self.cot.extra, dict) else None
        line = meta.get("line") if isinstance(meta, dict) else None
        return line if isinstance(line, int) else None


def _cots(library: Library, collection: str) -> Iterator[tuple[str, list[_Cot]]]:
    """Every generated CoT of ``collection`` with its step list, labels and reviews, by split."""
    cid = library.require_collection(collection)
    for dataset, split in library.splits(cid):
        batch: list[StoredSample] = []
        stream = iter_stored_split(library, cid, dataset, split)
        while True:
            stored = next(stream, None)
            if stored is not None:
                batch.append(stored)
            if batch and (stored is None or len(batch) >= 500):
                pks = [pk for s in batch for pk in s.cot_pks]
                reviews = reviews_for_cots(library.conn, pks)
                out = []
                for s in batch:
                    for pk, cot in zip(s.cot_pks, s.sample.generated_cot, strict=True):
                        steps = [step.text for step in cot_steps(cot.cot, cot.extra)]
                        out.append(_Cot(s.sample, cot, steps, reviews.get(pk, [])))
                yield split, out
                batch = []
            if stored is None:
                break


def _in_file_order(library: Library, collection: str, meta_key: str) -> Iterator[_Cot]:
    """The CoTs split by split (in the order first stored); within a split imported ones by
    their line, then the others in stored order. The order is read first (keys only), then the
    CoTs in batches, so a 100,000-solution export never holds them all."""
    cid = library.require_collection(collection)
    splits = {key: index for index, key in enumerate(library.splits(cid))}
    rows = library.conn.execute(
        "SELECT s.dataset, s.split, json_extract(c.extra, ?), s.position, c.position, c.id "
        "FROM generated_cot c JOIN sample s ON s.id = c.sample_pk WHERE s.collection_id = ?",
        (f"$.{meta_key}.line", cid),
    ).fetchall()
    order = sorted(
        rows,
        key=lambda r: (splits.get((r[0], r[1]), len(splits)), r[2] if isinstance(r[2], int) else 1 << 62, r[3], r[4]),
    )
    pks = [row[5] for row in order]
    for start in range(0, len(pks), 500):
        chunk = pks[start : start + 500]
        loaded = _load_cots(library, chunk)
        yield from (loaded[pk] for pk in chunk if pk in loaded)


def _json_list(text: str | None) -> list[Any]:
    value = json.loads(text) if text else None
    return value if isinstance(value, list) else []


def _load_cots(library: Library, pks: list[int]) -> dict[int, _Cot]:
    """The CoTs ``pks`` with what an export of them needs (three queries)."""
    marks = ",".join("?" * len(pks))
    correct: dict[int, bool] = {}
    for cot_pk, value in library.conn.execute(
        f"SELECT cot_pk, correct_answer FROM answer WHERE cot_pk IN ({marks}) ORDER BY cot_pk, position", pks
    ):
        if value is not None and cot_pk not in correct:
            correct[cot_pk] = bool(value)
    reviews = reviews_for_cots(library.conn, pks)
    out: dict[int, _Cot] = {}
    for pk, text, extra, model, sample_id, question, reference, gold in library.conn.execute(
        "SELECT c.id, c.cot, c.extra, c.model, s.sample_id, s.question, s.cot, s.answer "
        f"FROM generated_cot c JOIN sample s ON s.id = c.sample_pk WHERE c.id IN ({marks})",
        pks,
    ):
        fields = _decode(extra) if extra else {}
        fields = fields if isinstance(fields, dict) else {}
        answers = [Answer(correct_answer=correct[pk])] if pk in correct else []
        cot = GeneratedCot(cot=text, model=model, extra=fields, answers=answers)
        sample = Sample(id=sample_id, question=question, cot=_json_list(reference), answer=_json_list(gold))
        steps = [step.text for step in cot_steps(text, fields)]
        out[pk] = _Cot(sample, cot, steps, reviews.get(pk, []))
    return out


def _reference_review(cot: _Cot, author: str | None) -> StepReview | None:
    """The review an export writes: the imported author's, else the latest human one with a first error."""
    for review in cot.reviews:
        if review.author == author and review.first_error is not None:
            return review
    human = [r for r in cot.reviews if r.kind == "human" and r.first_error is not None]
    return max(human, key=lambda r: r.date) if human else None


@dataclass
class StepExport:
    """What an export wrote: records, and CoTs left out (no label, or not from that format)."""

    records: int = 0
    left_out: int = 0


def _write(path: Path, records: Iterator[dict[str, Any]], progress: Callable[[int], None] | None) -> int:
    count = 0
    with export_file(path) as out:
        for record in records:
            out.write(_encode(record).decode("utf-8"))  # msgspec: 3x json.dumps, keys in order
            out.write("\n")
            count += 1
            if progress is not None and count % 1000 == 0:
                progress(count)
    return count


def export_steps(
    library: Library,
    collection: str,
    path: str | os.PathLike[str],
    fmt: str,
    *,
    progress: Callable[[int], None] | None = None,
) -> StepExport:
    """Write ``collection`` as ``fmt`` (:data:`STEP_FORMATS`), JSON Lines, through a part file."""
    result = StepExport()

    def processbench_records() -> Iterator[dict[str, Any]]:
        for cot in _in_file_order(library, collection, processbench.META):
            review = _reference_review(cot, processbench.AUTHOR)
            if review is None:
                result.left_out += 1
                continue
            yield processbench.record_from(cot.sample, cot.cot, cot.steps, review.first_error)

    def prm800k_records() -> Iterator[dict[str, Any]]:
        for cot in _in_file_order(library, collection, prm800k.META):
            meta = cot.cot.extra.get(prm800k.META) if isinstance(cot.cot.extra, dict) else None
            author = meta.get("author") if isinstance(meta, dict) else None
            review = next((r for r in cot.reviews if r.author == author), None)
            record = prm800k.record_from(cot.sample, cot.cot, cot.steps, review)
            if record is None:
                result.left_out += 1
                continue
            yield record

    def prm_jsonl_records() -> Iterator[dict[str, Any]]:
        for _split, cots in _cots(library, collection):
            for cot in cots:
                written = False
                for labels in _training_labels(cot):
                    yield {"prompt": cot.sample.question, "completions": cot.steps[: len(labels)], "labels": labels}
                    written = True
                if not written:
                    result.left_out += 1

    makers = {"processbench": processbench_records, "prm800k": prm800k_records, "prm-jsonl": prm_jsonl_records}
    if fmt not in makers:
        raise ValueError(f"format must be one of {', '.join(STEP_FORMATS)}, not {fmt!r}")
    result.records = _write(Path(path), makers[fmt](), progress)
    log.info("exported %d %s record(s) of %r to %s", result.records, fmt, collection, path)
    return result


def _training_labels(cot: _Cot) -> Iterator[list[bool]]:
    """Per human author of ``cot``: a label per step up to and including the first wrong one
    (True: rated 0 or +1; False: -1). From the author's ratings up to the first unrated step,
    else from the author's first error (-1: every step True)."""
    for review in cot.reviews:
        if review.kind != "human":
            continue
        ratings = review.ratings()
        out: list[bool] = []
        if ratings:
            for index in range(len(cot.steps)):
                rating = ratings.get(index)
                if rating is None:
                    break
                out.append(rating >= 0)
                if rating < 0:
                    break
        elif review.first_error is not None:
            first = review.first_error
            out = [True] * len(cot.steps) if first < 0 else [True] * first + [False]
        if out:
            yield out
