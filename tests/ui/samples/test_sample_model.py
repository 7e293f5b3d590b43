"""The sample table's model: rows are fetched a page at a time and kept in a small cache.

The cache is only for speed, so besides what the table shows, these tests count the queries
that fetch rows (SQLite's trace callback on the real library connection): a page is fetched
once while it stays cached, the least recently used page is the one dropped, and nothing
cached survives a refresh.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.queries import SampleFilter
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.tasks import running_tasks
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


def ids(model: SampleTableModel, rows) -> list[object]:
    return [model.data(model.index(row, 0)) for row in rows]


def read_page(model: SampleTableModel, page: int) -> list[object]:
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


# First rows at once, the other keys from a worker (issue 17 point 7) ----------------------------


@pytest.fixture
def first_keys(monkeypatch) -> int:
    """Read 100 keys before the first paint, so the 450-sample library needs the worker."""
    monkeypatch.setattr(sample_model, "FIRST_KEYS", 100)
    return 100


def all_ids(model: SampleTableModel) -> list[str]:
    out = []
    for row in range(model.rowCount()):
        sample_row = model.sample_row(row)
        assert sample_row is not None, row
        out.append(sample_row.sample_id)
    return out


def test_the_first_rows_are_there_before_the_other_keys(qapp, qtbot, library, first_keys):
    model = SampleTableModel(library)
    model.set_filter(SampleFilter(collection_id=library.require_collection("many")))
    # The worker's keys arrive through the event loop, which has not run yet.
    assert not model.complete and model.rowCount() == first_keys
    assert ids(model, range(3)) == ["s0000", "s0001", "s0002"]
    with qtbot.waitSignal(model.keys_loaded, timeout=5000):
        pass
    assert model.complete and model.rowCount() == N_SAMPLES
    assert all_ids(model) == [f"s{i:04d}" for i in range(N_SAMPLES)]


def test_the_other_keys_are_appended_without_a_reset(qapp, qtbot, library, first_keys):
    model = SampleTableModel(library)
    resets: list[int] = []
    inserted: list[tuple[int, int]] = []
    model.modelReset.connect(lambda: resets.append(model.rowCount()))
    model.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    model.set_filter(SampleFilter(collection_id=library.require_collection("many")))
    qtbot.waitUntil(lambda: model.complete, timeout=5000)
    # One reset for the new filter (showing the first keys), then the rest inserted after them:
    # a view keeps its selection and scroll position.
    assert resets == [first_keys] and inserted == [(first_keys, N_SAMPLES - 1)]


def test_a_small_result_is_complete_at_once(qapp, library, first_keys):
    model = SampleTableModel(library)
    model.set_filter(SampleFilter(collection_id=library.require_collection("many"), search="number 12"))
    # s0012 and s0120..s0129 (the last word is a prefix): fewer than the first keys.
    assert model.complete and all_ids(model) == ["s0012", *(f"s{i:04d}" for i in range(120, 130))]


def test_sorting_shows_the_first_rows_then_all_in_order(qapp, qtbot, library, first_keys):
    model = SampleTableModel(library)
    model.set_filter(SampleFilter(collection_id=library.require_collection("many")))
    model.sort(0, Qt.SortOrder.DescendingOrder)
    assert ids(model, range(2)) == [f"s{N_SAMPLES - 1:04d}", f"s{N_SAMPLES - 2:04d}"]
    qtbot.waitUntil(lambda: model.complete, timeout=5000)
    assert all_ids(model) == [f"s{i:04d}" for i in reversed(range(N_SAMPLES))]


def test_a_new_filter_while_loading_drops_the_old_keys(qapp, qtbot, library, first_keys, monkeypatch):
    # The first listing (every sample) is held until the second (one question) is shown, so its
    # result arrives last: it must be dropped, not appended to the second filter's rows.
    before = running_tasks()
    started, release = threading.Event(), threading.Event()
    listing = sample_model.sample_keys

    def sample_keys(lib, f, *args, **kwargs):
        if not f.search:
            started.set()
            release.wait(10)
            kwargs.pop("cancelled", None)  # a late result, not a cancelled one
        return listing(lib, f, *args, **kwargs)

    monkeypatch.setattr(sample_model, "sample_keys", sample_keys)
    model = SampleTableModel(library)
    cid = library.require_collection("many")
    model.set_filter(SampleFilter(collection_id=cid))
    model.sort(0, Qt.SortOrder.DescendingOrder)
    qtbot.waitUntil(started.is_set, timeout=10000)  # the first worker is listing, and held
    wanted = SampleFilter(collection_id=cid, search="Question number 12")
    expected = [
        library.conn.execute("SELECT sample_id FROM sample WHERE id = ?", (k,)).fetchone()[0]
        for k in listing(library, wanted, "id", True)
    ]
    assert 0 < len(expected) < N_SAMPLES
    model.set_filter(wanted)
    qtbot.waitUntil(lambda: model.complete and all_ids(model) == expected, timeout=10000)
    release.set()
    # Every worker's result has been delivered (a task is let go after its result), the stale
    # one's too, which must be ignored.
    qtbot.waitUntil(lambda: running_tasks() <= before, timeout=10000)
    assert model.complete and all_ids(model) == expected


def test_looking_up_a_later_sample_lists_the_keys_at_once(qapp, library, first_keys):
    model = SampleTableModel(library)
    model.set_filter(SampleFilter(collection_id=library.require_collection("many")))
    last = library.conn.execute("SELECT id FROM sample WHERE sample_id = ?", (f"s{N_SAMPLES - 1:04d}",)).fetchone()[0]
    assert not model.complete
    assert model.row_of(last) == N_SAMPLES - 1  # not None: it is listed, not just not loaded yet
    assert model.complete and model.rowCount() == N_SAMPLES
    assert model.row_of(-5) is None


def test_the_worker_starts_after_the_first_rows_are_painted(qapp, qtbot, library, first_keys, monkeypatch):
    # A worker listing a million keys holds the GIL most of the time, and the paint calls
    # data() thousands of times: started before the paint it made the first rows take 0.5 s.
    from thoughtdesk.ui.qt import QEvent, QObject, QTableView

    events: list[str] = []
    listing = sample_model.sample_keys

    def sample_keys(*args, **kwargs):
        events.append("listing")  # in the worker thread: list.append is atomic
        return listing(*args, **kwargs)

    monkeypatch.setattr(sample_model, "sample_keys", sample_keys)
    model = SampleTableModel(library)
    view = QTableView()
    view.setModel(model)
    view.resize(600, 400)
    view.show()
    qtbot.addWidget(view)
    qtbot.waitExposed(view)

    class PaintProbe(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint and model.rowCount():
                events.append("paint")
            return False

    probe = PaintProbe()
    view.viewport().installEventFilter(probe)
    model.set_filter(SampleFilter(collection_id=library.require_collection("many")))
    qtbot.waitUntil(lambda: model.complete, timeout=5000)
    assert "paint" in events and "listing" in events and events.index("paint") < events.index("listing"), events
    assert all_ids(model) == [f"s{i:04d}" for i in range(N_SAMPLES)]


def test_sorted_by_question_the_first_rows_are_the_start_of_the_full_order(qapp, qtbot, library, first_keys):
    model = SampleTableModel(library)
    model.set_filter(SampleFilter(collection_id=library.require_collection("many")))
    model.sort(1, Qt.SortOrder.AscendingOrder)  # "Question number 0", "... 1", "... 10", ...
    expected = sorted((f"Question number {i}", f"s{i:04d}") for i in range(N_SAMPLES))
    assert not model.complete  # the first rows come while the worker lists the others
    assert all_ids(model) == [sample_id for _, sample_id in expected[:first_keys]]
    qtbot.waitUntil(lambda: model.complete, timeout=5000)
    assert all_ids(model) == [sample_id for _, sample_id in expected]
