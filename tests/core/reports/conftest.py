"""Report tests: the review fixture with two reviewers' annotations, a critique, ratings and one
sample full of hostile text (markup, a direction override, a 1 MB word)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.core.review.conftest import COLLECTION, cot_pks, open_library, sample_pk
from thoughtdesk.core.critiques import (
    ELEMENTS,
    Critique,
    ElementOutcome,
    ParsedCritique,
    add_critique,
    set_critique_rating,
    set_explanation_rating,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import AnnotationStore, create_queue

HOSTILE = "mq-4"
BIG_WORD = "A" * 1_000_000
SCRIPT = "<script>alert('x')</script>"
IMG = '<img src=x onerror="alert(1)">'
CELL = "</td></tr></table><h1>fake</h1>"
BIDI = "\u202egnp.exe"  # reads "exe.png" with the override honoured
HOSTILE_QUESTION = f"{SCRIPT} {IMG} {CELL} {BIDI}"
HOSTILE_COT = f"Step one {SCRIPT}. Step two {IMG}. {CELL} {BIDI}. {BIG_WORD}"


@dataclass
class Seeded:
    path: Path
    mq1: list[int]
    hostile: list[int]


def seed_reports(path: Path) -> Seeded:
    """The review fixture at ``path`` with reviews, critiques, a queue and the hostile sample."""
    with open_library(path) as lib:
        mq1 = cot_pks(lib, "mq-1")
        hostile = cot_pks(lib, HOSTILE)
        ann, bob = AnnotationStore(lib, "ann"), AnnotationStore(lib, "bob")
        for cot, (a, b) in zip(mq1, ((True, True), (True, False), (False, False)), strict=True):
            for store, verdict in ((ann, a), (bob, b)):
                store.toggle_label(cot, "Incorrect reasoning")
                if not verdict:
                    store.toggle_label(cot, "Incorrect reasoning")
        ann.set_comment(mq1[0], "Ann's comment: the ECG comes first.")
        bob.set_comment(mq1[1], "Bob's comment: too long.")
        ann.set_preferred(mq1[0], True)
        ann.set_quality(mq1[0], 4)
        ann.toggle_label(mq1[0], "Hallucinated fact", ann.span(mq1[0], 0, 5))
        with lib.transaction() as conn:
            conn.execute("UPDATE sample SET question = ? WHERE id = ?", (HOSTILE_QUESTION, sample_pk(lib, HOSTILE)))
            conn.execute("UPDATE generated_cot SET cot = ? WHERE id = ?", (HOSTILE_COT, hostile[0]))
            parsed = ParsedCritique(
                "The flaw: ECG skipped", "missing_information", "General advice", "Order an ECG", 2.0,
                {e: ElementOutcome("parsed") for e in ELEMENTS},
            )  # fmt: skip
            critique = add_critique(conn, Critique(mq1[0], "critic-model", "raw critique", parsed))
            set_critique_rating(conn, critique, "ann", 2)
            set_explanation_rating(conn, mq1[0], "bob", 3, ("missing_information",))
            bad = ParsedCritique(None, None, None, None, None, {"main_flaw": ElementOutcome("unparseable", "x", "why")})
            add_critique(conn, Critique(hostile[0], "critic-model", f"{SCRIPT} {BIG_WORD}", bad))
        ann.set_comment(hostile[0], f"{IMG} {BIDI}")
        ann.toggle_label(hostile[0], "Too verbose", ann.span(hostile[0], 0, 8))
        create_queue(lib, "first two", COLLECTION, size=2, seed=0)
    return Seeded(path, mq1, hostile)


@pytest.fixture
def seeded(tmp_path: Path) -> Seeded:
    return seed_reports(tmp_path / "reports.thoughtdesk")


@pytest.fixture
def report_lib(seeded: Seeded):
    with Library.open(seeded.path) as lib:
        yield lib
