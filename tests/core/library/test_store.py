"""The library file: creation, WAL, migrations from older schemas, refusing foreign or newer files."""

from __future__ import annotations

import hashlib
import os
import sqlite3

import pytest

from tests.helpers.paths import FIXTURES
from thoughtdesk.core.errors import LibraryError
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library import migrations
from thoughtdesk.core.library.migrations import early
from thoughtdesk.core.library.processes import process_start_mark, process_tag
from thoughtdesk.core.library.store import STAGING, Library
from thoughtdesk.core.settings.saved import default_library_path, resolve_library_path


def file_hash(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_new_library_uses_wal_and_current_schema(tmp_path):
    path = tmp_path / "sub" / "lib.thoughtdesk"
    with Library.open(path) as lib:
        assert lib.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert lib.conn.execute("PRAGMA user_version").fetchone()[0] == migrations.current_version()
        applied = [r[0] for r in lib.conn.execute("SELECT name FROM _migrations ORDER BY rowid")]
        assert applied == [name for name, _ in migrations.MIGRATIONS]
    assert path.exists()


def test_database_made_by_older_schema_is_migrated_with_data_kept(tmp_path):
    path = tmp_path / "old.thoughtdesk"
    # Build the file the way the first release did: only migration 001, then data.
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied TEXT NOT NULL)")
    conn.execute("BEGIN")
    early.m001_initial(conn)
    conn.execute("INSERT INTO _migrations VALUES ('m001_initial', 'then')")
    conn.execute("PRAGMA user_version = 1")
    conn.execute("COMMIT")
    conn.execute("INSERT INTO collection (id, name, created) VALUES (1, 'old', '2025-01-01')")
    conn.execute(
        "INSERT INTO sample (id, collection_id, dataset, split, position, sample_id, question, choices, cot, answer, feedback)"
        " VALUES (1, 1, 'gsm8k', 'test', 0, 's1', 'What is 1+1?', '[]', '[]', '[\"2\"]', '[]')"
    )
    conn.close()

    with Library.open(path) as lib:
        assert lib.conn.execute("PRAGMA user_version").fetchone()[0] == migrations.current_version()
        columns = {r[1] for r in lib.conn.execute("PRAGMA table_info(answer)")}
        assert {"td_outcome", "td_method", "td_span_start"} <= columns
        assert lib.conn.execute("SELECT question FROM sample").fetchone()[0] == "What is 1+1?"
        assert [c.name for c in lib.collections()] == ["old"]


def test_failed_migration_is_rolled_back(tmp_path, monkeypatch):
    def broken(conn):
        conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, ("m999_broken", broken)])
    with pytest.raises(RuntimeError):
        Library.open(tmp_path / "lib.thoughtdesk")
    conn = sqlite3.connect(tmp_path / "lib.thoughtdesk")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in tables and "sample" in tables


def test_file_that_is_not_sqlite_is_refused_and_untouched(tmp_path):
    path = tmp_path / "notes.thoughtdesk"
    path.write_text("these are my notes, not a database\n")
    before = file_hash(path)
    with pytest.raises(LibraryError, match="not a ThoughtDesk library.*not an SQLite database.*left untouched"):
        Library.open(path)
    assert file_hash(path) == before
    assert not (tmp_path / "notes.thoughtdesk-wal").exists()


def test_other_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (x)")
    conn.commit()
    conn.close()
    before = file_hash(path)
    with pytest.raises(LibraryError, match="SQLite database but not a ThoughtDesk library"):
        Library.open(path)
    assert file_hash(path) == before


def test_newer_schema_is_refused_and_untouched(tmp_path):
    path = tmp_path / "new.thoughtdesk"
    with Library.open(path) as lib:
        import_thoughtsource(lib, FIXTURES / "thoughtsource" / "edge_cases.json", collection="c")
        lib.conn.execute("INSERT INTO _migrations VALUES ('m050_from_the_future', 'later')")
        lib.conn.execute("PRAGMA user_version = 50")
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = file_hash(path)
    with pytest.raises(
        LibraryError, match=r"newer ThoughtDesk \(schema version 50; this version reads up to \d+\).*left untouched"
    ):
        Library.open(path)
    assert file_hash(path) == before


def test_an_unknown_migration_is_not_called_newer(tmp_path):
    """Issue 15: a library with a migration this build lacks (same version number) was refused
    as "written by a newer ThoughtDesk (schema version 7 ...)", which was not true."""
    path = tmp_path / "branch.thoughtdesk"
    with Library.open(path) as lib:
        lib.conn.execute("INSERT INTO _migrations VALUES ('m007_from_another_branch', 'then')")
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = file_hash(path)
    with pytest.raises(LibraryError) as caught:
        Library.open(path)
    message = str(caught.value)
    assert "newer" not in message and "m007_from_another_branch" in message and "another build" in message
    assert file_hash(path) == before


def test_refusing_a_foreign_wal_database_leaves_no_files_beside_it(tmp_path):
    """Issue 15: opening a refused file created -wal/-shm files beside it."""
    path = tmp_path / "someone-elses.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE notes (t TEXT)")
    conn.commit()
    conn.close()
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(LibraryError, match="not a ThoughtDesk library"):
        Library.open(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_library_location_precedence(tmp_path, monkeypatch):
    monkeypatch.delenv("THOUGHTDESK_LIBRARY", raising=False)
    default = default_library_path()
    assert default.name == "library.thoughtdesk" and "ThoughtDesk" in str(default)
    monkeypatch.setenv("THOUGHTDESK_LIBRARY", str(tmp_path / "env.thoughtdesk"))
    assert resolve_library_path(None) == tmp_path / "env.thoughtdesk"
    assert resolve_library_path(str(tmp_path / "cli.thoughtdesk")) == tmp_path / "cli.thoughtdesk"


def test_collections_are_unique_and_looked_up_by_name(tmp_path):
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        import_thoughtsource(lib, FIXTURES / "thoughtsource" / "edge_cases.json", collection="a")
        assert lib.require_collection("a") == lib.collection_id("a")
        with pytest.raises(LibraryError, match="already exists"):
            lib.create_collection("a")
        with pytest.raises(LibraryError, match="no collection named 'b'.*collections: 'a'"):
            lib.require_collection("b")


def test_a_reader_sees_commits_refuses_writes_and_skips_the_checks(tmp_path, monkeypatch):
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib:
        reader = Library.open_reader(path)
        try:
            lib.create_collection("later")  # committed by the first connection after the reader opened
            assert [c.name for c in reader.collections()] == ["later"]
            with pytest.raises(sqlite3.OperationalError, match="readonly"):
                reader.conn.execute("DELETE FROM collection")
            assert [c.name for c in lib.collections()] == ["later"]
        finally:
            reader.close()
    # No migrations (nor open's integrity check, which reads the whole file: seconds at 1M samples).
    checked: list[str] = []
    monkeypatch.setattr(migrations, "apply_migrations", lambda conn: checked.append("migrations"))
    with Library.open_reader(path) as reader:
        assert reader.collection_id("later") is not None
    assert checked == []


def test_a_reader_of_a_missing_file_says_so(tmp_path):
    with pytest.raises(LibraryError, match="gone.thoughtdesk does not exist any more"):
        Library.open_reader(tmp_path / "gone.thoughtdesk")
    assert not (tmp_path / "gone.thoughtdesk").exists()


def _staged(lib: Library, tag: str) -> int:
    with lib.transaction() as conn:
        conn.execute(
            "INSERT INTO collection (name, created, source) VALUES (?, '', ?)",
            (f"{STAGING}{tag}", f"{STAGING}{tag}:x.json"),
        )
    return lib.conn.execute(f"SELECT count(*) FROM collection WHERE source LIKE '{STAGING}%'").fetchone()[0]


@pytest.mark.skipif(process_start_mark(os.getpid()) is None, reason="this system does not tell when a process started")
def test_a_killed_imports_rows_go_even_when_its_process_number_was_given_again(tmp_path):
    """Issue 23, point 13: a killed import's hidden rows were removed only when no process had
    its number; after a reboot (or many processes later) another process with that number kept
    them forever. An unrelated live process (the test's parent) stands for the one given the
    number again: with another start mark recorded, the rows go; with its own, they stay."""
    path = tmp_path / "lib.thoughtdesk"
    other = os.getppid()
    real = process_start_mark(other)
    assert real is not None
    with Library.open(path) as lib:
        assert _staged(lib, f"{other}@{real}") == 1
        assert _staged(lib, f"{other}@{real}0") == 2  # the same number, another process
        assert _staged(lib, f"{other}") == 3  # an older library: the number alone
    with Library.open(path) as lib:
        left = [r[0] for r in lib.conn.execute(f"SELECT source FROM collection WHERE source LIKE '{STAGING}%'")]
    assert sorted(left) == sorted([f"{STAGING}{other}@{real}:x.json", f"{STAGING}{other}:x.json"])


def test_an_import_records_its_process_with_its_start_mark(tmp_path):
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        with lib.transaction():
            lib.create_staging_collection("x.json")
        source = lib.conn.execute(f"SELECT source FROM collection WHERE source LIKE '{STAGING}%'").fetchone()[0]
    assert source == f"{STAGING}{process_tag()}:x.json"
    assert process_tag().startswith(f"{os.getpid()}@") or process_start_mark(os.getpid()) is None


def test_reasoning_facts_of_a_cot_are_stored_and_read_back(tmp_path):
    # Issue 24's storage (m016): the thinking, why generation stopped and the reasoning tokens,
    # apart from the visible text; a CoT without them reads back None, not "".
    from thoughtdesk.core.library.reader import iter_split
    from thoughtdesk.core.library.records import GeneratedCot, Sample
    from thoughtdesk.core.library.writer import OnDuplicate, SampleWriter

    path = tmp_path / "lib.thoughtdesk"
    thinking = "Let me add.\n\nWait, 3 + 4 is 7, not 8."
    with Library.open(path) as lib:
        with lib.transaction():
            cid = lib.create_collection("c")
            writer = SampleWriter(lib, cid, OnDuplicate.FAIL)
            cots = [
                GeneratedCot(
                    id="r", cot="The answer is 7.", reasoning=thinking, finish_reason="stop", reasoning_tokens=17
                ),
                GeneratedCot(id="plain", cot="3 + 4 = 7."),
            ]
            writer.add("d", "test", Sample(id="s", question="3 + 4?", answer=["7"], generated_cot=cots))
            writer.close("d")
    with Library.open(path) as lib:
        (sample,) = iter_split(lib, lib.collections()[0].id, "d", "test")
    reasoned, plain = sample.generated_cot
    assert (reasoned.cot, reasoned.reasoning, reasoned.finish_reason, reasoned.reasoning_tokens) == (
        "The answer is 7.",
        thinking,
        "stop",
        17,
    )
    assert (plain.reasoning, plain.finish_reason, plain.reasoning_tokens) == (None, None, None)


def test_pairwise_preferences_keep_one_verdict_per_reviewer_and_pair(tmp_path):
    # m019: a pair is stored smaller CoT key first, the preferred CoT is one of the two or NULL
    # (a tie), and a reviewer has one verdict per pair; deleting a CoT deletes its verdicts.
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib:
        c = lib.conn
        with lib.transaction():
            c.execute("INSERT INTO collection (id, name, created) VALUES (1, 'c', 'now')")
            c.execute(
                "INSERT INTO sample (id, collection_id, dataset, split, position, sample_id) VALUES (1, 1, 'd', 't', 0, 's')"
            )
            for pk in (1, 2, 3):
                c.execute("INSERT INTO generated_cot (id, sample_pk, position) VALUES (?, 1, ?)", (pk, pk))
            c.execute(
                "INSERT INTO pairwise_preference (sample_pk, first_cot_pk, second_cot_pk, preferred_cot_pk, author, date)"
                " VALUES (1, 1, 2, 2, 'ann', 'now'), (1, 1, 2, NULL, 'bob', 'now')"
            )
        for bad in [(2, 1, 2, "cy"), (1, 2, 3, "dan"), (1, 2, 2, "ann")]:
            with pytest.raises(sqlite3.IntegrityError):
                c.execute(
                    "INSERT INTO pairwise_preference (sample_pk, first_cot_pk, second_cot_pk, preferred_cot_pk, author, date)"
                    " VALUES (1, ?, ?, ?, ?, 'now')",
                    bad,
                )
        c.execute("UPDATE generated_cot SET revision_of = 1 WHERE id = 3")
        with lib.transaction():
            c.execute("DELETE FROM generated_cot WHERE id = 1")
        assert c.execute("SELECT count(*) FROM pairwise_preference").fetchone() == (0,)
        assert c.execute("SELECT revision_of FROM generated_cot WHERE id = 3").fetchone() == (None,)
