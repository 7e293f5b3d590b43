"""File ▸ Import of ProcessBench and PRM800K files in the real window: recognised by content,
the import dialog, a background import, the collection shown."""

from __future__ import annotations

import pytest

from tests.helpers.paths import FIXTURES
from tests.helpers.window import imported_outcomes
from thoughtdesk.core.importing.detect import classify_import_file
from thoughtdesk.ui.importing.thoughtsource_dialog import ImportDialog
from thoughtdesk.ui.qt import QDialog, QFileDialog

STEPS = FIXTURES / "steps"


def test_step_files_are_recognised():
    assert {classify_import_file(p) for p in STEPS.iterdir()} == {"steps"}


@pytest.mark.parametrize(("name", "solutions", "labels"), [("gsm8k.json", 3, 0), ("phase2_test.jsonl", 3, 6)])
def test_file_import_routes_a_step_file(window, qtbot, monkeypatch, name, solutions, labels):
    reports = imported_outcomes(window)
    shown: list[ImportDialog] = []

    def accept(dialog: ImportDialog):
        shown.append(dialog)
        dialog.collection.setEditText("steps")
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ImportDialog, "exec", accept)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(STEPS / name), ""))
    window.importing.action_import.trigger()
    qtbot.waitUntil(lambda: bool(reports), timeout=60000)
    assert shown and shown[0].windowTitle() == "Import a ProcessBench or PRM800K file"
    report = reports[-1]
    assert (report.collection, report.solutions, report.step_labels) == ("steps", solutions, labels)
    assert window.samples.tree.current_node().collection == "steps"


def test_file_export_writes_a_prm800k_file_back(window, qtbot, tmp_path):
    import json

    from thoughtdesk.core.importing.step_files import import_step_file
    from thoughtdesk.ui.importing.export_dialog import ExportRequest

    import_step_file(window.library, STEPS / "phase2_test.jsonl", collection="prm")
    out = tmp_path / "back.jsonl"
    done: list[str] = []
    task = window.importing.export(ExportRequest("prm", out, "prm800k"), confirm=False)
    assert task is not None
    task.on_success(done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=60000)
    assert done[0].startswith("3 ")
    read = [json.loads(line) for line in (STEPS / "phase2_test.jsonl").read_text().splitlines()]
    assert [json.loads(line) for line in out.read_text().splitlines()] == read
