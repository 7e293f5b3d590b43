"""Step labels and step reviews in the library (tables ``step_label`` and ``step_review``, m017).

A :class:`StepTarget` names one step list: a generated CoT's text or reasoning trace, or a
sample's reference CoT. Labels are per author and step; a review is per author and target. The
single-row functions run in the caller's transaction (the Review tab wraps each change in one);
:class:`ImportedStepRows` gathers an import's rows and writes them with ``executemany``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.steps.split import Trace

#: Who gave a label: a person, or a model (a step judge, automatic rollout labels).
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
    """One author's label of the step at ``step`` (0-based) whose id was ``step_id``."""

    step: int
    step_id: str
    author: str
    rating: int | None = None
    flagged: bool | None = None
    corrected: str | None = None
    kind: Kind = "human"
    extra: dict[str, Any] | None = None
    date: str = ""

    @property
    def empty(self) -> bool:
        """Nothing said: no rating, flag or corrected text (such a label is deleted)."""
        return self.rating is None and not self.flagged and self.corrected is None and not self.extra


@dataclass(frozen=True, slots=True)
class StepReview:
    """One author's review of a whole step list: the first wrong step (-1: none; None: not
    said), the finish reason, the milliseconds spent, whether the model was hidden."""

    author: str
    first_error: int | None = None
    finish_reason: str | None = None
    time_ms: int | None = None
    kind: Kind = "human"
    blind: bool | None = None
    extra: dict[str, Any] | None = None
    date: str = ""

    @property
    def empty(self) -> bool:
        return self.first_error is None and self.finish_reason is None and not self.time_ms and not self.extra


_LABEL_COLS = "step, step_id, author, rating, flagged, corrected, kind, extra, date"
_REVIEW_COLS = "author, first_error, finish_reason, time_ms, kind, blind, extra, date"


def _json(value: dict[str, Any] | None) -> str | None:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) if value else None


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _label(row: Sequence[Any]) -> StepLabel:
    step, sid, author, rating, flagged, corrected, kind, extra, date = row
    return StepLabel(
        step, sid, author, rating, _bool(flagged), corrected, kind, json.loads(extra) if extra else None, date
    )


def _review(row: Sequence[Any]) -> StepReview:
    author, first, reason, time_ms, kind, blind, extra, date = row
    return StepReview(author, first, reason, time_ms, kind, _bool(blind), json.loads(extra) if extra else None, date)


def _where(target: StepTarget) -> tuple[str, tuple[Any, ...]]:
    return "sample_pk = ? AND ifnull(cot_pk, 0) = ? AND trace = ?", (
        target.sample_pk,
        target.cot_pk or 0,
        target.trace,
    )


def labels_of(conn: sqlite3.Connection, target: StepTarget, author: str | None = None) -> list[StepLabel]:
    """The labels of ``target`` (of one author, or everyone's), by step then author."""
    where, args = _where(target)
    if author is not None:
        where += " AND author = ?"
        args += (author,)
    rows = conn.execute(f"SELECT {_LABEL_COLS} FROM step_label WHERE {where} ORDER BY step, author", args)
    return [_label(row) for row in rows]


def reviews_of(conn: sqlite3.Connection, target: StepTarget, author: str | None = None) -> list[StepReview]:
    """The reviews of ``target`` (of one author, or everyone's), by author."""
    where, args = _where(target)
    if author is not None:
        where += " AND author = ?"
        args += (author,)
    rows = conn.execute(f"SELECT {_REVIEW_COLS} FROM step_review WHERE {where} ORDER BY author", args)
    return [_review(row) for row in rows]


def label_of(conn: sqlite3.Connection, target: StepTarget, step: int, author: str) -> StepLabel | None:
    """``author``'s label of step ``step``, or None."""
    where, args = _where(target)
    row = conn.execute(
        f"SELECT {_LABEL_COLS} FROM step_label WHERE {where} AND step = ? AND author = ?", (*args, step, author)
    ).fetchone()
    return _label(row) if row else None


def review_of(conn: sqlite3.Connection, target: StepTarget, author: str) -> StepReview | None:
    """``author``'s review of ``target``, or None."""
    found = reviews_of(conn, target, author)
    return found[0] if found else None


def check_label(label: StepLabel) -> None:
    """ValueError for a label the tables refuse, said in words."""
    if label.step < 0:
        raise ValueError(f"step {label.step}: steps count from 0")
    if label.rating is not None and label.rating not in RATINGS:
        raise ValueError(f"rating {label.rating!r}: a step is rated -1, 0 or +1")
    if not label.author:
        raise ValueError("a step label needs an author")


def put_label(conn: sqlite3.Connection, target: StepTarget, author: str, step: int, label: StepLabel | None) -> None:
    """Set ``author``'s label of step ``step`` to ``label`` (None or an empty label: delete it)."""
    where, args = _where(target)
    conn.execute(f"DELETE FROM step_label WHERE {where} AND step = ? AND author = ?", (*args, step, author))
    if label is None or label.empty:
        return
    check_label(label)
    conn.execute(
        f"INSERT INTO step_label (sample_pk, cot_pk, trace, {_LABEL_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        _label_row(target, label),
    )


def put_review(conn: sqlite3.Connection, target: StepTarget, author: str, review: StepReview | None) -> None:
    """Set ``author``'s review of ``target`` (None or an empty review: delete it)."""
    where, args = _where(target)
    conn.execute(f"DELETE FROM step_review WHERE {where} AND author = ?", (*args, author))
    if review is None or review.empty:
        return
    if review.first_error is not None and review.first_error < -1:
        raise ValueError(f"first error {review.first_error}: a step index from 0, or -1 for none")
    conn.execute(
        f"INSERT INTO step_review (sample_pk, cot_pk, trace, {_REVIEW_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        _review_row(target, review),
    )


def _label_row(target: StepTarget, label: StepLabel) -> tuple[Any, ...]:
    return (
        target.sample_pk,
        target.cot_pk,
        target.trace,
        label.step,
        label.step_id,
        label.author,
        label.rating,
        None if label.flagged is None else int(label.flagged),
        label.corrected,
        label.kind,
        _json(label.extra),
        label.date or now_iso(),
    )


def _review_row(target: StepTarget, review: StepReview) -> tuple[Any, ...]:
    return (
        target.sample_pk,
        target.cot_pk,
        target.trace,
        review.author,
        review.first_error,
        review.finish_reason,
        review.time_ms,
        review.kind,
        None if review.blind is None else int(review.blind),
        _json(review.extra),
        review.date or now_iso(),
    )


@dataclass
class ImportedStepRows:
    """An import's step labels and reviews, written together with ``executemany``."""

    labels: list[tuple[Any, ...]] = field(default_factory=list)
    reviews: list[tuple[Any, ...]] = field(default_factory=list)

    def add_label(self, target: StepTarget, label: StepLabel) -> None:
        self.labels.append(_label_row(target, label))

    def add_review(self, target: StepTarget, review: StepReview) -> None:
        self.reviews.append(_review_row(target, review))

    def write(self, conn: sqlite3.Connection) -> None:
        conn.executemany(
            f"INSERT INTO step_label (sample_pk, cot_pk, trace, {_LABEL_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.labels,
        )
        conn.executemany(
            f"INSERT INTO step_review (sample_pk, cot_pk, trace, {_REVIEW_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.reviews,
        )
        self.labels.clear()
        self.reviews.clear()


def labels_for_cots(
    conn: sqlite3.Connection, cot_pks: Iterable[int], trace: Trace = "cot"
) -> dict[int, list[StepLabel]]:
    """Every label of the given CoTs' ``trace``, by CoT key, each list by step then author."""
    out: dict[int, list[StepLabel]] = {}
    pks = list(cot_pks)
    for start in range(0, len(pks), 500):
        chunk = pks[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
            f"SELECT cot_pk, {_LABEL_COLS} FROM step_label WHERE cot_pk IN ({marks}) AND trace = ? "
            "ORDER BY cot_pk, step, author",
            (*chunk, trace),
        ):
            out.setdefault(row[0], []).append(_label(row[1:]))
    return out


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
            f"SELECT cot_pk, {_REVIEW_COLS} FROM step_review WHERE cot_pk IN ({marks}) AND trace = ? "
            "ORDER BY cot_pk, author",
            (*chunk, trace),
        ):
            out.setdefault(row[0], []).append(_review(row[1:]))
    return out


def first_error_of(labels: Sequence[StepLabel]) -> int | None:
    """The first step rated -1 in one author's labels, -1 when some are rated and none is -1,
    None when none is rated."""
    rated = [label for label in labels if label.rating is not None]
    if not rated:
        return None
    wrong = [label.step for label in rated if label.rating == -1]
    return min(wrong) if wrong else -1
