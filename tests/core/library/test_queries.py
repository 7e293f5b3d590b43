"""The sample table's keys (core.library.queries): the first page alone, read without listing or
sorting the whole collection, is the start of the full list in every order and filter."""

from __future__ import annotations

import pytest

from tests.helpers.libraries import DEMO, demo_library
from thoughtdesk.core.library.queries import (
    SORT_KEYS,
    Correctness,
    SampleFilter,
    first_sample_keys,
    sample_keys,
)
from thoughtdesk.core.library.store import Library


@pytest.fixture
def lib(tmp_path):
    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        yield lib


def filters(lib: Library) -> list[SampleFilter]:
    cid = lib.require_collection(DEMO)
    dataset, split = lib.conn.execute("SELECT dataset, split FROM sample WHERE collection_id = ?", (cid,)).fetchone()
    return [
        SampleFilter(collection_id=cid),
        SampleFilter(collection_id=cid, dataset=dataset, split=split),
        SampleFilter(collection_id=cid, search="the"),
        SampleFilter(collection_id=cid, correctness=Correctness.HAS_CORRECT),
    ]


@pytest.mark.parametrize("sort", sorted(SORT_KEYS))
def test_the_first_keys_start_the_full_list_in_every_order(lib, sort):
    for f in filters(lib):
        for descending in (False, True):
            every = sample_keys(lib, f, sort, descending)
            assert len(every) > 3, f  # the demo has enough matches for a first page to be short
            for limit in (1, 3, len(every) + 5):
                assert first_sample_keys(lib, f, sort, descending, limit).tolist() == every[:limit].tolist()


@pytest.mark.parametrize("sort", sorted(SORT_KEYS))
def test_descending_is_ascending_reversed(lib, sort):
    # Ties break in the column's direction, so an index read backwards gives the descending order.
    f = filters(lib)[0]
    assert sample_keys(lib, f, sort, True).tolist() == sample_keys(lib, f, sort, False).tolist()[::-1]


def plan_of_first_page(lib: Library, f: SampleFilter) -> list[str]:
    """SQLite's plan for the statement first_sample_keys ran (caught by the trace callback)."""
    statements: list[str] = []
    lib.conn.set_trace_callback(statements.append)
    try:
        first_sample_keys(lib, f, "position", False, 10)
    finally:
        lib.conn.set_trace_callback(None)
    (statement,) = [s for s in statements if s.startswith("SELECT s.id")]
    return [row[3] for row in lib.conn.execute("EXPLAIN QUERY PLAN " + statement)]


def test_the_first_page_is_read_in_index_order_and_not_sorted(lib):
    # What makes it independent of the collection's size: SQLite walks an index in display
    # order and stops at the LIMIT; a sort step (a temp b-tree) would read every match first.
    cid = lib.require_collection(DEMO)
    plan = plan_of_first_page(lib, SampleFilter(collection_id=cid))
    assert not any("TEMP B-TREE" in step for step in plan) and "sample_collection" in plan[0], plan


def test_a_search_walks_its_hits_in_key_order_and_stops(lib):
    # The full-text index is the outer loop, read in rowid order: no list of every hit
    # (LIST SUBQUERY) and no sort of them; the collection is checked on its covering index.
    cid = lib.require_collection(DEMO)
    dataset, split = lib.conn.execute("SELECT dataset, split FROM sample WHERE collection_id = ?", (cid,)).fetchone()
    for f in (
        SampleFilter(collection_id=cid, search="patient fev"),
        SampleFilter(collection_id=cid, dataset=dataset, split=split, search="the"),
        SampleFilter(search="the"),
    ):
        plan = plan_of_first_page(lib, f)
        assert plan[0].startswith("SCAN sample_fts"), plan
        assert not any("TEMP B-TREE" in step or "LIST SUBQUERY" in step for step in plan), plan
    plan = plan_of_first_page(lib, SampleFilter(collection_id=cid, search="patient fev"))
    assert "COVERING INDEX sample_collection" in plan[1], plan


def test_a_cancelled_listing_stops_with_a_prefix(lib):
    f = filters(lib)[0]
    every = sample_keys(lib, f).tolist()
    partial = sample_keys(lib, f, cancelled=lambda: True).tolist()
    assert len(partial) < len(every) and partial == every[: len(partial)]


# Sorting by a column reads that column's index (issue 17 point 7, migration m012) ---------------


def plan_of(lib: Library, f: SampleFilter, sort: str, descending: bool) -> list[str]:
    """SQLite's plan for the statement ``first_sample_keys`` ran in this order."""
    statements: list[str] = []
    lib.conn.set_trace_callback(statements.append)
    try:
        first_sample_keys(lib, f, sort, descending, 10)
    finally:
        lib.conn.set_trace_callback(None)
    (statement,) = [s for s in statements if s.startswith("SELECT s.id")]
    return [row[3] for row in lib.conn.execute("EXPLAIN QUERY PLAN " + statement)]


@pytest.mark.parametrize("sort", sorted(SORT_KEYS))
def test_every_sort_reads_an_index_and_sorts_nothing(lib, sort):
    # A sort step (USE TEMP B-TREE FOR ORDER BY) reads and sorts every sample of the collection
    # before the first page: 1.5 s at a million. The filters that rarely exclude much walk the
    # same index and check each row.
    cid = lib.require_collection(DEMO)
    for f in (
        SampleFilter(collection_id=cid),
        SampleFilter(collection_id=cid, has_cots=True),
        SampleFilter(collection_id=cid, correctness=Correctness.HAS_INCORRECT, annotated=False),
        SampleFilter(collection_id=cid, answer_type="multiplechoice"),
    ):
        for descending in (False, True):
            plan = plan_of(lib, f, sort, descending)
            assert not any("TEMP B-TREE" in step for step in plan), (sort, descending, f, plan)
            index = "sample_collection" if sort == "position" else f"sample_sort_{sort}"
            assert index in plan[0], (sort, f, plan)


def test_a_search_in_another_order_sorts_only_its_hits(lib):
    # A rare word's few hits are read from the full-text index first, then sorted: walking a
    # sort index over the whole collection would check every sample against the hits.
    cid = lib.require_collection(DEMO)
    plan = plan_of(lib, SampleFilter(collection_id=cid, search="patient"), "question", False)
    assert plan[0].startswith("SCAN sample_fts") and not any("LIST SUBQUERY" in step for step in plan), plan


def _nocase(text: str | None) -> str:
    # SQLite's NOCASE folds ASCII letters only.
    return (text or "").translate(str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"))


def expected_order(lib: Library, cid: int, sort: str) -> list[int]:
    """The keys of collection ``cid`` sorted in Python by what the table shows for ``sort``."""
    rows = lib.conn.execute(
        "SELECT id, sample_id, question, type, answer, n_cots, n_answers, n_correct, n_annotations "
        "FROM sample WHERE collection_id = ?",
        (cid,),
    ).fetchall()
    key = {
        "position": lambda r: (),
        "id": lambda r: (r[1],),
        "question": lambda r: (_nocase(r[2][:100]),),
        "type": lambda r: (r[3] or "",),
        "gold": lambda r: (_nocase(r[4][:100]),),
        "cots": lambda r: (r[5],),
        "correct": lambda r: (-1.0 if r[6] == 0 else r[7] / r[6],),
        "annotated": lambda r: (r[8],),
    }[sort]
    return [r[0] for r in sorted(rows, key=lambda r: (*key(r), r[0]))]


@pytest.mark.parametrize("sort", sorted(SORT_KEYS))
def test_each_sort_gives_the_columns_order_with_ties_in_collection_order(lib, sort):
    cid = lib.require_collection(DEMO)
    # Questions alike in their first 100 characters sort as ties: in the collection's order.
    common = "A" * 100
    lib.conn.execute("UPDATE sample SET question = ? || question WHERE collection_id = ? AND id % 3 = 0", (common, cid))
    lib.conn.commit()
    expected = expected_order(lib, cid, sort)
    f = SampleFilter(collection_id=cid)
    assert sample_keys(lib, f, sort).tolist() == expected
    assert sample_keys(lib, f, sort, descending=True).tolist() == expected[::-1]
    assert first_sample_keys(lib, f, sort, limit=5).tolist() == expected[:5]


def test_keys_parsed_in_small_pieces_are_the_same_list(lib, monkeypatch):
    # The worker parses SQLite's list of keys a piece at a time (to hold the GIL briefly).
    from thoughtdesk.core.library import queries

    f = filters(lib)[0]
    whole = sample_keys(lib, f, "question").tolist()
    monkeypatch.setattr(queries, "KEYS_PIECE_CHARS", 2)  # a piece or two keys at a time
    assert sample_keys(lib, f, "question").tolist() == whole and len(whole) > 3
    assert sample_keys(lib, SampleFilter(collection_id=-5)).tolist() == []
