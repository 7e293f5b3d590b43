"""The sample counters: every update of ``sample.n_*`` goes through this module.

Each ``sample`` row carries denormalised counts of what hangs below it, so that browsing,
filtering and the collection tree never join the big tables (see docs/design.md, "Counters"):

- ``n_cots``: its generated CoTs;
- ``n_answers``: the answers of those CoTs;
- ``n_correct`` / ``n_incorrect``: answers whose ``correct_answer`` is 1 / 0;
- ``n_unextractable``: answers ThoughtDesk scored and could not extract an answer from
  (``td_outcome = 'unextractable'``, ``correct_answer`` NULL), or, not scored by ThoughtDesk,
  that ThoughtSource's evaluate graded and found nothing in (``correct_answer`` NULL with
  ``answer_from_choices`` null: ``records.thoughtsource_unextractable``);
- ``n_annotations``: the annotation rows of its CoTs.

Whoever inserts or deletes those rows, or changes ``correct_answer``, calls the function here
that says what happened, on the connection of the transaction that changed the rows, so the
counters commit (or roll back) with the rows. The one exception is the bulk import
(:class:`thoughtdesk.core.library.writer.SampleWriter`): it writes new samples with their
counters already filled in, counted in Python while it walks the records (a second pass or an
UPDATE per sample would cost import speed), by the same rules as :func:`add_cot` and
:func:`add_answer` (an imported answer is "unextractable" when the file carries
ThoughtDesk's own scoring of it, i.e. a ThoughtDesk export re-imported, or ThoughtSource's
evaluate graded it and extracted nothing).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import NamedTuple

from thoughtdesk.core.library.records import THOUGHTSOURCE_UNEXTRACTABLE_SQL


def add_cot(conn: sqlite3.Connection, sample_pk: int) -> None:
    """A generated CoT was added to sample ``sample_pk``."""
    conn.execute("UPDATE sample SET n_cots = n_cots + 1 WHERE id = ?", (sample_pk,))


def add_answer(conn: sqlite3.Connection, sample_pk: int, correct: bool | None, *, unextractable: bool) -> None:
    """An answer was added to one of sample ``sample_pk``'s CoTs, with ``correct_answer`` =
    ``correct`` (None: not scored) and ``unextractable`` when ThoughtDesk found no answer in it."""
    conn.execute(
        "UPDATE sample SET n_answers = n_answers + 1, n_correct = n_correct + ?, "
        "n_incorrect = n_incorrect + ?, n_unextractable = n_unextractable + ? WHERE id = ?",
        (int(correct is True), int(correct is False), int(unextractable), sample_pk),
    )


class ScoringCounts(NamedTuple):
    """One sample's answers by ThoughtDesk's verdict (a tuple, so a batch goes to executemany as is)."""

    correct: int
    incorrect: int
    unextractable: int
    sample_pk: int


def set_scoring(conn: sqlite3.Connection, counts: Iterable[ScoringCounts]) -> None:
    """Re-scoring gave each sample's answers new verdicts: set their three scoring counters."""
    conn.executemany(
        "UPDATE sample SET n_correct = ?, n_incorrect = ?, n_unextractable = ? WHERE id = ?",
        counts,
    )


def recount_imported_scoring(conn: sqlite3.Connection, collection_id: int) -> None:
    """The answers of a collection got their imported ``correct_answer`` back: recount
    ``n_correct``/``n_incorrect`` from it, and ``n_unextractable`` from the answers
    ThoughtSource's evaluate found nothing in (:func:`~thoughtdesk.core.library.records.thoughtsource_unextractable`)."""
    conn.execute(
        f"""UPDATE sample SET
             n_correct = (SELECT count(*) FROM generated_cot g JOIN answer a ON a.cot_pk = g.id
                          WHERE g.sample_pk = sample.id AND a.correct_answer = 1),
             n_incorrect = (SELECT count(*) FROM generated_cot g JOIN answer a ON a.cot_pk = g.id
                            WHERE g.sample_pk = sample.id AND a.correct_answer = 0),
             n_unextractable = (SELECT count(*) FROM generated_cot g JOIN answer a ON a.cot_pk = g.id
                                WHERE g.sample_pk = sample.id AND {THOUGHTSOURCE_UNEXTRACTABLE_SQL})
           WHERE collection_id = ?""",
        (collection_id,),
    )


def recount_annotations(conn: sqlite3.Connection, cot_pk: int) -> None:
    """Annotations of CoT ``cot_pk`` were added, changed or deleted: recount its sample's
    ``n_annotations`` (annotation rows of all the sample's CoTs)."""
    conn.execute(
        """UPDATE sample SET n_annotations = (
               SELECT count(*) FROM annotation a JOIN generated_cot c ON a.cot_pk = c.id
               WHERE c.sample_pk = sample.id)
           WHERE id = (SELECT sample_pk FROM generated_cot WHERE id = ?)""",
        (cot_pk,),
    )
