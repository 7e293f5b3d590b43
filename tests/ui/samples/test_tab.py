"""The Samples tab on a collection larger than its first page (issue 17 point 7): the first rows
at once, the selected sample right after their paint, the count and the other rows when the
worker has listed them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.samples import sample_model

N_SAMPLES = 450
FIRST = 100


@pytest.fixture
def library_path(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setattr(sample_model, "FIRST_KEYS", FIRST)
    samples = [
        {"id": f"s{i:04d}", "question": f"Question number {i}", "type": "number", "answer": [str(i)]}
        for i in range(N_SAMPLES)
    ]
    source = tmp_path / "many.json"
    source.write_text(json.dumps({"gsm8k": {"test": samples}}), encoding="utf-8")
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib:
        import_thoughtsource(lib, source, collection="many")
    return path


def test_first_rows_and_selection_at_once_then_the_count(qtbot, make_window, library_path):
    window = make_window(library_path)
    tab = window.samples
    qtbot.waitUntil(lambda: tab.model.complete, timeout=5000)
    tab.type_filter.setCurrentIndex(tab.type_filter.findData("number"))  # a new query: every sample
    assert not tab.model.complete
    assert tab.count_label.text() == f"{FIRST}+ samples (counting…)"
    # The first row is selected at once; its sample is shown after the first rows' paint.
    assert tab.table.currentIndex().row() == 0
    qtbot.waitUntil(lambda: tab.detail.current is not None and tab.detail.current.sample.id == "s0000", timeout=5000)
    tab.move_selection(3)
    qtbot.waitUntil(lambda: tab.model.complete, timeout=5000)
    assert tab.count_label.text() == f"{N_SAMPLES} samples"
    # The rows were appended: the selection and the sample shown stay.
    assert tab.table.currentIndex().row() == 3 and tab.detail.current.sample.id == "s0003"
    tab.move_selection(10_000)
    assert tab.detail.current.sample.id == f"s{N_SAMPLES - 1:04d}"


def test_opening_a_sample_beyond_the_first_rows(qtbot, make_window, library_path):
    window = make_window(library_path)
    tab = window.samples
    qtbot.waitUntil(lambda: tab.model.complete, timeout=5000)
    last = tab.model.key_at(N_SAMPLES - 1)
    tab.search.setText("Question")
    tab.apply_filter()  # now, not after the typing pause
    assert not tab.model.complete
    assert tab.open_sample(last)  # listed on the spot, not "not shown"
    assert tab.table.currentIndex().row() == N_SAMPLES - 1
    assert tab.detail.current.sample.id == f"s{N_SAMPLES - 1:04d}"
    assert tab.count_label.text() == f"{N_SAMPLES} samples"


def test_the_sample_pane_follows_the_first_rows_paint(qtbot, make_window, library_path):
    # At a million samples building the pane before the first paint cost a third of the time to
    # the first rows; the rows come first, the pane in the same turn of the event loop after.
    from thoughtdesk.ui.qt import QEvent, QObject

    window = make_window(library_path)
    tab = window.samples
    qtbot.waitUntil(lambda: tab.model.complete, timeout=5000)
    events: list[str] = []
    show_sample = tab.detail.show_sample

    def recording(*args, **kwargs):
        events.append("pane")
        return show_sample(*args, **kwargs)

    tab.detail.show_sample = recording

    class PaintProbe(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint and not tab.model.complete:
                events.append("rows")
            return False

    probe = PaintProbe()
    tab.table.viewport().installEventFilter(probe)
    tab.table.clearSelection()
    tab.table.setCurrentIndex(tab.model.index(-1, -1))
    tab.type_filter.setCurrentIndex(tab.type_filter.findData("number"))  # a new query, 450 matches
    qtbot.waitUntil(lambda: "pane" in events, timeout=5000)
    assert events.index("rows") < events.index("pane"), events
    assert tab.detail.current.sample.id == "s0000"
