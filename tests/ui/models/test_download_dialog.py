"""Edit ▸ Models… ▸ Download…: the curated list, a download from a real server on 127.0.0.1 whose
first transfer is cut (resumed with Range), progress with speed and time left, Stop keeping the
partial file, a resume, deleting a partial file, a wrong checksum and offline mode in one line."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.helpers.file_server import Served, file_server
from tests.helpers.gguf_files import write_tiny_gguf
from tests.helpers.widgets import cell
from thoughtdesk.core.models import ModelRegistry
from thoughtdesk.core.models.catalog import CATALOG
from thoughtdesk.core.models.download import TransferRate, describe_progress
from thoughtdesk.core.settings.network import set_offline
from thoughtdesk.ui.models import ModelsDialog
from thoughtdesk.ui.models.download_dialog import DownloadDialog
from thoughtdesk.ui.qt import Qt
from thoughtdesk.ui.widgets.sizing import LAPTOP_CLIENT


@pytest.fixture
def registry(tmp_path: Path) -> ModelRegistry:
    return ModelRegistry(tmp_path / "models.json", tmp_path / "models")


def _dialog(qtbot, registry: ModelRegistry) -> DownloadDialog:
    dialog = DownloadDialog(registry=registry)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def _idle(qtbot, dialog: DownloadDialog) -> None:
    qtbot.waitUntil(lambda: dialog.task is None, timeout=60000)


def test_the_curated_list_is_shown_and_nothing_downloads_unasked(qtbot, registry: ModelRegistry):
    dialog = _dialog(qtbot, registry)
    names = [cell(dialog.table, row, 0).text() for row in range(dialog.table.rowCount())]
    assert names == [model.title for model in CATALOG]
    assert any("Digital Socrates 7B" in n for n in names) and any("Qwen3" in n for n in names)
    assert any("Llama 3.1 8B" in n for n in names) and any("Gemma 3" in n for n in names)
    assert cell(dialog.table, 0, 1).text().endswith(" GB") and cell(dialog.table, 0, 2).text()
    assert dialog.task is None and not registry.models_dir.exists()
    dialog.table.selectRow(2)
    assert dialog.url.text() == CATALOG[2].url and dialog.name.text() == CATALOG[2].name
    assert dialog.task is None and not registry.models_dir.exists()  # choosing is not asking
    size = dialog.minimumSizeHint().expandedTo(dialog.minimumSize())
    assert size.width() <= LAPTOP_CLIENT.width() and size.height() <= LAPTOP_CLIENT.height()


def test_a_cut_download_resumes_shows_progress_and_registers(qtbot, registry: ModelRegistry, gguf_model: Path):
    size = gguf_model.stat().st_size
    digest = hashlib.sha256(gguf_model.read_bytes()).hexdigest()
    with file_server() as server:
        server.files["/m/gemma.gguf"] = Served(gguf_model, cut_after=size // 3)
        dialog = _dialog(qtbot, registry)
        dialog.url.setText(server.url("/m/gemma.gguf"))
        dialog.name.setText("gemma")
        dialog.sha256.setText(digest)
        with qtbot.waitSignal(dialog.registered, timeout=60000) as registered:
            qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
            assert dialog.cancel_button.isEnabled() and not dialog.download_button.isEnabled()
        _idle(qtbot, dialog)
    assert registered.args == ["gemma"]
    assert server.requests == [("/m/gemma.gguf", None), ("/m/gemma.gguf", f"bytes={size // 3}-")]
    assert dialog.progress.value() == dialog.progress.maximum()
    assert dialog.rate.text().endswith("MB/s on average)") and f"{size / 1e6:.1f} MB in " in dialog.rate.text()
    assert dialog.message.text().startswith("Downloaded and registered gemma (checksum verified)")
    assert [entry.name for entry in registry.entries()] == ["gemma"]
    assert not list(registry.models_dir.glob("*.part")) and dialog.delete_partial_button.isHidden()


def test_stop_keeps_the_partial_then_download_resumes_it(qtbot, registry: ModelRegistry, gguf_model: Path):
    size = gguf_model.stat().st_size
    held = 4 << 20
    with file_server() as server:
        served = Served(gguf_model, hold_after=held)
        server.files["/gemma.gguf"] = served
        dialog = _dialog(qtbot, registry)
        dialog.url.setText(server.url("/gemma.gguf"))
        dialog.start()
        part = registry.models_dir / "gemma.gguf.part"
        qtbot.waitUntil(lambda: part.exists() and part.stat().st_size >= held, timeout=30000)
        qtbot.waitUntil(lambda: " left" in dialog.rate.text(), timeout=30000)  # speed and time left shown
        assert f"of {size / 1e6:.1f} MB · " in dialog.rate.text() and " MB/s · " in dialog.rate.text()
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
        served.release.set()  # the worker sees the stop at its next block
        _idle(qtbot, dialog)
        text = dialog.message.text()
        assert text.startswith("Download stopped; ") and "kept for a resume" in text and "\n" not in text
        assert registry.entries() == [] and part.exists()
        kept = part.stat().st_size
        assert dialog.delete_partial_button.isVisible() and dialog.download_button.text() == "Resume &download"
        dialog.start()
        _idle(qtbot, dialog)
    assert server.requests[-1] == ("/gemma.gguf", f"bytes={kept}-")
    assert [entry.name for entry in registry.entries()] == ["gemma"] and registry.entries()[0].size == size
    assert not part.exists()


def test_a_partial_file_can_be_deleted_instead(qtbot, registry: ModelRegistry, tmp_path: Path):
    registry.models_dir.mkdir(parents=True)
    part = registry.models_dir / "tiny.gguf.part"
    part.write_bytes(write_tiny_gguf(tmp_path / "tiny.gguf").read_bytes()[:100])
    dialog = _dialog(qtbot, registry)
    dialog.url.setText("http://127.0.0.1:9/tiny.gguf")
    assert dialog.delete_partial_button.isVisible() and "0.0 MB" in dialog.delete_partial_button.text()
    qtbot.mouseClick(dialog.delete_partial_button, Qt.MouseButton.LeftButton)
    assert not part.exists() and dialog.message.text() == f"Deleted the partial download {part}"
    assert dialog.delete_partial_button.isHidden() and dialog.download_button.text() == "&Download"


def test_a_wrong_checksum_and_offline_mode_are_one_line(qtbot, registry: ModelRegistry, tmp_path: Path):
    model = write_tiny_gguf(tmp_path / "tiny.gguf")
    dialog = _dialog(qtbot, registry)
    with file_server() as server:
        server.files["/tiny.gguf"] = Served(model)
        dialog.url.setText(server.url("/tiny.gguf"))
        dialog.sha256.setText("0" * 64)
        dialog.start()
        _idle(qtbot, dialog)
    assert "checksum mismatch" in dialog.message.text() and "nothing was registered" in dialog.message.text()
    assert "\n" not in dialog.message.text() and registry.entries() == []
    dialog.sha256.clear()
    dialog.table.selectRow(0)
    set_offline(True)
    try:
        dialog.start()
        _idle(qtbot, dialog)
    finally:
        set_offline(False)
    text = dialog.message.text()
    assert text.startswith("offline mode is on: the download of model digital-socrates-7b needs the network")
    assert "\n" not in text and registry.entries() == []


def test_the_models_dialog_opens_it_and_shows_what_it_registered(qtbot, registry: ModelRegistry, tmp_path: Path):
    model = write_tiny_gguf(tmp_path / "tiny.gguf")
    models = ModelsDialog(registry=registry)
    qtbot.addWidget(models)
    models.show()
    dialog = models.open_download()
    with file_server() as server:
        server.files["/tiny.gguf"] = Served(model)
        dialog.url.setText(server.url("/tiny.gguf"))
        dialog.start()
        _idle(qtbot, dialog)
    assert [entry.name for entry, _, _ in models.model.rows] == ["tiny"]
    selected = models.selected()
    assert selected is not None and selected.name == "tiny"
    dialog.close()


def test_speed_and_time_left_from_given_numbers():
    rate = TransferRate(window=5.0)
    assert rate.update(1_000_000, 11_000_000, now=100.0) == (None, None)  # a resume's first report: no speed yet
    speed, left = rate.update(3_000_000, 11_000_000, now=101.0)
    assert speed == 2_000_000 and left == 4.0
    assert describe_progress(3_000_000, 11_000_000, speed, left) == "3.0 MB of 11.0 MB · 2.0 MB/s · 4 s left"
    assert describe_progress(5_000_000, None, None, None) == "5.0 MB"
    assert describe_progress(1, 2, 1.0, 3725.0).endswith("1 h 02 min left")
    assert rate.summary() == "2.0 MB in 1 s (2.0 MB/s on average)"


def test_screenshots_at_a_laptop_size(qtbot, registry: ModelRegistry, gguf_model: Path, tmp_path: Path):
    from tests.helpers.screenshots import save_screenshot

    registry.add(write_tiny_gguf(tmp_path / "qwen3-tiny.gguf", template="<think>"))
    models = ModelsDialog(registry=registry)
    qtbot.addWidget(models)
    models.resize(min(models.width(), LAPTOP_CLIENT.width()), min(models.height(), LAPTOP_CLIENT.height()))
    models.show()
    models.table.selectRow(0)
    with file_server() as server:
        served = Served(gguf_model, hold_after=96 << 20)
        server.files["/gemma-3-270m.gguf"] = served
        dialog = models.open_download()
        dialog.url.setText(server.url("/gemma-3-270m.gguf"))
        dialog.name.setText("gemma-270m")
        dialog.start()
        qtbot.waitUntil(lambda: dialog.progress.value() >= 370 and " left" in dialog.rate.text(), timeout=30000)
        assert dialog.width() <= LAPTOP_CLIENT.width() and dialog.height() <= LAPTOP_CLIENT.height()
        save_screenshot(models, tmp_path / "shots", "models-dialog")
        save_screenshot(dialog, tmp_path / "shots", "download-dialog")
        dialog.stop()
        served.release.set()
        _idle(qtbot, dialog)


def test_a_failed_download_keeps_its_partial_for_the_user_to_resume_or_delete(
    qtbot, registry: ModelRegistry, tmp_path: Path
):
    model = write_tiny_gguf(tmp_path / "tiny.gguf")
    with file_server() as server:
        server.files["/tiny.gguf"] = Served(model, cut_every=100)  # a network that never lets it finish
        dialog = _dialog(qtbot, registry)
        dialog.url.setText(server.url("/tiny.gguf"))
        dialog.start()
        _idle(qtbot, dialog)
    text = dialog.message.text()
    assert "failed: the connection broke (" in text and "; the 500 bytes so far are kept in " in text
    assert text.endswith("tiny.gguf.part: download it again to resume, or delete that file") and "\n" not in text
    assert registry.entries() == []
    assert dialog.delete_partial_button.isVisible() and dialog.download_button.text() == "Resume &download"
    qtbot.mouseClick(dialog.delete_partial_button, Qt.MouseButton.LeftButton)
    assert not list(registry.models_dir.iterdir())
