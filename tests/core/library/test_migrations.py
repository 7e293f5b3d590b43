"""The migrations themselves: their order, and what the shipped ones write."""

from __future__ import annotations

import inspect
import sqlite3
import sys
from pathlib import Path

from thoughtdesk.core.library import migrations
from thoughtdesk.core.library.migrations import early, later
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.labels import BUILTIN_SETS, label_sets


def test_migrations_are_registered_in_history_order_with_increasing_names():
    # Applied in the order of the one list, MIGRATIONS; the names, the era modules they live in
    # (early, later) and their places in those files must tell the same story, so that the
    # modules read as the schema's history and a new migration is added at the end.
    names = [name for name, _ in migrations.MIGRATIONS]
    assert names == sorted(set(names)), names
    eras = [early, later]
    places = [
        (eras.index(sys.modules[fn.__module__]), inspect.getsourcelines(fn)[1]) for _, fn in migrations.MIGRATIONS
    ]
    assert places == sorted(places)
    defined = [name for era in eras for name in vars(era) if name[:1] == "m" and name[1:4].isdigit()]
    assert sorted(defined) == names  # every migration function is registered
    assert {path.stem for path in Path(migrations.__file__).parent.glob("*.py")} == {
        "__init__",
        "runner",
        "early",
        "later",
    }


def test_fresh_library_is_seeded_with_the_label_sets_m004_shipped(tmp_path):
    # m004 writes its seed rows out itself; BUILTIN_SETS is what the rest of the code believes
    # the built-in sets are. If one changes without the other, new libraries and old ones
    # disagree: change the sets with a new migration instead.
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        seeded = label_sets(lib)
    assert [(s.name, s.labels, s.builtin) for s in seeded] == [(s.name, s.labels, s.builtin) for s in BUILTIN_SETS]


def test_a_migration_applied_after_a_later_one_leaves_the_version_complete(tmp_path):
    # m018 (judge verdicts) merged after m019 (preferences): a library made between the two
    # merges gets m018 last, and must then read as having every migration (issue 26).
    from thoughtdesk.core.library import migrations
    from thoughtdesk.core.library.store import Library

    path = tmp_path / "l.thoughtdesk"
    with Library.open(path) as lib:
        lib.conn.executescript(
            "DROP INDEX request_result_verdict; ALTER TABLE request DROP COLUMN result_verdict_pk; "
            "DROP TABLE judge_verdict; DELETE FROM _migrations WHERE name = 'm018_judge_verdicts';"
        )
        lib.conn.execute(f"PRAGMA user_version = {migrations.current_version() - 1}")
    with Library.open(path) as lib:
        assert lib.conn.execute("PRAGMA user_version").fetchone()[0] == migrations.current_version()
        assert lib.conn.execute("SELECT count(*) FROM judge_verdict").fetchone()[0] == 0


def test_m020_lets_a_request_have_no_sample_and_keeps_every_stored_request(tmp_path, monkeypatch):
    """m020 drops request.sample_pk's NOT NULL in place (a rationale request of a file's document
    has no sample): the rows, their links and the cascade from a deleted sample stay as they were."""
    path = tmp_path / "l.thoughtdesk"
    every = list(migrations.MIGRATIONS)
    monkeypatch.setattr(migrations, "MIGRATIONS", [m for m in every if m[0] != "m020_rationale_runs"])
    with Library.open(path) as lib:
        conn = lib.conn
        conn.execute("INSERT INTO collection (name, created) VALUES ('c', '2026-11-29')")
        collection_id = conn.execute("SELECT id FROM collection WHERE name = 'c'").fetchone()[0]
        conn.execute(
            "INSERT INTO sample (collection_id, dataset, split, sample_id, position, question) "
            "VALUES (?, 'd', 'test', 's1', 0, 'q')",
            (collection_id,),
        )
        sample = conn.execute("SELECT id FROM sample").fetchone()[0]
        conn.execute("INSERT INTO run (name, created, collection, spec) VALUES ('r', 'now', 'c', '{}')")
        conn.execute(
            "INSERT INTO request (run_id, sample_pk, model_index, model_label, variant_index, step, params, created) "
            "VALUES (1, ?, 0, 'm', 0, 'cot', '{}', 'now')",
            (sample,),
        )
        conn.execute(
            "INSERT INTO request (run_id, sample_pk, model_index, model_label, variant_index, step, params, created, "
            "depends_on) VALUES (1, ?, 0, 'm', 0, 'extraction', '{}', 'now', 1)",
            (sample,),
        )
        with_not_null = conn.execute("SELECT * FROM request ORDER BY id").fetchall()
        try:
            conn.execute(
                "INSERT INTO request (run_id, sample_pk, model_index, model_label, variant_index, step, params, "
                "created) VALUES (1, NULL, 0, 'm', 0, 'cot', '{}', 'now')"
            )
        except sqlite3.IntegrityError:
            pass
        else:
            raise AssertionError("before m020 a request needs a sample")
    monkeypatch.setattr(migrations, "MIGRATIONS", every)
    with Library.open(path) as lib:
        conn = lib.conn
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert [row[: len(with_not_null[0])] for row in conn.execute("SELECT * FROM request ORDER BY id")] == [
            tuple(row) for row in with_not_null
        ]
        with lib.transaction():
            conn.execute(
                "INSERT INTO request (run_id, sample_pk, model_index, model_label, variant_index, step, params, "
                "created) VALUES (1, NULL, 0, 'm', 0, 'rationale_extraction', '{}', 'now')"
            )
        with lib.transaction():
            conn.execute("DELETE FROM sample")
        # The sample's requests went with it (the cascade is kept); the one without a sample stays.
        assert conn.execute("SELECT step FROM request").fetchall() == [("rationale_extraction",)]
