"""The sample counters: each update in core.library.counters keeps them equal to a recount."""

from __future__ import annotations

import re

from tests.helpers.paths import FIXTURES, ROOT
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library import counters
from thoughtdesk.core.library.store import Library

COUNTERS = "n_cots, n_answers, n_correct, n_incorrect, n_unextractable, n_annotations"


def recounted(lib: Library) -> dict[int, tuple[int, ...]]:
    """Every sample's counters computed from the rows, the slow way."""
    return {
        row[0]: tuple(row[1:])
        for row in lib.conn.execute(
            """SELECT s.id,
                 (SELECT count(*) FROM generated_cot g WHERE g.sample_pk = s.id),
                 (SELECT count(*) FROM generated_cot g JOIN answer a ON a.cot_pk = g.id WHERE g.sample_pk = s.id),
                 (SELECT count(*) FROM generated_cot g JOIN answer a ON a.cot_pk = g.id
                  WHERE g.sample_pk = s.id AND a.correct_answer = 1),
                 (SELECT count(*) FROM generated_cot g JOIN answer a ON a.cot_pk = g.id
                  WHERE g.sample_pk = s.id AND a.correct_answer = 0),
                 (SELECT count(*) FROM generated_cot g JOIN answer a ON a.cot_pk = g.id
                  WHERE g.sample_pk = s.id AND a.td_outcome = 'unextractable'),
                 (SELECT count(*) FROM generated_cot g JOIN annotation n ON n.cot_pk = g.id WHERE g.sample_pk = s.id)
               FROM sample s"""
        )
    }


def stored(lib: Library) -> dict[int, tuple[int, ...]]:
    return {row[0]: tuple(row[1:]) for row in lib.conn.execute(f"SELECT id, {COUNTERS} FROM sample")}


def imported(tmp_path) -> Library:
    lib = Library.open(tmp_path / "lib.thoughtdesk")
    import_thoughtsource(lib, FIXTURES / "thoughtsource" / "edge_cases.json", collection="c")
    return lib


def test_import_writes_the_counters_a_recount_gives(tmp_path):
    with imported(tmp_path) as lib:
        assert any(sum(counts) for counts in stored(lib).values())  # the fixture has CoTs, answers, annotations
        assert stored(lib) == recounted(lib)


def test_added_cots_and_answers_are_counted(tmp_path):
    with imported(tmp_path) as lib, lib.transaction() as conn:
        sample_pk = conn.execute("SELECT min(id) FROM sample").fetchone()[0]
        for correct, outcome in ((True, "correct"), (False, "incorrect"), (None, "unextractable"), (None, None)):
            cot_pk = conn.execute(
                "INSERT INTO generated_cot (sample_pk, position, cot) VALUES (?, 99, 'x')", (sample_pk,)
            ).lastrowid
            counters.add_cot(conn, sample_pk)
            conn.execute(
                "INSERT INTO answer (cot_pk, position, answer, correct_answer, td_outcome) VALUES (?, 0, 'a', ?, ?)",
                (cot_pk, None if correct is None else int(correct), outcome),
            )
            counters.add_answer(conn, sample_pk, correct, unextractable=outcome == "unextractable")
        assert stored(lib) == recounted(lib)


def test_changed_annotations_are_recounted(tmp_path):
    with imported(tmp_path) as lib, lib.transaction() as conn:
        annotation_pk, cot_pk = conn.execute("SELECT id, cot_pk FROM annotation ORDER BY id").fetchone()
        conn.execute("DELETE FROM annotation WHERE id = ?", (annotation_pk,))
        counters.recount_annotations(conn, cot_pk)
        assert stored(lib) == recounted(lib)


def test_rescoring_counters_are_set_and_restored(tmp_path):
    with imported(tmp_path) as lib, lib.transaction() as conn:
        before = stored(lib)
        rows = conn.execute(
            "SELECT a.id, g.sample_pk FROM answer a JOIN generated_cot g ON a.cot_pk = g.id ORDER BY a.id"
        ).fetchall()
        assert rows
        answer_pk, sample_pk = rows[0]
        original = conn.execute("SELECT correct_answer FROM answer WHERE id = ?", (answer_pk,)).fetchone()[0]
        conn.execute("UPDATE answer SET correct_answer = NULL, td_outcome = 'unextractable' WHERE id = ?", (answer_pk,))
        n_correct, n_incorrect = conn.execute(
            "SELECT count(*) FILTER (WHERE a.correct_answer = 1), count(*) FILTER (WHERE a.correct_answer = 0) "
            "FROM answer a JOIN generated_cot g ON a.cot_pk = g.id WHERE g.sample_pk = ?",
            (sample_pk,),
        ).fetchone()
        counters.set_scoring(conn, [counters.ScoringCounts(n_correct, n_incorrect, 1, sample_pk)])
        assert stored(lib) == recounted(lib)
        conn.execute("UPDATE answer SET correct_answer = ?, td_outcome = NULL WHERE id = ?", (original, answer_pk))
        collection_id = conn.execute("SELECT collection_id FROM sample WHERE id = ?", (sample_pk,)).fetchone()[0]
        counters.recount_imported_scoring(conn, collection_id)
        assert stored(lib) == recounted(lib) == before


def test_no_other_module_updates_the_counters():
    # The rule this module exists for: a raw counter UPDATE elsewhere would drift on its own.
    source = ROOT / "desktop" / "thoughtdesk"
    offenders = [
        path.relative_to(source).as_posix()
        for path in source.rglob("*.py")
        if re.search(r"UPDATE\s+sample\s+SET\s+n_", path.read_text(encoding="utf-8"), re.IGNORECASE)
    ]
    assert offenders == ["core/library/counters.py"]
