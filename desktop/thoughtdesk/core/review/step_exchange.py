"""Step labels in the annotation exchange file (docs/steps.md): exported with a reviewer's
annotations, merged on import under their author's name.

A ``step_labels`` list sits beside ``annotations`` in a ``thoughtdesk-annotations`` file: one
record per author and CoT trace (``cot`` or ``reasoning``), keyed like an annotation
(collection, dataset, split, sample id, CoT id/position, CoT text hash), with the step entries
as stored (each with the step's stable id), the first error, finish reason, time spent, blind
and kind. A reader that does not know the list ignores it. Merging is per slot (author + CoT +
trace): added when absent, left alone when equal, replaced when the file's is newer, else kept.
Reference-CoT labels are not exchanged (they have no CoT to key them by).
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.merge_outcome import RatingCounts
from thoughtdesk.core.steps.store import (
    FINISH_REASONS,
    StepReview,
    StepTarget,
    decode_labels,
    encode_labels,
    put_review,
    review_of,
)

STEPS_KEY = "step_labels"


@dataclass
class IncomingStepLabels:
    """One record read from a file, matched like an annotation (its CoT keys)."""

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
    trace: str
    review: StepReview | None
    problem: str | None = None
    span: None = None  # labels are of a whole step list (the matcher checks an annotation's span)


def export_step_labels(
    library: Library, author: str | None, collection_id: int | None, cot_hash: Any
) -> list[dict[str, Any]]:
    """``author``'s step labels of generated CoTs (everyone's if None; one collection if given)."""
    clauses: list[str] = ["l.cot_pk IS NOT NULL", "l.kind = 'human'"]
    params: list[Any] = []
    if author is not None:
        clauses.append("l.author = ?")
        params.append(author)
    if collection_id is not None:
        clauses.append("s.collection_id = ?")
        params.append(collection_id)
    rows = library.conn.execute(
        "SELECT k.name, s.dataset, s.split, s.sample_id, c.cot_id, c.position, c.cot, l.author, l.date, l.trace, "
        "l.steps, l.first_error, l.finish_reason, l.time_ms, l.blind FROM step_label l "
        "JOIN generated_cot c ON c.id = l.cot_pk JOIN sample s ON s.id = c.sample_pk "
        f"JOIN collection k ON k.id = s.collection_id WHERE {' AND '.join(clauses)} "
        "ORDER BY k.name, s.dataset, s.split, s.position, c.position, l.trace, l.author",
        params,
    ).fetchall()
    return [
        {
            "collection": r[0],
            "dataset": r[1],
            "split": r[2],
            "sample_id": r[3],
            "cot_id": r[4] or "",
            "cot_position": r[5],
            "cot_hash": cot_hash(r[6] or ""),
            "author": r[7],
            "date": r[8],
            "trace": r[9],
            "steps": json.loads(r[10] or "[]"),
            "first_error": r[11],
            "finish_reason": r[12],
            "time_ms": r[13],
            "blind": None if r[14] is None else bool(r[14]),
        }
        for r in rows
    ]


def _text(obj: dict, key: str) -> str:
    value = obj.get(key)
    return "" if value is None else value if isinstance(value, str) else str(value)


def _check(obj: dict) -> str | None:
    """Why a record cannot be merged, or None."""
    if not _text(obj, "dataset") or not _text(obj, "sample_id") or not _text(obj, "author"):
        return "bad record: dataset, sample_id and author are required"
    if obj.get("trace", "cot") not in ("cot", "reasoning"):
        return "bad record: trace must be cot or reasoning"
    steps = obj.get("steps", [])
    if not isinstance(steps, list):
        return "bad record: steps must be a list"
    for index, entry in enumerate(steps):
        if entry is None:
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("id", ""), str):
            return f"bad record: steps[{index}] must be an object with the step's id"
        rating = entry.get("rating")
        if rating is not None and (isinstance(rating, bool) or rating not in (-1, 0, 1)):
            return f"bad record: steps[{index}].rating {rating!r} is not -1, 0 or +1"
    first = obj.get("first_error")
    if first is not None and (isinstance(first, bool) or not isinstance(first, int) or first < -1):
        return f"bad record: first_error {first!r} is not a step index or -1"
    reason = obj.get("finish_reason")
    if reason is not None and reason not in FINISH_REASONS:
        return f"bad record: finish_reason {reason!r} is not one of {', '.join(FINISH_REASONS)}"
    time_ms = obj.get("time_ms")
    if time_ms is not None and (isinstance(time_ms, bool) or not isinstance(time_ms, int) or time_ms < 0):
        return "bad record: time_ms must be a whole number of milliseconds"
    return None


def read_step_labels(path: Path, document: dict) -> list[IncomingStepLabels]:
    """The step-label records of an exchange document (absent list: none), each checked."""
    items = document.get(STEPS_KEY, [])
    if not isinstance(items, list):
        raise DataFileError(path, f"field {STEPS_KEY!r} must be a list", where="top level")
    out = []
    for index, obj in enumerate(items):
        if not isinstance(obj, dict):
            out.append(
                IncomingStepLabels(
                    f"step labels {index}",
                    None,
                    "",
                    "",
                    "",
                    "",
                    None,
                    None,
                    "",
                    "",
                    "cot",
                    None,
                    "bad record: not an object",
                )
            )
            continue
        position = obj.get("cot_position")
        where = (
            f"step labels {index} (dataset {_text(obj, 'dataset')}, split {_text(obj, 'split')}, "
            f"sample {_text(obj, 'sample_id')}, CoT {_text(obj, 'cot_id') or position}, {_text(obj, 'author')})"
        )
        problem = _check(obj)
        review = None
        if problem is None:
            review = StepReview(
                _text(obj, "author"),
                decode_labels(json.dumps(obj.get("steps", []))),
                obj.get("first_error"),
                obj.get("finish_reason"),
                obj.get("time_ms"),
                "human",
                obj.get("blind") if isinstance(obj.get("blind"), bool) else None,
                None,
                _text(obj, "date"),
            )
        out.append(
            IncomingStepLabels(
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
                _text(obj, "trace") or "cot",
                review,
                problem,
            )
        )
    return out


def merge_step_labels(
    conn: sqlite3.Connection, counts: RatingCounts, item: IncomingStepLabels, sample_pk: int, cot_pk: int, newer: Any
) -> None:
    """Merge one record into its CoT's step labels (``newer(a, b)``: date ``a`` later than ``b``)."""
    if item.review is None:
        return
    target = StepTarget(sample_pk, cot_pk, "reasoning" if item.trace == "reasoning" else "cot")
    stored = review_of(conn, target, item.author)
    if stored is None:
        put_review(conn, target, item.author, item.review)
        counts.added += 1
    elif _same(stored, item.review):
        counts.unchanged += 1
    elif newer(item.date, stored.date):
        put_review(conn, target, item.author, item.review)
        counts.updated += 1
    else:
        counts.kept += 1


def _same(a: StepReview, b: StepReview) -> bool:
    def key(review: StepReview) -> tuple[Any, ...]:
        return (encode_labels(review.labels), review.first_error, review.finish_reason, review.time_ms)

    return key(dataclasses.replace(a)) == key(b)
