"""The sample table's sort indexes (core.library.sort_indexes): a large import builds them afresh
at its end, with the definitions migration m012 gave them; a failed or killed one leaves none
missing once the library is opened again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library import sort_indexes
from thoughtdesk.core.library.store import Library


def index_sql(lib: Library) -> dict[str, str]:
    rows = lib.conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name LIKE 'sample_sort_%'")
    # Compared without whitespace: m012 wrote one definition over several lines.
    return {name: "".join(sql.replace("IF NOT EXISTS ", "").split()) for name, sql in rows}


def write_collection(path: Path, n: int, bad_at: int | None = None) -> Path:
    samples = [
        {"id": f"s{i:04d}", "question": f"Question {n - i}", "type": "number", "answer": [str(i)]} for i in range(n)
    ]
    if bad_at is not None:
        samples[bad_at]["choices"] = "not a list"
    path.write_text(json.dumps({"gsm8k": {"test": samples}}), encoding="utf-8")
    return path


@pytest.fixture
def defer_small(monkeypatch):
    monkeypatch.setattr(sort_indexes, "DEFER_AT", 10)


def test_a_large_import_builds_the_indexes_as_m012_made_them(tmp_path, defer_small):
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        made_by_m012 = index_sql(lib)
        assert len(made_by_m012) == len(sort_indexes.SORT_INDEXES)
        dropped: list[str] = []
        lib.conn.set_trace_callback(lambda s: dropped.append(s) if s.startswith("DROP INDEX") else None)
        import_thoughtsource(lib, write_collection(tmp_path / "a.json", 50), collection="a")
        lib.conn.set_trace_callback(None)
        assert dropped  # the import did defer them
        # Same definitions (IF NOT EXISTS aside), so queries.SORT_KEYS still match them.
        assert index_sql(lib) == made_by_m012
        cid = lib.require_collection("a")
        from thoughtdesk.core.library.queries import SampleFilter, sample_keys

        keys = sample_keys(lib, SampleFilter(collection_id=cid), "question").tolist()
        ids = [lib.conn.execute("SELECT sample_id FROM sample WHERE id = ?", (k,)).fetchone()[0] for k in keys]
        assert ids[:3] == ["s0049", "s0040", "s0039"]  # "Question 1", "Question 10", "Question 11"


def test_a_small_import_into_a_large_library_keeps_them(tmp_path, defer_small):
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        import_thoughtsource(lib, write_collection(tmp_path / "a.json", 100), collection="a")
        dropped: list[str] = []
        lib.conn.set_trace_callback(lambda s: dropped.append(s) if s.startswith("DROP INDEX") else None)
        import_thoughtsource(lib, write_collection(tmp_path / "b.json", 20), collection="b")
        lib.conn.set_trace_callback(None)
        assert not dropped and not sort_indexes.missing(lib.conn)


def test_a_failed_import_leaves_them_and_the_library_as_it_was(tmp_path, defer_small):
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        before = index_sql(lib)
        with pytest.raises(Exception, match="choices"):
            import_thoughtsource(lib, write_collection(tmp_path / "bad.json", 50, bad_at=30), collection="bad")
        assert lib.collection_id("bad") is None
        assert lib.conn.execute("SELECT count(*) FROM sample").fetchone()[0] == 0
        assert index_sql(lib) == before


def test_opening_builds_indexes_a_killed_import_left_missing(tmp_path):
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib:
        with lib.transaction() as conn:
            sort_indexes.drop(conn)
        assert sort_indexes.missing(lib.conn)
    with Library.open(path) as lib:
        assert not sort_indexes.missing(lib.conn)
