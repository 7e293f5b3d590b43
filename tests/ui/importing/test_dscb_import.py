"""File ▸ Import of a DS Critique Bank file in the real window: recognised by its content, the
import dialog, a background import, the collection shown in the tree; File ▸ Export as DSCB."""

from __future__ import annotations

import json

from tests.core.importing.test_import_skip import library_digest
from tests.helpers.paths import FIXTURES
from tests.helpers.screenshots import save_screenshot
from tests.helpers.window import imported_outcomes, last_message, message_boxes
from tests.ui.importing.test_dataset_dialog import wait_import
from thoughtdesk.core.critiques import critiques_for_cots
from thoughtdesk.core.importing.detect import classify_import_file
from thoughtdesk.ui.importing.export_dialog import ExportDialog
from thoughtdesk.ui.importing.thoughtsource_dialog import ImportDialog
from thoughtdesk.ui.importing.widgets import ImportRequest
from thoughtdesk.ui.qt import QDialog, QFileDialog

DSCB = FIXTURES / "dscb"
CROWD = DSCB / "DSCB-dev-crowd-anno.jsonl"


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def test_dscb_files_are_recognised():
    assert all(classify_import_file(p) == "dscb" for p in DSCB.glob("*.jsonl"))
    assert classify_import_file(FIXTURES / "datasets" / "gsm8k" / "test.jsonl") == "dataset"


def test_file_import_routes_a_dscb_file_and_shows_the_collection(window, qtbot, monkeypatch, tmp_path):
    reports = imported_outcomes(window)
    shown: list[ImportDialog] = []

    def accept(dialog: ImportDialog):
        shown.append(dialog)
        dialog.collection.setEditText("critiques")
        save_screenshot(dialog, tmp_path, "dscb_import_dialog")
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ImportDialog, "exec", accept)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(CROWD), ""))
    window.importing.action_import.trigger()  # File ▸ Import…: any file, routed by its content
    qtbot.waitUntil(lambda: bool(reports), timeout=60000)
    assert shown and shown[0].windowTitle() == "Import a DS Critique Bank file"
    report = reports[-1]
    assert (report.collection, report.records, report.critiques) == ("critiques", 2, 4)
    assert window.samples.tree.current_node().collection == "critiques"
    assert window.samples.model.rowCount() == 1
    cot_pks = [r[0] for r in window.library.conn.execute("SELECT id FROM generated_cot ORDER BY id DESC LIMIT 2")]
    assert sum(len(v) for v in critiques_for_cots(window.library, cot_pks).values()) == 4

    # File ▸ Export collection… as DS Critique Bank records gives the file back.
    out = tmp_path / "back.jsonl"

    def choose(dialog):
        dialog.set_format("dscb")
        dialog.path_edit.setText(str(out))
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ExportDialog, "exec", choose)
    window.importing.export_dialog()
    qtbot.waitUntil(out.exists, timeout=60000)
    assert lines(out) == lines(CROWD)


def test_submenu_entry_and_a_bad_file_leaves_the_library_unchanged(window, qtbot, monkeypatch, tmp_path):
    reports = imported_outcomes(window)
    records = lines(CROWD)
    records[0]["explanation_annotations"][0]["explanation_score"] = "five"
    bad = tmp_path / "DSCB-bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    before = library_digest(window.library.path)
    monkeypatch.setattr(ImportDialog, "exec", lambda dialog: QDialog.DialogCode.Accepted)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bad), ""))
    entry = next(a for a in window.importing.import_menu.actions() if a.text().startswith("DS Critique Bank"))
    entry.trigger()
    qtbot.waitUntil(lambda: bool(message_boxes(window)), timeout=60000)
    assert not reports
    text = last_message(window).text()
    assert f"{bad}, line 1: field explanation_annotations[0].explanation_score" in text
    assert library_digest(window.library.path) == before


def test_import_request_runs_in_the_background_with_progress(window, qtbot):
    reports = imported_outcomes(window)
    task = window.importing.import_request(ImportRequest(DSCB / "DSCB-train-silver.jsonl", "silver", dscb=True))
    wait_import(qtbot, window, task)
    assert reports[-1].records == 4 and reports[-1].inserted == 2
