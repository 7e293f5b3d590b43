"""Every import dialog proposes the collection selected in the Samples tree (issue 28: they
proposed the file's or the dataset's name whatever was selected); with nothing selected, they
propose a name of their own as before."""

from __future__ import annotations

import pytest

from tests.helpers.paths import FIXTURES
from thoughtdesk.ui.importing.dataset_dialog import DatasetImportDialog
from thoughtdesk.ui.importing.mapping_dialog import MappingDialog
from thoughtdesk.ui.importing.thoughtsource_dialog import ImportDialog
from thoughtdesk.ui.qt import QDialog, QFileDialog

GSM8K = FIXTURES / "datasets" / "gsm8k" / "test.jsonl"
DSCB = FIXTURES / "dscb" / "DSCB-dev-crowd-anno.jsonl"


def _proposed(window, monkeypatch, dialog_class, open_it) -> str:
    """The collection name ``dialog_class`` shows when ``open_it`` opens it (then cancelled)."""
    seen: list[str] = []

    def cancel(dialog):
        target = getattr(dialog, "target", None)
        seen.append(target.collection_name if target is not None else dialog.collection_name)
        return QDialog.DialogCode.Rejected

    monkeypatch.setattr(dialog_class, "exec", cancel)
    open_it()
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("selected", [True, False], ids=["selected", "nothing selected"])
def test_import_dialogs_propose_the_selected_collection(window, qtbot, monkeypatch, tmp_path, selected):
    qtbot.waitUntil(lambda: window.samples.current_collection() is not None, timeout=10000)
    chosen = window.samples.current_collection()
    if not selected:
        window.samples.tree.setCurrentIndex(window.samples.tree.model().index(-1, -1))
        assert window.samples.current_collection() is None
    importing = window.importing
    ts_file = tmp_path / "my_collection.json"
    ts_file.write_text((FIXTURES / "thoughtsource" / "edge_cases.json").read_text(encoding="utf-8"), encoding="utf-8")
    table = tmp_path / "my_table.csv"
    table.write_text("question,answer\nWhat is 2+2?,4\n", encoding="utf-8")
    cases = [
        (ImportDialog, lambda: importing.import_path(ts_file), "my_collection"),
        (ImportDialog, lambda: importing.dscb_import_dialog(DSCB), DSCB.stem),
        (MappingDialog, lambda: importing.mapping_import_dialog(table), "my_table"),
        (DatasetImportDialog, lambda: importing.dataset_import_dialog(GSM8K), "gsm8k"),
    ]
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: pytest.fail("no file dialog expected"))
    for dialog_class, open_it, own_name in cases:
        proposed = _proposed(window, monkeypatch, dialog_class, open_it)
        assert proposed == (chosen if selected else own_name), dialog_class.__name__
