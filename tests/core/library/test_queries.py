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
