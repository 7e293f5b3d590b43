"""Step labels: per author, human or model, undoable changes, constraints, cascades."""

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
    decode_labels,
    encode_labels,
    first_error_of,
    put_review,
    review_of,
    reviews_for_cots,
    reviews_of,
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


def ratings(lib, target, author):
    review = review_of(lib.conn, target, author)
    return [(x.step, x.rating) for x in review.labels] if review else []


def test_reviews_are_per_author_kind_and_trace(lib):
    spk, cots = first_sample(lib)
    target = StepTarget(spk, cots[0])
    with lib.transaction() as conn:
        put_review(conn, target, "ann", StepReview("ann", (StepLabel(1, STEPS[1].id, -1, True),), first_error=1))
        put_review(conn, target, "bob", StepReview("bob", (StepLabel(1, STEPS[1].id, 1, None, "B!"),)))
        put_review(conn, target, "judge", StepReview("judge", first_error=2, kind="model"))
    got = reviews_of(lib.conn, target)
    assert [(r.author, r.kind, r.first_error) for r in got] == [
        ("ann", "human", 1),
        ("bob", "human", None),
        ("judge", "model", 2),
    ]
    assert got[0].labels == (StepLabel(1, STEPS[1].id, -1, True),)
    assert got[1].label(1) == StepLabel(1, STEPS[1].id, 1, None, "B!") and got[1].label(0) is None
    assert reviews_of(lib.conn, StepTarget(spk, cots[0], "reasoning")) == []
    assert reviews_for_cots(lib.conn, cots)[cots[0]] == got


def test_labels_encode_compactly_and_back():
    labels = (StepLabel(0, "s0-a", 1), StepLabel(3, "s3-b", -1, False, "fixed", {"k": [1]}))
    text = encode_labels(labels)
    assert (
        text
        == '[{"id":"s0-a","rating":1},null,null,{"id":"s3-b","rating":-1,"flagged":false,"corrected":"fixed","extra":{"k":[1]}}]'
    )
    assert decode_labels(text) == labels


def test_the_table_refuses_impossible_labels(lib):
    spk, cots = first_sample(lib)
    with pytest.raises(ValueError, match="rated -1, 0 or \\+1"):
        with lib.transaction() as conn:
            put_review(conn, StepTarget(spk, cots[0]), "ann", StepReview("ann", (StepLabel(0, "s0-x", 2),)))
    with pytest.raises(sqlite3.IntegrityError):
        with lib.transaction() as conn:
            conn.execute(
                "INSERT INTO step_label (cot_pk, trace, author, first_error, date) VALUES (?, 'cot', 'a', -2, 'd')",
                (cots[0],),
            )
    with pytest.raises(sqlite3.IntegrityError):  # one row per author and CoT
        with lib.transaction() as conn:
            for _ in range(2):
                conn.execute(
                    "INSERT INTO step_label (cot_pk, trace, author, date) VALUES (?, 'cot', 'a', 'd')", (cots[0],)
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
    assert ratings(lib, target, "ann") == [(0, 0), (1, 1), (2, -1)]
    review = review_of(lib.conn, target, "ann")
    assert review is not None and (review.first_error, review.finish_reason, review.blind) == (2, "found_error", True)
    assert first_error_of(review.labels) == 2
    apply(lib, change, revert=True)
    assert ratings(lib, target, "ann") == [(0, 0)]
    assert review_of(lib.conn, target, "ann").first_error is None  # type: ignore[union-attr]
    # the same step again takes the mark off
    apply(lib, change)
    apply(lib, changes.first_error_here(lib.conn, target, "ann", STEPS, 2))
    assert review_of(lib.conn, target, "ann").first_error is None  # type: ignore[union-attr]
    # -1: no step is wrong; every unrated step +1, finish reason solution
    apply(lib, changes.first_error_here(lib.conn, target, "bob", STEPS, -1))
    assert [r for _, r in ratings(lib, target, "bob")] == [1, 1, 1, 1]
    assert review_of(lib.conn, target, "bob").finish_reason == "solution"  # type: ignore[union-attr]


def test_rate_twice_clears_flag_correct_finish_and_time(lib):
    spk, _ = first_sample(lib)
    target = StepTarget(spk, None, "reference")
    apply(lib, changes.rate(lib.conn, target, "ann", STEPS[3], 1))
    apply(lib, changes.rate(lib.conn, target, "ann", STEPS[3], 1))
    assert review_of(lib.conn, target, "ann") is None  # the same rating again: cleared, row gone
    apply(lib, changes.flag(lib.conn, target, "ann", STEPS[1]))
    apply(lib, changes.correct(lib.conn, target, "ann", STEPS[1], "B, corrected."))
    label = review_of(lib.conn, target, "ann").label(1)  # type: ignore[union-attr]
    assert label is not None and (label.flagged, label.corrected, label.step_id) == (True, "B, corrected.", STEPS[1].id)
    apply(lib, changes.finish(lib.conn, target, "ann", "give_up"))
    for ms in (1500, 500):
        change = changes.add_time(lib.conn, target, "ann", ms)
        assert change is not None
        apply(lib, change)
    review = review_of(lib.conn, target, "ann")
    assert review is not None and (review.finish_reason, review.time_ms) == ("give_up", 2000)
    assert changes.add_time(lib.conn, target, "ann", 0) is None


def test_bulk_rows_and_cascade_on_delete(lib):
    spk, cots = first_sample(lib)
    rows = ImportedStepRows()
    labels = tuple(StepLabel(s.index, s.id, 1) for s in STEPS)
    rows.add(StepTarget(spk, cots[0]), StepReview("labeler", labels, -1, "solution", 41000))
    rows.add(StepTarget(spk, None, "reference"), StepReview("labeler", labels[:1]))
    with lib.transaction() as conn:
        rows.write(conn)
    assert reviews_for_cots(lib.conn, [cots[0]])[cots[0]][0].time_ms == 41000
    assert len(reviews_of(lib.conn, StepTarget(spk, None, "reference"))) == 1
    with lib.transaction() as conn:
        conn.execute("DELETE FROM generated_cot WHERE id = ?", (cots[0],))
    assert lib.conn.execute("SELECT count(*) FROM step_label").fetchone()[0] == 1
    with lib.transaction() as conn:
        conn.execute("DELETE FROM sample WHERE id = ?", (spk,))
    assert lib.conn.execute("SELECT count(*) FROM step_label").fetchone()[0] == 0
