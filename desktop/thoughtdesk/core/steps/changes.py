"""Changes of one author's step labels as undoable values: a :class:`StepChange` holds the
author's review of a step list before and after, so applying and reverting it are each one
write (marking "first error here" sets the first error and rates the steps before it: one
change, one undo).

The keyboard actions of the Review tab are built here, without Qt (:func:`rate`, :func:`flag`,
:func:`correct`, :func:`first_error_here`, :func:`finish`, :func:`add_time`).
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.steps.split import Step
from thoughtdesk.core.steps.store import StepLabel, StepReview, StepTarget, put_review, review_of


@dataclass(frozen=True, slots=True)
class StepChange:
    """One author's change to the labels of one step list: the review before and after."""

    target: StepTarget
    author: str
    text: str
    before: StepReview | None
    after: StepReview | None

    @property
    def changes_anything(self) -> bool:
        return _same(self.before) != _same(self.after)

    def apply(self, conn: sqlite3.Connection, *, revert: bool = False) -> None:
        """Write the change (or its reverse) in the caller's transaction."""
        put_review(conn, self.target, self.author, self.before if revert else self.after)


def _same(review: StepReview | None) -> object:
    return None if review is None else dataclasses.replace(review, date="")


def _current(conn: sqlite3.Connection, target: StepTarget, author: str) -> tuple[StepReview | None, StepReview]:
    before = review_of(conn, target, author)
    return before, before if before is not None else StepReview(author)


def _with(review: StepReview, step: Step, blind: bool | None, **changes: object) -> StepReview:
    label = review.label(step.index) or StepLabel(step.index, step.id)
    label = dataclasses.replace(label, step_id=step.id, **changes)  # type: ignore[arg-type]  # the label's fields
    updated = review.with_label(label)
    return dataclasses.replace(updated, kind="human", date=now_iso(), blind=review.blind if blind is None else blind)


def rate(
    conn: sqlite3.Connection, target: StepTarget, author: str, step: Step, rating: int, *, blind: bool | None = None
) -> StepChange:
    """Rate ``step`` (-1, 0, +1); the same rating again clears it."""
    before, review = _current(conn, target, author)
    current = review.label(step.index)
    value = None if current is not None and current.rating == rating else rating
    after = _with(review, step, blind, rating=value)
    return StepChange(target, author, f"rate step {step.index + 1} {rating:+d}", before, after)


def flag(conn: sqlite3.Connection, target: StepTarget, author: str, step: Step) -> StepChange:
    """Flag ``step`` as unsure, or take the flag off."""
    before, review = _current(conn, target, author)
    current = review.label(step.index)
    after = _with(review, step, None, flagged=None if current is not None and current.flagged else True)
    return StepChange(target, author, f"flag step {step.index + 1}", before, after)


def correct(conn: sqlite3.Connection, target: StepTarget, author: str, step: Step, text: str | None) -> StepChange:
    """Set the corrected text of ``step`` (None or blank: none)."""
    before, review = _current(conn, target, author)
    after = _with(review, step, None, corrected=text if text and text.strip() else None)
    return StepChange(target, author, f"correct step {step.index + 1}", before, after)


def first_error_here(
    conn: sqlite3.Connection,
    target: StepTarget,
    author: str,
    steps: Sequence[Step],
    index: int,
    *,
    blind: bool | None = None,
) -> StepChange:
    """Mark step ``index`` as the first wrong one: rated -1, every step before it rated +1
    unless already rated, the first error set to ``index`` (and the finish reason found_error
    when none was set). Marking the same step again takes the mark off (ratings stay).
    ``index`` -1: no step is wrong (every unrated step +1, finish reason solution when none)."""
    before, review = _current(conn, target, author)
    if before is not None and review.first_error == index:
        after = dataclasses.replace(review, first_error=None, date=now_iso())
        return StepChange(target, author, "clear first error", before, after)
    last = len(steps) if index == -1 else index
    for step in steps[:last]:
        current = review.label(step.index)
        if current is None or current.rating is None:
            review = _with(review, step, blind, rating=1)
    if index >= 0:
        review = _with(review, steps[index], blind, rating=-1)
    reason = review.finish_reason or ("found_error" if index >= 0 else "solution")
    after = dataclasses.replace(
        review, first_error=index, finish_reason=reason, kind="human", blind=blind, date=now_iso()
    )
    what = "no wrong step" if index < 0 else f"first error at step {index + 1}"
    return StepChange(target, author, what, before, after)


def finish(conn: sqlite3.Connection, target: StepTarget, author: str, reason: str | None) -> StepChange:
    """Set the finish reason (the same one again clears it)."""
    before, review = _current(conn, target, author)
    value = None if review.finish_reason == reason else reason
    after = dataclasses.replace(review, finish_reason=value, date=now_iso())
    return StepChange(target, author, f"finish reason {reason}", before, after)


def add_time(conn: sqlite3.Connection, target: StepTarget, author: str, ms: int) -> StepChange | None:
    """Add ``ms`` milliseconds to the time ``author`` spent on ``target`` (None: nothing to add).
    Not an undoable edit: time spent is recorded, not chosen."""
    if ms <= 0:
        return None
    before, review = _current(conn, target, author)
    after = dataclasses.replace(review, time_ms=(review.time_ms or 0) + int(ms), date=now_iso())
    return StepChange(target, author, "time spent", before, after)
