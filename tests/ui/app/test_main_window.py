"""The main window, driven as a user drives it (pytest-qt, offscreen, a real library file)."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QFileDialog, QLabel

from tests.helpers.paths import FIXTURES
from thoughtdesk.ui.app.dialogs import ImportDialog
from thoughtdesk.ui.app.main_window import MainWindow
from thoughtdesk.ui.app.startup import open_library_for_gui

EDGE = FIXTURES / "thoughtsource" / "edge_cases.json"


@pytest.fixture
def window(qtbot, tmp_path):
    lib = open_library_for_gui(tmp_path / "lib.thoughtdesk")
    win = MainWindow(lib)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()


def wait_task(qtbot, task):
    with qtbot.waitSignal(task.signals.finished, timeout=30000):
        pass


def test_window_opens_on_a_new_library_with_the_demo(window):
    assert window.windowTitle() == "ThoughtDesk — lib.thoughtdesk"
    root = window.tree.model_.invisibleRootItem()
    assert root.child(0, 0).text() == "Demo"
    assert window.model.rowCount() >= 12
    assert window.count_label.text().endswith("samples")
    assert window.detail.current is not None  # the first row is selected and shown


def test_selecting_a_row_shows_its_details(window, qtbot):
    row = next(
        r
        for r in range(window.model.rowCount())
        if window.model.sample_row(r).type == "multiplechoice" and window.model.sample_row(r).dataset == "med_qa"
    )
    window.table.selectRow(row)
    stored = window.detail.current
    sample = stored.sample
    texts = window.detail.texts()
    assert sample.question in texts
    gold = sample.answer[0]
    gold_labels = [label for label in window.detail.findChildren(QLabel, "choice") if label.property("gold")]
    assert len(gold_labels) == 1 and gold in gold_labels[0].text() and gold_labels[0].text().startswith("✓")
    assert len(window.detail.findChildren(QLabel, "referenceStep")) == len(sample.cot)
    cards = window.detail.findChildren(QLabel, "cotModel")
    assert len(cards) == len(sample.generated_cot) >= 2
    answers = [label.text() for label in window.detail.findChildren(QLabel, "cotAnswer")]
    assert any("correct" in a for a in answers)


def test_search_narrows_the_table(window, qtbot):
    import re

    from thoughtdesk.core.library.reader import load_sample

    def words(pk):
        sample = load_sample(window.library, pk).sample
        reference = " ".join(step for step in sample.cot if isinstance(step, str))
        generated = " ".join(cot.cot or "" for cot in sample.generated_cot)
        return [w.lower() for w in re.findall(r"\w+", f"{sample.question} {reference} {generated}")]

    total = window.model.rowCount()
    every_sample = {window.model.sample_row(r).sample_id: words(window.model.sample_row(r).pk) for r in range(total)}
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.search.hasFocus()
    # "thyroid" is in one question (and its CoTs); in the demo, "together" is only in reference
    # CoTs and "reserved" only in generated ones: the search covers all three.
    for term, known_match in [
        ("thyroid", "med_qa_demo_test_2"),
        ("together", "gsm8k_demo_test_1"),
        ("reserved", "med_qa_demo_test_4"),
    ]:
        window.search.clear()
        qtbot.keyClicks(window.search, term)
        # the search runs 150 ms after the last key: wait for the whole word, not a prefix of it
        qtbot.waitUntil(lambda term=term: window.model.sample_filter.search == term, timeout=3000)
        found = {window.model.sample_row(r).sample_id for r in range(window.model.rowCount())}
        # as FTS5 matches the last word typed: a word that begins with it, in any case
        expected = {sid for sid, ws in every_sample.items() if any(w.startswith(term) for w in ws)}
        assert found == expected, term
        assert known_match in found and "gsm8k_demo_test_2" not in found, (term, found)
        assert 1 <= len(found) < total
        assert window.count_label.text() == f"{len(found)} sample{'s' if len(found) != 1 else ''}"
    window.search.clear()
    qtbot.waitUntil(lambda: window.model.rowCount() == total, timeout=3000)


def test_filters_narrow_the_table(window, qtbot):
    total = window.model.rowCount()
    window.type_filter.setCurrentIndex(window.type_filter.findData("number"))
    n_number = window.model.rowCount()
    assert 0 < n_number < total
    assert all(window.model.sample_row(r).type == "number" for r in range(n_number))
    window.type_filter.setCurrentIndex(0)
    from thoughtdesk.core.library.queries import Correctness

    window.correct_filter.setCurrentIndex(window.correct_filter.findData(Correctness.HAS_INCORRECT.value))
    rows = [window.model.sample_row(r) for r in range(window.model.rowCount())]
    assert rows and all(r.n_correct < r.n_answers for r in rows)
    window.cots_filter.setCurrentIndex(window.cots_filter.findData(False))
    assert window.model.rowCount() == 0  # every demo sample has CoTs


def test_sorting_by_a_column(window):
    window.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
    counts = [window.model.sample_row(r).n_cots for r in range(window.model.rowCount())]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]


def test_j_k_and_arrows_move_through_samples(window, qtbot):
    window.table.setFocus()
    window.table.selectRow(0)
    qtbot.keyClick(window.table, Qt.Key.Key_J)
    assert window.table.currentIndex().row() == 1
    qtbot.keyClick(window.table, Qt.Key.Key_Down)
    assert window.table.currentIndex().row() == 2
    qtbot.keyClick(window.table, Qt.Key.Key_K)
    assert window.table.currentIndex().row() == 1
    assert window.detail.current.pk == window.model.key_at(1)


def test_import_and_export_through_the_window_actions(window, qtbot, monkeypatch, tmp_path):
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(EDGE), ""))
    monkeypatch.setattr(ImportDialog, "exec", lambda self: QDialog.DialogCode.Accepted)
    window.action_import.trigger()
    qtbot.waitUntil(lambda: window.last_report is not None, timeout=30000)
    assert window.last_report.inserted == 4
    assert window.tree.current_node().collection == "edge_cases"
    assert window.model.rowCount() == 4

    out = tmp_path / "exported.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    window.action_export.trigger()
    qtbot.waitUntil(lambda: out.exists(), timeout=30000)
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(EDGE.read_text(encoding="utf-8"))
    assert window.action_import.shortcut().toString() == "Ctrl+I"
    assert window.action_export.shortcut().toString() == "Ctrl+E"


def test_import_error_is_shown_and_library_unchanged(window, qtbot, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": {"y": [{"id": "1"}]}}')
    before = [c.name for c in window.library.collections()]
    window.import_file(bad)
    qtbot.waitUntil(lambda: window.last_message is not None, timeout=30000)
    assert "sample index 0, field question: is missing" in window.last_message.text()
    assert window.last_message.textFormat() == Qt.TextFormat.PlainText
    assert [c.name for c in window.library.collections()] == before


def test_cancelled_import_changes_nothing(window, qtbot, tmp_path):
    samples = [{"id": str(i), "question": f"q{i}"} for i in range(5000)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"d": {"s": samples}}))
    task = window.import_file(path)
    task.context.cancel()
    wait_task(qtbot, task)
    assert window.library.collection_id("big") is None
    assert "cancelled" in window.statusBar().currentMessage()


def test_markup_in_data_is_shown_literally(window, qtbot):
    window.import_file(EDGE)
    qtbot.waitUntil(lambda: window.last_report is not None, timeout=30000)
    row = next(r for r in range(window.model.rowCount()) if window.model.sample_row(r).sample_id == "mq-1")
    window.table.selectRow(row)
    labels = window.detail.findChildren(QLabel)
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in labels)
    texts = window.detail.texts()
    assert any("<img src=x> & <b>bold</b>" in t for t in texts)
    assert any('<a href="file:///etc/passwd">link</a>' in t for t in texts)
    assert any("&amp;" in t for t in texts)


def test_open_library_refuses_a_foreign_file(window, tmp_path):
    foreign = tmp_path / "notes.thoughtdesk"
    foreign.write_text("not a database")
    current = window.library
    assert window.open_library(foreign) is False
    assert "not a ThoughtDesk library" in window.last_message.text()
    assert window.library is current and foreign.read_text() == "not a database"


def test_help_menu_about_and_shortcuts(window):
    window.action_about.trigger()
    assert "ThoughtDesk" in window.last_message.text() and "SQLite" in window.last_message.text()
    window.action_shortcuts.trigger()
    assert "Ctrl+F" in window.last_message.text()
    menus = [a.text() for a in window.menuBar().actions()]
    # File first, Help last; the installed views add theirs in between.
    assert menus[0] == "&File" and menus[-1] == "&Help"
    assert {"&Review", "&Generate"} <= set(menus)
