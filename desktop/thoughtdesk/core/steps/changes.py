"""Changes of one author's step labels as undoable values: a :class:`StepChange` holds every
row it touches before and after, so applying and reverting it are each one transaction (marking
"first error here" changes the review and rates the steps before it: one change, one undo).

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
from thoughtdesk.core.steps.store import (
    StepLabel,
    StepReview,
    StepTarget,
    label_of,
    put_label,
    put_review,
    review_of,
)


@dataclass(frozen=True, slots=True)
class LabelSlot:
    """One step's label before and after a change."""

    step: int
    before: StepLabel | None
    after: StepLabel | None


@dataclass(frozen=True, slots=True)
class StepChange:
    """One author's change to one step list: labels and, optionally, the review."""

    target: StepTarget
    author: str
    text: str
    labels: tuple[LabelSlot, ...] = ()
    review: tuple[StepReview | None, StepReview | None] | None = None

    @property
    def changes_anything(self) -> bool:
        return any(slot.before != slot.after for slot in self.labels) or (
            self.review is not None and self.review[0] != self.review[1]
        )

    def apply(self, conn: sqlite3.Connection, *, revert: bool = False) -> None:
        """Write the change (or its reverse) in the caller's transaction."""
        for slot in self.labels:
            put_label(conn, self.target, self.author, slot.step, slot.before if revert else slot.after)
        if self.review is not None:
            put_review(conn, self.target, self.author, self.review[0] if revert else self.review[1])


def _label(conn: sqlite3.Connection, target: StepTarget, author: str, step: Step) -> StepLabel:
    found = label_of(conn, target, step.index, author)
    return found if found is not None else StepLabel(step.index, step.id, author)


def _stamped(label: StepLabel, step: Step, **changes: object) -> StepLabel:
    return dataclasses.replace(label, step_id=step.id, date=now_iso(), kind="human", **changes)  # type: ignore[arg-type]  # replace's keywords are the fields


def rate(conn: sqlite3.Connection, target: StepTarget, author: str, step: Step, rating: int) -> StepChange:
    """Rate ``step`` (-1, 0, +1); the same rating again clears it."""
    before = label_of(conn, target, step.index, author)
    current = _label(conn, target, author, step)
    after = _stamped(current, step, rating=None if current.rating == rating else rating)
    return StepChange(
        target, author, f"rate step {step.index + 1} {rating:+d}", (LabelSlot(step.index, before, after),)
    )


def flag(conn: sqlite3.Connection, target: StepTarget, author: str, step: Step) -> StepChange:
    """Flag ``step`` as unsure, or take the flag off."""
    before = label_of(conn, target, step.index, author)
    current = _label(conn, target, author, step)
    after = _stamped(current, step, flagged=None if current.flagged else True)
    return StepChange(target, author, f"flag step {step.index + 1}", (LabelSlot(step.index, before, after),))


def correct(conn: sqlite3.Connection, target: StepTarget, author: str, step: Step, text: str | None) -> StepChange:
    """Set the corrected text of ``step`` (None or blank: none)."""
    before = label_of(conn, target, step.index, author)
    current = _label(conn, target, author, step)
    after = _stamped(current, step, corrected=text if text and text.strip() else None)
    return StepChange(target, author, f"correct step {step.index + 1}", (LabelSlot(step.index, before, after),))


def _review(conn: sqlite3.Connection, target: StepTarget, author: str) -> tuple[StepReview | None, StepReview]:
    before = review_of(conn, target, author)
    return before, before if before is not None else StepReview(author)


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
    unless already rated, the review's first error set to ``index`` (and finish reason
    found_error when none was set). Marking the same step again takes the mark off (the review's
    first error cleared; ratings stay as they are). ``index`` -1: no step is wrong (every
    unrated step +1, finish reason solution when none was set)."""
    before_review, review = _review(conn, target, author)
    if review.first_error == index and before_review is not None:
        after_review = dataclasses.replace(review, first_error=None, date=now_iso())
        return StepChange(target, author, "clear first error", (), (before_review, after_review))
    slots: list[LabelSlot] = []
    last = len(steps) if index == -1 else index
    for step in steps[:last]:
        before = label_of(conn, target, step.index, author)
        if before is None or before.rating is None:
            base = before if before is not None else StepLabel(step.index, step.id, author)
            slots.append(LabelSlot(step.index, before, _stamped(base, step, rating=1)))
    if index >= 0:
        step = steps[index]
        before = label_of(conn, target, step.index, author)
        base = before if before is not None else StepLabel(step.index, step.id, author)
        slots.append(LabelSlot(step.index, before, _stamped(base, step, rating=-1)))
    reason = review.finish_reason or ("found_error" if index >= 0 else "solution")
    after_review = dataclasses.replace(
        review, first_error=index, finish_reason=reason, kind="human", blind=blind, date=now_iso()
    )
    what = "no wrong step" if index < 0 else f"first error at step {index + 1}"
    return StepChange(target, author, what, tuple(slots), (before_review, after_review))


def finish(conn: sqlite3.Connection, target: StepTarget, author: str, reason: str | None) -> StepChange:
    """Set the finish reason of ``author``'s review (the same one again clears it)."""
    before, review = _review(conn, target, author)
    after = dataclasses.replace(
        review, finish_reason=None if review.finish_reason == reason else reason, date=now_iso()
    )
    return StepChange(target, author, f"finish reason {reason}", (), (before, after))


def add_time(conn: sqlite3.Connection, target: StepTarget, author: str, ms: int) -> StepChange | None:
    """Add ``ms`` milliseconds to the time ``author`` spent on ``target`` (None for nothing to add)."""
    if ms <= 0:
        return None
    before, review = _review(conn, target, author)
    after = dataclasses.replace(review, time_ms=(review.time_ms or 0) + int(ms), date=now_iso())
    return StepChange(target, author, "time spent", (), (before, after))
