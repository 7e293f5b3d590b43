"""File ▸ Import of a reasoning-trace file in the real window (issue 24, point 5): recognised by
its first record, the import dialog, a background import whose CoTs keep their thinking apart."""

from __future__ import annotations

from tests.helpers.paths import FIXTURES
from tests.helpers.window import imported_outcomes
from thoughtdesk.core.importing.detect import classify_import_file, options_needed
from thoughtdesk.ui.importing.thoughtsource_dialog import ImportDialog
from thoughtdesk.ui.qt import QDialog, QFileDialog

TRACES = FIXTURES / "reasoning"


def test_trace_files_are_recognised_and_need_no_option():
    for name in ("r1_chat.jsonl", "openthoughts.jsonl", "s1k.jsonl", "openthoughts_metadata.jsonl"):
        assert classify_import_file(TRACES / name) == "traces", name
        assert options_needed(TRACES / name) is None
    assert classify_import_file(FIXTURES / "datasets" / "gsm8k" / "test.jsonl") == "dataset"


def test_file_import_routes_a_trace_file_and_keeps_the_thinking(window, qtbot, monkeypatch):
    reports = imported_outcomes(window)
    shown: list[ImportDialog] = []

    def accept(dialog: ImportDialog):
        shown.append(dialog)
        dialog.collection.setEditText("distilled")
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ImportDialog, "exec", accept)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(TRACES / "r1_chat.jsonl"), ""))
    window.importing.action_import.trigger()
    qtbot.waitUntil(lambda: bool(reports), timeout=60000)
    assert shown and shown[0].windowTitle() == "Import reasoning traces"
    assert (reports[-1].collection, reports[-1].inserted) == ("distilled", 3)
    assert window.samples.tree.current_node().collection == "distilled"
    rows = window.library.conn.execute(
        "SELECT c.reasoning, c.cot FROM generated_cot c JOIN sample s ON s.id = c.sample_pk "
        "JOIN collection k ON k.id = s.collection_id WHERE k.name = 'distilled' ORDER BY c.id"
    ).fetchall()
    assert rows[0] == ("7 * 8 = 56. Wait, let me check: 7 * 8 = 56.", "The answer is 56.")
    assert rows[2] == ("9.80 > 9.11.", "9.8 is larger.")
