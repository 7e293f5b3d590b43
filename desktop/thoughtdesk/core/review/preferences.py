"""Pairwise preferences of human reviewers (issue 26, point 3; table ``pairwise_preference``).

A reviewer looks at two CoTs of one sample side by side and says which is better, or that they
are equally good (a tie). One verdict per reviewer and pair: a new one replaces the old. The
pair is stored with the smaller CoT key first (``first_cot_pk < second_cot_pk``), whatever side
each was shown on; ``preferred_cot_pk`` is one of the two, or NULL for a tie. ``blind`` says
whether the models were hidden when the verdict was given.

Writes happen in the caller's transaction and return what was there before, so the GUI's undo
writes exactly that back (:func:`set_preference` with the old verdict, or
:func:`clear_preference`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso

#: A verdict seen from the pair's stored order: the first (smaller key) CoT, the second, or a tie.
FIRST, SECOND, TIE = "first", "second", "tie"
PAIR_LABELS = (FIRST, SECOND, TIE)


def pair_key(a: int, b: int) -> tuple[int, int]:
    """The stored order of a pair of CoT keys (smaller first); ValueError for one CoT twice."""
    if a == b:
        raise ValueError(f"a pairwise preference needs two different CoTs, got CoT {a} twice")
    return (a, b) if a < b else (b, a)


@dataclass(frozen=True, slots=True)
class PairPreference:
    """A verdict on a pair of CoTs of one sample (``first_cot_pk < second_cot_pk``):
    ``preferred_cot_pk`` is one of them, or None for a tie."""

    sample_pk: int
    first_cot_pk: int
    second_cot_pk: int
    preferred_cot_pk: int | None
    author: str = ""
    date: str = ""
    blind: bool = True

    @property
    def pair(self) -> tuple[int, int]:
        return (self.first_cot_pk, self.second_cot_pk)

    @property
    def label(self) -> str:
        """``first``, ``second`` or ``tie`` (see :data:`PAIR_LABELS`)."""
        if self.preferred_cot_pk is None:
            return TIE
        return FIRST if self.preferred_cot_pk == self.first_cot_pk else SECOND


_COLUMNS = "sample_pk, first_cot_pk, second_cot_pk, preferred_cot_pk, author, date, blind"


def _row(row: tuple) -> PairPreference:
    return PairPreference(row[0], row[1], row[2], row[3], row[4], row[5], bool(row[6]))


def preference_of(conn: sqlite3.Connection, author: str, a: int, b: int) -> PairPreference | None:
    """``author``'s verdict on the pair ``a``, ``b`` (either order), or None."""
    first, second = pair_key(a, b)
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM pairwise_preference WHERE author = ? AND first_cot_pk = ? AND second_cot_pk = ?",
        (author, first, second),
    ).fetchone()
    return None if row is None else _row(row)


def set_preference(
    conn: sqlite3.Connection,
    author: str,
    a: int,
    b: int,
    preferred: int | None,
    *,
    blind: bool = True,
    date: str | None = None,
) -> PairPreference | None:
    """Store ``author``'s verdict on CoTs ``a`` and ``b`` (``preferred``: one of them, None for a
    tie), replacing theirs; return the verdict replaced (None: there was none). Both CoTs must
    belong to one sample (ValueError naming them otherwise)."""
    first, second = pair_key(a, b)
    if preferred is not None and preferred not in (first, second):
        raise ValueError(f"CoT {preferred} is not one of the pair {first}, {second}")
    samples = dict(
        conn.execute("SELECT id, sample_pk FROM generated_cot WHERE id IN (?, ?)", (first, second)).fetchall()
    )
    if len(samples) != 2:
        raise ValueError(f"CoT {first if first not in samples else second} is not in the library")
    if samples[first] != samples[second]:
        raise ValueError(
            f"CoTs {first} and {second} belong to different samples: a preference compares one sample's CoTs"
        )
    before = preference_of(conn, author, first, second)
    conn.execute(
        "INSERT INTO pairwise_preference (sample_pk, first_cot_pk, second_cot_pk, preferred_cot_pk, author, date, blind) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (author, first_cot_pk, second_cot_pk) DO UPDATE SET "
        "preferred_cot_pk = excluded.preferred_cot_pk, date = excluded.date, blind = excluded.blind",
        (samples[first], first, second, preferred, author, date or now_iso(), int(blind)),
    )
    return before


def clear_preference(conn: sqlite3.Connection, author: str, a: int, b: int) -> PairPreference | None:
    """Remove ``author``'s verdict on the pair; return it (None: there was none)."""
    before = preference_of(conn, author, a, b)
    if before is not None:
        conn.execute(
            "DELETE FROM pairwise_preference WHERE author = ? AND first_cot_pk = ? AND second_cot_pk = ?",
            (author, *before.pair),
        )
    return before


def restore_preference(conn: sqlite3.Connection, author: str, a: int, b: int, before: PairPreference | None) -> None:
    """Put back what :func:`set_preference` or :func:`clear_preference` returned."""
    if before is None:
        clear_preference(conn, author, a, b)
    else:
        set_preference(conn, author, a, b, before.preferred_cot_pk, blind=before.blind, date=before.date)


def sample_preferences(conn: sqlite3.Connection, sample_pk: int) -> list[PairPreference]:
    """Every reviewer's verdicts on the CoTs of one sample, in stored order."""
    return [
        _row(r)
        for r in conn.execute(
            f"SELECT {_COLUMNS} FROM pairwise_preference WHERE sample_pk = ? ORDER BY id", (sample_pk,)
        )
    ]


def collection_preferences(lib: Library, collection: str, authors: Iterable[str] | None = None) -> list[PairPreference]:
    """Every human verdict on pairs of ``collection``'s CoTs (only ``authors``' when given)."""
    cid = lib.require_collection(collection)
    wanted = list(authors or ())
    where = f" AND p.author IN ({','.join('?' * len(wanted))})" if wanted else ""
    return [
        _row(r)
        for r in lib.conn.execute(
            f"SELECT p.{_COLUMNS.replace(', ', ', p.')} FROM pairwise_preference p JOIN sample s ON s.id = p.sample_pk "
            f"WHERE s.collection_id = ?{where} ORDER BY p.id",
            (cid, *wanted),
        )
    ]
