"""The one undo record of every review edit: a :class:`ReviewEdit` holds the rows of one
reviewer's slot before and after the edit, as they were stored.

A slot (:class:`EditSlot`) is what one edit changes: this reviewer's annotation of a CoT with one
key (and span), their explanation rating of a CoT, their rating of a critique, their pairwise
verdict on a pair of CoTs, or their step labels of one step list. Every edit the Review tab makes
(labels, spans, comment, preferred, quality, ratings, critique ratings, pairwise preferences,
step labels) is planned as a :class:`PlannedEdit` (the slot, a description, the first write) and
written by :func:`perform`, which reads the slot's rows before and after in the same transaction
and returns the :class:`ReviewEdit`.

:func:`undo` and :func:`redo` write a snapshot back (the rows exactly as they were: ids, dates,
positions), each one committed transaction, and only when the slot still holds what the edit
left (undo) or what was there before it (redo): a slot another process or an import wrote since
raises :class:`EditConflict` and nothing is written, so an undo never silently overwrites a newer
write. Other reviewers' rows are never in the slot, so they are never touched. The time the tab
adds to a step list's row while it is shown is recorded, not chosen: it is not compared, and an
undo or redo keeps it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.library import counters
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.review.annotations import slot_rows, write_slot
from thoughtdesk.core.review.types import AnnotationOp, Span

if TYPE_CHECKING:
    from thoughtdesk.core.steps.changes import StepChange

Kind = Literal["annotation", "explanation_rating", "critique_rating", "preference", "steps"]
#: One stored row: (column, value) pairs in the table's order.
Row = tuple[tuple[str, Any], ...]
Rows = tuple[Row, ...]
#: The first write of an edit, in its transaction.
Change = Callable[[sqlite3.Connection], None]


class EditConflict(ThoughtDeskError):
    """The slot was written by someone else since the edit (or its undo): nothing was written."""


@dataclass(frozen=True, slots=True)
class EditSlot:
    """One reviewer's rows that one edit changes.

    ``cot_pk`` is the CoT the edit is about (shown before it is undone; None for a reference
    CoT's step labels). ``key`` says the rest, by kind: ``annotation`` (label key, span start,
    span end or None, None), ``critique_rating`` (critique key,), ``preference`` (first CoT,
    second CoT), ``steps`` (sample key, trace); the explanation rating needs nothing more.
    """

    kind: Kind
    author: str
    cot_pk: int | None
    key: tuple[Any, ...] = ()

    @property
    def what(self) -> str:
        """The slot in words, for a message ("your rating of critique 7")."""
        if self.kind == "annotation":
            where = " (a span)" if self.key[1] is not None else ""
            return f"{self.author}'s “{self.key[0]}”{where} on CoT {self.cot_pk}"
        if self.kind == "explanation_rating":
            return f"{self.author}'s explanation rating of CoT {self.cot_pk}"
        if self.kind == "critique_rating":
            return f"{self.author}'s rating of critique {self.key[0]}"
        if self.kind == "preference":
            return f"{self.author}'s preference between CoTs {self.key[0]} and {self.key[1]}"
        where = "the reference CoT" if self.cot_pk is None else f"CoT {self.cot_pk}"
        return f"{self.author}'s step labels of {where}"

    @property
    def critique_pk(self) -> int | None:
        return self.key[0] if self.kind == "critique_rating" else None


@dataclass(frozen=True, slots=True)
class PlannedEdit:
    """An edit not written yet: its slot, what it says, and its first write."""

    slot: EditSlot
    description: str
    change: Change = field(compare=False)


@dataclass(frozen=True, slots=True)
class ReviewEdit:
    """One written edit: the slot's rows before and after (see the module docstring)."""

    slot: EditSlot
    description: str
    before: Rows
    after: Rows

    @property
    def changes_anything(self) -> bool:
        return _compared(self.slot, self.before) != _compared(self.slot, self.after)


# ---- the slots' rows -----------------------------------------------------------------------

_TABLES: dict[str, str] = {
    "annotation": "annotation",
    "explanation_rating": "explanation_rating",
    "critique_rating": "critique_rating",
    "preference": "pairwise_preference",
    "steps": "step_label",
}
#: Columns an undo or redo neither compares nor puts back: the Review tab adds the time spent on a
#: step list to the reviewer's row while it is shown (recorded, not chosen; no one else's write).
_KEPT: dict[str, tuple[str, ...]] = {"steps": ("time_ms",)}


def _where(conn: sqlite3.Connection, slot: EditSlot) -> tuple[str, tuple[Any, ...]]:
    """The SQL condition that selects the slot's rows, and its arguments."""
    author, cot_pk, key = slot.author, slot.cot_pk, slot.key
    if slot.kind == "annotation":  # span offsets live in JSON: the rows are chosen in Python
        assert cot_pk is not None
        span = Span(key[1], key[2]) if key[1] is not None else None
        ids = tuple(row[0] for row in slot_rows(conn, cot_pk, author, key[0], span))
        return f"id IN ({','.join('?' * len(ids))})", ids
    if slot.kind == "explanation_rating":
        return "cot_pk = ? AND author = ?", (cot_pk, author)
    if slot.kind == "critique_rating":
        return "critique_pk = ? AND author = ?", (key[0], author)
    if slot.kind == "preference":
        return "author = ? AND first_cot_pk = ? AND second_cot_pk = ?", (author, key[0], key[1])
    if cot_pk is None:
        return "sample_pk = ? AND trace = 'reference' AND author = ?", (key[0], author)
    return "cot_pk = ? AND trace = ? AND author = ?", (cot_pk, key[1], author)


def read_rows(conn: sqlite3.Connection, slot: EditSlot) -> Rows:
    """The slot's rows as stored now, every column, by id."""
    where, args = _where(conn, slot)
    cursor = conn.execute(f"SELECT * FROM {_TABLES[slot.kind]} WHERE {where} ORDER BY id", args)
    names = [d[0] for d in cursor.description]
    return tuple(tuple(zip(names, row, strict=True)) for row in cursor.fetchall())


def _compared(slot: EditSlot, rows: Rows) -> Rows:
    """What a conflict is judged on: every column but the kept ones and the id (a row put back
    under a new id, when its own was taken, is still the same row)."""
    skip = ("id", *_KEPT.get(slot.kind, ()))
    return tuple(tuple((name, value) for name, value in row if name not in skip) for row in rows)


def _write_rows(conn: sqlite3.Connection, slot: EditSlot, current: Rows, target: Rows) -> None:
    """Replace the slot's ``current`` rows by ``target`` (each with its own id when that id is
    free), the kept columns as they are now."""
    table = _TABLES[slot.kind]
    kept = {name: value for row in current[:1] for name, value in row if name in _KEPT.get(slot.kind, ())}
    for row in current:
        conn.execute(f"DELETE FROM {table} WHERE id = ?", (dict(row)["id"],))
    for row in target:
        values = dict(row)
        if len(current) == len(target) == 1:  # (a step list's row: one per reviewer)
            values.update(kept)
        taken = conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (values["id"],)).fetchone()
        if taken is not None:  # another row has that id now: the row comes back under a new one
            del values["id"]
        names = list(values)
        conn.execute(
            f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            [values[n] for n in names],
        )
    if slot.kind == "annotation" and slot.cot_pk is not None:
        counters.recount_annotations(conn, slot.cot_pk)


# ---- writing ---------------------------------------------------------------------------------


def perform_in(conn: sqlite3.Connection, planned: PlannedEdit) -> ReviewEdit:
    """Write ``planned`` in the caller's transaction; return the edit (rows before and after)."""
    before = read_rows(conn, planned.slot)
    planned.change(conn)
    return ReviewEdit(planned.slot, planned.description, before, read_rows(conn, planned.slot))


def perform(library: Library, planned: PlannedEdit) -> ReviewEdit:
    """Write ``planned`` (one committed transaction); return the edit to undo it with."""
    with library.transaction() as conn:
        return perform_in(conn, planned)


def _put_back(library: Library, edit: ReviewEdit, expected: Rows, target: Rows, verb: str) -> None:
    with library.transaction() as conn:
        current = read_rows(conn, edit.slot)
        if _compared(edit.slot, current) != _compared(edit.slot, expected):
            raise EditConflict(
                f"“{edit.description}” not {verb}: {edit.slot.what} was changed since (by another process "
                "or an import); it is left as it is now"
            )
        _write_rows(conn, edit.slot, current, target)


def undo(library: Library, edit: ReviewEdit) -> None:
    """Put back the rows ``edit`` replaced (:class:`EditConflict` if the slot changed since)."""
    _put_back(library, edit, edit.after, edit.before, "undone")


def redo(library: Library, edit: ReviewEdit) -> None:
    """Write ``edit``'s rows again after an undo (:class:`EditConflict` if the slot changed since)."""
    _put_back(library, edit, edit.before, edit.after, "redone")


# ---- the edits of the Review tab -------------------------------------------------------------


def annotation_edit(op: AnnotationOp) -> PlannedEdit:
    """An annotation change planned by :class:`~thoughtdesk.core.review.AnnotationStore`."""
    span = op.span
    slot = EditSlot(
        "annotation",
        op.author,
        op.cot_pk,
        (op.key, span.start if span else None, span.end if span else None),
    )

    def change(conn: sqlite3.Connection) -> None:
        write_slot(conn, op.cot_pk, op.author, op.key, op.span, op.after, now_iso())
        counters.recount_annotations(conn, op.cot_pk)

    return PlannedEdit(slot, op.description or f"Change {op.key}", change)


def explanation_rating_edit(
    cot_pk: int, author: str, score: int | None, dimensions: tuple[str, ...], description: str
) -> PlannedEdit:
    """Set ``author``'s explanation rating of a CoT (no score and no dimensions: none)."""
    from thoughtdesk.core.critiques import set_explanation_rating

    def change(conn: sqlite3.Connection) -> None:
        set_explanation_rating(conn, cot_pk, author, score, dimensions)

    return PlannedEdit(EditSlot("explanation_rating", author, cot_pk), description, change)


def critique_rating_edit(
    critique_pk: int, cot_pk: int, author: str, score: int | None, description: str
) -> PlannedEdit:
    """Set ``author``'s 0-3 rating of a critique of CoT ``cot_pk`` (None: none)."""
    from thoughtdesk.core.critiques import set_critique_rating

    def change(conn: sqlite3.Connection) -> None:
        set_critique_rating(conn, critique_pk, author, score)

    return PlannedEdit(EditSlot("critique_rating", author, cot_pk, (critique_pk,)), description, change)


def preference_edit(
    author: str, left: int, right: int, preferred: int | None, *, clear: bool, blind: bool, description: str
) -> PlannedEdit:
    """``author``'s verdict on the pair (``preferred`` None: a tie); ``clear`` takes it back."""
    from thoughtdesk.core.review.preferences import clear_preference, pair_key, set_preference

    first, second = pair_key(left, right)

    def change(conn: sqlite3.Connection) -> None:
        if clear:
            clear_preference(conn, author, left, right)
        else:
            set_preference(conn, author, left, right, preferred, blind=blind)

    return PlannedEdit(EditSlot("preference", author, left, (first, second)), description, change)


def step_edit(change: StepChange) -> PlannedEdit:
    """A :class:`~thoughtdesk.core.steps.changes.StepChange` of one author's step labels."""
    target = change.target
    slot = EditSlot("steps", change.author, target.cot_pk, (target.sample_pk, target.trace))
    return PlannedEdit(slot, change.text, lambda conn: change.apply(conn))
