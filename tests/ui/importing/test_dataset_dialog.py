"""The dataset import dialog driving real imports into a real library (pytest-qt, offscreen)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import random
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog

from tests.core.importing.test_import_skip import BAD_MEDMCQA, library_digest
from tests.helpers.paths import FIXTURES
from tests.helpers.screenshots import save_screenshot
from tests.helpers.window import imported_outcomes, last_message
from thoughtdesk.core.datasets import SourceFile, get_dataset
from thoughtdesk.core.importing.detect import classify_import_file
from thoughtdesk.ui.base.tasks import running_tasks
from thoughtdesk.ui.importing.dataset_dialog import DatasetImportDialog

DATASETS = FIXTURES / "datasets"
GSM8K = DATASETS / "gsm8k"


def wait_import(qtbot, window, task):
    """Wait until the window's import task is done and its result handler has run.

    Not ``waitSignal(task.signals.finished)``: a small import can finish in the worker before
    the wait connects, and the signal would be missed. ``task.done`` is set after the result
    handlers ran.
    """
    qtbot.waitUntil(lambda: task.done, timeout=60000)


def test_detects_dataset_and_shows_metadata_as_plain_text(qtbot, tmp_path):
    dialog = DatasetImportDialog([], path=GSM8K)
    qtbot.addWidget(dialog)
    assert dialog.dataset == "gsm8k" and "Detected: gsm8k" in dialog.detected.text()
    text = dialog.metadata.toPlainText()
    info = get_dataset("gsm8k")
    for part in (info.description, info.citation, info.licence, info.homepage, info.answer_type):
        assert part in text
    assert sorted(dialog.split_boxes) == ["test", "train"]
    assert dialog.target.collection_name == "gsm8k"
    # The user overrides the detected dataset: metadata and splits follow.
    dialog.select_dataset("svamp")
    assert get_dataset("svamp").description in dialog.metadata.toPlainText()
    assert "no SVAMP files found" in dialog.files_label.text()
    assert "Detected: gsm8k" in dialog.detected.text()
    dialog.select_dataset("gsm8k")
    assert dialog.files_label.text() == "Files: train.jsonl (train), test.jsonl (test)"
    dialog.resize(760, 760)
    save_screenshot(dialog, tmp_path, "dataset_import_dialog")


def test_dialog_imports_split_n_with_seed_exact_count(window, qtbot, monkeypatch):
    reports = imported_outcomes(window)

    def configure(dialog: DatasetImportDialog):
        dialog.set_path(GSM8K)
        dialog.set_splits(["test"])
        dialog.some_radio.setChecked(True)
        dialog.limit_spin.setValue(2)
        dialog.random_radio.setChecked(True)
        dialog.seed_spin.setValue(5)
        dialog.target.collection.setEditText("math")
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(DatasetImportDialog, "exec", configure)
    entry = next(a for a in window.importing.action_import.menu().actions() if a.text().startswith("Dataset from"))
    entry.trigger()
    qtbot.waitUntil(lambda: bool(reports), timeout=60000)
    assert reports[-1].inserted == 2
    test_ids = [json.loads(line)["question"] for line in (GSM8K / "test.jsonl").read_text().splitlines()]
    chosen = sorted(random.Random(5).sample(range(len(test_ids)), 2))
    stored = window.library.conn.execute(
        "SELECT question, split FROM sample WHERE collection_id = ? ORDER BY position",
        (window.library.collection_id("math"),),
    ).fetchall()
    assert [q for q, _ in stored] == [test_ids[i] for i in chosen]
    assert {split for _, split in stored} == {"test"}
    assert window.samples.tree.current_node().collection == "math"


def test_dialog_first_n_on_the_real_file(window, qtbot, shared):
    reports = imported_outcomes(window)
    folder = shared("gsm8k")
    dialog = DatasetImportDialog([], path=folder)
    qtbot.addWidget(dialog)
    dialog.set_splits(["test"])
    dialog.some_radio.setChecked(True)
    dialog.limit_spin.setValue(25)
    request = dialog.request()
    assert request.splits == ["test"] and request.limit == 25 and request.seed is None
    wait_import(qtbot, window, window.importing.import_request(request))
    assert reports[-1].inserted == 25
    first = [json.loads(line)["question"] for line in (folder / "test.jsonl").read_text().splitlines()[:25]]
    cid = window.library.collection_id("gsm8k")
    assert [
        r[0]
        for r in window.library.conn.execute(
            "SELECT question FROM sample WHERE collection_id = ? ORDER BY position", (cid,)
        )
    ] == first


def test_skip_mode_shows_report_and_saves_it_next_to_the_library(window, qtbot, tmp_path):
    reports = imported_outcomes(window)
    dialog = DatasetImportDialog([], path=BAD_MEDMCQA)
    qtbot.addWidget(dialog)
    assert dialog.dataset == "medmc_qa"
    dialog.target.on_error.setCurrentIndex(dialog.target.on_error.findData("skip"))
    dialog.target.collection.setEditText("med")
    wait_import(qtbot, window, window.importing.import_request(dialog.request()))
    report = reports[-1]
    assert report.inserted == 3 and len(report.bad_records) == 2
    assert report.skip_log_path.parent == window.library.path.parent
    assert report.skip_log_path.name.startswith("lib.import-")
    saved = report.skip_log_path.read_text(encoding="utf-8")
    assert f"{BAD_MEDMCQA}\t2\t" in saved and f"{BAD_MEDMCQA}\t4\t" in saved
    shown = window.importing.skip_log_dialog
    qtbot.waitUntil(shown.isVisible, timeout=5000)
    assert shown.text.toPlainText() == saved
    assert "2 bad record(s) skipped" in shown.findChild(type(dialog.detected), "reportSummary").text()
    save_screenshot(shown, tmp_path, "import_report_dialog")
    shown.close()


def test_abort_mode_names_file_and_line_and_leaves_library_unchanged(window, qtbot):
    reports = imported_outcomes(window)
    before = library_digest(window.library.path)
    dialog = DatasetImportDialog([], path=BAD_MEDMCQA)
    qtbot.addWidget(dialog)
    assert dialog.target.on_error.currentData() == "abort"
    wait_import(qtbot, window, window.importing.import_request(dialog.request()))
    assert not reports
    assert f"{BAD_MEDMCQA}, line 2" in last_message(window).text()
    assert library_digest(window.library.path) == before


def test_incomplete_dialog_says_what_is_missing(qtbot):
    dialog = DatasetImportDialog([])
    qtbot.addWidget(dialog)
    dialog.try_accept()
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert "Choose a file or folder" in dialog.error_label.text()
    dialog.set_path(GSM8K)
    dialog.set_splits([])
    dialog.try_accept()
    assert "Tick at least one split" in dialog.error_label.text()


def test_routing_by_file_content():
    assert classify_import_file(DATASETS.parent / "thoughtsource" / "edge_cases.json") == "thoughtsource"
    assert classify_import_file(GSM8K / "test.jsonl") == "dataset"
    assert classify_import_file(BAD_MEDMCQA.parent.parent / "quiz.csv") == "table"


# Downloads ----------------------------------------------------------------------------------


@pytest.fixture
def file_server(tmp_path):
    root = tmp_path / "served"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _local_gsm8k(base: str, names: list[str]):
    sources = []
    for name in names:
        data = (GSM8K / name).read_bytes() if (GSM8K / name).exists() else b""
        sources.append(
            SourceFile(
                f"{base}/gsm8k/{name}", name, len(data) or None, hashlib.sha256(data).hexdigest() if data else None
            )
        )
    return replace(get_dataset("gsm8k"), sources=tuple(sources))


def test_download_then_import(window, qtbot, file_server, tmp_path):
    reports = imported_outcomes(window)
    root, base = file_server
    (root / "gsm8k").mkdir()
    for name in ("test.jsonl", "train.jsonl"):
        (root / "gsm8k" / name).write_bytes((GSM8K / name).read_bytes())
    info = _local_gsm8k(base, ["test.jsonl", "train.jsonl"])
    cache = tmp_path / "cache"
    dialog = DatasetImportDialog([], download=True, datasets=[info], cache_dir=cache)
    qtbot.addWidget(dialog)
    assert dialog.download_radio.isChecked() and not dialog.path_edit.isEnabled()
    with qtbot.waitSignal(dialog.download.finished_ok, timeout=30000):
        dialog.download.download_button.click()
    qtbot.waitUntil(lambda: dialog.download.task is None, timeout=5000)
    assert Path(dialog.path_edit.text()) == cache / "gsm8k"
    assert (cache / "gsm8k" / "test.jsonl").read_bytes() == (GSM8K / "test.jsonl").read_bytes()
    assert dialog.download.bar.value() == dialog.download.bar.maximum()
    assert sorted(dialog.split_boxes) == ["test", "train"]
    dialog.resize(760, 760)
    save_screenshot(dialog, tmp_path, "download_dialog")
    wait_import(qtbot, window, window.importing.import_request(dialog.request()))
    assert reports[-1].inserted == 5


def test_download_404_names_the_url_and_how_to_load_by_hand(qtbot, file_server, tmp_path):
    _, base = file_server
    info = _local_gsm8k(base, ["missing.jsonl"])
    dialog = DatasetImportDialog([], download=True, datasets=[info], cache_dir=tmp_path / "cache")
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.download.failed_with, timeout=30000) as failed:
        dialog.download.download_button.click()
    message = failed.args[0]
    assert f"{base}/gsm8k/missing.jsonl" in message and "HTTP 404" in message and "by hand" in message
    assert dialog.download.status.text() == message
    assert not (tmp_path / "cache" / "gsm8k" / "missing.jsonl").exists()
    assert dialog.path_edit.text() == ""
    qtbot.waitUntil(lambda: dialog.download.download_button.isEnabled(), timeout=5000)
    dialog.resize(760, 760)
    save_screenshot(dialog, tmp_path, "download_404")


def test_file_import_menu_offers_the_five_sources(window, monkeypatch, tmp_path):
    reports = imported_outcomes(window)
    menu = window.importing.action_import.menu()
    assert window.importing.action_import.shortcut().toString() == "Ctrl+I"
    texts = [a.text() for a in menu.actions()]
    assert [t.split()[0] for t in texts] == ["ThoughtSource", "Dataset", "Table", "Download", "DS"]
    opened: list[DatasetImportDialog] = []

    def capture(dialog):
        opened.append(dialog)
        return QDialog.DialogCode.Rejected

    monkeypatch.setattr(DatasetImportDialog, "exec", capture)
    menu.actions()[3].trigger()
    assert opened and opened[0].download_radio.isChecked()
    assert not reports  # rejected: nothing imported
    save_screenshot(menu, tmp_path, "import_menu")


class _SlowServer(http.server.ThreadingHTTPServer):
    """Serves one 2 MB file slowly (64 KiB every 50 ms) and records every request."""

    daemon_threads = True
    payload = bytes(range(256)) * 8192

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _SlowHandler)
        self.requests: list[str] = []


class _SlowHandler(http.server.BaseHTTPRequestHandler):
    server: _SlowServer

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        import time

        self.server.requests.append(self.path)
        data = self.server.payload
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            for start in range(0, len(data), 1 << 16):
                self.wfile.write(data[start : start + (1 << 16)])
                self.wfile.flush()
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client cancelled


@pytest.fixture
def slow_server():
    server = _SlowServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def _slow_info(server: _SlowServer):
    data = _SlowServer.payload
    url = f"http://127.0.0.1:{server.server_address[1]}/gsm8k/test.jsonl"
    return replace(
        get_dataset("gsm8k"), sources=(SourceFile(url, "test.jsonl", len(data), hashlib.sha256(data).hexdigest()),)
    )


def test_no_download_until_the_user_clicks(qtbot, slow_server, tmp_path):
    before = running_tasks()
    info = _slow_info(slow_server)
    other = replace(get_dataset("svamp"), sources=info.sources)
    dialog = DatasetImportDialog([], download=True, datasets=[info, other], cache_dir=tmp_path / "cache")
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.select_dataset("svamp")
    dialog.select_dataset("gsm8k")
    dialog.local_radio.setChecked(True)
    dialog.download_radio.setChecked(True)
    # A download is a task the download panel starts (the dialog has no timers): none was started.
    assert dialog.download.task is None and running_tasks() <= before
    assert slow_server.requests == [] and not (tmp_path / "cache").exists()


def test_cancel_a_download_in_the_dialog(qtbot, slow_server, tmp_path):
    dialog = DatasetImportDialog([], download=True, datasets=[_slow_info(slow_server)], cache_dir=tmp_path / "cache")
    qtbot.addWidget(dialog)
    panel = dialog.download
    panel.download_button.click()
    assert panel.cancel_button.isEnabled() and not panel.download_button.isEnabled()
    qtbot.waitUntil(lambda: panel.bar.maximum() > 1 and panel.bar.value() > 0, timeout=10000)
    assert "MiB" in panel.bar.text()  # progress shown in the bar as it grows
    with qtbot.waitSignal(panel.failed_with, timeout=10000) as failed:
        panel.cancel_button.click()
    assert "cancelled" in failed.args[0] and "resume" in failed.args[0]
    qtbot.waitUntil(lambda: panel.task is None, timeout=5000)
    folder = tmp_path / "cache" / "gsm8k"
    assert not (folder / "test.jsonl").exists()  # nothing that looks complete
    part = folder / "test.jsonl.part"
    assert part.exists() and 0 < part.stat().st_size < len(_SlowServer.payload)
    assert dialog.path_edit.text() == "" and panel.download_button.isEnabled()


def test_cancelled_dataset_import_in_the_window_changes_nothing(window, qtbot, shared):
    reports = imported_outcomes(window)
    before = library_digest(window.library.path)
    dialog = DatasetImportDialog([], path=shared("medmcqa"))
    qtbot.addWidget(dialog)
    assert dialog.dataset == "medmc_qa"
    task = window.importing.import_request(dialog.request())
    from PySide6.QtWidgets import QProgressDialog, QPushButton

    progress = window.findChild(QProgressDialog, "progressDialog")
    progress.findChild(QPushButton).click()  # the progress dialog's Cancel button
    wait_import(qtbot, window, task)
    assert not reports and window.library.collection_id("medmc_qa") is None
    assert "cancelled" in window.statusBar().currentMessage()
    assert library_digest(window.library.path) == before


def test_exporting_onto_the_open_library_is_refused_in_the_window(window, qtbot):
    """Issue 15, point 1, in the GUI: the save dialog's own overwrite question is not enough."""
    library_path = window.library.path
    collections = [c.name for c in window.library.collections()]
    before = library_path.read_bytes()
    assert window.importing.export_collection(collections[0], library_path) is None
    assert "open library" in last_message(window).text()
    assert library_path.read_bytes() == before


def test_import_button_is_enabled_only_for_a_valid_choice(qtbot, tmp_path):
    """Issue 16, point 9: the Import button waits for a choice that can be imported, and its
    tooltip says what is missing."""
    dialog = DatasetImportDialog([])
    qtbot.addWidget(dialog)
    assert not dialog.import_button.isEnabled()
    assert "Choose a file or folder" in dialog.import_button.toolTip()
    dialog.set_path(tmp_path / "nothing-here.jsonl")
    assert not dialog.import_button.isEnabled()
    dialog.set_path(GSM8K)
    assert dialog.import_button.isEnabled(), dialog.problem()
    dialog.set_splits([])
    assert not dialog.import_button.isEnabled()
    assert "Tick at least one split" in dialog.import_button.toolTip()
    dialog.set_splits(["test"])
    assert dialog.import_button.isEnabled()
    dialog.target.collection.setEditText("  ")
    assert not dialog.import_button.isEnabled()
    dialog.target.collection.setEditText("maths")
    dialog.select_dataset("pubmed_qa")  # GSM8K's files are not PubMedQA's
    assert not dialog.import_button.isEnabled()
    assert dialog.files_label.text() and dialog.import_button.toolTip() == dialog.files_label.text()


def test_a_picture_is_refused_with_one_message(window, tmp_path):
    picture = tmp_path / "scan.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    window.importing.import_path(picture)
    assert "not a file ThoughtDesk can import (it is a PNG image)" in last_message(window).text()
    assert classify_import_file(picture) == "unknown"
