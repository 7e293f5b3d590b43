"""Step labels in the annotation exchange file: exported with a reviewer's annotations, merged
under their author's name (added, unchanged, newer replaces, older kept), bad records reported."""

from __future__ import annotations

import json

from tests.core.review.conftest import COLLECTION, open_library, table_digest
from thoughtdesk.core.review import export_review, import_annotations
from thoughtdesk.core.steps.store import StepLabel, StepReview, StepTarget, put_review, review_of


def labelled(lib, author="ann", date="2026-11-28T10:00:00Z", rating=-1):
    cot, sample = lib.conn.execute("SELECT id, sample_pk FROM generated_cot ORDER BY id LIMIT 1").fetchone()
    review = StepReview(author, (StepLabel(0, "s0-x", 1), StepLabel(2, "s2-y", rating, True, "fixed")), 2,
                        "found_error", 5000, blind=True, date=date)  # fmt: skip
    with lib.transaction() as conn:
        put_review(conn, StepTarget(sample, cot), author, review)
    return StepTarget(sample, cot), review


def test_step_labels_travel_with_the_reviewers_annotations(tmp_path):
    with open_library(tmp_path / "a.thoughtdesk") as lib:
        target, review = labelled(lib)
        counts = export_review(lib, "ann", tmp_path / "ann.json", collection=COLLECTION)
    assert counts.step_labels == 1 and "1 step-labelled CoT(s)" in counts.summary
    record = json.loads((tmp_path / "ann.json").read_text())["step_labels"][0]
    assert record["steps"][2] == {"id": "s2-y", "rating": -1, "flagged": True, "corrected": "fixed"}
    with open_library(tmp_path / "b.thoughtdesk") as other:
        report = import_annotations(other, tmp_path / "ann.json")
        assert report.ok and (report.steps.records, report.steps.added) == (1, 1), report.summary
        assert "merged 1 of 1 step-labelled CoT(s)" in report.summary
        cot, sample = other.conn.execute("SELECT id, sample_pk FROM generated_cot ORDER BY id LIMIT 1").fetchone()
        got = review_of(other.conn, StepTarget(sample, cot), "ann")
        assert got is not None and (got.labels, got.first_error, got.finish_reason, got.time_ms, got.blind) == (
            review.labels, 2, "found_error", 5000, True,
        )  # fmt: skip
        again = import_annotations(other, tmp_path / "ann.json")
        assert again.steps.unchanged == 1
        # an older file's labels are kept out, a newer one's replace
        labelled(other, date="2026-11-29T10:00:00Z", rating=0)
        assert import_annotations(other, tmp_path / "ann.json").steps.kept == 1


def test_bad_step_label_records_are_reported_and_nothing_else_changes(tmp_path):
    with open_library(tmp_path / "a.thoughtdesk") as lib:
        labelled(lib)
        export_review(lib, "ann", tmp_path / "ann.json", collection=COLLECTION)
    document = json.loads((tmp_path / "ann.json").read_text())
    document["step_labels"][0]["steps"][0]["rating"] = 5
    (tmp_path / "bad.json").write_text(json.dumps(document))
    with open_library(tmp_path / "b.thoughtdesk") as other:
        before = table_digest(other)
        report = import_annotations(other, tmp_path / "bad.json", strict=True)
        assert not report.ok and "steps[0].rating 5 is not -1, 0 or +1" in report.summary
        assert table_digest(other) == before
