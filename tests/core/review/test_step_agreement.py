"""Agreement on step labels: Krippendorff's alpha on ratings, agreement on the first-error index."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_cli import run
from tests.core.review.conftest import COLLECTION, open_library
from thoughtdesk.core.agreement.statistics import krippendorff_alpha
from thoughtdesk.core.review.step_agreement import step_agreement
from thoughtdesk.core.steps.store import StepLabel, StepReview, StepTarget, put_review


def review(author: str, ratings: list[int | None], first: int | None, kind="human") -> StepReview:
    labels = tuple(StepLabel(i, f"s{i}-x", r) for i, r in enumerate(ratings) if r is not None)
    return StepReview(author, labels, first, kind=kind)


@pytest.fixture
def lib(tmp_path):
    with open_library(tmp_path / "lib.thoughtdesk") as lib:
        cots = lib.conn.execute("SELECT id, sample_pk FROM generated_cot ORDER BY id LIMIT 2").fetchall()
        (c1, s1), (c2, s2) = cots
        with lib.transaction() as conn:
            put_review(conn, StepTarget(s1, c1), "ann", review("ann", [1, 1, -1], 2))
            put_review(conn, StepTarget(s1, c1), "bob", review("bob", [1, 0, -1], 2))
            put_review(conn, StepTarget(s2, c2), "ann", review("ann", [1, -1], 1))
            put_review(conn, StepTarget(s2, c2), "bob", review("bob", [1, 1, None], -1))
            put_review(conn, StepTarget(s2, c2), "judge", review("judge", [-1, -1], 0, kind="model"))
            put_review(conn, StepTarget(s1, None, "reference"), "ann", review("ann", [1], None))
        yield lib


def test_alpha_on_ratings_and_agreement_on_first_errors(lib):
    result = step_agreement(lib, COLLECTION)
    assert result.raters == ("ann", "bob")  # the model's labels are not a reviewer's
    ann = [1, 1, -1, 1, -1]
    bob = [1, 0, -1, 1, 1]
    assert result.steps == 5
    assert result.alpha_ordinal == pytest.approx(krippendorff_alpha([ann, bob], "ordinal"))
    assert result.alpha_nominal == pytest.approx(krippendorff_alpha([ann, bob], "nominal"))
    assert result.step_agreement == pytest.approx(60.0)
    assert result.lists == 2 and result.first_error_agreement == pytest.approx(50.0)
    assert result.first_error_alpha == pytest.approx(krippendorff_alpha([[2, 1], [2, -1]], "nominal"))
    only = step_agreement(lib, COLLECTION, ["ann"])
    assert only.steps == 0 and only.alpha_ordinal is None and only.first_error_agreement is None


def test_agreement_steps_on_the_command_line(lib, tmp_path):
    result = run("agreement", COLLECTION, "--steps", "--json", library=lib.path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["steps"] == 5 and data["lists"] == 2 and data["raters"] == ["ann", "bob"]
    text = run("agreement", COLLECTION, "--steps", library=lib.path)
    assert "first error: 2 list(s) marked by 2+, agreement 50.0%" in text.stdout
