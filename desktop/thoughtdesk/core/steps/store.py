"""Step labels in the library (table ``step_label``, m017): one row per author and step list.

A :class:`StepTarget` names one step list: a generated CoT's text or reasoning trace, or a
sample's reference CoT. A :class:`StepReview` is one author's labels of it: a
:class:`StepLabel` per labelled step (rating, flag, corrected text, the step's id when
labelled) and the verdict on the whole list (first wrong step, finish reason, time spent,
blind). The functions run in the caller's transaction (the Review tab wraps each change in
one); :class:`ImportedStepRows` gathers an import's rows and writes them with ``executemany``.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import msgspec

from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.steps.split import Trace

#: Who labelled: a person, or a model (a step judge, automatic rollout labels).
Kind = Literal["human", "model"]
#: PRM800K's finish reasons of a labelled solution.
FINISH_REASONS = ("found_error", "solution", "bad_problem", "give_up")
#: The ratings of a step: wrong, fine but no progress, good (PRM800K's Bad/Okay/Great).
RATINGS = (-1, 0, 1)


@dataclass(frozen=True, slots=True)
class StepTarget:
    """One step list: ``cot_pk`` None is the sample's reference CoT."""

    sample_pk: int
    cot_pk: int | None
    trace: Trace = "cot"

    def __post_init__(self) -> None:
        if (self.trace == "reference") != (self.cot_pk is None):
            raise ValueError("a reference CoT has no cot_pk, and every other trace has one")


@dataclass(frozen=True, slots=True)
class StepLabel:
    """One step's label: ``step`` (0-based), the step's id when labelled, the rating (-1, 0,
    +1), the flag (unsure), the corrected text, and what a source file said beyond these."""

    step: int
    step_id: str
    rating: int | None = None
    flagged: bool | None = None
    corrected: str | None = None
    extra: dict[str, Any] | None = None

    @property
    def empty(self) -> bool:
        """Nothing said (such a label is dropped)."""
        return self.rating is None and self.flagged is None and self.corrected is None and not self.extra


@dataclass(frozen=True, slots=True)
class StepReview:
    """One author's labels of one step list: the labelled steps (by step), the first wrong
    step (-1: none; None: not said), the finish reason, the milliseconds spent, whether the
    model was hidden."""

    author: str
    labels: tuple[StepLabel, ...] = ()
    first_error: int | None = None
    finish_reason: str | None = None
    time_ms: int | None = None
    kind: Kind = "human"
    blind: bool | None = None
    extra: dict[str, Any] | None = None
    date: str = ""

    @property
    def empty(self) -> bool:
        return (
            not self.labels
            and self.first_error is None
            and self.finish_reason is None
            and not self.time_ms
            and not self.extra
        )

    def label(self, step: int) -> StepLabel | None:
        """The label of step ``step``, or None."""
        return next((label for label in self.labels if label.step == step), None)

    def with_label(self, label: StepLabel) -> StepReview:
        """This review with ``label`` in place of the step's label (an empty one removes it)."""
        others = [x for x in self.labels if x.step != label.step]
        if not label.empty:
            others.append(label)
        return dataclasses.replace(self, labels=tuple(sorted(others, key=lambda x: x.step)))

    def ratings(self) -> dict[int, int]:
        """step -> rating, for the rated steps."""
        return {label.step: label.rating for label in self.labels if label.rating is not None}


def check_review(review: StepReview) -> None:
    """ValueError for a review the table refuses, said in words."""
    if not review.author:
        raise ValueError("step labels need an author")
    for label in review.labels:
        if label.step < 0:
            raise ValueError(f"step {label.step}: steps count from 0")
        if label.rating is not None and label.rating not in RATINGS:
            raise ValueError(f"rating {label.rating!r}: a step is rated -1, 0 or +1")
    if review.first_error is not None and review.first_error < -1:
        raise ValueError(f"first error {review.first_error}: a step index from 0, or -1 for none")


def encode_labels(labels: Sequence[StepLabel]) -> str:
    """The ``steps`` column: a JSON array with an entry per step up to the last labelled (null
    where a step has no label)."""
    if not labels:
        return "[]"
    entries: list[dict[str, Any] | None] = [None] * (max(label.step for label in labels) + 1)
    for label in labels:
        entry: dict[str, Any] = {"id": label.step_id}
        if label.rating is not None:
            entry["rating"] = label.rating
        if label.flagged is not None:
            entry["flagged"] = label.flagged
        if label.corrected is not None:
            entry["corrected"] = label.corrected
        if label.extra:
            entry["extra"] = label.extra
        entries[label.step] = entry
    return encode_entries(entries)


def encode_entries(entries: Sequence[dict[str, Any] | None]) -> str:
    """The ``steps`` column from its entries (an import builds them itself)."""
    return msgspec.json.encode(entries).decode("utf-8")


def decode_labels(text: str | None) -> tuple[StepLabel, ...]:
    """The labels of a ``steps`` column (entries that are not objects are skipped)."""
    if not text or text == "[]":
        return ()
    out = []
    for step, entry in enumerate(json.loads(text)):
        if isinstance(entry, dict):
            flagged = entry.get("flagged")
            out.append(
                StepLabel(
                    step,
                    str(entry.get("id", "")),
                    entry.get("rating"),
                    None if flagged is None else bool(flagged),
                    entry.get("corrected"),
                    entry.get("extra"),
                )
            )
    return tuple(out)


_COLS = "author, kind, steps, first_error, finish_reason, time_ms, blind, extra, date"
_INSERT = f"INSERT INTO step_label (sample_pk, cot_pk, trace, {_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def _review(row: Sequence[Any]) -> StepReview:
    author, kind, steps, first, reason, time_ms, blind, extra, date = row
    return StepReview(
        author,
        decode_labels(steps),
        first,
        reason,
        time_ms,
        kind,
        None if blind is None else bool(blind),
        json.loads(extra) if extra else None,
        date,
    )


def _row(target: StepTarget, review: StepReview) -> tuple[Any, ...]:
    return (
        target.sample_pk if target.cot_pk is None else None,
        target.cot_pk,
        target.trace,
        review.author,
        review.kind,
        encode_labels(review.labels),
        review.first_error,
        review.finish_reason,
        review.time_ms,
        None if review.blind is None else int(review.blind),
        json.dumps(review.extra, ensure_ascii=False) if review.extra else None,
        review.date or now_iso(),
    )


def _where(target: StepTarget) -> tuple[str, tuple[Any, ...]]:
    if target.cot_pk is None:
        return "sample_pk = ? AND cot_pk IS NULL", (target.sample_pk,)
    return "cot_pk = ? AND trace = ?", (target.cot_pk, target.trace)


def add_time_spent(conn: sqlite3.Connection, target: StepTarget, author: str, ms: int) -> bool:
    """Add ``ms`` milliseconds to ``author``'s time on ``target``, in place: the row keeps its id,
    labels and date (time spent is recorded, not an edit). False when they have no row."""
    where, args = _where(target)
    cursor = conn.execute(
        f"UPDATE step_label SET time_ms = coalesce(time_ms, 0) + ? WHERE {where} AND author = ?",
        (max(0, int(ms)), *args, author),
    )
    return cursor.rowcount > 0


def reviews_of(conn: sqlite3.Connection, target: StepTarget, author: str | None = None) -> list[StepReview]:
    """The reviews of ``target`` (one author's, or everyone's), by author."""
    where, args = _where(target)
    if author is not None:
        where += " AND author = ?"
        args += (author,)
    rows = conn.execute(f"SELECT {_COLS} FROM step_label WHERE {where} ORDER BY author", args)
    return [_review(row) for row in rows]


def review_of(conn: sqlite3.Connection, target: StepTarget, author: str) -> StepReview | None:
    """``author``'s review of ``target``, or None."""
    found = reviews_of(conn, target, author)
    return found[0] if found else None


def put_review(conn: sqlite3.Connection, target: StepTarget, author: str, review: StepReview | None) -> None:
    """Set ``author``'s review of ``target`` (None or an empty review: delete it)."""
    where, args = _where(target)
    conn.execute(f"DELETE FROM step_label WHERE {where} AND author = ?", (*args, author))
    if review is None or review.empty:
        return
    if review.author != author:
        raise ValueError(f"a review by {review.author!r} stored as {author!r}'s")
    check_review(review)
    conn.execute(_INSERT, _row(target, review))


class ImportedReview(NamedTuple):
    """A review as an import builds it: its labels already the ``steps`` column's JSON."""

    author: str
    steps: str
    first_error: int | None
    finish_reason: str | None
    time_ms: int | None
    date: str
    kind: Kind = "human"
    #: How many step labels ``steps`` holds (counted as it is built, not by reading it back).
    labels: int = 0


@dataclass
class ImportedStepRows:
    """An import's reviews, written together with ``executemany``."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)

    def add(self, target: StepTarget, review: StepReview | ImportedReview) -> None:
        if isinstance(review, StepReview):
            self.rows.append(_row(target, review))
            return
        self.rows.append(
            (
                target.sample_pk if target.cot_pk is None else None,
                target.cot_pk,
                target.trace,
                review.author,
                review.kind,
                review.steps,
                review.first_error,
                review.finish_reason,
                review.time_ms,
                None,
                None,
                review.date,
            )
        )

    def write(self, conn: sqlite3.Connection) -> None:
        conn.executemany(_INSERT, self.rows)
        self.rows.clear()


def reviews_for_cots(
    conn: sqlite3.Connection, cot_pks: Iterable[int], trace: Trace = "cot"
) -> dict[int, list[StepReview]]:
    """Every review of the given CoTs' ``trace``, by CoT key, each list by author."""
    out: dict[int, list[StepReview]] = {}
    pks = list(cot_pks)
    for start in range(0, len(pks), 500):
        chunk = pks[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
            f"SELECT cot_pk, {_COLS} FROM step_label WHERE cot_pk IN ({marks}) AND trace = ? ORDER BY cot_pk, author",
            (*chunk, trace),
        ):
            out.setdefault(row[0], []).append(_review(row[1:]))
    return out


def first_error_of(labels: Sequence[StepLabel]) -> int | None:
    """The first step rated -1, -1 when some are rated and none is -1, None when none is rated."""
    rated = [label for label in labels if label.rating is not None]
    if not rated:
        return None
    wrong = [label.step for label in rated if label.rating == -1]
    return min(wrong) if wrong else -1
