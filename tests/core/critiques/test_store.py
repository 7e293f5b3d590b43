"""Critiques and ratings stored and read back: a real library file, the demo collection's CoTs."""

from __future__ import annotations

import sqlite3

import pytest

from tests.helpers.libraries import demo_library
from thoughtdesk.core.critiques import (
    Critique,
    CritiqueRating,
    ElementOutcome,
    ExplanationRating,
    ParsedCritique,
    add_critique,
    add_explanation_rating,
    critiques_for_cots,
    explanation_ratings_for_cots,
    set_critique_rating,
    set_explanation_rating,
)
from thoughtdesk.core.library import migrations
from thoughtdesk.core.library.store import Library


@pytest.fixture
def lib(tmp_path):
    with Library.open(demo_library(tmp_path / "lib.sqlite")) as library:
        yield library


def first_cots(lib: Library, n: int = 2) -> list[int]:
    return [pk for (pk,) in lib.conn.execute("SELECT id FROM generated_cot ORDER BY id LIMIT ?", (n,))]


def parsed() -> ParsedCritique:
    return ParsedCritique(
        main_flaw='The "answer" skips a step',
        dimension="incomplete_reasoning",
        general_feedback="Check each step.",
        specific_feedback=None,
        explanation_score=2.0,
        outcomes={
            "main_flaw": ElementOutcome("parsed"),
            "dimension": ElementOutcome("parsed"),
            "general_feedback": ElementOutcome("parsed"),
            "specific_feedback": ElementOutcome("missing"),
            "explanation_score": ElementOutcome("unparseable", raw="7/5", why="a score must be 0-5"),
        },
    )


def test_critique_round_trips_with_outcomes_ratings_and_extras(lib):
    cot = first_cots(lib)[0]
    critique = Critique(
        cot_pk=cot,
        critique_model="DS-13B",
        raw_text="The explanation states ... \u00e9",
        parsed=parsed(),
        llm_options={"temperature": 0, "max_tokens": 512},
        elements={"main_flaw": "x", "explanation_score": 2},
        source="import",
        extra={"unknown_field": [1, {"a": None}]},
        ratings=[CritiqueRating("w1", 3), CritiqueRating("w2", 0, extra={"note": "n"})],
    )
    with lib.transaction() as conn:
        pk = add_critique(conn, critique)
        add_critique(conn, Critique(cot, "gpt-4", "second", ParsedCritique()))
    got = critiques_for_cots(lib, [cot, 999_999])
    assert list(got) == [cot]
    first, second = got[cot]
    assert (first.pk, first.position, second.position) == (pk, 0, 1)
    assert first.parsed == critique.parsed
    assert first.parsed.outcome("explanation_score").raw == "7/5"
    assert (first.llm_options, first.elements, first.extra) == (critique.llm_options, critique.elements, critique.extra)
    assert [(r.author, r.score, r.extra) for r in first.ratings] == [("w1", 3, {}), ("w2", 0, {"note": "n"})]
    assert second.ratings == [] and second.parsed.outcome("main_flaw").status == "missing"


def test_one_rating_per_reviewer_replaced_and_deleted(lib):
    cot = first_cots(lib)[0]
    with lib.transaction() as conn:
        assert set_explanation_rating(conn, cot, "ana", 4, ["irrelevant"]) is None
        previous = set_explanation_rating(conn, cot, "ana", 2, ["misunderstanding", "irrelevant"])
        add_explanation_rating(conn, cot, ExplanationRating("worker-9", 5))
    assert previous is not None and (previous.score, previous.dimensions) == (4, ("irrelevant",))
    ratings = explanation_ratings_for_cots(lib, [cot])[cot]
    assert [(r.author, r.score, r.dimensions) for r in ratings] == [
        ("ana", 2, ("misunderstanding", "irrelevant")),
        ("worker-9", 5, ()),
    ]
    with lib.transaction() as conn:
        set_explanation_rating(conn, cot, "ana", None, [])
        critique_pk = add_critique(conn, Critique(cot, "m", "t", ParsedCritique()))
        assert set_critique_rating(conn, critique_pk, "ana", 2) is None
        assert set_critique_rating(conn, critique_pk, "ana", 3) == 2
    assert [r.author for r in explanation_ratings_for_cots(lib, [cot])[cot]] == ["worker-9"]
    assert [(r.author, r.score) for r in critiques_for_cots(lib, [cot])[cot][0].ratings] == [("ana", 3)]


def test_deleting_a_cot_deletes_its_critiques_and_ratings(lib):
    cot = first_cots(lib)[0]
    with lib.transaction() as conn:
        pk = add_critique(conn, Critique(cot, "m", "t", ParsedCritique(), ratings=[CritiqueRating("w", 1)]))
        add_explanation_rating(conn, cot, ExplanationRating("w", 3))
        conn.execute("DELETE FROM generated_cot WHERE id = ?", (cot,))
    for table in ("critique", "critique_rating", "explanation_rating"):
        assert lib.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
    assert critiques_for_cots(lib, [cot]) == {} and pk


def test_a_library_from_before_critiques_opens_and_gains_the_tables(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied TEXT NOT NULL)")
    for index, (name, fn) in enumerate(migrations.MIGRATIONS, start=1):
        if name == "m007_critiques":
            break
        fn(conn)
        conn.execute("INSERT INTO _migrations VALUES (?, 'then')", (name,))
        conn.execute(f"PRAGMA user_version = {index}")
    conn.commit()
    conn.close()
    with Library.open(path) as lib:
        assert lib.conn.execute("PRAGMA user_version").fetchone()[0] == migrations.current_version()
        columns = {row[1] for row in lib.conn.execute("PRAGMA table_info(request)")}
        assert {"target_cot_pk", "result_critique_pk"} <= columns
        assert critiques_for_cots(lib, [1]) == {}
