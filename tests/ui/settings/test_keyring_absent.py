"""No system keyring: the app says so and asks before keeping a key in a file."""

from __future__ import annotations

import os
import stat

import keyring.backends.fail
import pytest

from thoughtdesk.core.settings import config as core_config
from thoughtdesk.core.settings import secrets
from thoughtdesk.core.settings.startup import apply_startup_config
from thoughtdesk.ui.qt import QApplication, QMessageBox, QTimer
from thoughtdesk.ui.settings import forms as settings_forms
from thoughtdesk.ui.settings.forms import KeySaveResult
from thoughtdesk.ui.settings.options import AppSettings
from thoughtdesk.ui.settings.provider_forms import ProvidersForm


@pytest.fixture
def no_keyring():
    secrets.use_keyring(keyring.backends.fail.Keyring())


def _answer_consent(button: QMessageBox.StandardButton, seen: list[str]) -> None:
    """Click ``button`` in the real consent box once it is open (it runs a modal loop)."""

    def click() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, click)
            return
        seen.append(box.text())
        box.button(button).click()

    QTimer.singleShot(20, click)


def test_warning_is_shown_where_keys_are_entered(qtbot, no_keyring):
    form = ProvidersForm()
    qtbot.addWidget(form)
    form.load(AppSettings())
    form.show()
    assert form.keyring_note.isVisible()
    assert form.keyring_note.text().startswith("No system keyring was found (keyring backend: ")
    assert "you will be asked" in form.keyring_note.text()
    assert not core_config.keyring_is_usable()
    # Issue 28: the note below it said keys go to the system keyring, right under "no keyring".
    assert "system keyring" not in form.keys_note.text()
    assert form.keys_note.text().startswith("Keys are kept only where said above, never in the library")


def test_declining_stores_the_key_nowhere(qtbot, no_keyring, tmp_path):
    seen: list[str] = []
    _answer_consent(QMessageBox.StandardButton.No, seen)
    result = settings_forms.save_api_key(None, "openai", "sk-declined-key-0001")
    assert not result.ok and "NOT stored" in result.text
    assert seen and "no system keyring" in seen[0] and str(tmp_path / "config" / "api-keys.json") in seen[0]
    assert not (tmp_path / "config" / "api-keys.json").exists()
    assert core_config.load_config().keys_in_file is False
    assert secrets.get_api_key("openai") is None  # no keyring holds no key (the environment's may be used)


def test_agreeing_keeps_keys_in_a_private_file(qtbot, no_keyring, tmp_path):
    seen: list[str] = []
    _answer_consent(QMessageBox.StandardButton.Yes, seen)
    result = settings_forms.save_api_key(None, "openai", "sk-agreed-key-0002")
    key_file = tmp_path / "config" / "api-keys.json"
    assert result == KeySaveResult(True, f"the openai key was stored in {key_file} (readable only by you)")
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    assert secrets.get_api_key("openai") == "sk-agreed-key-0002"
    assert core_config.load_config().keys_in_file is True
    # The second key is not asked about again, and a new process finds the keys (CLI start-up).
    second = settings_forms.save_api_key(None, "anthropic", "ant-key-0003")
    assert len(seen) == 1
    assert second == KeySaveResult(True, f"the anthropic key was stored in {key_file} (readable only by you)")
    secrets.use_keyring(keyring.backends.fail.Keyring())
    apply_startup_config()
    assert secrets.get_api_key("anthropic") == "ant-key-0003"
    form = ProvidersForm()
    qtbot.addWidget(form)
    assert "keys are kept in" in form.keyring_note.text() and "not encrypted" in form.keyring_note.text()


def test_a_working_keyring_needs_no_question(qtbot, monkeypatch):
    monkeypatch.setattr(settings_forms, "consent_question", lambda *a: pytest.fail("asked"))
    result = settings_forms.save_api_key(None, "openai", "sk-memory-0004")
    assert result.ok and result.text.startswith("the openai key was stored in the system keyring")
    form = ProvidersForm()
    qtbot.addWidget(form)
    assert not form.keyring_note.text()
    assert form.keys_note.text().startswith("Keys are kept in the system keyring, never in the library")
    assert secrets.get_api_key("openai") == "sk-memory-0004"
