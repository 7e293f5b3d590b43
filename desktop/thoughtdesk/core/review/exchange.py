"""Exchanging annotations between reviewers: export one author's, import and merge anyone's.

The exchange format (``thoughtdesk-annotations``, documented in docs/review.md) keys every
annotation by stable ids (collection, dataset, split, sample id, CoT id) and carries a hash of the
CoT's text, so a file applied to a library whose CoT text differs is caught, not misapplied.
Import also reads ThoughtSource collection files that carry annotations (the annotator's output).

Merging is per slot (author, CoT, key, span): no author's annotation ever overwrites another's;
for the same slot the later date wins and an identical value is left alone, so re-importing a
file changes nothing. The whole import is one transaction.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thoughtdesk.core.errors import DataFileError, ThoughtDeskError
from thoughtdesk.core.files import check_export_target, export_file
from thoughtdesk.core.library import counters
from thoughtdesk.core.library.records import Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.annotations import (
    decode_value,
    slot_rows,
    span_from_extra,
    utc_now,
    write_slot,
)
from thoughtdesk.core.review.merge_outcome import MergeOutcome, Unmatched
from thoughtdesk.core.review.rating_exchange import (
    CRITIQUE_KEY,
    EXPLANATION_KEY,
    IncomingRating,
    critique_of,
    export_ratings,
    merge_rating,
    read_ratings,
)
from thoughtdesk.core.review.step_exchange import (
    STEPS_KEY,
    IncomingStepLabels,
    export_step_labels,
    merge_step_labels,
    read_step_labels,
)
from thoughtdesk.core.review.types import Span

FORMAT_NAME = "thoughtdesk-annotations"
FORMAT_VERSION = 1


def cot_content_hash(text: str | None) -> str:
    """``"sha256:<hex>"`` of a CoT's text (UTF-8), to catch a CoT that changed since export."""
    return "sha256:" + hashlib.sha256((text or "").encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class ExportCounts:
    """What an export wrote: annotations, explanation ratings and critique ratings."""

    annotations: int
    explanation_ratings: int = 0
    critique_ratings: int = 0
    step_labels: int = 0

    @property
    def summary(self) -> str:
        """``"12 annotation(s), 3 explanation rating(s), 5 critique rating(s)"``."""
        return (
            f"{self.annotations} annotation(s), {self.explanation_ratings} explanation rating(s), "
            f"{self.critique_ratings} critique rating(s)"
            + (f", {self.step_labels} step-labelled CoT(s)" if self.step_labels else "")
        )


def export_annotations(
    library: Library,
    author: str | None,
    path: str | os.PathLike[str],
    *,
    collection: str | None = None,
    force: bool = False,
) -> int:
    """Write ``author``'s annotations and ratings (everyone's if ``None``; one collection if
    given) to ``path`` in the ThoughtDesk exchange format; return the number of annotations
    written (:func:`export_review` tells the ratings too)."""
    return export_review(library, author, path, collection=collection, force=force).annotations


def export_review(
    library: Library,
    author: str | None,
    path: str | os.PathLike[str],
    *,
    collection: str | None = None,
    force: bool = False,
) -> ExportCounts:
    """Write ``author``'s annotations, explanation ratings and critique ratings (everyone's if
    ``None``; one collection if given) to ``path`` in the ThoughtDesk exchange format.

    Never onto the library (:func:`~thoughtdesk.core.files.check_export_target`); an existing
    file that is not an earlier export is replaced only with ``force`` (the GUI asks first). The
    file is written to a part file and renamed, so a failed export leaves no half file.
    """
    target = check_export_target(path, libraries=[library.path], force=force)
    clauses: list[str] = []
    params: list[str | int] = []
    if author is not None:
        clauses.append("a.author = ?")
        params.append(author)
    collection_id = library.require_collection(collection) if collection is not None else None
    if collection_id is not None:
        clauses.append("s.collection_id = ?")
        params.append(collection_id)
    where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    rows = library.conn.execute(
        f"""SELECT k.name, s.dataset, s.split, s.sample_id, c.cot_id, c.position, c.cot,
                   a.author, a.date, a.key, a.value, a.value_is_json, a.extra
            FROM annotation a JOIN generated_cot c ON a.cot_pk = c.id
            JOIN sample s ON c.sample_pk = s.id JOIN collection k ON s.collection_id = k.id
            {where} ORDER BY k.name, s.dataset, s.split, s.position, c.position, a.position, a.id""",
        params,
    ).fetchall()
    hashes: dict[str, str] = {}
    records = []
    for r in rows:
        text = r[6] or ""
        if text not in hashes:
            hashes[text] = cot_content_hash(text)
        span = span_from_extra(r[12])
        records.append(
            {
                "collection": r[0],
                "dataset": r[1],
                "split": r[2],
                "sample_id": r[3],
                "cot_id": r[4] or "",
                "cot_position": r[5],
                "cot_hash": hashes[text],
                "author": r[7] or "",
                "date": r[8] or "",
                "key": r[9],
                "value": decode_value(r[10], r[11]),
                "span": span.to_json() if span is not None else None,
            }
        )
    explanation, critique = export_ratings(library, author, collection_id, cot_content_hash)
    steps = export_step_labels(library, author, collection_id, cot_content_hash)
    document = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported": utc_now(),
        "author": author,
        "annotations": records,
        EXPLANATION_KEY: explanation,
        CRITIQUE_KEY: critique,
        STEPS_KEY: steps,
    }
    with export_file(target) as out:
        out.write(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    return ExportCounts(len(records), len(explanation), len(critique), len(steps))


@dataclass
class _Incoming:
    """One annotation read from a file, before it is matched to the library."""

    where: str
    collection: str | None
    dataset: str
    split: str
    sample_id: str
    cot_id: str
    cot_position: int | None
    cot_hash: str | None
    author: str
    date: str
    key: str
    value: Any
    span: Span | None
    problem: str | None = None


class _Rollback(Exception):
    pass


def _read_json(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise DataFileError(path, f"cannot be read: {error.strerror or error}") from None
    try:
        return json.loads(data)
    except UnicodeDecodeError:
        raise DataFileError(path, "is not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise DataFileError(path, f"invalid JSON: {error.msg}", line=error.lineno, column=error.colno) from None
    except RecursionError:  # Python's decoder recurses once per level: a hostile file nests thousands
        raise DataFileError(
            path, "is nested too deeply to be an annotations file (arrays or objects within each other)"
        ) from None


def _text(obj: dict, key: str) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _exchange_records(path: Path, document: dict) -> list[_Incoming]:
    version = document.get("version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise DataFileError(
            path,
            f"{FORMAT_NAME} version {version!r} is not one this ThoughtDesk "
            f"reads (up to {FORMAT_VERSION}); update ThoughtDesk",
        )
    items = document.get("annotations")
    if not isinstance(items, list):
        raise DataFileError(path, "field 'annotations' must be a list", where="top level")
    out = []
    for index, obj in enumerate(items):
        where = f"annotation {index}"
        if not isinstance(obj, dict):
            out.append(
                _Incoming(where, None, "", "", "", "", None, None, "", "", "", None, None, "bad record: not an object")
            )
            continue
        where = (
            f"annotation {index} (dataset {_text(obj, 'dataset')}, split {_text(obj, 'split')}, "
            f"sample {_text(obj, 'sample_id')}, CoT {_text(obj, 'cot_id') or obj.get('cot_position')}, "
            f"key {_text(obj, 'key')!r})"
        )
        span = Span.from_json(obj.get("span"))
        position = obj.get("cot_position")
        problem = None
        if not _text(obj, "key") or not _text(obj, "dataset") or not _text(obj, "sample_id"):
            problem = "bad record: key, dataset and sample_id are required"
        elif obj.get("value") is None:
            problem = "bad record: value is missing or null"
        elif obj.get("span") is not None and span is None:
            problem = "bad record: span must be {start, end, text} with integer offsets"
        out.append(
            _Incoming(
                where,
                _text(obj, "collection") or None,
                _text(obj, "dataset"),
                _text(obj, "split"),
                _text(obj, "sample_id"),
                _text(obj, "cot_id"),
                position if isinstance(position, int) and not isinstance(position, bool) else None,
                _text(obj, "cot_hash") or None,
                _text(obj, "author"),
                _text(obj, "date"),
                _text(obj, "key"),
                obj.get("value"),
                span,
                problem,
            )
        )
    return out


def _thoughtsource_records(path: Path, document: dict[str, dict[str, list[Any]]]) -> list[_Incoming]:
    """The annotations of a ThoughtSource collection already parsed by :func:`_read` (parsing
    the file a second time with ``ThoughtSourceFile`` doubled the cost of reading it)."""
    from thoughtdesk.core.datasets.ts_samples import sample_from_json

    out: list[_Incoming] = []
    for dataset, splits in document.items():
        for split, samples in splits.items():
            for index, obj in enumerate(samples):
                sample = sample_from_json(obj, path, f"dataset {dataset}, split {split}, sample index {index}")
                out.extend(_sample_annotations(dataset, split, sample))
    return out


def _sample_annotations(dataset: str, split: str, sample: Sample) -> Iterator[_Incoming]:
    for position, cot in enumerate(sample.generated_cot):
        for note in cot.annotations:
            where = f"dataset {dataset}, split {split}, sample {sample.id}, CoT {cot.id or position}, key {note.key!r}"
            span = Span.from_json(note.extra.get("span")) if note.extra else None
            problem = None if note.key and note.value is not None else "bad record: annotation without a key or value"
            yield _Incoming(
                where,
                None,
                dataset,
                split,
                sample.id,
                cot.id or "",
                position,
                cot_content_hash(cot.cot),
                note.author or "",
                note.date or "",
                note.key or "",
                note.value,
                span,
                problem,
            )


def _read(path: Path) -> tuple[str, list[_Incoming], list[IncomingRating], list[IncomingStepLabels]]:
    document = _read_json(path)
    if isinstance(document, dict) and "format" in document:
        if document.get("format") != FORMAT_NAME:
            raise DataFileError(
                path,
                f"unknown annotation format {document.get('format')!r}; "
                f"expected {FORMAT_NAME!r} or a ThoughtSource collection",
            )
        return (
            "thoughtdesk",
            _exchange_records(path, document),
            read_ratings(path, document),
            read_step_labels(path, document),
        )
    looks_like_ts = (
        isinstance(document, dict)
        and document
        and all(
            isinstance(splits, dict) and all(isinstance(v, list) for v in splits.values())
            for splits in document.values()
        )
    )
    if not looks_like_ts:
        shape = (
            f"an object with keys {', '.join(list(document)[:5])}"
            if isinstance(document, dict)
            else f"a JSON {type(document).__name__}"
        )
        raise DataFileError(
            path,
            f"unknown annotation format ({shape}); expected a "
            f"{FORMAT_NAME} file or a ThoughtSource collection "
            "{dataset: {split: [sample]}}",
        )
    return "thoughtsource", _thoughtsource_records(path, document), [], []


class _Matcher:
    """Finds the library's CoT for an incoming record, caching sample look-ups."""

    def __init__(self, library: Library, collection_id: int | None) -> None:
        self.conn = library.conn
        self.collection_id = collection_id
        self.collections = {name: cid for cid, name in self.conn.execute("SELECT id, name FROM collection")}
        self.samples: dict[tuple, list[int]] = {}
        self.cots: dict[int, list[tuple[int, str, int, str]]] = {}

    def _sample_pks(self, rec: _Incoming | IncomingRating | IncomingStepLabels) -> list[int]:
        if self.collection_id is not None:
            scope = [self.collection_id]
        elif rec.collection and rec.collection in self.collections:
            scope = [self.collections[rec.collection]]
        else:
            scope = list(self.collections.values())
        key = (tuple(scope), rec.dataset, rec.split, rec.sample_id)
        if key not in self.samples:
            marks = ",".join("?" * len(scope)) or "NULL"
            self.samples[key] = [
                r[0]
                for r in self.conn.execute(
                    f"SELECT id FROM sample WHERE collection_id IN ({marks}) AND dataset = ? "
                    "AND split = ? AND sample_id = ?",
                    (*scope, rec.dataset, rec.split, rec.sample_id),
                )
            ]
        return self.samples[key]

    def match(self, rec: _Incoming | IncomingRating | IncomingStepLabels) -> tuple[int, int] | str:
        """(sample_pk, cot_pk), or the reason there is none."""
        if rec.problem:
            return rec.problem
        pks = self._sample_pks(rec)
        if not pks:
            return "sample not in the library"
        if len(pks) > 1:
            return "sample is in several collections (choose the collection to import into)"
        sample_pk = pks[0]
        if sample_pk not in self.cots:
            self.cots[sample_pk] = self.conn.execute(
                "SELECT id, coalesce(cot_id, ''), position, coalesce(cot, '') FROM generated_cot "
                "WHERE sample_pk = ? ORDER BY position",
                (sample_pk,),
            ).fetchall()
        cots = self.cots[sample_pk]
        if rec.cot_id:
            found = [c for c in cots if c[1] == rec.cot_id]
        else:
            found = [c for c in cots if c[2] == rec.cot_position]
        if not found:
            return "CoT not found in the sample"
        cot_pk, _, _, text = found[0]
        if rec.cot_hash is not None and rec.cot_hash != cot_content_hash(text):
            return "CoT text differs from the library's"
        if rec.span is not None:
            if not 0 <= rec.span.start < rec.span.end <= len(text):
                return "span outside the CoT text"
            if rec.span.text and text[rec.span.start : rec.span.end] != rec.span.text:
                return "span text differs from the CoT text"
        return sample_pk, cot_pk


def _date_key(date: str) -> str:
    # ThoughtSource mixes 2023/02/15 and 2023-03-19; ISO strings then compare in time order.
    return date.replace("/", "-").replace(" ", "T")


def _newer(first: str, second: str) -> bool:
    return _date_key(first or "") > _date_key(second or "")


def import_annotations(
    library: Library,
    path: str | os.PathLike[str],
    *,
    collection: str | None = None,
    strict: bool = False,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> MergeOutcome:
    """Merge a ThoughtDesk exchange file or a ThoughtSource collection file with annotations.

    ``collection``: only match samples of this collection (default: the collection named in
    the record, else any collection that holds the sample). ``strict``: merge nothing unless
    every record matches. ``dry_run``: report what would happen, write nothing. Never raises for
    a bad file: the report's ``error`` says what was wrong, and the library is unchanged.
    ``progress(done, total)`` is told as records are matched and merged (twice the records in all).
    """
    path = Path(path)
    report = MergeOutcome(path, dry_run=dry_run)
    try:
        collection_id = library.require_collection(collection) if collection is not None else None
        report.format, incoming, ratings, step_items = _read(path)
    except ThoughtDeskError as error:  # a bad file, or LibraryError for an unknown collection
        report.error = str(error)
        return report
    report.records = len(incoming)
    matcher = _Matcher(library, collection_id)
    matched: list[tuple[_Incoming, int, int]] = []
    total = 2 * (len(incoming) + len(ratings))  # each record is matched, then merged

    def tell(done: int) -> None:
        if progress is not None and (done % 500 == 0 or done == total):
            progress(done, total)

    for index, rec in enumerate(incoming, 1):
        tell(index)
        result = matcher.match(rec)
        if isinstance(result, str):
            report.unmatched.append(Unmatched(rec.where, result))
        else:
            matched.append((rec, *result))
    report.ratings.records = len(ratings)
    rated: list[tuple[IncomingRating, int, int, int]] = []  # (rating, sample, CoT, CoT or critique)
    for rating in ratings:
        result = matcher.match(rating)
        if not isinstance(result, str):
            sample_pk, cot_pk = result
            target = critique_of(library.conn, rating, cot_pk) if rating.kind == "critique" else cot_pk
            if not isinstance(target, str):
                rated.append((rating, sample_pk, cot_pk, target))
                continue
            result = target
        report.unmatched.append(Unmatched(rating.where, result))
    report.steps.records = len(step_items)
    labelled: list[tuple[IncomingStepLabels, int, int]] = []
    for item in step_items:
        found = item.problem if item.problem is not None else matcher.match(item)
        if isinstance(found, str):
            report.unmatched.append(Unmatched(item.where, found))
        else:
            labelled.append((item, *found))
    if strict and report.unmatched:
        report.error = (
            f"{len(report.unmatched)} of {report.records + report.ratings.records} record(s) match nothing "
            f"in the library and strict mode is on; first: {report.unmatched[0].where}: "
            f"{report.unmatched[0].reason}"
        )
        return report
    report.matched_samples = len({r[1] for r in matched} | {r[1] for r in rated})
    report.matched_cots = len({r[2] for r in matched} | {r[2] for r in rated})
    report.authors = sorted({r[0].author for r in matched} | {r[0].author for r in rated})
    try:
        with library.transaction() as conn:
            for index, (rec, _, cot_pk) in enumerate(matched, 1):
                tell(total // 2 + index)
                _merge_one(conn, report, rec, cot_pk)
            for rating, _, _, target in rated:
                merge_rating(conn, report.ratings, rating, target, _newer)
            for item, sample_pk, cot_pk in labelled:
                merge_step_labels(conn, report.steps, item, sample_pk, cot_pk, _newer)
            # One recount per sample (the counter sums all its CoTs), through any of its CoTs.
            for cot_pk in {sample_pk: cot_pk for _, sample_pk, cot_pk in matched}.values():
                counters.recount_annotations(conn, cot_pk)
            if progress is not None:
                progress(total, total)
            if dry_run:
                raise _Rollback
    except _Rollback:
        pass
    except Exception as error:
        report.error = f"{path}: the merge failed and was rolled back: {error}"
        report.added = report.updated = report.unchanged = report.kept = 0
        report.ratings.added = report.ratings.updated = report.ratings.unchanged = report.ratings.kept = 0
        report.steps.added = report.steps.updated = report.steps.unchanged = report.steps.kept = 0
    return report


def _merge_one(conn, report: MergeOutcome, rec: _Incoming, cot_pk: int) -> None:
    rows = slot_rows(conn, cot_pk, rec.author, rec.key, rec.span)
    if not rows:
        write_slot(conn, cot_pk, rec.author, rec.key, rec.span, rec.value, rec.date)
        report.added += 1
        return
    stored = decode_value(rows[-1][5], rows[-1][6])
    if stored == rec.value and type(stored) is type(rec.value):
        report.unchanged += 1
    elif _date_key(rec.date) > _date_key(rows[-1][3] or ""):
        write_slot(conn, cot_pk, rec.author, rec.key, rec.span, rec.value, rec.date)
        report.updated += 1
    else:
        report.kept += 1
