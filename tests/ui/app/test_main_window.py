"""The main window, driven as a user drives it (pytest-qt, offscreen, a real library file)."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel

from tests.helpers.paths import FIXTURES
from tests.helpers.window import last_message
from thoughtdesk.core.datasets.ts_extras import load_with_extras
from thoughtdesk.ui.app.about import AboutDialog
from thoughtdesk.ui.app.shortcuts import ShortcutsDialog
from thoughtdesk.ui.importing.export_dialog import ExportDialog
from thoughtdesk.ui.importing.thoughtsource_dialog import ImportDialog
from thoughtdesk.ui.qt import QFileDialog

EDGE = FIXTURES / "thoughtsource" / "edge_cases.json"


def wait_task(qtbot, task):
    qtbot.waitUntil(lambda: task.done, timeout=30000)


def test_window_opens_on_a_new_library_with_the_demo(window):
    assert window.windowTitle() == "ThoughtDesk — lib.thoughtdesk"
    root = window.samples.tree.model_.invisibleRootItem()
    assert root.child(0, 0).text() == "Demo"
    assert window.samples.model.rowCount() >= 12
    assert window.samples.count_label.text().endswith("samples")
    assert window.samples.detail.current is not None  # the first row is selected and shown


def test_selecting_a_row_shows_its_details(window, qtbot):
    row = next(
        r
        for r in range(window.samples.model.rowCount())
        if window.samples.model.sample_row(r).type == "multiplechoice"
        and window.samples.model.sample_row(r).dataset == "med_qa"
    )
    window.samples.table.selectRow(row)
    stored = window.samples.detail.current
    sample = stored.sample
    texts = window.samples.detail.texts()
    assert sample.question in texts
    gold = sample.answer[0]
    gold_labels = [label for label in window.samples.detail.findChildren(QLabel, "choice") if label.property("gold")]
    assert len(gold_labels) == 1 and gold in gold_labels[0].text() and gold_labels[0].text().startswith("✓")
    assert len(window.samples.detail.findChildren(QLabel, "referenceStep")) == len(sample.cot)
    cards = window.samples.detail.findChildren(QLabel, "cotModel")
    assert len(cards) == len(sample.generated_cot) >= 2
    answers = [label.text() for label in window.samples.detail.findChildren(QLabel, "cotAnswer")]
    assert any("correct" in a for a in answers)


def test_search_narrows_the_table(window, qtbot):
    import re

    from thoughtdesk.core.library.reader import load_sample

    def words(pk):
        stored = load_sample(window.library, pk)
        assert stored is not None
        sample = stored.sample
        reference = " ".join(step for step in sample.cot or [] if isinstance(step, str))
        generated = " ".join(cot.cot or "" for cot in sample.generated_cot)
        return [w.lower() for w in re.findall(r"\w+", f"{sample.question} {reference} {generated}")]

    total = window.samples.model.rowCount()
    every_sample = {
        window.samples.model.sample_row(r).sample_id: words(window.samples.model.sample_row(r).pk) for r in range(total)
    }
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.samples.search.hasFocus()
    # "thyroid" is in one question (and its CoTs); in the demo, "together" is only in reference
    # CoTs and "reserved" only in generated ones: the search covers all three.
    for term, known_match in [
        ("thyroid", "med_qa_demo_test_2"),
        ("together", "gsm8k_demo_test_1"),
        ("reserved", "med_qa_demo_test_4"),
    ]:
        window.samples.search.clear()
        qtbot.keyClicks(window.samples.search, term)
        # the search runs 150 ms after the last key: wait for the whole word, not a prefix of it
        qtbot.waitUntil(lambda term=term: window.samples.model.sample_filter.search == term, timeout=10000)
        found = {window.samples.model.sample_row(r).sample_id for r in range(window.samples.model.rowCount())}
        # as FTS5 matches the last word typed: a word that begins with it, in any case
        expected = {sid for sid, ws in every_sample.items() if any(w.startswith(term) for w in ws)}
        assert found == expected, term
        assert known_match in found and "gsm8k_demo_test_2" not in found, (term, found)
        assert 1 <= len(found) < total
        assert window.samples.count_label.text() == f"{len(found)} sample{'s' if len(found) != 1 else ''}"
    window.samples.search.clear()
    qtbot.waitUntil(lambda: window.samples.model.rowCount() == total, timeout=10000)


def test_filters_narrow_the_table(window, qtbot):
    total = window.samples.model.rowCount()
    window.samples.type_filter.setCurrentIndex(window.samples.type_filter.findData("number"))
    n_number = window.samples.model.rowCount()
    assert 0 < n_number < total
    assert all(window.samples.model.sample_row(r).type == "number" for r in range(n_number))
    window.samples.type_filter.setCurrentIndex(0)
    from thoughtdesk.core.library.queries import Correctness

    window.samples.correct_filter.setCurrentIndex(
        window.samples.correct_filter.findData(Correctness.HAS_INCORRECT.value)
    )
    rows = [window.samples.model.sample_row(r) for r in range(window.samples.model.rowCount())]
    assert rows and all(r.n_correct < r.n_answers for r in rows)
    window.samples.cots_filter.setCurrentIndex(window.samples.cots_filter.findData(False))
    assert window.samples.model.rowCount() == 0  # every demo sample has CoTs


def test_sorting_by_a_column(window):
    window.samples.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
    counts = [window.samples.model.sample_row(r).n_cots for r in range(window.samples.model.rowCount())]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]


def test_j_k_and_arrows_move_through_samples(window, qtbot):
    window.samples.table.setFocus()
    window.samples.table.selectRow(0)
    qtbot.keyClick(window.samples.table, Qt.Key.Key_J)
    assert window.samples.table.currentIndex().row() == 1
    qtbot.keyClick(window.samples.table, Qt.Key.Key_Down)
    assert window.samples.table.currentIndex().row() == 2
    qtbot.keyClick(window.samples.table, Qt.Key.Key_K)
    assert window.samples.table.currentIndex().row() == 1
    assert window.samples.detail.current.pk == window.samples.model.key_at(1)


def test_import_and_export_through_the_window_actions(window, qtbot, monkeypatch, tmp_path):
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(EDGE), ""))

    def new_collection(dialog: ImportDialog) -> QDialog.DialogCode:
        # The dialog proposes the collection selected in the tree (Demo); the file gets its own.
        assert dialog.collection_name == window.samples.current_collection() == "Demo"
        dialog.collection.setEditText("edge_cases")
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ImportDialog, "exec", new_collection)
    with qtbot.waitSignal(window.importing.imported, timeout=30000) as imported:
        window.importing.action_import.trigger()
    assert imported.args[0].inserted == 4
    assert window.samples.tree.current_node().collection == "edge_cases"
    assert window.samples.model.rowCount() == 4

    out = tmp_path / "exported.json"

    def choose(dialog):  # File ▸ Export collection…'s dialog: ThoughtSource JSON into ``out``
        dialog.set_format("thoughtsource")
        dialog.path_edit.setText(str(out))
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ExportDialog, "exec", choose)
    window.importing.action_export.trigger()
    qtbot.waitUntil(lambda: out.exists(), timeout=30000)
    assert load_with_extras(out) == json.loads(EDGE.read_text(encoding="utf-8"))  # + its side file
    assert window.importing.action_import.shortcut().toString() == "Ctrl+I"
    assert window.importing.action_export.shortcut().toString() == "Ctrl+E"


def test_import_error_is_shown_and_library_unchanged(window, qtbot, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": {"y": [{"id": "1"}]}}')
    before = [c.name for c in window.library.collections()]
    wait_task(qtbot, window.importing.import_file(bad))
    box = last_message(window)
    assert box.isVisible() and "sample index 0, field question: is missing" in box.text()
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert [c.name for c in window.library.collections()] == before


def test_cancelled_import_changes_nothing(window, qtbot, tmp_path):
    samples = [{"id": str(i), "question": f"q{i}"} for i in range(5000)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"d": {"s": samples}}))
    task = window.importing.import_file(path)
    task.context.cancel()
    wait_task(qtbot, task)
    assert window.library.collection_id("big") is None
    assert "cancelled" in window.statusBar().currentMessage()


def test_markup_in_data_is_shown_literally(window, qtbot):
    with qtbot.waitSignal(window.importing.imported, timeout=30000):
        window.importing.import_file(EDGE)
    row = next(
        r for r in range(window.samples.model.rowCount()) if window.samples.model.sample_row(r).sample_id == "mq-1"
    )
    window.samples.table.selectRow(row)
    labels = window.samples.detail.findChildren(QLabel)
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in labels)
    texts = window.samples.detail.texts()
    assert any("<img src=x> & <b>bold</b>" in t for t in texts)
    assert any('<a href="file:///etc/passwd">link</a>' in t for t in texts)
    assert any("&amp;" in t for t in texts)


def test_open_library_refuses_a_foreign_file(window, tmp_path):
    foreign = tmp_path / "notes.thoughtdesk"
    foreign.write_text("not a database")
    current = window.library
    assert window.open_library(foreign) is False
    assert "not a ThoughtDesk library" in last_message(window).text()
    assert window.library is current and foreign.read_text() == "not a database"


def test_help_menu_about_and_shortcuts(window):
    window.action_about.trigger()
    about = window.findChildren(AboutDialog)[-1]
    assert about.isVisible() and "ThoughtDesk" in about.text() and "SQLite" in about.text()
    window.action_shortcuts.trigger()
    sheet = window.findChildren(ShortcutsDialog)[-1]
    assert sheet.isVisible() and ("Ctrl+F", "search the samples") in sheet.rows()
    menus = [a.text() for a in window.menuBar().actions()]
    # File first, Help last; the installed views add theirs in between.
    assert menus[0] == "&File" and menus[-1] == "&Help"
    assert {"&Review", "&Generate"} <= set(menus)
