"""The search index's settings during a large import (core.library.bulk_fts): set for the import
only, the defaults again after it (also after a failed or killed one), and searches find exactly
what they found when the index was written with the defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thoughtdesk.core.importing import importer
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library import bulk_fts, sort_indexes
from thoughtdesk.core.library.queries import SampleFilter, sample_keys
from thoughtdesk.core.library.store import Library

WORDS = "fever cough renal hepatic insulin warfarin aspirin apples train hours kalomi zeparo ixulen".split()


def settings(lib: Library) -> dict[str, int]:
    return dict(
        lib.conn.execute("SELECT k, v FROM sample_fts_config WHERE k IN ('hashsize', 'automerge', 'crisismerge')")
    )


def write_collection(path: Path, n: int, bad_at: int | None = None) -> Path:
    samples = []
    for i in range(n):
        words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(6)]
        sample = {
            "id": f"s{i:04d}",
            "question": f"Question {i}: " + " ".join(words[:3]),
            "cot": [" ".join(words[3:])],
            "answer": [str(i)],
            "generated_cot": [
                {"id": f"c{i}", "cot": f"Because {words[i % 6]} and {words[(i + 2) % 6]}", "answers": []}
            ],
        }
        samples.append(sample)
    if bad_at is not None:
        samples[bad_at]["choices"] = "not a list"
    path.write_text(json.dumps({"med_qa": {"test": samples}}), encoding="utf-8")
    return path


@pytest.fixture
def large_at_10(monkeypatch):
    """An import of 10 samples or more counts as large; progress every 10 samples."""
    monkeypatch.setattr(sort_indexes, "DEFER_AT", 10)
    monkeypatch.setattr(importer, "TICK", 10)


def test_a_large_import_writes_with_bulk_settings_and_leaves_the_defaults(tmp_path, large_at_10):
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        assert not bulk_fts.is_bulk(lib.conn)
        seen: list[bool] = []
        import_thoughtsource(
            lib,
            write_collection(tmp_path / "a.json", 60),
            collection="a",
            progress=lambda done, total: seen.append(bulk_fts.is_bulk(lib.conn)),
        )
        assert seen[0] is True  # during the import
        assert settings(lib)["automerge"] == bulk_fts.DEFAULT_AUTOMERGE
        assert settings(lib)["hashsize"] == bulk_fts.DEFAULT_HASHSIZE
        assert settings(lib)["crisismerge"] == bulk_fts.DEFAULT_CRISISMERGE
        assert not bulk_fts.is_bulk(lib.conn)


def test_a_small_import_leaves_the_settings_alone(tmp_path, large_at_10):
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        import_thoughtsource(lib, write_collection(tmp_path / "a.json", 60), collection="a")
        statements: list[str] = []
        lib.conn.set_trace_callback(statements.append)
        import_thoughtsource(lib, write_collection(tmp_path / "b.json", 5), collection="b")
        lib.conn.set_trace_callback(None)
        assert not [s for s in statements if "'automerge'" in s or "'hashsize'" in s]


def test_a_failed_import_leaves_the_defaults_and_the_library_as_it_was(tmp_path, large_at_10):
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        with pytest.raises(Exception, match="choices"):
            import_thoughtsource(lib, write_collection(tmp_path / "bad.json", 60, bad_at=45), collection="bad")
        assert not bulk_fts.is_bulk(lib.conn)
        assert lib.collection_id("bad") is None
        assert lib.conn.execute("SELECT count(*) FROM sample_fts").fetchone()[0] == 0


def test_opening_sets_the_defaults_a_killed_import_left(tmp_path):
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib:
        with lib.transaction() as conn:
            bulk_fts.set_bulk(conn)
        assert bulk_fts.is_bulk(lib.conn)
    with Library.open(path) as lib:
        assert not bulk_fts.is_bulk(lib.conn)


def test_opening_leaves_them_while_an_import_is_under_way(tmp_path):
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib, lib.transaction() as conn:
        bulk_fts.set_bulk(conn)
        lib.create_staging_collection("elsewhere")  # a live import's hidden collection (this process's)
    with Library.open(path) as other:
        assert bulk_fts.is_bulk(other.conn)


def test_searches_find_the_same_samples_as_with_the_default_settings(tmp_path, monkeypatch):
    source = write_collection(tmp_path / "a.json", 400)
    found: dict[str, dict[str, list[str]]] = {}
    for label, defer_at in (("default", 10**9), ("bulk", 10)):
        monkeypatch.setattr(sort_indexes, "DEFER_AT", defer_at)
        # Small chunks, so the bulk-written index is several segments merged, as in a large import.
        monkeypatch.setattr(importer, "CHUNK_SECONDS", 0.0)
        monkeypatch.setattr(importer, "TICK", 50)
        with Library.open(tmp_path / f"{label}.thoughtdesk") as lib:
            statements: list[str] = []
            lib.conn.set_trace_callback(statements.append)
            import_thoughtsource(lib, source, collection="a")
            lib.conn.set_trace_callback(None)
            assert any("'automerge'" in s for s in statements) is (label == "bulk")
            cid = lib.require_collection("a")
            found[label] = {}
            for query in [*WORDS, "fever cough", "because kalomi", "question"]:
                keys = sample_keys(lib, SampleFilter(collection_id=cid, search=query)).tolist()
                ids = lib.conn.execute(
                    f"SELECT sample_id FROM sample WHERE id IN ({','.join('?' * len(keys))})", keys
                ).fetchall()
                found[label][query] = sorted(r[0] for r in ids)
    assert found["bulk"] == found["default"]
    assert all(found["bulk"][w] for w in WORDS) and len(found["bulk"]["question"]) == 400


def test_bulk_merges_stay_incremental(tmp_path):
    # With automerge 16 and FTS5's default crisismerge (16) every level would be merged at once
    # in one transaction; the bulk settings keep crisismerge above automerge.
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        with lib.transaction() as conn:
            bulk_fts.set_bulk(conn)
        assert settings(lib)["crisismerge"] > settings(lib)["automerge"] == bulk_fts.BULK_AUTOMERGE
        with lib.transaction() as conn:
            bulk_fts.set_default(conn)
        assert not bulk_fts.is_bulk(lib.conn)
