"""Edit ▸ Models…: adding in the background, a bad file said in one line with nothing added,
remove, the memory estimate following the context, and the dialog fitting a 1366x768 laptop."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.gguf_files import write_tiny_gguf
from thoughtdesk.core.models import ModelRegistry
from thoughtdesk.ui.models import ModelsDialog
from thoughtdesk.ui.widgets.sizing import LAPTOP_CLIENT


def _dialog(qtbot, tmp_path: Path) -> ModelsDialog:
    dialog = ModelsDialog(registry=ModelRegistry(tmp_path / "models.json", tmp_path / "models"))
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_add_a_folder_select_and_remove(qtbot, tmp_path: Path):
    folder = tmp_path / "stick"
    folder.mkdir()
    write_tiny_gguf(folder / "alpha.gguf")
    write_tiny_gguf(folder / "beta.gguf", template="<think>")
    dialog = _dialog(qtbot, tmp_path)
    assert "No models yet" in dialog.details.text()
    dialog.copy.setChecked(True)
    dialog.add_path(folder)
    qtbot.waitUntil(lambda: dialog.model.rowCount() == 2, timeout=10000)
    assert dialog.message.text() == "alpha: added; beta: added"
    assert (tmp_path / "models" / "beta.gguf").exists()
    cells = [dialog.model.index(1, c).data() for c in range(dialog.model.columnCount())]
    assert cells[:6] == ["beta", "ok", "llama", "Q4_K_M", "0M", "4,096"]
    assert cells[7] in {"fits", "tight", "does not fit"}
    assert "thinks" in dialog.details.text() and "--model llamacpp:beta" in dialog.details.text()
    # What scoring would add: 2,048 + 512 positions x 2,000 tokens x 4 bytes, and a second KV cache.
    scoring = (2048 + 512) * 2000 * 4 + 2 * 2 * 32 * 2 * 2048
    assert f"\nWith scoring (log-probs): adds {scoring / 1e9:.2f} GB, " in dialog.details.text()
    qtbot.waitUntil(lambda: dialog.gpu is not None, timeout=30000)  # checked in the background
    assert "\nGPU: " in dialog.details.text() and "GPU: checking…" not in dialog.details.text()
    before = dialog.details.text()
    dialog.n_ctx.setValue(8192)
    assert "8,192 tokens" in dialog.details.text() and dialog.details.text() != before
    dialog.remove_selected()
    assert [entry.name for entry, _, _ in dialog.model.rows] == ["alpha"]
    assert "the file stays at" in dialog.message.text()


def test_a_bad_file_adds_nothing_and_says_why_in_one_line(qtbot, tmp_path: Path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00\x01")
    dialog = _dialog(qtbot, tmp_path)
    dialog.add_path(bad)
    qtbot.waitUntil(lambda: dialog.message.text().startswith("Nothing was added"), timeout=10000)
    assert str(bad) in dialog.message.text() and "truncated" in dialog.message.text()
    assert "\n" not in dialog.message.text()
    assert dialog.model.rowCount() == 0 and dialog.add_file_button.isEnabled()


def test_missing_files_are_shown_and_the_dialog_fits_a_laptop(qtbot, tmp_path: Path):
    registry = ModelRegistry(tmp_path / "models.json", tmp_path / "models")
    path = write_tiny_gguf(tmp_path / "gone.gguf")
    registry.add(path)
    path.unlink()
    dialog = _dialog(qtbot, tmp_path)
    assert dialog.model.index(0, 1).data() == "missing"
    size = dialog.minimumSizeHint().expandedTo(dialog.minimumSize())
    assert size.width() <= LAPTOP_CLIENT.width() and size.height() <= LAPTOP_CLIENT.height()
    assert dialog.width() <= LAPTOP_CLIENT.width() and dialog.height() <= LAPTOP_CLIENT.height()


def test_edit_menu_opens_it(window, qtbot):
    action = window.models.action
    assert action.text() == "&Models…" and action in window.menu("&Edit").actions()
    dialog = window.models.open_models()
    qtbot.waitUntil(dialog.isVisible)
    dialog.close()


def test_cancel_stops_a_copy_and_adds_nothing(qtbot, tmp_path: Path, gguf_model: Path):
    dialog = _dialog(qtbot, tmp_path)
    dialog.copy.setChecked(True)
    task = dialog.add_path(gguf_model)
    task.cancel()  # the 253 MB copy reports after its first MiB and stops there
    qtbot.waitUntil(lambda: dialog.message.text().startswith("Nothing was added"), timeout=20000)
    assert "cancelled" in dialog.message.text()
    assert dialog.model.rowCount() == 0
    assert not (tmp_path / "models").exists() or not list((tmp_path / "models").iterdir())
