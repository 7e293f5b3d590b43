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


def _imported(lib: Library, elements: dict) -> tuple[str, dict | None]:
    """Import one critique with ``elements`` (as a DSCB import does) and return its stored
    ``elements`` column and the elements read back."""
    from thoughtdesk.core.critiques import add_imported
    from thoughtdesk.core.critiques.dscb_mapping import parsed_from_elements

    cot = first_cots(lib, 1)[0]
    critique = Critique(cot, "DS-7B", "text", parsed_from_elements(elements), elements=dict(elements), source="import")
    with lib.transaction() as conn:
        add_imported(conn, [critique])
    (column,) = lib.conn.execute("SELECT elements FROM critique WHERE id = ?", (critique.pk,)).fetchone()
    back = [c for c in critiques_for_cots(lib, [cot])[cot] if c.pk == critique.pk][0]
    return column, back.elements


USUAL = {
    "main_flaw": "The sun does not cool the can.",
    "dimension": "incorrect_information",
    "general_feedback": "Check the facts.",
    "specific_feedback": "Heat makes the gas expand.",
    "explanation_score": 2,
}


@pytest.mark.parametrize(
    "elements",
    [
        USUAL,
        {**USUAL, "main_flaw": "None", "dimension": "None", "explanation_score": 5},
        {**USUAL, "main_flaw": None, "general_feedback": "  ", "explanation_score": None},
        {**USUAL, "dimension": "not a dimension"},  # unparseable: its raw value is in the outcome
    ],
    ids=["usual", "no-flaw", "null-and-empty", "unknown-dimension"],
)
def test_imported_elements_equal_to_the_parsed_columns_are_not_stored_twice(lib, elements):
    from thoughtdesk.core.critiques.store import ELEMENTS_FROM_COLUMNS

    column, back = _imported(lib, elements)
    assert column == ELEMENTS_FROM_COLUMNS
    assert back is not None and back == elements and list(back) == list(elements)
    assert type(back["explanation_score"]) is type(elements["explanation_score"])


@pytest.mark.parametrize(
    "elements",
    [
        {**USUAL, "explanation_score": 2.0},  # a float: 2.0 must come back as 2.0, not 2
        {**USUAL, "explanation_score": "2"},  # text read as a number
        {**USUAL, "explanation_score": 9},  # outside 0-5: unparseable
        {**USUAL, "dimension": "Incorrect information"},  # read as its name: the words are kept
        {k: USUAL[k] for k in reversed(USUAL)},  # another key order
        {k: v for k, v in USUAL.items() if k != "specific_feedback"},  # a key absent
        {**USUAL, "x_note": "kept"},  # an unknown key
    ],
    ids=["float-score", "text-score", "score-9", "dimension-words", "key-order", "absent-key", "unknown-key"],
)
def test_imported_elements_that_differ_from_the_parsed_columns_are_stored_exactly(lib, elements):
    import json

    column, back = _imported(lib, elements)
    assert json.loads(column) == elements
    assert json.dumps(back) == json.dumps(elements)  # same keys, order and JSON types


def test_outcomes_are_stored_compactly_and_the_older_form_still_reads(lib):
    import json

    from thoughtdesk.core.critiques.store import outcomes_of

    cot = first_cots(lib)[0]
    with lib.transaction() as conn:
        pk = add_critique(conn, Critique(cot_pk=cot, critique_model="m", raw_text="t", parsed=parsed()))
    (stored,) = lib.conn.execute("SELECT outcomes FROM critique WHERE id = ?", (pk,)).fetchone()
    assert json.loads(stored)["main_flaw"] == "parsed"
    assert json.loads(stored)["explanation_score"] == {
        "status": "unparseable",
        "raw": "7/5",
        "why": "a score must be 0-5",
    }
    assert outcomes_of(stored) == parsed().outcomes
    # Objects throughout (with spaces), as libraries written before the compact form have them.
    older = json.dumps({k: v.to_json() for k, v in parsed().outcomes.items()})
    lib.conn.execute("UPDATE critique SET outcomes = ? WHERE id = ?", (older, pk))
    assert critiques_for_cots(lib, [cot])[cot][-1].parsed == parsed()


def _imported_text(lib: Library, elements: dict, text: str) -> tuple[str, str, int]:
    """Import one critique with ``elements`` and ``text``; its stored raw_text and elements
    columns, and its primary key."""
    from thoughtdesk.core.critiques import add_imported
    from thoughtdesk.core.critiques.dscb_mapping import parsed_from_elements

    cot = first_cots(lib, 1)[0]
    critique = Critique(cot, "DS-7B", text, parsed_from_elements(elements), elements=dict(elements), source="import")
    with lib.transaction() as conn:
        add_imported(conn, [critique])
    raw, column = lib.conn.execute("SELECT raw_text, elements FROM critique WHERE id = ?", (critique.pk,)).fetchone()
    return raw, column, critique.pk or 0


NO_FLAW = {**USUAL, "main_flaw": "None", "dimension": "None", "explanation_score": 5}


@pytest.mark.parametrize("elements", [USUAL, NO_FLAW], ids=["usual", "no-flaw"])
@pytest.mark.parametrize("bullet", [" * ", "* "])
def test_a_critique_text_that_is_its_elements_in_the_ds_layout_is_rebuilt_not_stored(lib, elements, bullet):
    from thoughtdesk.core.critiques.records import ds_layout_text
    from thoughtdesk.core.critiques.store import (
        TEXT_FROM_ELEMENTS,
        critique_content_hash,
        critique_raw_texts,
        find_critique,
    )

    text = ds_layout_text(elements, bullet)
    assert (
        text is not None
        and text.startswith("The explanation states")
        and text.endswith(f"Explanation score: {elements['explanation_score']}")
    )
    raw, column, pk = _imported_text(lib, elements, text)
    assert raw == "" and TEXT_FROM_ELEMENTS[column] == bullet
    cot = first_cots(lib, 1)[0]
    back = [c for c in critiques_for_cots(lib, [cot])[cot] if c.pk == pk][0]
    assert back.raw_text == text and back.elements == elements
    # Every reader of the text gets it back: the rating exchange's hash, and finding by it.
    assert critique_raw_texts(lib.conn, [pk]) == {pk: text}
    assert find_critique(lib.conn, cot, "DS-7B", critique_content_hash(text)) == pk


@pytest.mark.parametrize(
    ("elements", "edit"),
    [
        (USUAL, lambda t: t + "\n"),  # a trailing newline
        (USUAL, lambda t: t.replace(" * ", " - ")),  # another bullet
        (USUAL, lambda t: t.replace('"', "")),  # the flaw unquoted
        (USUAL, lambda t: t.replace("score: 2", "score: 2/5")),
        ({**USUAL, "explanation_score": 2.0}, lambda t: t),  # elements kept as they are: text too
        ({**USUAL, "dimension": "Incorrect information"}, lambda t: t),
    ],
    ids=["newline", "bullet", "unquoted", "score-of-5", "float-score", "dimension-words"],
)
def test_a_critique_text_that_differs_from_the_ds_layout_is_stored_exactly(lib, elements, edit):
    from thoughtdesk.core.critiques.records import ds_layout_text

    text = edit(ds_layout_text({**elements, "explanation_score": 2}, " * "))
    raw, column, pk = _imported_text(lib, elements, text)
    assert raw == text and '"columns+' not in (column or "")
    cot = first_cots(lib, 1)[0]
    assert [c.raw_text for c in critiques_for_cots(lib, [cot])[cot] if c.pk == pk] == [text]


def test_the_usual_outcomes_are_stored_as_five_letters(lib):
    from thoughtdesk.core.critiques import add_imported
    from thoughtdesk.core.critiques.dscb_mapping import parsed_from_elements

    cot = first_cots(lib, 1)[0]
    cases = [(USUAL, "ppppp"), (NO_FLAW, "nnppp"), ({**USUAL, "main_flaw": None, "specific_feedback": None}, "mppmp")]
    critiques = [Critique(cot, "m", "t", parsed_from_elements(e), elements=dict(e), source="import") for e, _ in cases]
    with lib.transaction() as conn:
        add_imported(conn, critiques)
    stored = [lib.conn.execute("SELECT outcomes FROM critique WHERE id = ?", (c.pk,)).fetchone()[0] for c in critiques]
    assert stored == [f'"{letters}"' for _, letters in cases]
    back = {c.pk: c for c in critiques_for_cots(lib, [cot])[cot]}
    assert [back[c.pk].parsed for c in critiques] == [c.parsed for c in critiques]


def test_rows_queued_before_another_writer_took_keys_move_above_them(lib, tmp_path):
    # A staged import queues critique rows while it writes its chunks and inserts them in its last
    # transaction; another process may have stored critiques and ratings in between.
    from thoughtdesk.core.critiques.dscb_mapping import parsed_from_elements
    from thoughtdesk.core.critiques.store import ImportedRows

    cot, other_cot = first_cots(lib)
    rows = ImportedRows(lib.conn)
    pk = rows.critique(cot, 0, "DS-7B", {}, "text", parsed_from_elements(USUAL), dict(USUAL), None)
    rows.critique_rating(pk, 0, "W1", 3, None)
    rows.explanation_rating(cot, "W1", 4, ("irrelevant",), None)
    with Library.open(lib.path) as other, other.transaction() as conn:
        theirs = add_critique(conn, Critique(other_cot, "m", "theirs", parsed(), ratings=[CritiqueRating("x", 1)]))
        add_explanation_rating(conn, other_cot, ExplanationRating("x", 2))
    assert theirs == pk  # the key the queued row had
    with lib.transaction():
        rows.write()
    (mine,) = critiques_for_cots(lib, [cot])[cot]
    assert mine.pk == theirs + 1 and mine.critique_model == "DS-7B"
    assert [(r.author, r.score) for r in mine.ratings] == [("W1", 3)]
    assert [(r.author, r.score) for r in explanation_ratings_for_cots(lib, [cot])[cot]] == [("W1", 4)]
    (still,) = critiques_for_cots(lib, [other_cot])[other_cot]
    assert still.raw_text == "theirs" and [(r.author, r.score) for r in still.ratings] == [("x", 1)]
