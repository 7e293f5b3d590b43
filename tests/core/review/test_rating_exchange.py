"""Human ratings travel with annotations: exported per reviewer, merged into another library
under their author's name, never duplicated, checked record by record."""

from __future__ import annotations

import json

from tests.core.review.conftest import cot_pks, open_library, table_digest
from thoughtdesk.core.critiques import (
    ELEMENTS,
    Critique,
    ElementOutcome,
    ParsedCritique,
    add_critique,
    critiques_for_cots,
    explanation_ratings_for_cots,
    set_critique_rating,
    set_explanation_rating,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import import_annotations
from thoughtdesk.core.review.exchange import export_review

SAMPLE = "mq-1"


def seed(lib: Library) -> tuple[list[int], list[int]]:
    """Two critiques (same text, two models) of the sample's first CoT; returns CoT and critique keys."""
    cots = cot_pks(lib, SAMPLE)
    parsed = ParsedCritique("None", "irrelevant", "g", "s", 3.0, {e: ElementOutcome("parsed") for e in ELEMENTS})
    with lib.transaction() as conn:
        critiques = [
            add_critique(conn, Critique(cots[0], model, "The same critique text", parsed)) for model in ("m-a", "m-b")
        ]
    return cots, critiques


def rate(lib: Library, author: str, cot: int, critique: int, score: int, dims: tuple[str, ...], c_score: int) -> None:
    with lib.transaction() as conn:
        set_explanation_rating(conn, cot, author, score, dims)
        set_critique_rating(conn, critique, author, c_score)


def ratings_of(lib: Library, cot: int) -> tuple[list[tuple], list[tuple]]:
    explanation = [(r.author, r.score, r.dimensions) for r in explanation_ratings_for_cots(lib, [cot]).get(cot, [])]
    critique = [
        (c.critique_model, r.author, r.score) for c in critiques_for_cots(lib, [cot]).get(cot, []) for r in c.ratings
    ]
    return sorted(explanation), sorted(critique)


def test_two_reviewers_ratings_round_trip_between_libraries(tmp_path):
    with open_library(tmp_path / "ann.sqlite") as ann, open_library(tmp_path / "bob.sqlite") as bob:
        cots_a, crit_a = seed(ann)
        cots_b, crit_b = seed(bob)
        rate(ann, "ann", cots_a[0], crit_a[1], 4, ("incorrect_reasoning",), 2)
        rate(bob, "bob", cots_b[0], crit_b[0], 1, ("irrelevant", "misunderstanding"), 3)

        counts = export_review(ann, "ann", tmp_path / "ann.json")
        assert (counts.annotations, counts.explanation_ratings, counts.critique_ratings) == (0, 1, 1)
        document = json.loads((tmp_path / "ann.json").read_text())
        record = document["critique_ratings"][0]
        assert record["critique_model"] == "m-b" and record["critique_hash"].startswith("sha256:")
        assert document["explanation_ratings"][0]["dimensions"] == ["incorrect_reasoning"]

        report = import_annotations(bob, tmp_path / "ann.json")
        assert report.ok and report.ratings.records == 2 and report.ratings.added == 2
        assert "ann" in report.authors and "rating(s): 2 added" in report.summary
        # ann's ratings sit beside bob's, each on the right critique (m-b, not m-a: same text).
        assert ratings_of(bob, cots_b[0]) == (
            [("ann", 4, ("incorrect_reasoning",)), ("bob", 1, ("irrelevant", "misunderstanding"))],
            [("m-a", "bob", 3), ("m-b", "ann", 2)],
        )

        # The same file again: nothing duplicated.
        again = import_annotations(bob, tmp_path / "ann.json")
        assert again.ratings.unchanged == 2 and again.ratings.added == 0
        assert len(ratings_of(bob, cots_b[0])[0]) == 2

        # And back: bob's ratings reach ann's library.
        export_review(bob, "bob", tmp_path / "bob.json")
        back = import_annotations(ann, tmp_path / "bob.json")
        assert back.ratings.added == 2
        assert ratings_of(ann, cots_a[0]) == ratings_of(bob, cots_b[0])


def test_a_newer_rating_replaces_an_older_one_and_an_older_one_is_kept(tmp_path):
    with open_library(tmp_path / "a.sqlite") as lib_a, open_library(tmp_path / "b.sqlite") as lib_b:
        cots_a, crit_a = seed(lib_a)
        cots_b, crit_b = seed(lib_b)
        rate(lib_a, "ann", cots_a[0], crit_a[0], 2, (), 1)
        export_review(lib_a, "ann", tmp_path / "old.json")
        document = json.loads((tmp_path / "old.json").read_text())
        rate(lib_b, "ann", cots_b[0], crit_b[0], 5, (), 3)  # ann's later work in b
        kept = import_annotations(lib_b, tmp_path / "old.json")
        assert kept.ratings.kept == 2 and ratings_of(lib_b, cots_b[0])[0] == [("ann", 5, ())]
        for key in ("explanation_ratings", "critique_ratings"):
            document[key][0]["date"] = "2999-01-01T00:00:00Z"
        (tmp_path / "new.json").write_text(json.dumps(document))
        updated = import_annotations(lib_b, tmp_path / "new.json")
        assert updated.ratings.updated == 2
        assert ratings_of(lib_b, cots_b[0]) == ([("ann", 2, ())], [("m-a", "ann", 1)])


def test_dry_run_counts_ratings_and_writes_nothing(tmp_path):
    with open_library(tmp_path / "a.sqlite") as lib_a, open_library(tmp_path / "b.sqlite") as lib_b:
        cots_a, crit_a = seed(lib_a)
        seed(lib_b)
        rate(lib_a, "ann", cots_a[0], crit_a[0], 3, (), 2)
        export_review(lib_a, None, tmp_path / "all.json")
        before = table_digest(lib_b)
        report = import_annotations(lib_b, tmp_path / "all.json", dry_run=True)
        assert report.ratings.added == 2 and "would merge 2 of 2 rating(s)" in report.summary
        assert table_digest(lib_b) == before


def test_bad_and_unmatched_rating_records_are_reported_one_by_one(tmp_path):
    with open_library(tmp_path / "a.sqlite") as lib_a, open_library(tmp_path / "b.sqlite") as lib_b:
        cots_a, crit_a = seed(lib_a)
        rate(lib_a, "ann", cots_a[0], crit_a[0], 3, (), 2)
        export_review(lib_a, "ann", tmp_path / "ann.json")
        document = json.loads((tmp_path / "ann.json").read_text())
        good_e, good_c = document["explanation_ratings"][0], document["critique_ratings"][0]
        document["explanation_ratings"] += [
            {**good_e, "score": 9},
            {**good_e, "dimensions": ["vibes"]},
            {**good_e, "score": None, "dimensions": []},
            {**good_e, "sample_id": "no-such-sample"},
            "not an object",
        ]
        document["critique_ratings"] += [{**good_c, "score": 4}, {**good_c, "critique_hash": "sha256:0"}]
        (tmp_path / "bad.json").write_text(json.dumps(document))
        # lib_b has no critiques at all: the good critique rating does not match either.
        report = import_annotations(lib_b, tmp_path / "bad.json")
        reasons = [u.reason for u in report.unmatched]
        assert "bad record: score must be an integer 0-5 or null, got 9" in reasons
        assert "bad record: unknown flaw dimension 'vibes'" in reasons
        assert "bad record: a rating with neither a score nor dimensions" in reasons
        assert "sample not in the library" in reasons
        assert "bad record: not an object" in reasons
        assert "bad record: score must be an integer 0-3 or null, got 4" in reasons
        assert reasons.count("critique not found on the CoT (critique model and text hash)") == 2
        assert report.ratings.records == 9 and report.ratings.added == 1  # the good explanation rating
        assert any("critique rating 1" in u.where and "critique by m-a" in u.where for u in report.unmatched)

        strict = import_annotations(lib_b, tmp_path / "bad.json", strict=True)
        assert not strict.ok and "of 9 record(s) match nothing" in (strict.error or "")


def test_ratings_of_imported_dscb_critiques_match_by_their_rebuilt_text(tmp_path):
    # A DSCB critique's text is stored as its elements (rebuilt when read): its hash in the
    # exchange is still that of the file's text, so the rating lands on the same critique.
    import hashlib

    from tests.helpers.paths import FIXTURES
    from thoughtdesk.core.importing.dscb import import_dscb

    source = FIXTURES / "dscb" / "DSCB-dev-crowd-anno.jsonl"
    record = json.loads(source.read_text(encoding="utf-8").splitlines()[0])
    text = record["critiques"][1]["critique_text"]  # DS-13B's
    with Library.open(tmp_path / "a.sqlite") as a, Library.open(tmp_path / "b.sqlite") as b:
        for lib in (a, b):
            import_dscb(lib, source, collection="dscb")
        (stored,) = a.conn.execute("SELECT raw_text FROM critique WHERE critique_model = 'DS-13B'").fetchone()
        assert stored == ""  # rebuilt, not stored
        cot_a, cot_b = (
            lib.conn.execute("SELECT id FROM generated_cot ORDER BY id LIMIT 1").fetchone()[0] for lib in (a, b)
        )
        critique_a = [c for c in critiques_for_cots(a, [cot_a])[cot_a] if c.critique_model == "DS-13B"][0]
        with a.transaction() as conn:
            set_critique_rating(conn, critique_a.pk or 0, "ann", 1)
        export_review(a, "ann", tmp_path / "ann.json")
        exported = json.loads((tmp_path / "ann.json").read_text())["critique_ratings"]
        assert [r["critique_hash"] for r in exported] == ["sha256:" + hashlib.sha256(text.encode()).hexdigest()]
        report = import_annotations(b, tmp_path / "ann.json")
        assert report.ratings.added == 1
        assert ("DS-13B", "ann", 1) in ratings_of(b, cot_b)[1]
