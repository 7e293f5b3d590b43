"""File ▸ Export collection in every format of ``thoughtdesk export`` (issue 16, point 16, in the
GUI): a real library, real files, the export in a background task (pytest-qt, offscreen)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.core.importing.test_flat_export import EDGE
from tests.helpers.screenshots import save_screenshot
from tests.helpers.window import imported_outcomes, last_message, message_boxes
from tests.ui.app.test_fits_laptop import assert_fits, at_laptop_size
from thoughtdesk.core.importing.flat_export import ChatFilter, export_flat
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.importing.export_dialog import EXPORT_FORMATS, ExportDialog, ExportRequest, parse_labels
from thoughtdesk.ui.importing.mapping_dialog import MappingDialog
from thoughtdesk.ui.qt import QDialog, QFileDialog, QMessageBox, QRunnable, QStandardItemModel, QThreadPool


@pytest.fixture
def window_library(tmp_path: Path) -> Path:
    """A library holding the edge-case collection (CoTs, answers, a preferred annotation)."""
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib:
        import_thoughtsource(lib, EDGE, collection="edge")
    return path


def choose(monkeypatch, fmt: str, path: Path, **chat) -> list[ExportDialog]:
    """Make the export dialog answer with ``fmt`` and ``path`` (and chat filters) when opened."""
    shown: list[ExportDialog] = []

    def accept(dialog: ExportDialog) -> QDialog.DialogCode:
        shown.append(dialog)
        dialog.set_format(fmt)
        dialog.path_edit.setText(str(path))
        dialog.correct_only.setChecked(chat.get("correct_only", False))
        dialog.preferred_only.setChecked(chat.get("preferred_only", False))
        dialog.labels.setText(chat.get("labels", ""))
        dialog.system.setPlainText(chat.get("system", ""))
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ExportDialog, "exec", accept)
    return shown


def export_through_the_dialog(window, qtbot, monkeypatch, fmt: str, path: Path, **chat) -> str:
    """Export the current collection as ``fmt`` to ``path``; return the status message."""
    choose(monkeypatch, fmt, path, **chat)
    task = window.importing.export_dialog()
    assert task is not None
    qtbot.waitUntil(lambda: task.done, timeout=60000)
    return window.statusBar().currentMessage()


@pytest.mark.parametrize("fmt", ["samples-jsonl", "samples-csv", "answers-csv", "parquet"])
def test_each_format_writes_what_the_cli_writes(window, qtbot, monkeypatch, tmp_path, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="Parquet is optional (the parquet extra)")
    assert window.samples.current_collection() == "edge"
    out, expected = tmp_path / f"gui.{fmt}", tmp_path / f"core.{fmt}"
    message = export_through_the_dialog(window, qtbot, monkeypatch, fmt, out)
    count = export_flat(window.library, "edge", expected, fmt)
    assert message.startswith(f"{count} ") and f"of 'edge' written to {out}" in message
    if fmt == "parquet":
        import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]  # optional, and untyped when installed

        assert pq.read_table(out).equals(pq.read_table(expected))
    else:
        assert out.read_bytes() == expected.read_bytes()


def test_chat_jsonl_with_its_filters_and_system_text(window, qtbot, monkeypatch, tmp_path):
    out = tmp_path / "train.jsonl"
    message = export_through_the_dialog(
        window, qtbot, monkeypatch, "chat-jsonl", out, preferred_only=True, system="You are a careful clinician."
    )
    examples = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = tmp_path / "expected.jsonl"
    count = export_flat(
        window.library,
        "edge",
        expected,
        "chat-jsonl",
        filters=ChatFilter(preferred_only=True),
        system="You are a careful clinician.",
    )
    assert 0 < len(examples) == count < 3  # the filter kept some CoTs, not all three
    assert message.startswith(f"{count} chat example(s)")
    assert out.read_bytes() == expected.read_bytes()
    assert all(e["messages"][0] == {"role": "system", "content": "You are a careful clinician."} for e in examples)


def test_the_dialog_fits_the_laptop_and_enables_the_chat_filters_for_chat_only(window, qtbot, tmp_path):
    dialog = ExportDialog("edge", window, folder=tmp_path)
    qtbot.addWidget(dialog)
    assert [dialog.format_combo.itemData(i) for i in range(dialog.format_combo.count())] == [
        f.key for f in EXPORT_FORMATS
    ]
    assert dialog.path_edit.text() == str(tmp_path / "edge.json") and not dialog.chat.isEnabled()
    dialog.set_format("chat-jsonl")
    assert dialog.chat.isEnabled() and dialog.path_edit.text() == str(tmp_path / "edge.jsonl")
    dialog.labels.setText("faithful, reviewed faithful")
    dialog.correct_only.setChecked(True)
    request = dialog.request()
    assert request.filters == ChatFilter(correct_only=True, labels=("faithful", "reviewed"))
    assert request.system is None
    dialog.set_format("answers-csv")  # the filters apply to chat JSONL only
    assert not dialog.chat.isEnabled() and dialog.request().filters == ChatFilter()
    assert dialog.path_edit.text() == str(tmp_path / "edge.csv")
    dialog.path_edit.clear()
    assert not dialog.buttons.buttons()[0].isEnabled()  # Export needs a file name
    dialog.set_format("chat-jsonl")
    dialog.path_edit.setText(str(tmp_path / "edge.jsonl"))
    assert_fits(dialog, "File > Export collection")
    dialog.show()
    qtbot.wait(50)
    assert dialog.width() <= 1366 and dialog.height() <= 690
    save_screenshot(dialog, tmp_path, "export-dialog")
    at_laptop_size(qtbot, dialog, tmp_path, "export-dialog-laptop")


def test_labels_are_split_at_commas_and_spaces():
    assert parse_labels(" faithful,reviewed  faithful ,, ") == ("faithful", "reviewed")


def test_the_open_library_is_never_overwritten(window, qtbot, monkeypatch, tmp_path):
    library_path = window.library.path
    before = library_path.read_bytes()
    choose(monkeypatch, "samples-csv", library_path)
    assert window.importing.export_dialog() is None
    assert "open library" in last_message(window).text()
    assert library_path.read_bytes() == before


@pytest.mark.parametrize("answer", [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes])
def test_a_file_that_is_no_export_is_replaced_only_when_the_user_says_so(window, qtbot, monkeypatch, tmp_path, answer):
    notes = tmp_path / "notes.csv"
    notes.write_text("name,dose\nmetformin,500\n", encoding="utf-8")
    asked: list[str] = []

    def question(parent, title, text, *args):
        asked.append(text)
        return answer

    monkeypatch.setattr(QMessageBox, "question", question)
    choose(monkeypatch, "samples-csv", notes)
    task = window.importing.export_dialog()
    assert asked and "is not an earlier ThoughtDesk export" in asked[0]
    if answer == QMessageBox.StandardButton.No:
        assert task is None and notes.read_text(encoding="utf-8") == "name,dose\nmetformin,500\n"
        return
    qtbot.waitUntil(lambda: task.done, timeout=60000)
    assert notes.read_text(encoding="utf-8").startswith("dataset,split,sample_id,")
    # Exporting there again asks too, now naming it an earlier export.
    asked.clear()
    choose(monkeypatch, "samples-csv", notes)
    task = window.importing.export_dialog()
    assert asked and "(an earlier export)" in asked[0]
    qtbot.waitUntil(lambda: task.done, timeout=60000)


class Blocker(QRunnable):
    """Holds the thread pool's only thread until released, so a task queued behind it starts
    after the test cancelled it (a small export would otherwise finish first)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def run(self) -> None:
        self.release.wait(30)


@pytest.mark.parametrize("fmt", ["thoughtsource", "chat-jsonl"])
def test_cancel_leaves_no_file(window, qtbot, tmp_path, fmt):
    pool = QThreadPool.globalInstance()
    threads = pool.maxThreadCount()
    blocker = Blocker()
    blocker.setAutoDelete(False)
    pool.setMaxThreadCount(1)
    try:
        pool.start(blocker)
        out = tmp_path / "cancelled.jsonl"
        task = window.importing.export(ExportRequest("edge", out, fmt))
        assert task is not None
        task.cancel()  # what the progress dialog's Cancel button does
        blocker.release.set()
        qtbot.waitUntil(lambda: task.done, timeout=60000)
    finally:
        blocker.release.set()
        pool.waitForDone(30000)
        pool.setMaxThreadCount(threads)
    assert "export cancelled" in window.statusBar().currentMessage()
    assert list(tmp_path.glob("cancelled*")) == []


def test_a_parquet_export_imports_back_through_file_import(window, qtbot, monkeypatch, tmp_path):
    """Parquet both ways in the GUI: File ▸ Import… routes a .parquet file to the mapping
    dialog, whose columns and preview come from the Parquet table."""
    pytest.importorskip("pyarrow", reason="Parquet is optional (the parquet extra)")
    out = tmp_path / "edge.parquet"
    export_through_the_dialog(window, qtbot, monkeypatch, "parquet", out)
    reports = imported_outcomes(window)
    seen: list[MappingDialog] = []

    def accept(dialog: MappingDialog) -> QDialog.DialogCode:
        seen.append(dialog)
        assert dialog.columns[:4] == ["dataset", "split", "sample_id", "question"]
        dialog.set_field("answer", "reference_answer")
        dialog.set_field("cot", "reference_cot")
        dialog.set_field("id", None)
        dialog.choices.setCurrentText("")  # the choices column is one text; free-text import
        dialog.answer_type.setCurrentText("text")
        dialog.target.collection.setEditText("from parquet")
        dialog.refresh_preview()
        assert dialog.problem() is None, dialog.problem()
        assert "<img src=x>" in dialog.preview_texts()[0][3]  # the question, shown as the text it is
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(MappingDialog, "exec", accept)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(out), ""))
    window.importing.action_import.trigger()
    qtbot.waitUntil(lambda: bool(reports) or bool(message_boxes(window)), timeout=60000)
    assert not message_boxes(window), last_message(window).text()
    assert seen and reports[-1].inserted == 5 and reports[-1].collection == "from parquet"


def test_the_dialog_opens_in_the_last_folder_and_format(window, qtbot, monkeypatch, tmp_path):
    folder = tmp_path / "exports"
    folder.mkdir()
    export_through_the_dialog(window, qtbot, monkeypatch, "answers-csv", folder / "answers.csv")
    opened: list[tuple[str, str]] = []

    def look(dialog: ExportDialog) -> QDialog.DialogCode:
        opened.append((dialog.fmt.key, dialog.path_edit.text()))
        return QDialog.DialogCode.Rejected

    monkeypatch.setattr(ExportDialog, "exec", look)
    assert window.importing.export_dialog() is None
    assert opened == [("answers-csv", str(folder / "edge.csv"))]


def test_without_pyarrow_parquet_is_offered_disabled_with_what_to_install(qtbot, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a))
    dialog = ExportDialog("edge")
    qtbot.addWidget(dialog)
    formats = dialog.format_combo.model()
    assert isinstance(formats, QStandardItemModel)
    item = formats.item(dialog.format_combo.findData("parquet"))
    assert not item.isEnabled() and "pip install 'thoughtdesk[parquet]'" in item.toolTip()
    assert formats.item(dialog.format_combo.findData("samples-csv")).isEnabled()


@pytest.mark.parametrize("fmt", ["samples-csv", "parquet"])
def test_a_folder_that_is_gone_is_a_one_line_message(window, qtbot, monkeypatch, tmp_path, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="Parquet is optional (the parquet extra)")
    target = tmp_path / "unplugged-drive" / f"out.{fmt}"
    choose(monkeypatch, fmt, target)
    task = window.importing.export_dialog()
    assert task is None  # said before anything is started
    text = last_message(window).text()
    # Audit of issue 16: it said "Free some space or choose another folder" for a missing folder.
    assert text.startswith(f"the folder {target.parent} does not exist") and "create the folder first" in text
    assert "space" not in text and "Traceback" not in text and "\n" not in text
    assert not target.parent.exists()


def test_a_thoughtsource_export_names_its_side_file(window, qtbot, monkeypatch, tmp_path):
    # The edge collection has keys outside ThoughtSource's schema: they go to a side file the
    # user must keep beside the export, so the message names it, as the command line does.
    out = tmp_path / "edge.json"
    message = export_through_the_dialog(window, qtbot, monkeypatch, "thoughtsource", out)
    assert (tmp_path / "edge.thoughtdesk-extras.jsonl").is_file()
    assert "in edge.thoughtdesk-extras.jsonl beside it" in message and f"written to {out}" in message
