"""The sample table's model: rows are fetched a page at a time and kept in a small cache.

The cache is only for speed, so besides what the table shows, these tests count the queries
that fetch rows (SQLite's trace callback on the real library connection): a page is fetched
once while it stays cached, the least recently used page is the one dropped, and nothing
cached survives a refresh.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.queries import SampleFilter
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.qt import Qt
from thoughtdesk.ui.samples import sample_model
from thoughtdesk.ui.samples.sample_model import PAGE, SampleTableModel

N_SAMPLES = 2 * PAGE + 50  # three pages, the last one short


@pytest.fixture
def library(tmp_path: Path):
    samples = [
        {"id": f"s{i:04d}", "question": f"Question number {i}", "type": "number", "answer": [str(i)]}
        for i in range(N_SAMPLES)
    ]
    path = tmp_path / "many.json"
    path.write_text(json.dumps({"gsm8k": {"test": samples}}), encoding="utf-8")
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        import_thoughtsource(lib, path, collection="many")
        yield lib


class RowQueries:
    """Counts the queries that fetch display rows on ``library``'s connection."""

    def __init__(self, library: Library) -> None:
        self.count = 0
        library.conn.set_trace_callback(self._seen)

    def _seen(self, statement: str) -> None:
        if "FROM sample WHERE id IN" in statement:
            self.count += 1

    def after(self, action) -> int:
        before = self.count
        action()
        return self.count - before


@pytest.fixture
def model(qapp, library):
    model = SampleTableModel(library)
    model.set_filter(SampleFilter(collection_id=library.require_collection("many")))
    yield model
    library.conn.set_trace_callback(None)


def ids(model: SampleTableModel, rows) -> list[str]:
    return [model.data(model.index(row, 0)) for row in rows]


def read_page(model: SampleTableModel, page: int) -> list[str]:
    """Every cell of one page, as a view painting it asks for them."""
    rows = range(page * PAGE, min((page + 1) * PAGE, model.rowCount()))
    for row in rows:
        for column in range(model.columnCount()):
            model.data(model.index(row, column))
            model.data(model.index(row, column), Qt.ItemDataRole.ToolTipRole)
    return ids(model, rows)


def test_every_row_is_shown_in_order(model):
    assert model.rowCount() == N_SAMPLES
    shown = [cell for page in range(3) for cell in read_page(model, page)]
    assert shown == [f"s{i:04d}" for i in range(N_SAMPLES)]
    assert model.data(model.index(N_SAMPLES - 1, 1)) == f"Question number {N_SAMPLES - 1}"


def test_a_page_is_fetched_once_while_it_is_cached(model, library):
    queries = RowQueries(library)
    assert queries.after(lambda: read_page(model, 0)) == 1
    assert queries.after(lambda: read_page(model, 1)) == 1
    assert queries.after(lambda: read_page(model, 0)) == 0
    assert queries.after(lambda: ids(model, [5, PAGE + 5, 2 * PAGE + 5])) == 1  # only page 2 is new


def test_the_least_recently_used_page_is_dropped(model, library, monkeypatch):
    monkeypatch.setattr(sample_model, "CACHED_PAGES", 2)
    queries = RowQueries(library)
    read_page(model, 0)
    read_page(model, 1)
    read_page(model, 0)  # page 0 is now the most recently used
    assert queries.after(lambda: read_page(model, 2)) == 1  # ... so page 1 is dropped
    assert queries.after(lambda: read_page(model, 0)) == 0
    assert queries.after(lambda: read_page(model, 2)) == 0
    assert queries.after(lambda: read_page(model, 1)) == 1


def test_a_refresh_drops_cached_rows(model, library):
    read_page(model, 0)
    with library.transaction() as conn:  # another writer (a run, an import) changed a sample
        conn.execute("UPDATE sample SET question = 'Changed' WHERE sample_id = 's0003'")
    assert model.data(model.index(3, 1)) == "Question number 3"  # cached until refreshed
    model.refresh()
    assert model.data(model.index(3, 1)) == "Changed"


def test_sorting_and_filtering_show_the_new_rows(model, library):
    read_page(model, 0)
    model.sort(0, Qt.SortOrder.DescendingOrder)
    assert ids(model, range(3)) == [f"s{i:04d}" for i in (N_SAMPLES - 1, N_SAMPLES - 2, N_SAMPLES - 3)]
    model.set_filter(SampleFilter(collection_id=library.require_collection("many"), search="number 123"))
    assert model.rowCount() == 1 and ids(model, [0]) == ["s0123"]
