"""The one undo record of review edits (core/review/undo.py), without Qt, on a real library file:
undo and redo put the stored rows back exactly, refuse a slot another connection wrote since,
never touch another reviewer's rows, and keep the time spent on a step list."""

from __future__ import annotations

import pytest

from tests.core.review.conftest import cot_pks, open_library, sample_pk, table_digest
from thoughtdesk.core.critiques import set_explanation_rating
from thoughtdesk.core.library import counters
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import AnnotationStore
from thoughtdesk.core.review.annotations import write_slot
from thoughtdesk.core.review.undo import (
    EditConflict,
    annotation_edit,
    explanation_rating_edit,
    perform,
    preference_edit,
    redo,
    step_edit,
    undo,
)
from thoughtdesk.core.steps import changes
from thoughtdesk.core.steps.split import Step
from thoughtdesk.core.steps.store import StepTarget, add_time_spent, review_of

OLD = "2020-01-02T03:04:05Z"


def test_undo_and_redo_put_the_rows_back_exactly(lib) -> None:
    cot = cot_pks(lib, "mq-1")[0]
    with lib.transaction() as conn:
        write_slot(conn, cot, "ann", "Too verbose", None, "false", OLD)  # an earlier review, old date
        conn.execute(
            "INSERT INTO annotation (cot_pk, position, author, date, key, value) VALUES (?, 9, 'ann', ?, 'Too verbose', 'false')",
            (cot, OLD),
        )
        counters.recount_annotations(conn, cot)  # a slot with two rows (a file can repeat a key)
    start = table_digest(lib)
    store = AnnotationStore(lib, "ann")
    edit = perform(lib, annotation_edit(store.plan_toggle_label(cot, "Too verbose")))
    assert store.review(cot).labels == {"Too verbose": True} and len(edit.before) == 2 and len(edit.after) == 1
    after = table_digest(lib)
    undo(lib, edit)
    assert table_digest(lib) == start  # both rows again, their dates, ids and positions, the count
    redo(lib, edit)
    assert table_digest(lib) == after
    undo(lib, edit)
    assert table_digest(lib) == start


def test_a_slot_written_since_is_neither_undone_nor_redone(lib, lib_path) -> None:
    cot = cot_pks(lib, "mq-1")[1]
    edit = perform(lib, explanation_rating_edit(cot, "ann", 4, (), "Explanation score 4/5"))
    with Library.open(lib_path) as other, other.transaction() as conn:  # another process rates
        set_explanation_rating(conn, cot, "ann", 2, ("irrelevant",))
    theirs = table_digest(lib)
    with pytest.raises(EditConflict) as caught:
        undo(lib, edit)
    assert table_digest(lib) == theirs
    text = str(caught.value)
    assert "\n" not in text and "“Explanation score 4/5” not undone" in text
    assert f"ann's explanation rating of CoT {cot} was changed since" in text
    # Redo after an undo checks the same way: the slot must hold what was there before.
    second = perform(lib, explanation_rating_edit(cot, "ann", None, (), "Clear"))
    undo(lib, second)
    with Library.open(lib_path) as other, other.transaction() as conn:
        set_explanation_rating(conn, cot, "ann", 5, ())
    with pytest.raises(EditConflict, match="not redone"):
        redo(lib, second)


def test_other_reviewers_rows_stay_and_a_taken_id_is_not_overwritten(lib) -> None:
    a, b = cot_pks(lib, "mq-1")[:2]
    edit = perform(lib, preference_edit("ann", a, b, b, clear=False, blind=True, description="Prefer"))
    [row] = edit.after
    undo(lib, edit)
    with lib.transaction() as conn:  # bob's verdict on the same pair takes the id ann's had
        conn.execute(
            "INSERT INTO pairwise_preference (id, sample_pk, first_cot_pk, second_cot_pk, preferred_cot_pk, author, date)"
            " VALUES (?, ?, ?, ?, ?, 'bob', ?)",
            (dict(row)["id"], sample_pk(lib, "mq-1"), min(a, b), max(a, b), a, OLD),
        )
    redo(lib, edit)
    rows = lib.conn.execute("SELECT author, preferred_cot_pk, date FROM pairwise_preference ORDER BY id").fetchall()
    assert rows == [("bob", a, OLD), ("ann", b, dict(row)["date"])]
    undo(lib, edit)
    assert lib.conn.execute("SELECT author FROM pairwise_preference").fetchall() == [("bob",)]


def test_time_spent_on_a_step_list_is_kept_and_not_a_conflict(lib) -> None:
    cot = cot_pks(lib, "mq-1")[0]
    target = StepTarget(sample_pk(lib, "mq-1"), cot, "cot")
    step = Step(0, "s0-x", "The first step.", 0, 15)
    with lib.transaction() as conn:
        changes.rate(conn, target, "ann", step, -1).apply(conn)
        add_time_spent(conn, target, "ann", 1000)
    edit = perform(lib, step_edit(changes.rate(lib.conn, target, "ann", step, 1)))
    with lib.transaction() as conn:  # the tab adds the time spent while the list is shown
        assert add_time_spent(conn, target, "ann", 500)
    undo(lib, edit)
    review = review_of(lib.conn, target, "ann")
    assert review is not None and review.label(0).rating == -1 and review.time_ms == 1500  # type: ignore[union-attr]


def test_the_library_file_reopened_sees_the_undone_state(lib_path) -> None:
    with open_library(lib_path) as lib:
        cot = cot_pks(lib, "mq-2")[0]
        edit = perform(lib, annotation_edit(AnnotationStore(lib, "ann").plan_set_quality(cot, 3)))
        undo(lib, edit)
    with Library.open(lib_path) as again:
        assert AnnotationStore(again, "ann").review(cot).quality is None
