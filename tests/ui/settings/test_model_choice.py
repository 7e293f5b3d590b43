"""The model library's names wherever a local model is chosen: the planner's model form (which the
critique dialog and the guide panel's helper forms share), Settings, and the rationales dialog's
PROVIDER:MODEL lines; a registered model whose file is gone is shown as missing with one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.gguf_files import write_tiny_gguf
from tests.helpers.libraries import DEMO, demo_library
from thoughtdesk.core.generation.fragments import FragmentLibrary
from thoughtdesk.core.generation.runs import ModelSpec, RunSpecError
from thoughtdesk.core.models import ModelRegistry
from thoughtdesk.ui.generation.controller import critique_model_list
from thoughtdesk.ui.generation.model_form import ModelForm
from thoughtdesk.ui.generation.rationales_dialog import RationalesDialog
from thoughtdesk.ui.settings.forms import LocalModelForm


@pytest.fixture
def library(tmp_path: Path) -> dict[str, Path]:
    """The user's model library (the test's own data folder): alpha, and gone (file deleted)."""
    registry = ModelRegistry()
    alpha = write_tiny_gguf(tmp_path / "alpha.gguf")
    gone = write_tiny_gguf(tmp_path / "gone.gguf", template="<think>")
    registry.add(alpha)
    registry.add(gone)
    gone.unlink()
    return {"alpha": alpha.resolve(), "gone": gone.resolve()}


def _items(combo) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count())]


def test_the_planner_form_offers_registered_models(qtbot, library):
    form = ModelForm()
    qtbot.addWidget(form)
    form.provider.setCurrentIndex(form.provider.findData("llamacpp"))
    items = _items(form.registered)
    assert len(items) == 3 and items[1].startswith("alpha  (Q4_K_M, ") and items[2].endswith("— MISSING")
    form.registered.setCurrentIndex(1)
    assert form.gguf_path.text() == str(library["alpha"]) and form.local_note.isHidden()
    spec = form.spec()
    assert spec.provider == "llamacpp" and spec.model == str(library["alpha"])

    form.registered.setCurrentIndex(2)
    assert not form.local_note.isHidden()
    note = form.local_note.text()
    assert (
        "\n" not in note and note.startswith("gone: the registered model's file is missing") and "Edit ▸ Models" in note
    )
    with pytest.raises(RunSpecError) as caught:
        form.spec()
    assert str(caught.value) == note

    # Editing a stored model selects its registered entry; a name typed as the path resolves.
    form.set_spec(ModelSpec(provider="llamacpp", model=str(library["alpha"])))
    assert form.registered.currentIndex() == 1
    form.gguf_path.setText("alpha")
    assert form.registered.currentIndex() == 1 and form.spec().model == str(library["alpha"])
    form.gguf_path.setText("/elsewhere/other.gguf")
    assert form.registered.currentIndex() == 0 and form.local_note.isHidden()


@pytest.mark.qt_log_ignore("This plugin does not support")  # offscreen: a popup's raise and keyboard grab
def test_models_added_later_appear_when_the_list_opens(qtbot, tmp_path: Path):
    form = ModelForm()
    qtbot.addWidget(form)
    assert _items(form.registered) == ["No models in the library yet (Edit ▸ Models…)"]
    ModelRegistry().add(write_tiny_gguf(tmp_path / "late.gguf"))
    form.registered.showPopup()
    assert [text.split()[0] for text in _items(form.registered)[1:]] == ["late"]
    form.registered.hidePopup()


def test_the_critique_dialogs_models_offer_them_too(qtbot, library):
    models = critique_model_list()
    qtbot.addWidget(models)
    assert [text.split()[0] for text in _items(models.form.registered)[1:]] == ["alpha", "gone"]


def test_settings_offers_registered_models(qtbot, library):
    form = LocalModelForm()
    qtbot.addWidget(form)
    form.registered.setCurrentIndex(1)
    assert form.file.isChecked() and form.chosen_path() == str(library["alpha"]) and form.validate()
    form.registered.setCurrentIndex(2)
    assert not form.validate()
    assert "\n" not in form.status.text() and "gone: the registered model's file is missing" in form.status.text()


def test_the_rationales_dialog_completes_registered_names(qtbot, library, tmp_path: Path):
    dialog = RationalesDialog(demo_library(tmp_path / "lib.thoughtdesk"), [DEMO], FragmentLibrary.defaults())
    qtbot.addWidget(dialog)
    assert dialog.model_names.choices() == ["llamacpp:alpha", "llamacpp:gone"]
    assert dialog.scorer_names.choices() == ["llamacpp:alpha", "llamacpp:gone"]
    assert "llamacpp:NAME" in dialog.model.placeholderText()


def test_choosing_a_library_model_offers_gpu_layers(qtbot, library, monkeypatch):
    from thoughtdesk.core.models.gpu import GpuInfo
    from thoughtdesk.ui.generation import model_form

    form = ModelForm()
    qtbot.addWidget(form)
    form.registered.setCurrentIndex(1)  # this machine: a CPU build of llama-cpp-python (or none)
    qtbot.waitUntil(lambda: form.gpu_note.text().startswith("GPU: CPU only"), timeout=30000)
    assert form.n_gpu_layers.value() == 0
    monkeypatch.setattr(model_form, "detect_gpu", lambda: GpuInfo(True, "cuda", "Test GPU", 8_000_000_000))
    form.registered.setCurrentIndex(0)
    form.registered.setCurrentIndex(1)
    qtbot.waitUntil(lambda: form.n_gpu_layers.value() == -1, timeout=30000)
    assert form.gpu_note.text().startswith("GPU: fits the GPU: all 2 layers offloaded (needs 0.00 GB; 8.0 GB free")
    assert form.n_gpu_layers.text() == "all"
    form.gguf_path.setText("/elsewhere/other.gguf")
    assert form.gpu_note.isHidden()
    form.registered.setCurrentIndex(2)  # a missing file: its reason, no GPU plan
    assert form.gpu_note.isHidden() and not form.local_note.isHidden()
