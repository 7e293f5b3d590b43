"""Step labels and reviews: per author, human or model, undoable changes, constraints, cascades."""

from __future__ import annotations

import sqlite3

import pytest

from tests.core.review.conftest import cot_pks, open_library, sample_pk
from thoughtdesk.core.steps import changes
from thoughtdesk.core.steps.split import text_steps
from thoughtdesk.core.steps.store import (
    ImportedStepRows,
    StepLabel,
    StepReview,
    StepTarget,
    first_error_of,
    label_of,
    labels_for_cots,
    labels_of,
    put_label,
    review_of,
    reviews_for_cots,
)

STEPS = text_steps("A.\n\nB.\n\nC.\n\nD.")


@pytest.fixture
def lib(tmp_path):
    with open_library(tmp_path / "lib.thoughtdesk") as lib:
        yield lib


def first_sample(lib):
    sample = lib.conn.execute("SELECT sample_id FROM sample ORDER BY id LIMIT 1").fetchone()[0]
    return sample_pk(lib, sample), cot_pks(lib, sample)


def apply(lib, change, *, revert=False):
    with lib.transaction() as conn:
        change.apply(conn, revert=revert)


def test_labels_are_per_author_and_kind(lib):
    spk, cots = first_sample(lib)
    target = StepTarget(spk, cots[0])
    with lib.transaction() as conn:
        put_label(conn, target, "ann", 1, StepLabel(1, STEPS[1].id, "ann", rating=-1, flagged=True))
        put_label(conn, target, "bob", 1, StepLabel(1, STEPS[1].id, "bob", rating=1, corrected="B!"))
        put_label(conn, target, "judge", 1, StepLabel(1, STEPS[1].id, "judge", rating=0, kind="model"))
    got = labels_of(lib.conn, target)
    assert [(x.author, x.rating, x.flagged, x.corrected, x.kind) for x in got] == [
        ("ann", -1, True, None, "human"),
        ("bob", 1, None, "B!", "human"),
        ("judge", 0, None, None, "model"),
    ]
    assert labels_of(lib.conn, StepTarget(spk, cots[0], "reasoning")) == []
    assert labels_for_cots(lib.conn, cots)[cots[0]] == got


def test_the_tables_refuse_impossible_labels(lib):
    spk, cots = first_sample(lib)
    with pytest.raises(ValueError, match="rated -1, 0 or \\+1"):
        with lib.transaction() as conn:
            put_label(conn, StepTarget(spk, cots[0]), "ann", 0, StepLabel(0, "s0-x", "ann", rating=2))
    with pytest.raises(sqlite3.IntegrityError):
        with lib.transaction() as conn:
            conn.execute(
                "INSERT INTO step_label (sample_pk, cot_pk, trace, step, step_id, author, rating, date) "
                "VALUES (?, ?, 'cot', 0, 's', 'a', 5, 'd')",
                (spk, cots[0]),
            )
    with pytest.raises(ValueError, match="reference CoT"):
        StepTarget(spk, cots[0], "reference")
    with pytest.raises(ValueError, match="reference CoT"):
        StepTarget(spk, None, "cot")


def test_first_error_here_rates_earlier_steps_and_undoes_as_one(lib):
    spk, cots = first_sample(lib)
    target = StepTarget(spk, cots[0])
    apply(lib, changes.rate(lib.conn, target, "ann", STEPS[0], 0))  # already rated: stays 0
    change = changes.first_error_here(lib.conn, target, "ann", STEPS, 2, blind=True)
    apply(lib, change)
    assert [(x.step, x.rating) for x in labels_of(lib.conn, target, "ann")] == [(0, 0), (1, 1), (2, -1)]
    review = review_of(lib.conn, target, "ann")
    assert review is not None and (review.first_error, review.finish_reason, review.blind) == (2, "found_error", True)
    assert first_error_of(labels_of(lib.conn, target, "ann")) == 2
    apply(lib, change, revert=True)
    assert [(x.step, x.rating) for x in labels_of(lib.conn, target, "ann")] == [(0, 0)]
    assert review_of(lib.conn, target, "ann") is None
    # -1: no step is wrong; every unrated step +1, finish reason solution
    apply(lib, changes.first_error_here(lib.conn, target, "bob", STEPS, -1))
    assert [x.rating for x in labels_of(lib.conn, target, "bob")] == [1, 1, 1, 1]
    assert review_of(lib.conn, target, "bob").finish_reason == "solution"  # type: ignore[union-attr]


def test_rate_twice_clears_flag_correct_finish_and_time(lib):
    spk, cots = first_sample(lib)
    target = StepTarget(spk, None, "reference")
    apply(lib, changes.rate(lib.conn, target, "ann", STEPS[3], 1))
    apply(lib, changes.rate(lib.conn, target, "ann", STEPS[3], 1))
    assert label_of(lib.conn, target, 3, "ann") is None  # the same rating again: cleared, row gone
    apply(lib, changes.flag(lib.conn, target, "ann", STEPS[1]))
    apply(lib, changes.correct(lib.conn, target, "ann", STEPS[1], "B, corrected."))
    label = label_of(lib.conn, target, 1, "ann")
    assert label is not None and (label.flagged, label.corrected, label.step_id) == (True, "B, corrected.", STEPS[1].id)
    apply(lib, changes.finish(lib.conn, target, "ann", "give_up"))
    time = changes.add_time(lib.conn, target, "ann", 1500)
    assert time is not None
    apply(lib, time)
    apply(lib, changes.add_time(lib.conn, target, "ann", 500))  # type: ignore[arg-type]
    review = review_of(lib.conn, target, "ann")
    assert review is not None and (review.finish_reason, review.time_ms) == ("give_up", 2000)
    assert changes.add_time(lib.conn, target, "ann", 0) is None


def test_bulk_rows_and_cascade_on_delete(lib):
    spk, cots = first_sample(lib)
    rows = ImportedStepRows()
    target = StepTarget(spk, cots[0])
    for step in STEPS:
        rows.add_label(target, StepLabel(step.index, step.id, "labeler", rating=1))
    rows.add_review(target, StepReview("labeler", first_error=-1, finish_reason="solution", time_ms=41000))
    with lib.transaction() as conn:
        rows.write(conn)
    assert len(labels_of(lib.conn, target)) == 4
    assert reviews_for_cots(lib.conn, [cots[0]])[cots[0]][0].time_ms == 41000
    with lib.transaction() as conn:
        conn.execute("DELETE FROM generated_cot WHERE id = ?", (cots[0],))
    assert lib.conn.execute("SELECT count(*) FROM step_label").fetchone()[0] == 0
    assert lib.conn.execute("SELECT count(*) FROM step_review").fetchone()[0] == 0
